//! What every simulated socket shares about readiness: the `WouldBlock`
//! error, and the bodies of `try_io` and `async_io`.

use std::future::Future;
use std::io;
use std::task::{Context, Poll, Waker};

/// The error of a `try_*` call that would have to wait.
pub(crate) fn would_block() -> io::Error {
    io::ErrorKind::WouldBlock.into()
}

/// `try_io`: runs `f` if `poll_ready` says the interest is ready now,
/// `WouldBlock` otherwise. The poll gets a no-op waker: nothing waits.
/// When `f` says `WouldBlock`, `clear` clears the readiness, as tokio
/// does: the interest is not ready again until the socket's next event, so
/// `ready().await` waits for one instead of answering at once.
pub(crate) fn try_io<T, R>(
    poll_ready: impl FnOnce(&mut Context<'_>) -> Poll<io::Result<T>>,
    f: impl FnOnce() -> io::Result<R>,
    clear: impl FnOnce(),
) -> io::Result<R> {
    let mut cx = Context::from_waker(Waker::noop());
    match poll_ready(&mut cx) {
        Poll::Ready(Ok(_)) => {
            let result = f();
            if matches!(&result, Err(e) if e.kind() == io::ErrorKind::WouldBlock) {
                clear();
            }
            result
        }
        Poll::Ready(Err(e)) => Err(e),
        Poll::Pending => Err(would_block()),
    }
}

/// `async_io`: waits for readiness (`ready`) and runs `f`, again while `f`
/// says `WouldBlock`.
pub(crate) async fn async_io<T, R, Fut>(
    mut ready: impl FnMut() -> Fut,
    mut f: impl FnMut() -> io::Result<R>,
) -> io::Result<R>
where
    Fut: Future<Output = io::Result<T>>,
{
    // Bounded by readiness: each pass waits for the socket to be ready.
    loop {
        ready().await?;
        match f() {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            result => return result,
        }
    }
}
