//! A multi-producer, multi-consumer channel where every receiver sees every
//! value, within a bounded buffer.
//!
//! The buffer holds `capacity` rounded up to a power of two. A receiver
//! that falls further behind than that loses the oldest values: its next
//! `recv` reports `Lagged(n)` with how many it missed, and then continues
//! from the oldest value still held.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex as StdMutex};
use std::task::{Context, Poll, Waker};

/// Error types.
pub mod error {
    use std::fmt;

    /// No receiver is alive; the value comes back.
    #[derive(PartialEq, Eq, Clone, Copy)]
    pub struct SendError<T>(pub T);

    impl<T> fmt::Debug for SendError<T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.debug_struct("SendError").finish_non_exhaustive()
        }
    }

    impl<T> fmt::Display for SendError<T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "channel closed")
        }
    }

    impl<T> std::error::Error for SendError<T> {}

    /// Why `recv` gave no value.
    #[derive(Debug, PartialEq, Eq, Clone)]
    pub enum RecvError {
        /// Every sender is gone and every value was received.
        Closed,
        /// The receiver fell behind and missed this many values.
        Lagged(u64),
    }

    impl fmt::Display for RecvError {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self {
                RecvError::Closed => write!(f, "channel closed"),
                RecvError::Lagged(amt) => write!(f, "channel lagged by {amt}"),
            }
        }
    }

    impl std::error::Error for RecvError {}

    /// Why `try_recv` gave no value.
    #[derive(Debug, PartialEq, Eq, Clone)]
    pub enum TryRecvError {
        /// Nothing new yet.
        Empty,
        /// Every sender is gone and every value was received.
        Closed,
        /// The receiver fell behind and missed this many values.
        Lagged(u64),
    }

    impl fmt::Display for TryRecvError {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self {
                TryRecvError::Empty => write!(f, "channel empty"),
                TryRecvError::Closed => write!(f, "channel closed"),
                TryRecvError::Lagged(amt) => write!(f, "channel lagged by {amt}"),
            }
        }
    }

    impl std::error::Error for TryRecvError {}
}

use error::{RecvError, SendError, TryRecvError};

struct Slot<T> {
    /// Receivers that have not seen this value yet.
    rem: usize,
    /// The position of the value held, or `u64::MAX` for none yet.
    pos: u64,
    val: Option<T>,
}

struct State<T> {
    buffer: Box<[Slot<T>]>,
    /// The position the next value gets.
    tail: u64,
    receivers: usize,
    senders: usize,
    weak_senders: usize,
    rx_wakers: BTreeMap<u64, Waker>,
    closed_wakers: Vec<Waker>,
    next_rx_id: u64,
}

struct Shared<T> {
    /// Auto traits as tokio's (see `crate::util::NoUnwindSafety`).
    _unwind: crate::util::NoUnwindSafety,
    state: StdMutex<State<T>>,
    mask: u64,
}

/// Sends to every receiver.
pub struct Sender<T> {
    shared: Arc<Shared<T>>,
}

/// A sender that does not keep the channel open.
pub struct WeakSender<T> {
    shared: Arc<Shared<T>>,
}

/// Receives every value sent after it subscribed.
pub struct Receiver<T> {
    shared: Arc<Shared<T>>,
    next: u64,
    id: u64,
}

/// A channel holding at least `capacity` values.
///
/// # Panics
/// When `capacity` is 0 or larger than `usize::MAX / 2`.
#[track_caller]
pub fn channel<T: Clone>(capacity: usize) -> (Sender<T>, Receiver<T>) {
    let tx = Sender::new(capacity);
    let rx = tx.subscribe();
    (tx, rx)
}

impl<T> Sender<T> {
    /// A sender with no receiver yet.
    ///
    /// # Panics
    /// When `capacity` is 0 or larger than `usize::MAX / 2`.
    #[track_caller]
    pub fn new(capacity: usize) -> Self {
        assert!(capacity > 0, "broadcast channel capacity cannot be zero");
        assert!(
            capacity <= usize::MAX >> 1,
            "broadcast channel capacity exceeded `usize::MAX / 2`"
        );
        let len = capacity.next_power_of_two();
        let buffer = (0..len)
            .map(|_| Slot {
                rem: 0,
                pos: u64::MAX,
                val: None,
            })
            .collect();
        Sender {
            shared: Arc::new(Shared {
                _unwind: std::marker::PhantomData,
                state: StdMutex::new(State {
                    buffer,
                    tail: 0,
                    receivers: 0,
                    senders: 1,
                    weak_senders: 0,
                    rx_wakers: BTreeMap::new(),
                    closed_wakers: Vec::new(),
                    next_rx_id: 1,
                }),
                mask: len as u64 - 1,
            }),
        }
    }

    /// Sends `value` to every receiver; returns how many there are.
    ///
    /// # Errors
    /// The value, when no receiver is alive.
    pub fn send(&self, value: T) -> Result<usize, SendError<T>> {
        let (receivers, wakers) = {
            let mut st = super::lock(&self.shared.state);
            if st.receivers == 0 {
                return Err(SendError(value));
            }
            let pos = st.tail;
            let index = (pos & self.shared.mask) as usize;
            let receivers = st.receivers;
            let slot = &mut st.buffer[index];
            slot.pos = pos;
            slot.rem = receivers;
            // The oldest value is overwritten here: lagging receivers lose it.
            slot.val = Some(value);
            st.tail = pos + 1;
            let wakers: Vec<Waker> = std::mem::take(&mut st.rx_wakers).into_values().collect();
            (receivers, wakers)
        };
        for w in wakers {
            w.wake();
        }
        Ok(receivers)
    }

    /// A new receiver that sees values sent from now on.
    pub fn subscribe(&self) -> Receiver<T> {
        new_receiver(&self.shared)
    }

    /// A weak sender: it does not keep the channel open.
    pub fn downgrade(&self) -> WeakSender<T> {
        super::lock(&self.shared.state).weak_senders += 1;
        WeakSender {
            shared: self.shared.clone(),
        }
    }

    /// How many values are held that some receiver has not seen.
    pub fn len(&self) -> usize {
        let st = super::lock(&self.shared.state);
        st.buffer.iter().filter(|s| s.rem > 0).count()
    }

    /// Whether no value is waiting for any receiver.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many receivers are alive.
    pub fn receiver_count(&self) -> usize {
        super::lock(&self.shared.state).receivers
    }

    /// Whether both senders feed the same channel.
    pub fn same_channel(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// Waits until no receiver is alive.
    pub async fn closed(&self) {
        std::future::poll_fn(|cx| {
            let mut st = super::lock(&self.shared.state);
            if st.receivers == 0 {
                Poll::Ready(())
            } else {
                st.closed_wakers.push(cx.waker().clone());
                crate::util::note_wait(
                    "broadcast::Sender::closed",
                    sim_runtime::WaitDetail::None,
                    None,
                );
                Poll::Pending
            }
        })
        .await
    }

    /// How many (strong) senders are alive.
    pub fn strong_count(&self) -> usize {
        super::lock(&self.shared.state).senders
    }

    /// How many weak senders are alive.
    pub fn weak_count(&self) -> usize {
        super::lock(&self.shared.state).weak_senders
    }
}

fn new_receiver<T>(shared: &Arc<Shared<T>>) -> Receiver<T> {
    let mut st = super::lock(&shared.state);
    st.receivers += 1;
    let id = st.next_rx_id;
    st.next_rx_id += 1;
    Receiver {
        shared: shared.clone(),
        next: st.tail,
        id,
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        super::lock(&self.shared.state).senders += 1;
        Sender {
            shared: self.shared.clone(),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let wakers: Vec<Waker> = {
            let mut st = super::lock(&self.shared.state);
            st.senders -= 1;
            if st.senders > 0 {
                return;
            }
            std::mem::take(&mut st.rx_wakers).into_values().collect()
        };
        for w in wakers {
            w.wake();
        }
    }
}

impl<T> WeakSender<T> {
    /// A sender, if any strong sender is still alive.
    pub fn upgrade(&self) -> Option<Sender<T>> {
        let mut st = super::lock(&self.shared.state);
        if st.senders == 0 {
            return None;
        }
        st.senders += 1;
        Some(Sender {
            shared: self.shared.clone(),
        })
    }

    /// How many (strong) senders are alive.
    pub fn strong_count(&self) -> usize {
        super::lock(&self.shared.state).senders
    }

    /// How many weak senders are alive.
    pub fn weak_count(&self) -> usize {
        super::lock(&self.shared.state).weak_senders
    }
}

impl<T> Clone for WeakSender<T> {
    fn clone(&self) -> Self {
        super::lock(&self.shared.state).weak_senders += 1;
        WeakSender {
            shared: self.shared.clone(),
        }
    }
}

impl<T> Drop for WeakSender<T> {
    fn drop(&mut self) {
        super::lock(&self.shared.state).weak_senders -= 1;
    }
}

impl<T> Receiver<T> {
    /// How many values this receiver has not yet received (more than the
    /// buffer if it has lagged).
    pub fn len(&self) -> usize {
        (super::lock(&self.shared.state).tail - self.next) as usize
    }

    /// Whether this receiver is up to date.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether both receivers read the same channel.
    pub fn same_channel(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// How many (strong) senders are alive.
    pub fn sender_strong_count(&self) -> usize {
        super::lock(&self.shared.state).senders
    }

    /// How many weak senders are alive.
    pub fn sender_weak_count(&self) -> usize {
        super::lock(&self.shared.state).weak_senders
    }

    /// Whether every sender is gone (values may still be waiting).
    pub fn is_closed(&self) -> bool {
        super::lock(&self.shared.state).senders == 0
    }

    /// A new receiver of the same channel that sees values sent from now
    /// on.
    pub fn resubscribe(&self) -> Self {
        new_receiver(&self.shared)
    }
}

impl<T: Clone> Receiver<T> {
    /// The next value, cloned (as tokio clones it, for every receiver),
    /// and the slot's value once the last receiver has seen it: the caller
    /// drops that after letting go of the lock (its `Drop` may send).
    fn try_recv_inner(&mut self, st: &mut State<T>) -> Result<(T, Option<T>), TryRecvError> {
        if self.next == st.tail {
            return Err(if st.senders == 0 {
                TryRecvError::Closed
            } else {
                TryRecvError::Empty
            });
        }
        let len = st.buffer.len() as u64;
        let oldest = st.tail.saturating_sub(len);
        if self.next < oldest {
            // The values it had not seen were overwritten.
            let missed = oldest - self.next;
            self.next = oldest;
            return Err(TryRecvError::Lagged(missed));
        }
        let index = (self.next & self.shared.mask) as usize;
        let slot = &mut st.buffer[index];
        debug_assert_eq!(slot.pos, self.next, "the slot holds the expected position");
        // Past it before the clone: a clone that panics passes it over.
        slot.rem -= 1;
        self.next += 1;
        let value = slot.val.clone().expect("a held slot has a value");
        let done = if slot.rem == 0 { slot.val.take() } else { None };
        Ok((value, done))
    }

    /// Takes the next value without waiting.
    ///
    /// # Errors
    /// `Empty`, `Closed`, or `Lagged(n)`.
    pub fn try_recv(&mut self) -> Result<T, TryRecvError> {
        let shared = self.shared.clone();
        let mut st = super::lock(&shared.state);
        let got = self.try_recv_inner(&mut st);
        drop(st);
        got.map(|(value, _done)| value)
    }

    fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Result<T, RecvError>> {
        if super::budget(cx).is_pending() {
            return Poll::Pending;
        }
        let shared = self.shared.clone();
        let mut st = super::lock(&shared.state);
        match self.try_recv_inner(&mut st) {
            Ok((value, done)) => {
                drop(st);
                drop(done);
                Poll::Ready(Ok(value))
            }
            Err(TryRecvError::Closed) => Poll::Ready(Err(RecvError::Closed)),
            Err(TryRecvError::Lagged(n)) => Poll::Ready(Err(RecvError::Lagged(n))),
            Err(TryRecvError::Empty) => {
                let replaced = st.rx_wakers.insert(self.id, cx.waker().clone());
                drop(st);
                // The waker it replaces drops outside the lock: its `Drop`
                // may send on this channel.
                drop(replaced);
                crate::util::note_wait(
                    "broadcast::Receiver::recv",
                    sim_runtime::WaitDetail::None,
                    None,
                );
                Poll::Pending
            }
        }
    }

    /// Waits for the next value. Cancel-safe.
    ///
    /// # Errors
    /// `Closed` once every sender is gone and everything was received;
    /// `Lagged(n)` when `n` values were missed.
    pub async fn recv(&mut self) -> Result<T, RecvError> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// Waits for the next value from outside an async context.
    ///
    /// # Errors
    /// As [`Receiver::recv`].
    ///
    /// # Panics
    /// Inside a runtime.
    #[track_caller]
    pub fn blocking_recv(&mut self) -> Result<T, RecvError> {
        crate::util::block_outside_runtime(self.recv())
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let wakers = {
            let mut st = super::lock(&self.shared.state);
            let own = st.rx_wakers.remove(&self.id);
            st.receivers -= 1;
            // Values it never saw no longer wait for it.
            let len = st.buffer.len() as u64;
            let oldest = st.tail.saturating_sub(len).max(self.next);
            for pos in oldest..st.tail {
                let slot = &mut st.buffer[(pos & self.shared.mask) as usize];
                if slot.pos == pos && slot.rem > 0 {
                    slot.rem -= 1;
                    if slot.rem == 0 {
                        slot.val = None;
                    }
                }
            }
            if st.receivers == 0 {
                (std::mem::take(&mut st.closed_wakers), own)
            } else {
                (Vec::new(), own)
            }
        };
        let (wakers, own) = wakers;
        // Outside the lock: a waker's `Drop` may send on this channel.
        drop(own);
        for w in wakers {
            w.wake();
        }
    }
}

impl<T> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "broadcast::Sender")
    }
}

impl<T> fmt::Debug for WeakSender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "broadcast::WeakSender")
    }
}

impl<T> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "broadcast::Receiver")
    }
}
