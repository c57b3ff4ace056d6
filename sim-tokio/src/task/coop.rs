//! The cooperative budget: each poll of a task may make a bounded number of
//! resource operations (128, as in tokio) before they start asking it to
//! yield, so one busy task cannot hold the scheduler.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Spends one unit of the task's budget, yielding if it is spent.
pub async fn consume_budget() {
    std::future::poll_fn(|cx| {
        sim_runtime::context::with_current(|core| core.poll_budget(cx)).unwrap_or(Poll::Ready(()))
    })
    .await
}

/// Whether the current task has budget left (outside a task: true).
pub fn has_budget_remaining() -> bool {
    sim_runtime::context::with_current(|core| core.has_budget()).unwrap_or(true)
}

pin_project_lite::pin_project! {
    /// A future that runs without a budget: see [`unconstrained`].
    #[must_use = "Unconstrained does nothing unless polled"]
    pub struct Unconstrained<F> {
        #[pin]
        inner: F,
    }
}

impl<F: Future> Future for Unconstrained<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let inner = self.project().inner;
        match sim_runtime::context::with_current(|core| core.set_unconstrained(true)) {
            Some(previous) => {
                let result = inner.poll(cx);
                sim_runtime::context::with_current(|core| core.set_unconstrained(previous));
                result
            }
            None => inner.poll(cx),
        }
    }
}

/// Turns off the cooperative budget for `inner`: its resource operations
/// never ask it to yield.
pub fn unconstrained<F>(inner: F) -> Unconstrained<F> {
    Unconstrained { inner }
}
