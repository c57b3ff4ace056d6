use std::fmt;
use std::num::NonZeroU64;
use std::sync::atomic::{AtomicU64, Ordering};

/// An opaque id of a runtime, unique among the runtimes of a process.
#[derive(Clone, Copy, Debug, Hash, Eq, PartialEq, PartialOrd, Ord)]
pub struct Id(NonZeroU64);

impl Id {
    pub(crate) fn new(raw: u16) -> Id {
        Id(NonZeroU64::new(u64::from(raw)).expect("runtime ids start at 1"))
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
