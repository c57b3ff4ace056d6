use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Yields to the scheduler: the task goes to the back of the queue. Every
/// task that was ready when it yielded runs before it resumes (in the
/// seed's order); outside a runtime, it is woken at once.
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
            // A runtime that shut down runs nothing again: the wake is now.
            let queued = sim_runtime::context::with_current(|core| {
                (!core.is_shut_down()).then(|| core.yield_task(cx.waker()))
            })
            .flatten()
            .is_some();
            if !queued {
                cx.waker().wake_by_ref();
            }
            Poll::Pending
        }
    }

    YieldNow { yielded: false }.await;
}
