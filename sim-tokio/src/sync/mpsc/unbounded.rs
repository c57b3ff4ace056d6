//! The unbounded channel: a send never waits.

use super::chan::Chan;
use super::error::SendError;
use std::sync::Arc;
/// An unbounded channel.
#[track_caller]
pub fn unbounded_channel<T>() -> (UnboundedSender<T>, UnboundedReceiver<T>) {
    let chan = Chan::new(None);
    (
        UnboundedSender { chan: chan.clone() },
        UnboundedReceiver { chan },
    )
}

/// Sends into an unbounded channel.
pub struct UnboundedSender<T> {
    pub(super) chan: Arc<Chan<T>>,
}

/// An unbounded sender that does not keep the channel open.
pub struct WeakUnboundedSender<T> {
    pub(super) chan: Arc<Chan<T>>,
}

/// Receives from an unbounded channel.
pub struct UnboundedReceiver<T> {
    pub(super) chan: Arc<Chan<T>>,
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
