use super::{AbortHandle, Id, JoinError};
use sim_runtime::{Failure, Output, RawTask};
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

/// An owned permission to join a task: awaiting it gives the task's output,
/// or a [`JoinError`] if it panicked or was cancelled.
///
/// Dropping the handle detaches the task: it keeps running.
pub struct JoinHandle<T> {
    raw: RawTask,
    _output: PhantomData<T>,
}

// Written out, as tokio's are (this handle would be `Send` when `T: Send`
// of itself: `RawTask` is plain ids).
// SAFETY: the handle is ids, never dereferenced off the runtime's thread;
// the output (a `T`) moves to whoever awaits it, so the handle may move
// between threads when `T: Send`.
unsafe impl<T: Send> Send for JoinHandle<T> {}
// SAFETY: through `&JoinHandle` nothing reaches the output (`poll` takes
// `Pin<&mut Self>`), only `is_finished`, `abort` and `id`, which go through
// the runtime: tokio's handle is `Sync` when `T: Send`, and so is this one.
unsafe impl<T: Send> Sync for JoinHandle<T> {}
impl<T> Unpin for JoinHandle<T> {}
impl<T> std::panic::UnwindSafe for JoinHandle<T> {}
impl<T> std::panic::RefUnwindSafe for JoinHandle<T> {}

impl<T> JoinHandle<T> {
    /// The handle of a task spawned on runtime `core` after it shut down:
    /// cancelled, as in tokio (its future was dropped unpolled).
    pub(crate) fn cancelled(core: u16) -> JoinHandle<T> {
        // Ids of their own, far above any runtime's count.
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1 << 48);
        let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        JoinHandle::new(RawTask {
            core,
            slot: u32::MAX,
            generation: 0,
            id,
        })
    }

    pub(crate) fn new(raw: RawTask) -> JoinHandle<T> {
        JoinHandle {
            raw,
            _output: PhantomData,
        }
    }

    /// Cancels the task. It stops at its next turn; awaiting the handle
    /// then gives a cancelled [`JoinError`], unless it finished first.
    pub fn abort(&self) {
        sim_runtime::context::with_core(self.raw.core, |core| core.abort(self.raw));
    }

    /// Whether the task has finished (completed, panicked or cancelled).
    pub fn is_finished(&self) -> bool {
        sim_runtime::context::with_core(self.raw.core, |core| core.is_finished(self.raw))
            .unwrap_or(true)
    }

    /// A handle that can cancel the task without owning its output.
    pub fn abort_handle(&self) -> AbortHandle {
        AbortHandle::new(self.raw)
    }

    /// The task's id.
    pub fn id(&self) -> Id {
        Id::from_raw(self.raw.id)
    }
}

impl<T> JoinHandle<T> {
    /// Polls without spending budget (for `JoinSet`, which spends it once).
    pub(crate) fn poll_unbudgeted(&mut self, cx: &mut Context<'_>) -> Poll<Result<T, JoinError>> {
        let raw = self.raw;
        let mut output: Output<T> = None;
        let dst = &mut output as *mut Output<T> as *mut ();
        // A runtime that shut down answers as one that is gone.
        let polled = sim_runtime::context::with_core(raw.core, |core| {
            (!core.is_shut_down()).then(|| {
                // SAFETY: this handle was made by the spawn of a future
                // whose output is `T`.
                unsafe { core.poll_join(raw, cx, dst) }
            })
        })
        .flatten();
        match polled {
            Some(Poll::Pending) => {
                crate::util::note_wait("JoinHandle", sim_runtime::WaitDetail::Task(raw.id), None);
                Poll::Pending
            }
            // The runtime is gone: it may have kept the task's output.
            None => {
                // SAFETY: as above: `dst` is the `Output<T>` of the task.
                unsafe { sim_runtime::task::orphans::take_output(raw, dst) };
                Poll::Ready(Self::result(raw, output))
            }
            Some(Poll::Ready(())) => Poll::Ready(Self::result(raw, output)),
        }
    }

    /// The handle's result from the output read (none: cancelled).
    fn result(raw: RawTask, output: Output<T>) -> Result<T, JoinError> {
        match output {
            Some(Ok(value)) => Ok(value),
            Some(Err(Failure::Panic(payload))) => {
                Err(JoinError::panic(Id::from_raw(raw.id), payload))
            }
            Some(Err(Failure::Cancelled)) | None => Err(JoinError::cancelled(Id::from_raw(raw.id))),
        }
    }
}

impl<T> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let spent = sim_runtime::context::with_core(self.raw.core, |core| core.poll_budget(cx));
        if let Some(Poll::Pending) = spent {
            return Poll::Pending;
        }
        self.poll_unbudgeted(cx)
    }
}

impl<T> Drop for JoinHandle<T> {
    fn drop(&mut self) {
        let raw = self.raw;
        if sim_runtime::context::with_core(raw.core, |core| core.join_drop(raw)).is_none() {
            sim_runtime::task::orphans::forget(raw);
        }
    }
}

impl<T> fmt::Debug for JoinHandle<T>
where
    T: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle")
            .field("id", &self.id())
            .finish()
    }
}
