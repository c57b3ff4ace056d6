//! What the macros' expansions call. Not public API.

pub use sim_macros::{join_impl, select_impl, try_join_impl};
pub use std::future::{poll_fn, Future, IntoFuture};
use std::pin::Pin;
use std::task::{Context, Poll};

/// A uniform draw in `0..n` from the scheduler's seeded stream (the random
/// branch order of an unbiased `select!` or `join!`); `0` outside a
/// runtime.
pub fn thread_rng_n(n: u32) -> u32 {
    sim_runtime::context::with_current(|core| core.sched_below(u64::from(n)) as u32).unwrap_or(0)
}

/// `Pending` (the task woken to run again) when the task's budget is spent:
/// a `select!` yields before polling branches that would only spend more,
/// as tokio's does. Spends nothing.
pub fn poll_budget_available(cx: &mut Context<'_>) -> Poll<()> {
    sim_runtime::context::with_current(|core| {
        // Spent and given back: a yield when none is left, nothing else.
        let available = core.poll_budget(cx);
        if available.is_ready() {
            core.restore_budget();
        }
        available
    })
    .unwrap_or(Poll::Ready(()))
}

/// A future and then its output, for `join!`. `repr(C)`, as tokio's: a
/// `join!`'s future has tokio's size exactly (tokio's tests hold it to
/// its bytes).
#[repr(C)]
pub enum MaybeDone<F: Future> {
    /// Still running.
    Future(F),
    /// Finished; the output waits to be taken.
    Done(F::Output),
    /// The output was taken.
    Gone,
}

impl<F: Future> MaybeDone<F> {
    /// Wraps a future.
    pub fn new(future: F) -> Self {
        MaybeDone::Future(future)
    }

    /// Polls; returns whether the output is there.
    pub fn poll_done(self: Pin<&mut Self>, cx: &mut Context<'_>) -> bool {
        // SAFETY: the future is never moved out while pinned; it is replaced
        // in place by its output.
        let this = unsafe { self.get_unchecked_mut() };
        match this {
            // SAFETY: `future` lives in the pinned `self` and is never moved
            // out; it is only replaced in place by its output, below.
            MaybeDone::Future(future) => match unsafe { Pin::new_unchecked(future) }.poll(cx) {
                Poll::Ready(output) => {
                    *this = MaybeDone::Done(output);
                    true
                }
                Poll::Pending => false,
            },
            MaybeDone::Done(_) => true,
            MaybeDone::Gone => true,
        }
    }

    /// Takes the output.
    ///
    /// # Panics
    /// When it is not there.
    pub fn take_output(&mut self) -> F::Output {
        match std::mem::replace(self, MaybeDone::Gone) {
            MaybeDone::Done(output) => output,
            _ => unreachable!("join! takes each output once, when it is done"),
        }
    }
}

impl<F, T, E> MaybeDone<F>
where
    F: Future<Output = Result<T, E>>,
{
    /// Whether the output is an error.
    pub fn is_err(&self) -> bool {
        matches!(self, MaybeDone::Done(Err(_)))
    }

    /// Takes the error.
    pub fn take_err(&mut self) -> E {
        match self.take_output() {
            Err(e) => e,
            Ok(_) => unreachable!("take_err follows is_err"),
        }
    }

    /// Takes the value.
    pub fn take_ok(&mut self) -> T {
        match self.take_output() {
            Ok(v) => v,
            Err(_) => unreachable!("try_join! returns at the first error"),
        }
    }
}
