//! Multi-producer, single-consumer channels, bounded and unbounded.
//!
//! A bounded channel's capacity is a FIFO semaphore: senders wait for a slot
//! in arrival order, a `send` future dropped while waiting gives up its
//! place without losing anyone else's, and the receiver frees a slot with
//! each value it takes.

use super::batch_semaphore::Semaphore;
use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex as StdMutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// Error types.
pub mod error {
    use std::fmt;

    /// The receiver is gone; the value comes back.
    #[derive(PartialEq, Eq, Clone, Copy)]
    pub struct SendError<T>(pub T);

    impl<T> fmt::Debug for SendError<T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.debug_struct("SendError").finish_non_exhaustive()
        }
    }

    impl<T> fmt::Display for SendError<T> {
        fn fmt(&self, fmt: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(fmt, "channel closed")
        }
    }

    impl<T> std::error::Error for SendError<T> {}

    /// Why `try_send` failed; the value comes back.
    #[derive(PartialEq, Eq, Clone, Copy)]
    pub enum TrySendError<T> {
        /// The channel is full.
        Full(T),
        /// The receiver is gone.
        Closed(T),
    }

    impl<T> TrySendError<T> {
        /// The value.
        pub fn into_inner(self) -> T {
            match self {
                TrySendError::Full(v) | TrySendError::Closed(v) => v,
            }
        }
    }

    impl<T> fmt::Debug for TrySendError<T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self {
                TrySendError::Full(..) => "Full(..)".fmt(f),
                TrySendError::Closed(..) => "Closed(..)".fmt(f),
            }
        }
    }

    impl<T> fmt::Display for TrySendError<T> {
        fn fmt(&self, fmt: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self {
                TrySendError::Full(..) => write!(fmt, "no available capacity"),
                TrySendError::Closed(..) => write!(fmt, "channel closed"),
            }
        }
    }

    impl<T> std::error::Error for TrySendError<T> {}

    impl<T> From<SendError<T>> for TrySendError<T> {
        fn from(src: SendError<T>) -> TrySendError<T> {
            TrySendError::Closed(src.0)
        }
    }

    /// Why `try_recv` gave nothing.
    #[derive(PartialEq, Eq, Clone, Copy, Debug)]
    pub enum TryRecvError {
        /// Nothing queued now.
        Empty,
        /// Nothing queued and nothing ever will be.
        Disconnected,
    }

    impl fmt::Display for TryRecvError {
        fn fmt(&self, fmt: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self {
                TryRecvError::Empty => "receiving on an empty channel".fmt(fmt),
                TryRecvError::Disconnected => "receiving on a closed channel".fmt(fmt),
            }
        }
    }

    impl std::error::Error for TryRecvError {}

    /// Why `send_timeout` failed; the value comes back.
    #[derive(PartialEq, Eq, Clone, Copy)]
    pub enum SendTimeoutError<T> {
        /// No slot freed up in time.
        Timeout(T),
        /// The receiver is gone.
        Closed(T),
    }

    impl<T> SendTimeoutError<T> {
        /// The value.
        pub fn into_inner(self) -> T {
            match self {
                SendTimeoutError::Timeout(v) | SendTimeoutError::Closed(v) => v,
            }
        }
    }

    impl<T> fmt::Debug for SendTimeoutError<T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self {
                SendTimeoutError::Timeout(..) => "Timeout(..)".fmt(f),
                SendTimeoutError::Closed(..) => "Closed(..)".fmt(f),
            }
        }
    }

    impl<T> fmt::Display for SendTimeoutError<T> {
        fn fmt(&self, fmt: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self {
                SendTimeoutError::Timeout(..) => write!(fmt, "timed out waiting on send operation"),
                SendTimeoutError::Closed(..) => write!(fmt, "channel closed"),
            }
        }
    }

    impl<T> std::error::Error for SendTimeoutError<T> {}
}

use error::{SendError, SendTimeoutError, TryRecvError, TrySendError};

struct State<T> {
    queue: VecDeque<T>,
    senders: usize,
    weak_senders: usize,
    rx_closed: bool,
    /// Permits reserved but not yet used to send.
    outstanding: usize,
    rx_waker: Option<Waker>,
    closed_wakers: Vec<Waker>,
}

struct Chan<T> {
    state: StdMutex<State<T>>,
    /// The free slots of a bounded channel; `None` when unbounded.
    sem: Option<Semaphore>,
    capacity: usize,
    /// Where the channel was made (for what a pending task waits on).
    site: &'static std::panic::Location<'static>,
}

impl<T> Chan<T> {
    #[track_caller]
    fn new(capacity: Option<usize>) -> Arc<Chan<T>> {
        Arc::new(Chan {
            state: StdMutex::new(State {
                queue: VecDeque::new(),
                senders: 1,
                weak_senders: 0,
                rx_closed: false,
                outstanding: 0,
                rx_waker: None,
                closed_wakers: Vec::new(),
            }),
            sem: capacity.map(Semaphore::new),
            capacity: capacity.unwrap_or(usize::MAX),
            site: std::panic::Location::caller(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State<T>> {
        super::lock(&self.state)
    }

    fn sem(&self) -> &Semaphore {
        self.sem
            .as_ref()
            .expect("a bounded channel has a semaphore")
    }

    /// Queues a value for which a slot is held.
    fn push(&self, value: T, from_permit: bool) {
        let waker = {
            let mut st = self.lock();
            if from_permit {
                st.outstanding -= 1;
            }
            st.queue.push_back(value);
            st.rx_waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// A reserved slot goes unused.
    fn release_permits(&self, n: usize) {
        let waker = {
            let mut st = self.lock();
            st.outstanding -= n;
            // A closed channel's receiver may be waiting for the last permit.
            if st.rx_closed && st.outstanding == 0 {
                st.rx_waker.take()
            } else {
                None
            }
        };
        self.sem().release(n);
        if let Some(w) = waker {
            w.wake();
        }
    }

    async fn reserve(&self, n: usize) -> Result<(), ()> {
        if self.sem().acquire(n).await.is_err() {
            return Err(());
        }
        self.lock().outstanding += n;
        Ok(())
    }

    fn try_reserve(&self, n: usize) -> Result<(), TrySendError<()>> {
        match self.sem().try_acquire(n) {
            Ok(()) => {
                self.lock().outstanding += n;
                Ok(())
            }
            Err(e) if e.is_closed() => Err(TrySendError::Closed(())),
            Err(_) => Err(TrySendError::Full(())),
        }
    }

    fn close(&self) {
        let wakers = {
            let mut st = self.lock();
            st.rx_closed = true;
            std::mem::take(&mut st.closed_wakers)
        };
        if let Some(sem) = &self.sem {
            sem.close();
        }
        for w in wakers {
            w.wake();
        }
    }

    fn is_done(st: &State<T>) -> bool {
        st.queue.is_empty() && (st.senders == 0 || (st.rx_closed && st.outstanding == 0))
    }

    fn take_one(&self, st: &mut State<T>) -> Option<T> {
        let value = st.queue.pop_front()?;
        if let Some(sem) = &self.sem {
            sem.release(1);
        }
        Some(value)
    }

    fn poll_recv(&self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        if super::budget(cx).is_pending() {
            return Poll::Pending;
        }
        let mut st = self.lock();
        if let Some(value) = self.take_one(&mut st) {
            return Poll::Ready(Some(value));
        }
        if Self::is_done(&st) {
            return Poll::Ready(None);
        }
        st.rx_waker = Some(cx.waker().clone());
        self.note_recv();
        Poll::Pending
    }

    fn poll_recv_many(
        &self,
        cx: &mut Context<'_>,
        buffer: &mut Vec<T>,
        limit: usize,
    ) -> Poll<usize> {
        if limit == 0 {
            return Poll::Ready(0);
        }
        if super::budget(cx).is_pending() {
            return Poll::Pending;
        }
        let mut st = self.lock();
        let mut n = 0;
        while n < limit {
            match self.take_one(&mut st) {
                Some(value) => {
                    buffer.push(value);
                    n += 1;
                }
                None => break,
            }
        }
        if n > 0 || Self::is_done(&st) {
            return Poll::Ready(n);
        }
        st.rx_waker = Some(cx.waker().clone());
        self.note_recv();
        Poll::Pending
    }

    fn note_recv(&self) {
        crate::util::note_wait(
            "mpsc::Receiver::recv",
            sim_runtime::WaitDetail::None,
            Some(self.site),
        );
    }

    fn try_recv(&self) -> Result<T, TryRecvError> {
        let mut st = self.lock();
        if let Some(value) = self.take_one(&mut st) {
            return Ok(value);
        }
        if Self::is_done(&st) {
            Err(TryRecvError::Disconnected)
        } else {
            Err(TryRecvError::Empty)
        }
    }

    async fn closed(&self) {
        std::future::poll_fn(|cx| {
            let mut st = self.lock();
            if st.rx_closed {
                Poll::Ready(())
            } else {
                st.closed_wakers.push(cx.waker().clone());
                crate::util::note_wait(
                    "mpsc::Sender::closed",
                    sim_runtime::WaitDetail::None,
                    Some(self.site),
                );
                Poll::Pending
            }
        })
        .await
    }

    fn add_sender(&self) {
        self.lock().senders += 1;
    }

    fn drop_sender(&self) {
        let waker = {
            let mut st = self.lock();
            st.senders -= 1;
            if st.senders == 0 {
                st.rx_waker.take()
            } else {
                None
            }
        };
        if let Some(w) = waker {
            w.wake();
        }
    }

    fn upgrade(&self) -> bool {
        let mut st = self.lock();
        if st.senders == 0 {
            return false;
        }
        st.senders += 1;
        true
    }
}

/// A bounded channel of `buffer` slots.
///
/// # Panics
/// When `buffer` is 0 or above the semaphore's limit, as in tokio.
#[track_caller]
pub fn channel<T>(buffer: usize) -> (Sender<T>, Receiver<T>) {
    assert!(buffer > 0, "mpsc bounded channel requires buffer > 0");
    assert!(
        buffer <= Semaphore::MAX_PERMITS,
        "mpsc bounded channel requires buffer <= {}",
        Semaphore::MAX_PERMITS
    );
    let chan = Chan::new(Some(buffer));
    (Sender { chan: chan.clone() }, Receiver { chan })
}

/// An unbounded channel.
#[track_caller]
pub fn unbounded_channel<T>() -> (UnboundedSender<T>, UnboundedReceiver<T>) {
    let chan = Chan::new(None);
    (
        UnboundedSender { chan: chan.clone() },
        UnboundedReceiver { chan },
    )
}

/// Sends into a bounded channel.
pub struct Sender<T> {
    chan: Arc<Chan<T>>,
}

/// A sender that does not keep the channel open.
pub struct WeakSender<T> {
    chan: Arc<Chan<T>>,
}

/// A reserved slot: sending through it cannot fail or wait.
pub struct Permit<'a, T> {
    chan: &'a Chan<T>,
}

/// Several reserved slots, yielded one [`Permit`] at a time.
pub struct PermitIterator<'a, T> {
    chan: &'a Chan<T>,
    n: usize,
}

/// A reserved slot that owns its sender.
pub struct OwnedPermit<T> {
    chan: Option<Sender<T>>,
}

/// Receives from a bounded channel.
pub struct Receiver<T> {
    chan: Arc<Chan<T>>,
}

/// Sends into an unbounded channel.
pub struct UnboundedSender<T> {
    chan: Arc<Chan<T>>,
}

/// An unbounded sender that does not keep the channel open.
pub struct WeakUnboundedSender<T> {
    chan: Arc<Chan<T>>,
}

/// Receives from an unbounded channel.
pub struct UnboundedReceiver<T> {
    chan: Arc<Chan<T>>,
}

impl<T> Sender<T> {
    /// Sends `value`, waiting for a slot in FIFO order with other senders.
    ///
    /// # Errors
    /// The value, when the receiver is gone or closed.
    pub async fn send(&self, value: T) -> Result<(), SendError<T>> {
        match self.chan.reserve(1).await {
            Ok(()) => {
                self.chan.push(value, true);
                Ok(())
            }
            Err(()) => Err(SendError(value)),
        }
    }

    /// Waits until the receiver is gone or closed.
    pub async fn closed(&self) {
        self.chan.closed().await
    }

    /// Sends `value` if a slot is free now (and no sender waits).
    ///
    /// # Errors
    /// `Full` or `Closed`, with the value.
    pub fn try_send(&self, message: T) -> Result<(), TrySendError<T>> {
        match self.chan.try_reserve(1) {
            Ok(()) => {
                self.chan.push(message, true);
                Ok(())
            }
            Err(TrySendError::Full(())) => Err(TrySendError::Full(message)),
            Err(TrySendError::Closed(())) => Err(TrySendError::Closed(message)),
        }
    }

    /// Sends `value`, waiting at most `timeout` of virtual time for a slot.
    ///
    /// # Errors
    /// `Timeout` or `Closed`, with the value.
    pub async fn send_timeout(
        &self,
        value: T,
        timeout: Duration,
    ) -> Result<(), SendTimeoutError<T>> {
        match crate::time::timeout(timeout, self.reserve()).await {
            Err(_) => Err(SendTimeoutError::Timeout(value)),
            Ok(Err(_)) => Err(SendTimeoutError::Closed(value)),
            Ok(Ok(permit)) => {
                permit.send(value);
                Ok(())
            }
        }
    }

    /// Sends from outside an async context.
    ///
    /// # Errors
    /// The value, when the receiver is gone.
    ///
    /// # Panics
    /// Inside a runtime.
    #[track_caller]
    pub fn blocking_send(&self, value: T) -> Result<(), SendError<T>> {
        crate::util::block_outside_runtime(self.send(value))
    }

    /// Whether the receiver is gone or closed.
    pub fn is_closed(&self) -> bool {
        self.chan.lock().rx_closed
    }

    /// Waits for a slot and holds it.
    ///
    /// # Errors
    /// When the receiver is gone.
    pub async fn reserve(&self) -> Result<Permit<'_, T>, SendError<()>> {
        match self.chan.reserve(1).await {
            Ok(()) => Ok(Permit { chan: &self.chan }),
            Err(()) => Err(SendError(())),
        }
    }

    /// Waits for `n` slots at once and holds them.
    ///
    /// # Errors
    /// When the receiver is gone, or `n` exceeds the channel's capacity.
    pub async fn reserve_many(&self, n: usize) -> Result<PermitIterator<'_, T>, SendError<()>> {
        if n > self.max_capacity() {
            return Err(SendError(()));
        }
        match self.chan.reserve(n).await {
            Ok(()) => Ok(PermitIterator {
                chan: &self.chan,
                n,
            }),
            Err(()) => Err(SendError(())),
        }
    }

    /// Waits for a slot, held with this sender.
    ///
    /// # Errors
    /// When the receiver is gone.
    pub async fn reserve_owned(self) -> Result<OwnedPermit<T>, SendError<()>> {
        match self.chan.reserve(1).await {
            Ok(()) => Ok(OwnedPermit { chan: Some(self) }),
            Err(()) => Err(SendError(())),
        }
    }

    /// Holds a slot if one is free now.
    ///
    /// # Errors
    /// `Full` or `Closed`.
    pub fn try_reserve(&self) -> Result<Permit<'_, T>, TrySendError<()>> {
        self.chan.try_reserve(1)?;
        Ok(Permit { chan: &self.chan })
    }

    /// Holds `n` slots if free now.
    ///
    /// # Errors
    /// `Full` (also when `n` exceeds the capacity) or `Closed`.
    pub fn try_reserve_many(&self, n: usize) -> Result<PermitIterator<'_, T>, TrySendError<()>> {
        if n > self.max_capacity() {
            return Err(TrySendError::Full(()));
        }
        self.chan.try_reserve(n)?;
        Ok(PermitIterator {
            chan: &self.chan,
            n,
        })
    }

    /// Holds a slot with this sender if one is free now.
    ///
    /// # Errors
    /// `Full` or `Closed`, with the sender.
    pub fn try_reserve_owned(self) -> Result<OwnedPermit<T>, TrySendError<Self>> {
        match self.chan.try_reserve(1) {
            Ok(()) => Ok(OwnedPermit { chan: Some(self) }),
            Err(TrySendError::Full(())) => Err(TrySendError::Full(self)),
            Err(TrySendError::Closed(())) => Err(TrySendError::Closed(self)),
        }
    }

    /// Whether both senders feed the same channel.
    pub fn same_channel(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.chan, &other.chan)
    }

    /// Free slots now.
    pub fn capacity(&self) -> usize {
        self.chan.sem().available_permits()
    }

    /// A weak sender.
    pub fn downgrade(&self) -> WeakSender<T> {
        self.chan.lock().weak_senders += 1;
        WeakSender {
            chan: self.chan.clone(),
        }
    }

    /// The channel's size.
    pub fn max_capacity(&self) -> usize {
        self.chan.capacity
    }

    /// How many senders are alive.
    pub fn strong_count(&self) -> usize {
        self.chan.lock().senders
    }

    /// How many weak senders are alive.
    pub fn weak_count(&self) -> usize {
        self.chan.lock().weak_senders
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.chan.add_sender();
        Sender {
            chan: self.chan.clone(),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        self.chan.drop_sender();
    }
}

impl<T> Clone for WeakSender<T> {
    fn clone(&self) -> Self {
        self.chan.lock().weak_senders += 1;
        WeakSender {
            chan: self.chan.clone(),
        }
    }
}

impl<T> Drop for WeakSender<T> {
    fn drop(&mut self) {
        self.chan.lock().weak_senders -= 1;
    }
}

impl<T> WeakSender<T> {
    /// A sender, if any sender is still alive.
    pub fn upgrade(&self) -> Option<Sender<T>> {
        self.chan.upgrade().then(|| Sender {
            chan: self.chan.clone(),
        })
    }

    /// How many senders are alive.
    pub fn strong_count(&self) -> usize {
        self.chan.lock().senders
    }

    /// How many weak senders are alive.
    pub fn weak_count(&self) -> usize {
        self.chan.lock().weak_senders
    }
}

impl<T> Permit<'_, T> {
    /// Sends through the reserved slot.
    pub fn send(self, value: T) {
        let chan = self.chan;
        std::mem::forget(self);
        chan.push(value, true);
    }
}

impl<T> Drop for Permit<'_, T> {
    fn drop(&mut self) {
        self.chan.release_permits(1);
    }
}

impl<'a, T> Iterator for PermitIterator<'a, T> {
    type Item = Permit<'a, T>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.n == 0 {
            return None;
        }
        self.n -= 1;
        Some(Permit { chan: self.chan })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.n, Some(self.n))
    }
}

impl<T> ExactSizeIterator for PermitIterator<'_, T> {}
impl<T> std::iter::FusedIterator for PermitIterator<'_, T> {}

impl<T> Drop for PermitIterator<'_, T> {
    fn drop(&mut self) {
        if self.n > 0 {
            self.chan.release_permits(self.n);
        }
    }
}

impl<T> OwnedPermit<T> {
    /// Sends through the reserved slot and gives the sender back.
    pub fn send(mut self, value: T) -> Sender<T> {
        let sender = self.chan.take().expect("an owned permit holds its sender");
        sender.chan.push(value, true);
        sender
    }

    /// Gives the slot back unused, and the sender with it.
    pub fn release(mut self) -> Sender<T> {
        let sender = self.chan.take().expect("an owned permit holds its sender");
        sender.chan.release_permits(1);
        sender
    }

    /// Whether both permits are for the same channel.
    pub fn same_channel(&self, other: &Self) -> bool {
        match (&self.chan, &other.chan) {
            (Some(a), Some(b)) => a.same_channel(b),
            _ => false,
        }
    }

    /// Whether this permit is for `sender`'s channel.
    pub fn same_channel_as_sender(&self, sender: &Sender<T>) -> bool {
        self.chan.as_ref().is_some_and(|s| s.same_channel(sender))
    }
}

impl<T> Drop for OwnedPermit<T> {
    fn drop(&mut self) {
        if let Some(sender) = self.chan.take() {
            sender.chan.release_permits(1);
        }
    }
}

impl<T> UnboundedSender<T> {
    /// Sends `value` at once.
    ///
    /// # Errors
    /// The value, when the receiver is gone or closed.
    pub fn send(&self, message: T) -> Result<(), SendError<T>> {
        if self.chan.lock().rx_closed {
            return Err(SendError(message));
        }
        self.chan.push(message, false);
        Ok(())
    }

    /// Waits until the receiver is gone or closed.
    pub async fn closed(&self) {
        self.chan.closed().await
    }

    /// Whether the receiver is gone or closed.
    pub fn is_closed(&self) -> bool {
        self.chan.lock().rx_closed
    }

    /// Whether both senders feed the same channel.
    pub fn same_channel(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.chan, &other.chan)
    }

    /// A weak sender.
    pub fn downgrade(&self) -> WeakUnboundedSender<T> {
        self.chan.lock().weak_senders += 1;
        WeakUnboundedSender {
            chan: self.chan.clone(),
        }
    }

    /// How many senders are alive.
    pub fn strong_count(&self) -> usize {
        self.chan.lock().senders
    }

    /// How many weak senders are alive.
    pub fn weak_count(&self) -> usize {
        self.chan.lock().weak_senders
    }
}

impl<T> Clone for UnboundedSender<T> {
    fn clone(&self) -> Self {
        self.chan.add_sender();
        UnboundedSender {
            chan: self.chan.clone(),
        }
    }
}

impl<T> Drop for UnboundedSender<T> {
    fn drop(&mut self) {
        self.chan.drop_sender();
    }
}

impl<T> Clone for WeakUnboundedSender<T> {
    fn clone(&self) -> Self {
        self.chan.lock().weak_senders += 1;
        WeakUnboundedSender {
            chan: self.chan.clone(),
        }
    }
}

impl<T> Drop for WeakUnboundedSender<T> {
    fn drop(&mut self) {
        self.chan.lock().weak_senders -= 1;
    }
}

impl<T> WeakUnboundedSender<T> {
    /// A sender, if any sender is still alive.
    pub fn upgrade(&self) -> Option<UnboundedSender<T>> {
        self.chan.upgrade().then(|| UnboundedSender {
            chan: self.chan.clone(),
        })
    }

    /// How many senders are alive.
    pub fn strong_count(&self) -> usize {
        self.chan.lock().senders
    }

    /// How many weak senders are alive.
    pub fn weak_count(&self) -> usize {
        self.chan.lock().weak_senders
    }
}

macro_rules! receiver_methods {
    ($ty:ident) => {
        impl<T> $ty<T> {
            /// Receives the next value; `None` once the channel is closed
            /// (or every sender gone) and empty. Cancel-safe.
            pub async fn recv(&mut self) -> Option<T> {
                std::future::poll_fn(|cx| self.chan.poll_recv(cx)).await
            }

            /// Waits for at least one value, then moves up to `limit` into
            /// `buffer`; returns how many (0 only when `limit` is 0 or the
            /// channel is done). Cancel-safe.
            pub async fn recv_many(&mut self, buffer: &mut Vec<T>, limit: usize) -> usize {
                std::future::poll_fn(|cx| self.chan.poll_recv_many(cx, buffer, limit)).await
            }

            /// Takes a queued value without waiting.
            ///
            /// # Errors
            /// `Empty`, or `Disconnected` when nothing will ever come.
            pub fn try_recv(&mut self) -> Result<T, TryRecvError> {
                self.chan.try_recv()
            }

            /// Receives from outside an async context.
            ///
            /// # Panics
            /// Inside a runtime.
            #[track_caller]
            pub fn blocking_recv(&mut self) -> Option<T> {
                crate::util::block_outside_runtime(self.recv())
            }

            /// As [`Self::recv_many`], from outside an async context.
            ///
            /// # Panics
            /// Inside a runtime.
            #[track_caller]
            pub fn blocking_recv_many(&mut self, buffer: &mut Vec<T>, limit: usize) -> usize {
                crate::util::block_outside_runtime(self.recv_many(buffer, limit))
            }

            /// Closes the channel: sends fail from now on; what is queued
            /// (and what holders of permits send) can still be received.
            pub fn close(&mut self) {
                self.chan.close();
            }

            /// Whether the channel is closed, or every sender is gone.
            pub fn is_closed(&self) -> bool {
                let st = self.chan.lock();
                st.rx_closed || st.senders == 0
            }

            /// Whether nothing is queued.
            pub fn is_empty(&self) -> bool {
                self.chan.lock().queue.is_empty()
            }

            /// How many values are queued.
            pub fn len(&self) -> usize {
                self.chan.lock().queue.len()
            }

            /// Polls for the next value.
            pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
                self.chan.poll_recv(cx)
            }

            /// Polls for up to `limit` values.
            pub fn poll_recv_many(
                &mut self,
                cx: &mut Context<'_>,
                buffer: &mut Vec<T>,
                limit: usize,
            ) -> Poll<usize> {
                self.chan.poll_recv_many(cx, buffer, limit)
            }

            /// How many senders are alive.
            pub fn sender_strong_count(&self) -> usize {
                self.chan.lock().senders
            }

            /// How many weak senders are alive.
            pub fn sender_weak_count(&self) -> usize {
                self.chan.lock().weak_senders
            }
        }

        impl<T> Drop for $ty<T> {
            fn drop(&mut self) {
                self.chan.close();
                // Queued values are dropped now, as the receiver will never
                // take them; their slots go back to the semaphore.
                // So does the receiver's waker: the senders keep the channel,
                // not the task that last waited on it.
                let (queued, waker): (Vec<T>, Option<std::task::Waker>) = {
                    let mut st = self.chan.lock();
                    (st.queue.drain(..).collect(), st.rx_waker.take())
                };
                drop(waker);
                drop(queued);
            }
        }

        impl<T> fmt::Debug for $ty<T> {
            fn fmt(&self, fmt: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt.debug_struct(stringify!($ty)).finish_non_exhaustive()
            }
        }

        impl<T> Unpin for $ty<T> {}
    };
}

receiver_methods!(Receiver);
receiver_methods!(UnboundedReceiver);

impl<T> Receiver<T> {
    /// Free slots now.
    pub fn capacity(&self) -> usize {
        self.chan.sem().available_permits()
    }

    /// The channel's size.
    pub fn max_capacity(&self) -> usize {
        self.chan.capacity
    }
}

macro_rules! opaque_debug {
    ($($ty:ident),*) => {$(
        impl<T> fmt::Debug for $ty<T> {
            fn fmt(&self, fmt: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt.debug_struct(stringify!($ty)).finish_non_exhaustive()
            }
        }
    )*};
}

opaque_debug!(
    Sender,
    WeakSender,
    UnboundedSender,
    WeakUnboundedSender,
    OwnedPermit
);

impl<T> fmt::Debug for Permit<'_, T> {
    fn fmt(&self, fmt: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt.debug_struct("Permit").finish_non_exhaustive()
    }
}

impl<T> fmt::Debug for PermitIterator<'_, T> {
    fn fmt(&self, fmt: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt.debug_struct("PermitIterator")
            .field("n", &self.n)
            .finish_non_exhaustive()
    }
}
