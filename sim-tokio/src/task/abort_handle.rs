use super::Id;
use sim_runtime::RawTask;
use std::fmt;

/// A handle that cancels a task without owning its output.
#[derive(Clone)]
pub struct AbortHandle {
    raw: RawTask,
}

// Written out, as tokio's are (its handle holds a raw task pointer; this
// one holds `RawTask`, plain ids, and would be `Send` and `Sync` of itself).
// SAFETY: the handle is ids; `abort` and `is_finished` reach the task only
// through its runtime, on the runtime's thread, so it may move between
// threads.
unsafe impl Send for AbortHandle {}
// SAFETY: every method takes `&self` and goes through the runtime, as for
// `Send`: sharing the handle adds nothing.
unsafe impl Sync for AbortHandle {}
impl std::panic::UnwindSafe for AbortHandle {}
impl std::panic::RefUnwindSafe for AbortHandle {}

impl AbortHandle {
    pub(crate) fn new(raw: RawTask) -> AbortHandle {
        AbortHandle { raw }
    }

    /// Cancels the task, as [`super::JoinHandle::abort`].
    pub fn abort(&self) {
        sim_runtime::context::with_core(self.raw.core, |core| core.abort(self.raw));
    }

    /// Whether the task has finished.
    pub fn is_finished(&self) -> bool {
        sim_runtime::context::with_core(self.raw.core, |core| core.is_finished(self.raw))
            .unwrap_or(true)
    }

    /// The task's id.
    pub fn id(&self) -> Id {
        Id::from_raw(self.raw.id)
    }
}

/// Dropping the handle leaves the task alone, as tokio documents. The handle
/// is plain ids and holds nothing to release.
impl Drop for AbortHandle {
    fn drop(&mut self) {}
}

impl fmt::Debug for AbortHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AbortHandle")
            .field("id", &self.id())
            .finish()
    }
}
