use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Yields to the scheduler: the task is queued again and the seed picks
/// what runs next.
pub async fn yield_now() {
    struct YieldNow {
        yielded: bool,
    }

    impl Future for YieldNow {
        type Output = ();

        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            if self.yielded {
                return Poll::Ready(());
            }
            self.yielded = true;
            // A wake only queues the task; it is never polled inline.
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }

    YieldNow { yielded: false }.await;
}
