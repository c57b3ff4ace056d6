use std::fmt;
use std::ops;

const READABLE: usize = 0b0001;
const WRITABLE: usize = 0b0010;
const ERROR: usize = 0b0100;
const PRIORITY: usize = 0b1000;

/// The readiness events a task waits for on an I/O resource.
#[derive(Clone, Copy, Eq, PartialEq)]
pub struct Interest(usize);

impl Interest {
    /// Interest in reading.
    pub const READABLE: Interest = Interest(READABLE);
    /// Interest in writing.
    pub const WRITABLE: Interest = Interest(WRITABLE);
    /// Interest in error events.
    pub const ERROR: Interest = Interest(ERROR);
    /// Interest in priority (out-of-band) events.
    pub const PRIORITY: Interest = Interest(PRIORITY);

    /// Whether reading is included.
    pub const fn is_readable(self) -> bool {
        self.0 & READABLE != 0
    }

    /// Whether writing is included.
    pub const fn is_writable(self) -> bool {
        self.0 & WRITABLE != 0
    }

    /// Whether error events are included.
    pub const fn is_error(self) -> bool {
        self.0 & ERROR != 0
    }

    /// Whether priority events are included.
    pub const fn is_priority(self) -> bool {
        self.0 & PRIORITY != 0
    }

    /// Both interests together.
    #[must_use = "this returns the result of the operation, without modifying the original"]
    pub const fn add(self, other: Interest) -> Interest {
        Interest(self.0 | other.0)
    }

    /// `self` without `other`; `None` when nothing is left.
    #[must_use = "this returns the result of the operation, without modifying the original"]
    pub fn remove(self, other: Interest) -> Option<Interest> {
        let left = self.0 & !other.0;
        (left != 0).then_some(Interest(left))
    }
}

impl ops::BitOr for Interest {
    type Output = Self;

    #[inline]
    fn bitor(self, other: Self) -> Self {
        self.add(other)
    }
}

impl ops::BitOrAssign for Interest {
    #[inline]
    fn bitor_assign(&mut self, other: Self) {
        *self = *self | other;
    }
}

impl fmt::Debug for Interest {
    fn fmt(&self, fmt: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = [
            (READABLE, "READABLE"),
            (WRITABLE, "WRITABLE"),
            (ERROR, "ERROR"),
            (PRIORITY, "PRIORITY"),
        ];
        let mut first = true;
        for (bit, name) in names {
            if self.0 & bit != 0 {
                if !first {
                    fmt.write_str(" | ")?;
                }
                fmt.write_str(name)?;
                first = false;
            }
        }
        Ok(())
    }
}
