//! The errors of `AsyncFd`: a registration refused, and a `try_io` that
//! would block.

use std::error::Error;
use std::fmt;
use std::io;

/// The operation would block: the readiness was cleared.
#[derive(Debug)]
pub struct TryIoError(pub(super) ());

/// Registering a descriptor failed; the object comes back with the cause.
pub struct AsyncFdRegisterError<T> {
    pub(super) inner: T,
    pub(super) cause: io::Error,
}

impl<T> AsyncFdRegisterError<T> {
    /// The object and the cause.
    pub fn into_parts(self) -> (T, io::Error) {
        (self.inner, self.cause)
    }
}

impl<T> fmt::Display for AsyncFdRegisterError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.cause, f)
    }
}

impl<T> fmt::Debug for AsyncFdRegisterError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.cause, f)
    }
}

impl<T> Error for AsyncFdRegisterError<T> {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        Some(&self.cause)
    }
}

impl<T> From<AsyncFdRegisterError<T>> for io::Error {
    fn from(value: AsyncFdRegisterError<T>) -> Self {
        value.cause
    }
}
