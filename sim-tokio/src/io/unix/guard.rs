//! The guards of a readiness seen on an `AsyncFd`: the caller tries its
//! operation, then clears the readiness (it would block) or keeps it.

use super::async_fd::AsyncFd;
use super::error::TryIoError;
use super::watch::Event;
use crate::io::Ready;
use std::fmt;
use std::io;
use std::os::unix::io::AsRawFd;

/// A readiness of an [`AsyncFd`], held while trying an operation.
#[must_use = "You must explicitly choose whether to clear the readiness state by calling a method on ReadyGuard"]
pub struct AsyncFdReadyGuard<'a, T: AsRawFd> {
    /// Auto traits as tokio's (see `crate::util::NoUnwindSafety`).
    _unwind: crate::util::NoUnwindSafety,
    async_fd: &'a AsyncFd<T>,
    event: Event,
}

/// A readiness of a uniquely borrowed [`AsyncFd`].
#[must_use = "You must explicitly choose whether to clear the readiness state by calling a method on ReadyGuard"]
pub struct AsyncFdReadyMutGuard<'a, T: AsRawFd> {
    /// Auto traits as tokio's (see `crate::util::NoRefUnwindSafe`).
    _unwind: crate::util::NoRefUnwindSafe,
    async_fd: &'a mut AsyncFd<T>,
    event: Event,
}

fn would_block<R>(result: &io::Result<R>) -> bool {
    matches!(result, Err(e) if e.kind() == io::ErrorKind::WouldBlock)
}

impl<'a, Inner: AsRawFd> AsyncFdReadyGuard<'a, Inner> {
    pub(super) fn new(async_fd: &'a AsyncFd<Inner>, event: Event) -> Self {
        AsyncFdReadyGuard {
            _unwind: std::marker::PhantomData,
            async_fd,
            event,
        }
    }

    /// Clears the readiness: the next wait waits for a new event.
    pub fn clear_ready(&mut self) {
        self.clear_ready_matching(self.event.ready);
    }

    /// Clears the `ready` part of the readiness (closed states stay).
    pub fn clear_ready_matching(&mut self, ready: Ready) {
        self.async_fd.clear(self.event, ready);
        self.event.ready = self.event.ready - (ready & (Ready::READABLE | Ready::WRITABLE));
    }

    /// Keeps the readiness for the next wait (what dropping the guard
    /// does too).
    pub fn retain_ready(&mut self) {}

    /// The readiness this guard saw.
    pub fn ready(&self) -> Ready {
        self.event.ready
    }

    /// Runs `f`; clears the readiness if it says `WouldBlock`.
    ///
    /// # Errors
    /// [`TryIoError`] when `f` would block.
    pub fn try_io<R>(
        &mut self,
        f: impl FnOnce(&'a AsyncFd<Inner>) -> io::Result<R>,
    ) -> Result<io::Result<R>, TryIoError> {
        let result = f(self.async_fd);
        if would_block(&result) {
            self.clear_ready();
            return Err(TryIoError(()));
        }
        Ok(result)
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
    pub(super) fn new(async_fd: &'a mut AsyncFd<Inner>, event: Event) -> Self {
        AsyncFdReadyMutGuard {
            _unwind: std::marker::PhantomData,
            async_fd,
            event,
        }
    }

    /// Clears the readiness: the next wait waits for a new event.
    pub fn clear_ready(&mut self) {
        self.clear_ready_matching(self.event.ready);
    }

    /// Clears the `ready` part of the readiness (closed states stay).
    pub fn clear_ready_matching(&mut self, ready: Ready) {
        self.async_fd.clear(self.event, ready);
        self.event.ready = self.event.ready - (ready & (Ready::READABLE | Ready::WRITABLE));
    }

    /// Keeps the readiness for the next wait (what dropping the guard
    /// does too).
    pub fn retain_ready(&mut self) {}

    /// The readiness this guard saw.
    pub fn ready(&self) -> Ready {
        self.event.ready
    }

    /// Runs `f`; clears the readiness if it says `WouldBlock`.
    ///
    /// # Errors
    /// [`TryIoError`] when `f` would block.
    pub fn try_io<R>(
        &mut self,
        f: impl FnOnce(&mut AsyncFd<Inner>) -> io::Result<R>,
    ) -> Result<io::Result<R>, TryIoError> {
        let result = f(self.async_fd);
        if would_block(&result) {
            self.clear_ready();
            return Err(TryIoError(()));
        }
        Ok(result)
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

impl<T: fmt::Debug + AsRawFd> fmt::Debug for AsyncFdReadyGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReadyGuard")
            .field("async_fd", self.async_fd)
            .finish()
    }
}

impl<T: fmt::Debug + AsRawFd> fmt::Debug for AsyncFdReadyMutGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MutReadyGuard")
            .field("async_fd", &self.async_fd)
            .finish()
    }
}
