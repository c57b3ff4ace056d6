use super::error::Elapsed;
use super::{sleep_until, Instant, Sleep};
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

/// Requires `future` to complete within `duration` of virtual time.
///
/// # Panics
/// Outside a runtime, as in tokio.
#[track_caller]
pub fn timeout<F>(duration: Duration, future: F) -> Timeout<F::IntoFuture>
where
    F: IntoFuture,
{
    let deadline = Instant::now()
        .checked_add(duration)
        .unwrap_or_else(Instant::far_future);
    Timeout::new(future.into_future(), sleep_until(deadline))
}

/// Requires `future` to complete before `deadline`.
///
/// # Panics
/// Outside a runtime, as in tokio.
#[track_caller]
pub fn timeout_at<F>(deadline: Instant, future: F) -> Timeout<F::IntoFuture>
where
    F: IntoFuture,
{
    Timeout::new(future.into_future(), sleep_until(deadline))
}

pin_project_lite::pin_project! {
    /// The future of [`timeout`] and [`timeout_at`].
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    #[derive(Debug)]
    pub struct Timeout<T> {
        #[pin]
        value: T,
        #[pin]
        delay: Sleep,
    }
}

impl<T> Timeout<T> {
    fn new(value: T, delay: Sleep) -> Timeout<T> {
        Timeout { value, delay }
    }

    /// The inner future.
    pub fn get_ref(&self) -> &T {
        &self.value
    }

    /// The inner future, mutably.
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.value
    }

    /// The inner future, dropping the deadline.
    pub fn into_inner(self) -> T {
        self.value
    }
}

impl<T: Future> Future for Timeout<T> {
    type Output = Result<T::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        // The inner future goes first: if both are ready, the value wins.
        if let Poll::Ready(value) = this.value.poll(cx) {
            return Poll::Ready(Ok(value));
        }
        // The deadline is checked even when the inner future spent the
        // budget, or a busy future could never time out.
        let previous = sim_runtime::context::with_current(|core| core.set_unconstrained(true));
        let elapsed = this.delay.poll(cx);
        if let Some(previous) = previous {
            sim_runtime::context::with_current(|core| core.set_unconstrained(previous));
        }
        elapsed.map(|()| Err(Elapsed::new()))
    }
}
