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

/// Returned by [`poll_proceed`]: dropping it without calling
/// [`RestoreOnPending::made_progress`] gives the budget unit back.
#[derive(Debug)]
pub struct RestoreOnPending {
    spent: std::cell::Cell<bool>,
    _not_send: std::marker::PhantomData<*mut ()>,
}

impl RestoreOnPending {
    /// The operation made progress: keep the unit spent.
    pub fn made_progress(&self) {
        self.spent.set(false);
    }
}

impl Drop for RestoreOnPending {
    fn drop(&mut self) {
        if self.spent.get() {
            sim_runtime::context::with_current(|core| core.restore_budget());
        }
    }
}

/// Spends one unit of budget for an operation about to be tried, or asks the
/// task to yield. Call `made_progress` on the guard if the operation did
/// anything; otherwise the unit comes back when the guard drops.
pub fn poll_proceed(cx: &mut Context<'_>) -> Poll<RestoreOnPending> {
    let spent = sim_runtime::context::with_current(|core| core.poll_budget(cx));
    match spent {
        Some(Poll::Pending) => Poll::Pending,
        Some(Poll::Ready(())) => Poll::Ready(RestoreOnPending {
            spent: std::cell::Cell::new(true),
            _not_send: std::marker::PhantomData,
        }),
        None => Poll::Ready(RestoreOnPending {
            spent: std::cell::Cell::new(false),
            _not_send: std::marker::PhantomData,
        }),
    }
}

pin_project_lite::pin_project! {
    /// A future that spends budget on every poll: see [`cooperative`].
    #[derive(Debug)]
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct Coop<F: Future> {
        #[pin]
        fut: F,
    }
}

impl<F: Future> Future for Coop<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let guard = std::task::ready!(poll_proceed(cx));
        let result = self.project().fut.poll(cx);
        if result.is_ready() {
            guard.made_progress();
        }
        result
    }
}

/// Makes `fut` take part in the cooperative budget: each poll spends a unit,
/// and a task out of budget yields before polling it.
pub fn cooperative<F: Future>(fut: F) -> Coop<F> {
    Coop { fut }
}
