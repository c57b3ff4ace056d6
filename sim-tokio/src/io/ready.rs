use std::fmt;
use std::ops;

const READABLE: usize = 0b0_0001;
const WRITABLE: usize = 0b0_0010;
const READ_CLOSED: usize = 0b0_0100;
const WRITE_CLOSED: usize = 0b0_1000;
const PRIORITY: usize = 0b1_0000;
const ERROR: usize = 0b10_0000;

/// The readiness of an I/O resource: a set of events.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Ready(usize);

impl Ready {
    /// No readiness.
    pub const EMPTY: Ready = Ready(0);
    /// Readable.
    pub const READABLE: Ready = Ready(READABLE);
    /// Writable.
    pub const WRITABLE: Ready = Ready(WRITABLE);
    /// The read side is closed.
    pub const READ_CLOSED: Ready = Ready(READ_CLOSED);
    /// The write side is closed.
    pub const WRITE_CLOSED: Ready = Ready(WRITE_CLOSED);
    /// Priority data is readable.
    pub const PRIORITY: Ready = Ready(PRIORITY);
    /// An error is pending.
    pub const ERROR: Ready = Ready(ERROR);
    /// Every readiness.
    pub const ALL: Ready =
        Ready(READABLE | WRITABLE | READ_CLOSED | WRITE_CLOSED | ERROR | PRIORITY);

    /// Whether nothing is set.
    pub fn is_empty(self) -> bool {
        self == Ready::EMPTY
    }

    /// Whether readable (or read-closed).
    pub fn is_readable(self) -> bool {
        self.contains(Ready::READABLE) || self.is_read_closed()
    }

    /// Whether writable (or write-closed).
    pub fn is_writable(self) -> bool {
        self.contains(Ready::WRITABLE) || self.is_write_closed()
    }

    /// Whether the read side is closed.
    pub fn is_read_closed(self) -> bool {
        self.contains(Ready::READ_CLOSED)
    }

    /// Whether the write side is closed.
    pub fn is_write_closed(self) -> bool {
        self.contains(Ready::WRITE_CLOSED)
    }

    /// Whether priority data is readable.
    pub fn is_priority(self) -> bool {
        self.contains(Ready::PRIORITY)
    }

    /// Whether an error is pending.
    pub fn is_error(self) -> bool {
        self.contains(Ready::ERROR)
    }

    fn contains(self, other: Ready) -> bool {
        self.0 & other.0 == other.0
    }
}

impl ops::BitOr<Ready> for Ready {
    type Output = Ready;

    #[inline]
    fn bitor(self, other: Ready) -> Ready {
        Ready(self.0 | other.0)
    }
}

impl ops::BitOrAssign<Ready> for Ready {
    #[inline]
    fn bitor_assign(&mut self, other: Ready) {
        self.0 |= other.0;
    }
}

impl ops::BitAnd<Ready> for Ready {
    type Output = Ready;

    #[inline]
    fn bitand(self, other: Ready) -> Ready {
        Ready(self.0 & other.0)
    }
}

impl ops::Sub<Ready> for Ready {
    type Output = Ready;

    #[inline]
    fn sub(self, other: Ready) -> Ready {
        Ready(self.0 & !other.0)
    }
}

impl fmt::Debug for Ready {
    fn fmt(&self, fmt: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt.debug_struct("Ready")
            .field("is_readable", &self.is_readable())
            .field("is_writable", &self.is_writable())
            .field("is_read_closed", &self.is_read_closed())
            .field("is_write_closed", &self.is_write_closed())
            .field("is_priority", &self.is_priority())
            .field("is_error", &self.is_error())
            .finish()
    }
}
