use std::fmt;
use std::num::NonZeroU64;
use std::sync::atomic::{AtomicU64, Ordering};

/// An opaque id of a runtime, unique among the runtimes of a process.
#[derive(Clone, Copy, Debug, Hash, Eq, PartialEq, PartialOrd, Ord)]
pub struct Id(NonZeroU64);

impl Id {
    /// The id of runtime `scope` of simulation `core` (a simulation's
    /// first runtime has the simulation's own id).
    pub(crate) fn new(core: u16, scope: u16) -> Id {
        let raw = u64::from(core) | u64::from(scope) << 40;
        Id(NonZeroU64::new(raw).expect("runtime ids start at 1"))
    }

    /// A fresh id for a `LocalSet`, above every runtime's (which fit in 16
    /// bits).
    pub(crate) fn for_local_set() -> Id {
        static NEXT: AtomicU64 = AtomicU64::new(1 << 16);
        Id(NonZeroU64::new(NEXT.fetch_add(1, Ordering::Relaxed)).expect("starts above zero"))
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}
