//! `AsyncFd`: an object with a descriptor, registered for readiness (see
//! the module docs for which descriptors a simulation can watch), and the
//! guards of a readiness seen on it: the caller tries its operation, then
//! clears the readiness (it would block) or keeps it.

use super::super::{Interest, Ready};
use super::error::{AsyncFdRegisterError, TryIoError};
use super::watch::{Event, Slot, Watch};
use sim_net::std_net::Watchable;
use std::fmt;
use std::io;
use std::os::unix::io::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::task::{Context, Poll};

/// An object whose descriptor is registered for readiness events: wait
/// until it is readable or writable, then do the I/O through the object.
///
/// # Examples
///
/// ```no_run
/// use std::io::Read;
/// use std::os::unix::net::UnixStream;
/// use tokio::io::unix::AsyncFd;
///
/// # async fn demo() -> std::io::Result<()> {
/// let (a, _b) = UnixStream::pair()?;
/// a.set_nonblocking(true)?;
/// // SAFETY: `a` owns its descriptor, which stays open while registered.
/// let a = unsafe { AsyncFd::register(a) }?;
/// let mut buf = [0; 64];
/// let n = loop {
///     let mut guard = a.readable().await?;
///     match guard.try_io(|inner| inner.get_ref().read(&mut buf)) {
///         Ok(result) => break result?,
///         Err(_would_block) => continue,
///     }
/// };
/// # let _ = n;
/// # Ok(())
/// # }
/// ```
pub struct AsyncFd<T: AsRawFd> {
    /// Auto traits as tokio's (see `crate::util::NoUnwindSafety`).
    _unwind: crate::util::NoUnwindSafety,
    /// Always `Some` but in `into_inner` and `drop`.
    inner: Option<T>,
    fd: RawFd,
    watch: Watch,
}

/// Why descriptor `fd` cannot be watched, or its watch.
fn watch_of(fd: RawFd, interest: Interest) -> io::Result<Watch> {
    match sim_net::std_net::watchable(fd) {
        Watchable::Socket(id) => Watch::new(id, interest),
        Watchable::Unbound => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "sim: AsyncFd on simulated socket {fd}, which is not bound, listening or \
                 connected yet: nothing can make it ready. Bind or connect it first."
            ),
        )),
        Watchable::NotSimulated => Err(io::Error::other(format!(
            "sim: escape refused: AsyncFd on the real file descriptor {fd}. Its readiness \
             comes from the operating system, outside the simulation, so the run could not \
             be replayed from its seed. Make the socket during the run (std::net, socket2, \
             socketpair), use the simulated sockets of tokio::net, or an in-memory stream \
             (tokio::io::duplex)."
        ))),
    }
}

impl<T: AsRawFd> AsyncFd<T> {
    /// Registers `inner` for read and write readiness.
    ///
    /// # Safety
    /// As tokio's: `inner`'s descriptor must stay valid while registered.
    ///
    /// # Errors
    /// On a descriptor the simulation cannot watch (see the module docs).
    ///
    /// # Panics
    /// Outside a runtime with I/O enabled, as in tokio.
    #[track_caller]
    pub unsafe fn register(inner: T) -> Result<Self, AsyncFdRegisterError<T>> {
        Self::make(inner, Interest::READABLE | Interest::WRITABLE)
    }

    /// Registers `inner` for `interest`.
    ///
    /// # Safety
    /// As tokio's: `inner`'s descriptor must stay valid while registered.
    ///
    /// # Errors
    /// On a descriptor the simulation cannot watch (see the module docs).
    ///
    /// # Panics
    /// Outside a runtime with I/O enabled, as in tokio.
    #[track_caller]
    pub unsafe fn register_with_interest(
        inner: T,
        interest: Interest,
    ) -> Result<Self, AsyncFdRegisterError<T>> {
        Self::make(inner, interest)
    }

    /// Registers `inner` for read and write readiness.
    ///
    /// # Errors
    /// On a descriptor the simulation cannot watch (see the module docs).
    ///
    /// # Panics
    /// Outside a runtime with I/O enabled, as in tokio.
    #[deprecated(note = "not sound without I/O safety (the descriptor may close while \
                         registered): use the unsafe `AsyncFd::register` instead")]
    #[track_caller]
    pub fn new(inner: T) -> io::Result<Self>
    where
        T: AsRawFd,
    {
        Self::make(inner, Interest::READABLE | Interest::WRITABLE).map_err(Into::into)
    }

    /// Registers `inner` for `interest`.
    ///
    /// # Errors
    /// On a descriptor the simulation cannot watch (see the module docs).
    ///
    /// # Panics
    /// Outside a runtime with I/O enabled, as in tokio.
    #[deprecated(note = "not sound without I/O safety (the descriptor may close while \
                         registered): use the unsafe `AsyncFd::register_with_interest` instead")]
    #[track_caller]
    pub fn with_interest(inner: T, interest: Interest) -> io::Result<Self>
    where
        T: AsRawFd,
    {
        Self::make(inner, interest).map_err(Into::into)
    }

    /// Registers `inner` for read and write readiness; on failure the
    /// object comes back in the error.
    ///
    /// # Errors
    /// On a descriptor the simulation cannot watch (see the module docs).
    ///
    /// # Panics
    /// Outside a runtime with I/O enabled, as in tokio.
    #[deprecated(note = "not sound without I/O safety (the descriptor may close while \
                         registered): use the unsafe `AsyncFd::register` instead")]
    #[track_caller]
    pub fn try_new(inner: T) -> Result<Self, AsyncFdRegisterError<T>>
    where
        T: AsRawFd,
    {
        Self::make(inner, Interest::READABLE | Interest::WRITABLE)
    }

    /// Registers `inner` for `interest`; on failure the object comes back
    /// in the error.
    ///
    /// # Errors
    /// On a descriptor the simulation cannot watch (see the module docs).
    ///
    /// # Panics
    /// Outside a runtime with I/O enabled, as in tokio.
    #[deprecated(note = "not sound without I/O safety (the descriptor may close while \
                         registered): use the unsafe `AsyncFd::register_with_interest` instead")]
    #[track_caller]
    pub fn try_with_interest(inner: T, interest: Interest) -> Result<Self, AsyncFdRegisterError<T>>
    where
        T: AsRawFd,
    {
        Self::make(inner, interest)
    }

    #[track_caller]
    fn make(inner: T, interest: Interest) -> Result<Self, AsyncFdRegisterError<T>> {
        crate::util::require_io();
        let fd = inner.as_raw_fd();
        match watch_of(fd, interest) {
            Ok(watch) => Ok(AsyncFd {
                _unwind: std::marker::PhantomData,
                inner: Some(inner),
                fd,
                watch,
            }),
            Err(cause) => Err(AsyncFdRegisterError { inner, cause }),
        }
    }

    /// The inner object.
    pub fn get_ref(&self) -> &T {
        self.inner
            .as_ref()
            .expect("sim: AsyncFd holds its object until dropped")
    }

    /// The inner object, mutably.
    pub fn get_mut(&mut self) -> &mut T {
        self.inner
            .as_mut()
            .expect("sim: AsyncFd holds its object until dropped")
    }

    /// The inner object, deregistered (its descriptor stays open).
    pub fn into_inner(mut self) -> T {
        self.inner
            .take()
            .expect("sim: AsyncFd holds its object until dropped")
    }

    fn guard(&self, event: Event) -> AsyncFdReadyGuard<'_, T> {
        AsyncFdReadyGuard::new(self, event)
    }

    /// Polls for read readiness. Only the waker of the last call is
    /// woken.
    ///
    /// # Errors
    /// When the runtime shut down.
    pub fn poll_read_ready<'a>(
        &'a self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyGuard<'a, T>>> {
        self.watch
            .poll(Interest::READABLE, cx, Slot::Poll)
            .map_ok(|event| self.guard(event))
    }

    /// Polls for read readiness, uniquely.
    ///
    /// # Errors
    /// When the runtime shut down.
    pub fn poll_read_ready_mut<'a>(
        &'a mut self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyMutGuard<'a, T>>> {
        match self.watch.poll(Interest::READABLE, cx, Slot::Poll) {
            Poll::Ready(Ok(event)) => Poll::Ready(Ok(AsyncFdReadyMutGuard::new(self, event))),
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => Poll::Pending,
        }
    }

    /// Polls for write readiness. Only the waker of the last call is
    /// woken.
    ///
    /// # Errors
    /// When the runtime shut down.
    pub fn poll_write_ready<'a>(
        &'a self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyGuard<'a, T>>> {
        self.watch
            .poll(Interest::WRITABLE, cx, Slot::Poll)
            .map_ok(|event| self.guard(event))
    }

    /// Polls for write readiness, uniquely.
    ///
    /// # Errors
    /// When the runtime shut down.
    pub fn poll_write_ready_mut<'a>(
        &'a mut self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyMutGuard<'a, T>>> {
        match self.watch.poll(Interest::WRITABLE, cx, Slot::Poll) {
            Poll::Ready(Ok(event)) => Poll::Ready(Ok(AsyncFdReadyMutGuard::new(self, event))),
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => Poll::Pending,
        }
    }

    /// Waits on the watch alone: a future of `ready_mut` borrows `self`
    /// uniquely and the watch (`Sync`) shared, so it is `Send` whenever
    /// `T` is, as tokio's, not only when `T` is `Sync` as well.
    async fn wait(watch: &Watch, interest: Interest) -> io::Result<Event> {
        std::future::poll_fn(|cx| watch.poll(interest, cx, Slot::Task)).await
    }

    /// Waits for any of `interest`.
    ///
    /// # Errors
    /// When the runtime shut down.
    pub async fn ready(&self, interest: Interest) -> io::Result<AsyncFdReadyGuard<'_, T>> {
        let event = Self::wait(&self.watch, interest).await?;
        Ok(self.guard(event))
    }

    /// Waits for any of `interest`, uniquely.
    ///
    /// # Errors
    /// When the runtime shut down.
    pub async fn ready_mut(
        &mut self,
        interest: Interest,
    ) -> io::Result<AsyncFdReadyMutGuard<'_, T>> {
        let event = Self::wait(&self.watch, interest).await?;
        Ok(AsyncFdReadyMutGuard::new(self, event))
    }

    /// Waits for read readiness.
    ///
    /// # Errors
    /// When the runtime shut down.
    pub async fn readable<'a>(&'a self) -> io::Result<AsyncFdReadyGuard<'a, T>> {
        self.ready(Interest::READABLE).await
    }

    /// Waits for read readiness, uniquely.
    ///
    /// # Errors
    /// When the runtime shut down.
    pub async fn readable_mut<'a>(&'a mut self) -> io::Result<AsyncFdReadyMutGuard<'a, T>> {
        self.ready_mut(Interest::READABLE).await
    }

    /// Waits for write readiness.
    ///
    /// # Errors
    /// When the runtime shut down.
    pub async fn writable<'a>(&'a self) -> io::Result<AsyncFdReadyGuard<'a, T>> {
        self.ready(Interest::WRITABLE).await
    }

    /// Waits for write readiness, uniquely.
    ///
    /// # Errors
    /// When the runtime shut down.
    pub async fn writable_mut<'a>(&'a mut self) -> io::Result<AsyncFdReadyMutGuard<'a, T>> {
        self.ready_mut(Interest::WRITABLE).await
    }

    /// Runs `f` whenever `interest` is ready, until it does not block.
    ///
    /// # Errors
    /// `f`'s error, or the runtime's shutdown.
    pub async fn async_io<R>(
        &self,
        interest: Interest,
        mut f: impl FnMut(&T) -> io::Result<R>,
    ) -> io::Result<R> {
        // Bounded by events: each pass waits for a new readiness.
        loop {
            let mut guard = self.ready(interest).await?;
            if let Ok(result) = guard.try_io(|fd| f(fd.get_ref())) {
                return result;
            }
        }
    }

    /// As [`AsyncFd::async_io`], uniquely.
    ///
    /// # Errors
    /// `f`'s error, or the runtime's shutdown.
    pub async fn async_io_mut<R>(
        &mut self,
        interest: Interest,
        mut f: impl FnMut(&mut T) -> io::Result<R>,
    ) -> io::Result<R> {
        // Bounded by events: each pass waits for a new readiness.
        loop {
            let mut guard = self.ready_mut(interest).await?;
            if let Ok(result) = guard.try_io(|fd| f(fd.get_mut())) {
                return result;
            }
        }
    }

    /// Runs `f` if `interest` is ready now; clears that readiness when `f`
    /// says `WouldBlock`.
    ///
    /// # Errors
    /// `WouldBlock` when not ready, `f`'s error, or the runtime's
    /// shutdown.
    pub fn try_io<R>(
        &self,
        interest: Interest,
        f: impl FnOnce(&T) -> io::Result<R>,
    ) -> io::Result<R> {
        let event = self.ready_now(interest)?;
        let result = f(self.get_ref());
        self.clear_if_blocked(&result, event);
        result
    }

    /// As [`AsyncFd::try_io`], uniquely.
    ///
    /// # Errors
    /// `WouldBlock` when not ready, `f`'s error, or the runtime's
    /// shutdown.
    pub fn try_io_mut<R>(
        &mut self,
        interest: Interest,
        f: impl FnOnce(&mut T) -> io::Result<R>,
    ) -> io::Result<R> {
        let event = self.ready_now(interest)?;
        let result = f(self.get_mut());
        self.clear_if_blocked(&result, event);
        result
    }

    fn ready_now(&self, interest: Interest) -> io::Result<Event> {
        self.watch
            .now(interest)?
            .ok_or_else(|| io::ErrorKind::WouldBlock.into())
    }

    fn clear_if_blocked<R>(&self, result: &io::Result<R>, mut event: Event) {
        if would_block(result) {
            self.clear(&mut event, Ready::ALL);
        }
    }

    /// Clears the `which` part of what `event` saw (closed states stay,
    /// in the watch and in `event`).
    fn clear(&self, event: &mut Event, which: Ready) {
        self.watch.clear(*event, which);
        event.ready = event.ready - (which & (Ready::READABLE | Ready::WRITABLE));
    }
}

impl<T: AsRawFd> AsRawFd for AsyncFd<T> {
    fn as_raw_fd(&self) -> RawFd {
        self.fd
    }
}

impl<T: AsRawFd> AsFd for AsyncFd<T> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        // SAFETY: the descriptor stays open while the inner object, which
        // owns it, lives in `self` (tokio's contract for `AsyncFd`).
        unsafe { BorrowedFd::borrow_raw(self.fd) }
    }
}

impl<T: fmt::Debug + AsRawFd> fmt::Debug for AsyncFd<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncFd")
            .field("inner", &self.inner)
            .finish()
    }
}

impl<T: AsRawFd> Drop for AsyncFd<T> {
    /// Deregisters before the inner object (which may close the
    /// descriptor) is dropped, as tokio does.
    fn drop(&mut self) {
        drop(self.inner.take());
    }
}

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
        self.async_fd.clear(&mut self.event, ready);
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
        self.async_fd.clear(&mut self.event, ready);
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
