use std::fmt;
use std::num::NonZeroU64;

/// An opaque id of a task, unique within its runtime. Ids count up from 1
/// in spawn order, so they repeat with the seed.
#[derive(Clone, Copy, Debug, Hash, Eq, PartialEq, PartialOrd, Ord)]
pub struct Id(NonZeroU64);

impl Id {
    pub(crate) fn from_raw(raw: u64) -> Id {
        Id(NonZeroU64::new(raw).expect("task ids start at 1"))
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The id of the running task.
///
/// # Panics
/// Outside a task (including the future given to `block_on`).
#[track_caller]
pub fn id() -> Id {
    try_id().expect("Can't get a task id when not inside a task")
}

/// The id of the running task, or `None` outside a task.
pub fn try_id() -> Option<Id> {
    sim_runtime::context::with_current(|core| core.current_task())
        .filter(|id| *id != 0)
        .map(Id::from_raw)
}
