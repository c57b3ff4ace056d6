//! A channel for one value.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

/// Error types.
pub mod error {
    use std::fmt;

    /// The sender was dropped without sending.
    #[derive(Debug, Eq, PartialEq, Clone)]
    pub struct RecvError(pub(super) ());

    impl fmt::Display for RecvError {
        fn fmt(&self, fmt: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(fmt, "channel closed")
        }
    }

    impl std::error::Error for RecvError {}

    /// Why `try_recv` gave nothing.
    #[derive(Debug, Eq, PartialEq, Clone)]
    pub enum TryRecvError {
        /// No value yet.
        Empty,
        /// The sender was dropped without sending, or the value was taken.
        Closed,
    }

    impl fmt::Display for TryRecvError {
        fn fmt(&self, fmt: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self {
                TryRecvError::Empty => write!(fmt, "channel empty"),
                TryRecvError::Closed => write!(fmt, "channel closed"),
            }
        }
    }

    impl std::error::Error for TryRecvError {}
}

use error::{RecvError, TryRecvError};

struct State<T> {
    value: Option<T>,
    sent: bool,
    tx_dropped: bool,
    rx_closed: bool,
    taken: bool,
    rx_waker: Option<Waker>,
    tx_waker: Option<Waker>,
    /// Where `channel()` was called (for what a pending task waits on).
    site: &'static std::panic::Location<'static>,
}

/// Sends the value: see [`channel`].
pub struct Sender<T> {
    /// Auto traits as tokio's (see `crate::util::NoUnwindSafety`).
    _unwind: crate::util::NoUnwindSafety,
    inner: Option<Arc<Mutex<State<T>>>>,
}

/// Receives the value: await it. See [`channel`].
pub struct Receiver<T> {
    /// Auto traits as tokio's (see `crate::util::NoUnwindSafety`).
    _unwind: crate::util::NoUnwindSafety,
    inner: Option<Arc<Mutex<State<T>>>>,
}

/// A channel for one value.
#[track_caller]
pub fn channel<T>() -> (Sender<T>, Receiver<T>) {
    let inner = Arc::new(Mutex::new(State {
        value: None,
        sent: false,
        tx_dropped: false,
        rx_closed: false,
        taken: false,
        rx_waker: None,
        tx_waker: None,
        site: std::panic::Location::caller(),
    }));
    (
        Sender {
            _unwind: std::marker::PhantomData,
            inner: Some(inner.clone()),
        },
        Receiver {
            _unwind: std::marker::PhantomData,
            inner: Some(inner),
        },
    )
}

impl<T> Sender<T> {
    /// Sends `t`, or gives it back if the receiver is gone.
    ///
    /// # Errors
    /// The value, when the receiver was dropped or closed.
    pub fn send(mut self, t: T) -> Result<(), T> {
        let inner = self.inner.take().expect("a sender sends once");
        let waker = {
            let mut st = super::lock(&inner);
            if st.rx_closed {
                return Err(t);
            }
            st.value = Some(t);
            st.sent = true;
            st.rx_waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
        Ok(())
    }

    /// Waits until the receiver is dropped or closed.
    pub async fn closed(&mut self) {
        std::future::poll_fn(|cx| self.poll_closed(cx)).await
    }

    /// Whether the receiver is dropped or closed.
    pub fn is_closed(&self) -> bool {
        self.inner
            .as_ref()
            .is_none_or(|inner| super::lock(inner).rx_closed)
    }

    /// Polls for the receiver's closing.
    pub fn poll_closed(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if super::budget(cx).is_pending() {
            return Poll::Pending;
        }
        let Some(inner) = self.inner.as_ref() else {
            return Poll::Ready(());
        };
        let mut st = super::lock(inner);
        if st.rx_closed {
            Poll::Ready(())
        } else {
            st.tx_waker = Some(cx.waker().clone());
            crate::util::note_wait(
                "oneshot::Sender::closed",
                sim_runtime::WaitDetail::None,
                Some(st.site),
            );
            Poll::Pending
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        if let Some(inner) = self.inner.take() {
            let waker = {
                let mut st = super::lock(&inner);
                st.tx_dropped = true;
                st.rx_waker.take()
            };
            if let Some(w) = waker {
                w.wake();
            }
        }
    }
}

impl<T> Receiver<T> {
    /// Closes the channel: a later `send` fails. A value already sent can
    /// still be received.
    pub fn close(&mut self) {
        if let Some(inner) = self.inner.as_ref() {
            let waker = {
                let mut st = super::lock(inner);
                st.rx_closed = true;
                st.tx_waker.take()
            };
            if let Some(w) = waker {
                w.wake();
            }
        }
    }

    /// Whether this receiver already gave its result: its value, or the
    /// error of a closed channel (awaited, or by `try_recv`), as in tokio.
    pub fn is_terminated(&self) -> bool {
        self.inner.is_none()
    }

    /// Whether no value is waiting.
    pub fn is_empty(&self) -> bool {
        self.inner
            .as_ref()
            .is_none_or(|inner| super::lock(inner).value.is_none())
    }

    /// Takes the value if it was sent.
    ///
    /// # Errors
    /// `Empty` if nothing was sent yet; `Closed` if the sender is gone or
    /// the value was taken.
    pub fn try_recv(&mut self) -> Result<T, TryRecvError> {
        let Some(inner) = self.inner.as_ref() else {
            return Err(TryRecvError::Closed);
        };
        let mut st = super::lock(inner);
        if let Some(v) = st.value.take() {
            st.taken = true;
            drop(st);
            self.inner = None;
            return Ok(v);
        }
        if st.tx_dropped || st.taken || (st.rx_closed && !st.sent) {
            drop(st);
            self.inner = None;
            Err(TryRecvError::Closed)
        } else {
            Err(TryRecvError::Empty)
        }
    }

    /// Waits for the value from outside an async context.
    ///
    /// # Errors
    /// When the sender is gone without sending.
    ///
    /// # Panics
    /// Inside a runtime, as in tokio.
    #[track_caller]
    pub fn blocking_recv(self) -> Result<T, RecvError> {
        crate::util::block_outside_runtime(self)
    }
}

impl<T> Future for Receiver<T> {
    type Output = Result<T, RecvError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // Checked before the budget, as tokio does: a completed receiver
        // panics even when the task's budget is spent.
        let inner = self.inner.as_ref().expect("called after complete");
        if super::budget(cx).is_pending() {
            return Poll::Pending;
        }
        let mut st = super::lock(inner);
        if let Some(v) = st.value.take() {
            st.taken = true;
            drop(st);
            self.inner = None;
            return Poll::Ready(Ok(v));
        }
        if st.tx_dropped || st.rx_closed || st.taken {
            drop(st);
            self.inner = None;
            return Poll::Ready(Err(RecvError(())));
        }
        st.rx_waker = Some(cx.waker().clone());
        crate::util::note_wait(
            "oneshot::Receiver",
            sim_runtime::WaitDetail::None,
            Some(st.site),
        );
        Poll::Pending
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        self.close();
    }
}

impl<T: fmt::Debug> fmt::Debug for Sender<T> {
    fn fmt(&self, fmt: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt.debug_struct("Sender").finish_non_exhaustive()
    }
}

impl<T: fmt::Debug> fmt::Debug for Receiver<T> {
    fn fmt(&self, fmt: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt.debug_struct("Receiver").finish_non_exhaustive()
    }
}
