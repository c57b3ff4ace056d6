//! The bounded channel: senders wait for a free slot.

use super::chan::Chan;
use super::error::{SendError, SendTimeoutError, TrySendError};
use super::unbounded::{UnboundedSender, WeakUnboundedSender};
use crate::sync::batch_semaphore::Semaphore;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;
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

/// Sends into a bounded channel.
pub struct Sender<T> {
    pub(super) chan: Arc<Chan<T>>,
}

/// A sender that does not keep the channel open.
pub struct WeakSender<T> {
    pub(super) chan: Arc<Chan<T>>,
}

/// A reserved slot: sending through it cannot fail or wait.
pub struct Permit<'a, T> {
    pub(super) chan: &'a Chan<T>,
}

/// Several reserved slots, yielded one [`Permit`] at a time.
pub struct PermitIterator<'a, T> {
    pub(super) chan: &'a Chan<T>,
    pub(super) n: usize,
}

/// A reserved slot that owns its sender.
pub struct OwnedPermit<T> {
    pub(super) chan: Option<Sender<T>>,
}

/// Receives from a bounded channel.
pub struct Receiver<T> {
    pub(super) chan: Arc<Chan<T>>,
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
