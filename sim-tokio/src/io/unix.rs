//! Readiness of raw file descriptors: `AsyncFd`.
//!
//! A real descriptor's readiness comes from the operating system, outside
//! the simulation: a run that waited on one could not be replayed from its
//! seed. So every way of making an `AsyncFd` fails in a simulation, with an
//! error that names the escape, and no `AsyncFd` value can exist (it holds
//! an uninhabited field). Its methods keep tokio's signatures, so code that
//! mentions them still builds.

use super::{Interest, Ready};
use std::convert::Infallible;
use std::error::Error;
use std::fmt;
use std::io;
use std::os::unix::io::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::task::{Context, Poll};

/// An I/O object registered for readiness events: refused in a simulation
/// (see the module docs).
pub struct AsyncFd<T: AsRawFd> {
    /// Auto traits as tokio's (see `crate::util::NoUnwindSafety`).
    _unwind: crate::util::NoUnwindSafety,
    inner: T,
    // No AsyncFd is ever made: every constructor refuses.
    never: Infallible,
}

/// Readiness of an [`AsyncFd`], held while trying an operation.
pub struct AsyncFdReadyGuard<'a, T: AsRawFd> {
    /// Auto traits as tokio's (see `crate::util::NoUnwindSafety`).
    _unwind: crate::util::NoUnwindSafety,
    async_fd: &'a AsyncFd<T>,
}

/// Readiness of a uniquely borrowed [`AsyncFd`].
pub struct AsyncFdReadyMutGuard<'a, T: AsRawFd> {
    /// Auto traits as tokio's (see `crate::util::NoRefUnwindSafe`).
    _unwind: crate::util::NoRefUnwindSafe,
    async_fd: &'a mut AsyncFd<T>,
}

/// The operation would block: the readiness was cleared.
#[derive(Debug)]
pub struct TryIoError(());

/// Registering a descriptor failed; the object comes back with the cause.
pub struct AsyncFdRegisterError<T> {
    inner: T,
    cause: io::Error,
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

#[track_caller]
fn refuse(fd: RawFd) -> io::Error {
    // As tokio: outside a runtime, or on one without I/O, there is no
    // reactor to register with.
    crate::util::require_io();
    io::Error::other(format!(
        "sim: escape refused: AsyncFd on the real file descriptor {fd}. Its readiness comes \
         from the operating system, outside the simulation, so the run could not be replayed \
         from its seed. Use the simulated sockets of tokio::net, or an in-memory stream \
         (tokio::io::duplex), instead."
    ))
}

impl<T: AsRawFd> AsyncFd<T> {
    fn unreachable(&self) -> ! {
        match self.never {}
    }

    /// Refused in a simulation.
    ///
    /// # Safety
    /// As tokio's: `inner`'s descriptor must stay valid while registered.
    ///
    /// # Errors
    /// Always: a real descriptor is an escape from the simulation.
    ///
    /// # Panics
    /// Outside a runtime, as in tokio.
    #[track_caller]
    pub unsafe fn register(inner: T) -> Result<Self, AsyncFdRegisterError<T>> {
        Self::register_with_interest(inner, Interest::READABLE | Interest::WRITABLE)
    }

    /// Refused in a simulation.
    ///
    /// # Safety
    /// As tokio's: `inner`'s descriptor must stay valid while registered.
    ///
    /// # Errors
    /// Always: a real descriptor is an escape from the simulation.
    ///
    /// # Panics
    /// Outside a runtime, as in tokio.
    #[track_caller]
    pub unsafe fn register_with_interest(
        inner: T,
        interest: Interest,
    ) -> Result<Self, AsyncFdRegisterError<T>> {
        let _ = interest;
        let cause = refuse(inner.as_raw_fd());
        Err(AsyncFdRegisterError { inner, cause })
    }

    /// Refused in a simulation.
    ///
    /// # Errors
    /// Always: a real descriptor is an escape from the simulation.
    ///
    /// # Panics
    /// Outside a runtime, as in tokio.
    #[track_caller]
    pub fn new(inner: T) -> io::Result<Self>
    where
        T: AsRawFd,
    {
        Self::with_interest(inner, Interest::READABLE | Interest::WRITABLE)
    }

    /// Refused in a simulation.
    ///
    /// # Errors
    /// Always: a real descriptor is an escape from the simulation.
    ///
    /// # Panics
    /// Outside a runtime, as in tokio.
    #[track_caller]
    pub fn with_interest(inner: T, interest: Interest) -> io::Result<Self>
    where
        T: AsRawFd,
    {
        Self::try_with_interest(inner, interest).map_err(Into::into)
    }

    /// Refused in a simulation; the object comes back in the error.
    ///
    /// # Errors
    /// Always: a real descriptor is an escape from the simulation.
    ///
    /// # Panics
    /// Outside a runtime, as in tokio.
    #[track_caller]
    pub fn try_new(inner: T) -> Result<Self, AsyncFdRegisterError<T>>
    where
        T: AsRawFd,
    {
        Self::try_with_interest(inner, Interest::READABLE | Interest::WRITABLE)
    }

    /// Refused in a simulation; the object comes back in the error.
    ///
    /// # Errors
    /// Always: a real descriptor is an escape from the simulation.
    ///
    /// # Panics
    /// Outside a runtime, as in tokio.
    #[track_caller]
    pub fn try_with_interest(inner: T, interest: Interest) -> Result<Self, AsyncFdRegisterError<T>>
    where
        T: AsRawFd,
    {
        // SAFETY: nothing is registered; the object is handed back.
        unsafe { Self::register_with_interest(inner, interest) }
    }

    /// The inner object.
    pub fn get_ref(&self) -> &T {
        let _ = &self.inner;
        self.unreachable()
    }

    /// The inner object, mutably.
    pub fn get_mut(&mut self) -> &mut T {
        self.unreachable()
    }

    /// The inner object, deregistered.
    pub fn into_inner(self) -> T {
        self.unreachable()
    }

    /// Polls for read readiness.
    pub fn poll_read_ready<'a>(
        &'a self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyGuard<'a, T>>> {
        let _ = cx;
        self.unreachable()
    }

    /// Polls for read readiness, uniquely.
    pub fn poll_read_ready_mut<'a>(
        &'a mut self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyMutGuard<'a, T>>> {
        let _ = cx;
        self.unreachable()
    }

    /// Polls for write readiness.
    pub fn poll_write_ready<'a>(
        &'a self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyGuard<'a, T>>> {
        let _ = cx;
        self.unreachable()
    }

    /// Polls for write readiness, uniquely.
    pub fn poll_write_ready_mut<'a>(
        &'a mut self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyMutGuard<'a, T>>> {
        let _ = cx;
        self.unreachable()
    }

    /// Waits for any of `interest`.
    pub async fn ready(&self, interest: Interest) -> io::Result<AsyncFdReadyGuard<'_, T>> {
        let _ = interest;
        self.unreachable()
    }

    /// Waits for any of `interest`, uniquely.
    pub async fn ready_mut(
        &mut self,
        interest: Interest,
    ) -> io::Result<AsyncFdReadyMutGuard<'_, T>> {
        let _ = interest;
        self.unreachable()
    }

    /// Waits for read readiness.
    pub async fn readable<'a>(&'a self) -> io::Result<AsyncFdReadyGuard<'a, T>> {
        self.unreachable()
    }

    /// Waits for read readiness, uniquely.
    pub async fn readable_mut<'a>(&'a mut self) -> io::Result<AsyncFdReadyMutGuard<'a, T>> {
        self.unreachable()
    }

    /// Waits for write readiness.
    pub async fn writable<'a>(&'a self) -> io::Result<AsyncFdReadyGuard<'a, T>> {
        self.unreachable()
    }

    /// Waits for write readiness, uniquely.
    pub async fn writable_mut<'a>(&'a mut self) -> io::Result<AsyncFdReadyMutGuard<'a, T>> {
        self.unreachable()
    }

    /// Runs `f` whenever `interest` is ready, until it does not block.
    pub async fn async_io<R>(
        &self,
        interest: Interest,
        mut f: impl FnMut(&T) -> io::Result<R>,
    ) -> io::Result<R> {
        let _ = (interest, &mut f);
        self.unreachable()
    }

    /// As [`AsyncFd::async_io`], uniquely.
    pub async fn async_io_mut<R>(
        &mut self,
        interest: Interest,
        mut f: impl FnMut(&mut T) -> io::Result<R>,
    ) -> io::Result<R> {
        let _ = (interest, &mut f);
        self.unreachable()
    }

    /// Runs `f` if `interest` is ready now.
    pub fn try_io<R>(
        &self,
        interest: Interest,
        f: impl FnOnce(&T) -> io::Result<R>,
    ) -> io::Result<R> {
        let _ = (interest, f);
        self.unreachable()
    }

    /// As [`AsyncFd::try_io`], uniquely.
    pub fn try_io_mut<R>(
        &mut self,
        interest: Interest,
        f: impl FnOnce(&mut T) -> io::Result<R>,
    ) -> io::Result<R> {
        let _ = (interest, f);
        self.unreachable()
    }
}

impl<T: AsRawFd> AsRawFd for AsyncFd<T> {
    fn as_raw_fd(&self) -> RawFd {
        self.unreachable()
    }
}

impl<T: AsRawFd> AsFd for AsyncFd<T> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.unreachable()
    }
}

impl<T: std::fmt::Debug + AsRawFd> std::fmt::Debug for AsyncFd<T> {
    fn fmt(&self, _f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.unreachable()
    }
}

impl<T: AsRawFd> Drop for AsyncFd<T> {
    fn drop(&mut self) {
        self.unreachable()
    }
}

impl<'a, Inner: AsRawFd> AsyncFdReadyGuard<'a, Inner> {
    /// Clears the readiness.
    pub fn clear_ready(&mut self) {
        self.async_fd.unreachable()
    }

    /// Clears part of the readiness.
    pub fn clear_ready_matching(&mut self, ready: Ready) {
        let _ = ready;
        self.async_fd.unreachable()
    }

    /// Keeps the readiness for the next wait.
    pub fn retain_ready(&mut self) {
        self.async_fd.unreachable()
    }

    /// The readiness.
    pub fn ready(&self) -> Ready {
        self.async_fd.unreachable()
    }

    /// Runs `f`, clearing the readiness if it would block.
    ///
    /// # Errors
    /// [`TryIoError`] when `f` would block.
    pub fn try_io<R>(
        &mut self,
        f: impl FnOnce(&'a AsyncFd<Inner>) -> io::Result<R>,
    ) -> Result<io::Result<R>, TryIoError> {
        let _ = f;
        self.async_fd.unreachable()
    }

    /// The `AsyncFd`.
    pub fn get_ref(&self) -> &'a AsyncFd<Inner> {
        self.async_fd
    }

    /// The inner object.
    pub fn get_inner(&self) -> &'a Inner {
        self.async_fd.get_ref()
    }
}

impl<'a, Inner: AsRawFd> AsyncFdReadyMutGuard<'a, Inner> {
    /// Clears the readiness.
    pub fn clear_ready(&mut self) {
        self.async_fd.unreachable()
    }

    /// Clears part of the readiness.
    pub fn clear_ready_matching(&mut self, ready: Ready) {
        let _ = ready;
        self.async_fd.unreachable()
    }

    /// Keeps the readiness for the next wait.
    pub fn retain_ready(&mut self) {
        self.async_fd.unreachable()
    }

    /// The readiness.
    pub fn ready(&self) -> Ready {
        self.async_fd.unreachable()
    }

    /// Runs `f`, clearing the readiness if it would block.
    ///
    /// # Errors
    /// [`TryIoError`] when `f` would block.
    pub fn try_io<R>(
        &mut self,
        f: impl FnOnce(&mut AsyncFd<Inner>) -> io::Result<R>,
    ) -> Result<io::Result<R>, TryIoError> {
        let _ = f;
        self.async_fd.unreachable()
    }

    /// The `AsyncFd`.
    pub fn get_ref(&self) -> &AsyncFd<Inner> {
        self.async_fd
    }

    /// The `AsyncFd`, mutably.
    pub fn get_mut(&mut self) -> &mut AsyncFd<Inner> {
        self.async_fd
    }

    /// The inner object.
    pub fn get_inner(&self) -> &Inner {
        self.async_fd.get_ref()
    }

    /// The inner object, mutably.
    pub fn get_inner_mut(&mut self) -> &mut Inner {
        self.async_fd.get_mut()
    }
}

impl<'a, T: std::fmt::Debug + AsRawFd> std::fmt::Debug for AsyncFdReadyGuard<'a, T> {
    fn fmt(&self, _f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.async_fd.unreachable()
    }
}

impl<'a, T: std::fmt::Debug + AsRawFd> std::fmt::Debug for AsyncFdReadyMutGuard<'a, T> {
    fn fmt(&self, _f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.async_fd.unreachable()
    }
}
