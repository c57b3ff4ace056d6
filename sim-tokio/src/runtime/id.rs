use std::fmt;
use std::num::NonZeroU64;

/// An opaque id of a runtime, unique among the runtimes of a process.
#[derive(Clone, Copy, Debug, Hash, Eq, PartialEq, PartialOrd, Ord)]
pub struct Id(NonZeroU64);

impl Id {
    pub(crate) fn new(raw: u16) -> Id {
        Id(NonZeroU64::new(u64::from(raw)).expect("runtime ids start at 1"))
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}
