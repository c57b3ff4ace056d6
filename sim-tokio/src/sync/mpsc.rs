//! Multi-producer, single-consumer channels, bounded and unbounded.
//!
//! A bounded channel's senders wait for capacity in FIFO order; a sender
//! whose `send` future is dropped leaves the queue without losing anyone's
//! place.

use super::waiters::Waiters;
use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

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
        /// Nothing queued and every sender is gone (or the channel closed).
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
}

use error::{SendError, TryRecvError, TrySendError};

struct State<T> {
    queue: VecDeque<T>,
    /// `None` for an unbounded channel.
    capacity: Option<usize>,
    /// Slots held by permits that have not sent yet.
    reserved: usize,
    senders: usize,
    closed: bool,
    rx_waker: Option<Waker>,
    send_waiters: Waiters,
    closed_wakers: Vec<Waker>,
}

impl<T> State<T> {
    fn free_slots(&self) -> usize {
        match self.capacity {
            Some(cap) => cap - self.queue.len() - self.reserved,
            None => usize::MAX,
        }
    }
}

type Chan<T> = Arc<Mutex<State<T>>>;

fn new_chan<T>(capacity: Option<usize>) -> Chan<T> {
    Arc::new(Mutex::new(State {
        queue: VecDeque::new(),
        capacity,
        reserved: 0,
        senders: 1,
        closed: false,
        rx_waker: None,
        send_waiters: Waiters::new(),
        closed_wakers: Vec::new(),
    }))
}

/// A bounded channel of `buffer` slots.
///
/// # Panics
/// When `buffer` is 0, as in tokio.
#[track_caller]
pub fn channel<T>(buffer: usize) -> (Sender<T>, Receiver<T>) {
    assert!(buffer > 0, "mpsc bounded channel requires buffer > 0");
    let chan = new_chan(Some(buffer));
    (Sender { chan: chan.clone() }, Receiver { chan })
}

/// An unbounded channel.
pub fn unbounded_channel<T>() -> (UnboundedSender<T>, UnboundedReceiver<T>) {
    let chan = new_chan(None);
    (
        UnboundedSender { chan: chan.clone() },
        UnboundedReceiver { chan },
    )
}

/// Sends into a bounded channel.
pub struct Sender<T> {
    chan: Chan<T>,
}

/// Receives from a bounded channel.
pub struct Receiver<T> {
    chan: Chan<T>,
}

/// Sends into an unbounded channel.
pub struct UnboundedSender<T> {
    chan: Chan<T>,
}

/// Receives from an unbounded channel.
pub struct UnboundedReceiver<T> {
    chan: Chan<T>,
}

/// A reserved slot: sending through it cannot fail or wait.
pub struct Permit<'a, T> {
    chan: &'a Chan<T>,
}

fn push<T>(chan: &Chan<T>, value: T, from_permit: bool) {
    let waker = {
        let mut st = super::lock(chan);
        if from_permit {
            st.reserved -= 1;
        }
        st.queue.push_back(value);
        st.rx_waker.take()
    };
    if let Some(w) = waker {
        w.wake();
    }
}

fn release_slot<T>(st: &mut State<T>) -> Option<Waker> {
    // A slot freed: the first waiting sender may take it.
    if st.free_slots() > 0 {
        st.send_waiters.front_waker()
    } else {
        None
    }
}

/// Waits for a slot, in FIFO order with other senders.
async fn acquire<T>(chan: &Chan<T>) -> Result<(), ()> {
    struct Acquire<'a, T> {
        chan: &'a Chan<T>,
        id: u64,
    }
    impl<T> Drop for Acquire<'_, T> {
        fn drop(&mut self) {
            if self.id != 0 {
                let waker = {
                    let mut st = super::lock(self.chan);
                    let was_first = st.send_waiters.is_first(self.id);
                    st.send_waiters.remove(self.id);
                    // Pass the turn on if this waiter was next in line.
                    if was_first {
                        release_slot(&mut st)
                    } else {
                        None
                    }
                };
                if let Some(w) = waker {
                    w.wake();
                }
            }
        }
    }
    let mut acquire = Acquire { chan, id: 0 };
    std::future::poll_fn(|cx| {
        if super::budget(cx).is_pending() {
            return Poll::Pending;
        }
        let mut st = super::lock(acquire.chan);
        if st.closed {
            return Poll::Ready(Err(()));
        }
        if st.free_slots() > 0 && st.send_waiters.is_first(acquire.id) {
            if acquire.id != 0 {
                st.send_waiters.remove(acquire.id);
                acquire.id = 0;
            }
            st.reserved += 1;
            // More room: let the next in line try too.
            let next = release_slot(&mut st);
            drop(st);
            if let Some(w) = next {
                w.wake();
            }
            return Poll::Ready(Ok(()));
        }
        if acquire.id == 0 {
            acquire.id = st.send_waiters.push(cx.waker());
        } else {
            st.send_waiters.update(acquire.id, cx.waker());
        }
        Poll::Pending
    })
    .await
}

impl<T> Sender<T> {
    /// Sends `value`, waiting for a slot.
    ///
    /// # Errors
    /// The value, when the receiver is gone or closed.
    pub async fn send(&self, value: T) -> Result<(), SendError<T>> {
        match acquire(&self.chan).await {
            Ok(()) => {
                push(&self.chan, value, true);
                Ok(())
            }
            Err(()) => Err(SendError(value)),
        }
    }

    /// Sends `value` if a slot is free now.
    ///
    /// # Errors
    /// `Full` when no slot is free (or senders are waiting); `Closed` when
    /// the receiver is gone.
    pub fn try_send(&self, value: T) -> Result<(), TrySendError<T>> {
        {
            let mut st = super::lock(&self.chan);
            if st.closed {
                return Err(TrySendError::Closed(value));
            }
            if st.free_slots() == 0 || !st.send_waiters.is_empty() {
                return Err(TrySendError::Full(value));
            }
            st.reserved += 1;
        }
        push(&self.chan, value, true);
        Ok(())
    }

    /// Waits for a slot and holds it.
    ///
    /// # Errors
    /// When the receiver is gone.
    pub async fn reserve(&self) -> Result<Permit<'_, T>, SendError<()>> {
        match acquire(&self.chan).await {
            Ok(()) => Ok(Permit { chan: &self.chan }),
            Err(()) => Err(SendError(())),
        }
    }

    /// Waits until the receiver is gone or closed.
    pub async fn closed(&self) {
        std::future::poll_fn(|cx| {
            let mut st = super::lock(&self.chan);
            if st.closed {
                Poll::Ready(())
            } else {
                st.closed_wakers.push(cx.waker().clone());
                Poll::Pending
            }
        })
        .await
    }

    /// Whether the receiver is gone or closed.
    pub fn is_closed(&self) -> bool {
        super::lock(&self.chan).closed
    }

    /// Free slots now.
    pub fn capacity(&self) -> usize {
        super::lock(&self.chan).free_slots()
    }

    /// The channel's size.
    pub fn max_capacity(&self) -> usize {
        super::lock(&self.chan).capacity.unwrap_or(usize::MAX)
    }

    /// Whether both senders feed the same channel.
    pub fn same_channel(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.chan, &other.chan)
    }
}

impl<T> Permit<'_, T> {
    /// Sends through the reserved slot.
    pub fn send(self, value: T) {
        let chan = self.chan;
        std::mem::forget(self);
        push(chan, value, true);
    }
}

impl<T> Drop for Permit<'_, T> {
    fn drop(&mut self) {
        let waker = {
            let mut st = super::lock(self.chan);
            st.reserved -= 1;
            release_slot(&mut st)
        };
        if let Some(w) = waker {
            w.wake();
        }
    }
}

fn sender_clone<T>(chan: &Chan<T>) -> Chan<T> {
    super::lock(chan).senders += 1;
    chan.clone()
}

fn sender_drop<T>(chan: &Chan<T>) {
    let waker = {
        let mut st = super::lock(chan);
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

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        Sender {
            chan: sender_clone(&self.chan),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        sender_drop(&self.chan);
    }
}

impl<T> UnboundedSender<T> {
    /// Sends `value` at once.
    ///
    /// # Errors
    /// The value, when the receiver is gone or closed.
    pub fn send(&self, value: T) -> Result<(), SendError<T>> {
        if super::lock(&self.chan).closed {
            return Err(SendError(value));
        }
        push(&self.chan, value, false);
        Ok(())
    }

    /// Waits until the receiver is gone or closed.
    pub async fn closed(&self) {
        std::future::poll_fn(|cx| {
            let mut st = super::lock(&self.chan);
            if st.closed {
                Poll::Ready(())
            } else {
                st.closed_wakers.push(cx.waker().clone());
                Poll::Pending
            }
        })
        .await
    }

    /// Whether the receiver is gone or closed.
    pub fn is_closed(&self) -> bool {
        super::lock(&self.chan).closed
    }

    /// Whether both senders feed the same channel.
    pub fn same_channel(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.chan, &other.chan)
    }
}

impl<T> Clone for UnboundedSender<T> {
    fn clone(&self) -> Self {
        UnboundedSender {
            chan: sender_clone(&self.chan),
        }
    }
}

impl<T> Drop for UnboundedSender<T> {
    fn drop(&mut self) {
        sender_drop(&self.chan);
    }
}

fn close<T>(chan: &Chan<T>) {
    let wakers = {
        let mut st = super::lock(chan);
        st.closed = true;
        let mut wakers = st.send_waiters.drain();
        wakers.append(&mut st.closed_wakers);
        wakers
    };
    for w in wakers {
        w.wake();
    }
}

fn poll_recv<T>(chan: &Chan<T>, cx: &mut Context<'_>) -> Poll<Option<T>> {
    if super::budget(cx).is_pending() {
        return Poll::Pending;
    }
    let mut st = super::lock(chan);
    if let Some(value) = st.queue.pop_front() {
        let waker = release_slot(&mut st);
        drop(st);
        if let Some(w) = waker {
            w.wake();
        }
        return Poll::Ready(Some(value));
    }
    if st.senders == 0 || st.closed && st.reserved == 0 {
        return Poll::Ready(None);
    }
    st.rx_waker = Some(cx.waker().clone());
    Poll::Pending
}

fn try_recv<T>(chan: &Chan<T>) -> Result<T, TryRecvError> {
    let mut st = super::lock(chan);
    if let Some(value) = st.queue.pop_front() {
        let waker = release_slot(&mut st);
        drop(st);
        if let Some(w) = waker {
            w.wake();
        }
        return Ok(value);
    }
    if st.senders == 0 || st.closed && st.reserved == 0 {
        Err(TryRecvError::Disconnected)
    } else {
        Err(TryRecvError::Empty)
    }
}

macro_rules! receiver_methods {
    ($ty:ident) => {
        impl<T> $ty<T> {
            /// Receives the next value; `None` once every sender is gone (or
            /// the channel is closed) and the queue is empty. Cancel-safe.
            pub async fn recv(&mut self) -> Option<T> {
                std::future::poll_fn(|cx| poll_recv(&self.chan, cx)).await
            }

            /// Polls for the next value.
            pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
                poll_recv(&self.chan, cx)
            }

            /// Takes a queued value without waiting.
            ///
            /// # Errors
            /// `Empty` when nothing is queued; `Disconnected` when nothing
            /// will ever be.
            pub fn try_recv(&mut self) -> Result<T, TryRecvError> {
                try_recv(&self.chan)
            }

            /// Closes the channel: sends fail from now on; what is queued
            /// can still be received.
            pub fn close(&mut self) {
                close(&self.chan);
            }

            /// Whether the channel is closed (by the receiver, or because
            /// every sender is gone).
            pub fn is_closed(&self) -> bool {
                let st = super::lock(&self.chan);
                st.closed || st.senders == 0
            }

            /// Whether nothing is queued.
            pub fn is_empty(&self) -> bool {
                super::lock(&self.chan).queue.is_empty()
            }

            /// How many values are queued.
            pub fn len(&self) -> usize {
                super::lock(&self.chan).queue.len()
            }

            /// Receives from outside an async context.
            ///
            /// # Panics
            /// Inside a runtime, as in tokio.
            #[track_caller]
            pub fn blocking_recv(&mut self) -> Option<T> {
                crate::util::block_outside_runtime(self.recv())
            }
        }

        impl<T> Drop for $ty<T> {
            fn drop(&mut self) {
                close(&self.chan);
            }
        }

        impl<T> fmt::Debug for $ty<T> {
            fn fmt(&self, fmt: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt.debug_struct(stringify!($ty)).finish_non_exhaustive()
            }
        }
    };
}

receiver_methods!(Receiver);
receiver_methods!(UnboundedReceiver);

impl<T> fmt::Debug for Sender<T> {
    fn fmt(&self, fmt: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt.debug_struct("Sender").finish_non_exhaustive()
    }
}

impl<T> fmt::Debug for UnboundedSender<T> {
    fn fmt(&self, fmt: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt.debug_struct("UnboundedSender").finish_non_exhaustive()
    }
}

impl<T> fmt::Debug for Permit<'_, T> {
    fn fmt(&self, fmt: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt.debug_struct("Permit").finish_non_exhaustive()
    }
}
