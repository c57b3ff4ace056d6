//! The channel both kinds share: a queue under a lock, the receiver's
//! waker, and for a bounded channel the semaphore of its free slots.

use super::error::{TryRecvError, TrySendError};
use crate::sync::batch_semaphore::Semaphore;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex as StdMutex};
use std::task::{Context, Poll, Waker};
pub(super) struct State<T> {
    pub(super) queue: VecDeque<T>,
    pub(super) senders: usize,
    pub(super) weak_senders: usize,
    pub(super) rx_closed: bool,
    /// Permits reserved but not yet used to send.
    pub(super) outstanding: usize,
    pub(super) rx_waker: Option<Waker>,
    pub(super) closed_wakers: Vec<Waker>,
}

pub(super) struct Chan<T> {
    pub(super) state: StdMutex<State<T>>,
    /// The free slots of a bounded channel; `None` when unbounded.
    pub(super) sem: Option<Semaphore>,
    pub(super) capacity: usize,
    /// Where the channel was made (for what a pending task waits on).
    pub(super) site: &'static std::panic::Location<'static>,
}

impl<T> Chan<T> {
    #[track_caller]
    pub(super) fn new(capacity: Option<usize>) -> Arc<Chan<T>> {
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

    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, State<T>> {
        crate::sync::lock(&self.state)
    }

    pub(super) fn sem(&self) -> &Semaphore {
        self.sem
            .as_ref()
            .expect("a bounded channel has a semaphore")
    }

    /// Queues a value for which a slot is held.
    pub(super) fn push(&self, value: T, from_permit: bool) {
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
    pub(super) fn release_permits(&self, n: usize) {
        self.lock().outstanding -= n;
        self.sem().release(n);
        // A closed channel's receiver may be waiting for the last slot in
        // use (held, or given to a queued reservation).
        self.wake_if_idle();
    }

    pub(super) async fn reserve(&self, n: usize) -> Result<(), ()> {
        // The slots given to a queued reservation are in use until it takes
        // them; given back (the channel closed under it, or the reservation
        // dropped), the channel may be idle, and a closed receiver waiting
        // for that wakes. Dropped after the acquire, on every path.
        let _given_back = WakeIfIdle(self);
        if self.sem().acquire(n).await.is_err() {
            return Err(());
        }
        // Slots given before the receiver closed are given back: a closed
        // channel takes no reservation, as tokio's.
        if self.lock().rx_closed {
            self.sem().release(n);
            return Err(());
        }
        self.lock().outstanding += n;
        Ok(())
    }

    /// Wakes the receiver if the channel is now done.
    fn wake_if_idle(&self) {
        let waker = {
            let mut st = self.lock();
            if self.is_done(&st) {
                st.rx_waker.take()
            } else {
                None
            }
        };
        if let Some(w) = waker {
            w.wake();
        }
    }

    pub(super) fn try_reserve(&self, n: usize) -> Result<(), TrySendError<()>> {
        match self.sem().try_acquire(n) {
            Ok(()) => {
                self.lock().outstanding += n;
                Ok(())
            }
            Err(e) if e.is_closed() => Err(TrySendError::Closed(())),
            Err(_) => Err(TrySendError::Full(())),
        }
    }

    pub(super) fn close(&self) {
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

    /// Nothing more can arrive: no sender left, or the receiver closed and
    /// no slot is reserved or given to a queued reservation.
    pub(super) fn is_done(&self, st: &State<T>) -> bool {
        let idle = || {
            st.outstanding == 0
                && self
                    .sem
                    .as_ref()
                    .is_none_or(|s| s.assigned_to_waiters() == 0)
        };
        st.queue.is_empty() && (st.senders == 0 || (st.rx_closed && idle()))
    }

    pub(super) fn take_one(&self, st: &mut State<T>) -> Option<T> {
        let value = st.queue.pop_front()?;
        if let Some(sem) = &self.sem {
            sem.release(1);
        }
        Some(value)
    }

    /// A unit of the task's budget is spent only on a value or the end (a
    /// wait costs nothing, as in tokio).
    pub(super) fn poll_recv(&self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let coop = std::task::ready!(crate::task::coop::poll_proceed(cx));
        let mut st = self.lock();
        if let Some(value) = self.take_one(&mut st) {
            coop.made_progress();
            return Poll::Ready(Some(value));
        }
        if self.is_done(&st) {
            coop.made_progress();
            return Poll::Ready(None);
        }
        st.rx_waker = Some(cx.waker().clone());
        self.note_recv();
        Poll::Pending
    }

    pub(super) fn poll_recv_many(
        &self,
        cx: &mut Context<'_>,
        buffer: &mut Vec<T>,
        limit: usize,
    ) -> Poll<usize> {
        if limit == 0 {
            return Poll::Ready(0);
        }
        let coop = std::task::ready!(crate::task::coop::poll_proceed(cx));
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
        if n > 0 || self.is_done(&st) {
            coop.made_progress();
            return Poll::Ready(n);
        }
        st.rx_waker = Some(cx.waker().clone());
        self.note_recv();
        Poll::Pending
    }

    pub(super) fn note_recv(&self) {
        crate::util::note_wait(
            "mpsc::Receiver::recv",
            sim_runtime::WaitDetail::None,
            Some(self.site),
        );
    }

    pub(super) fn try_recv(&self) -> Result<T, TryRecvError> {
        let mut st = self.lock();
        if let Some(value) = self.take_one(&mut st) {
            return Ok(value);
        }
        if self.is_done(&st) {
            Err(TryRecvError::Disconnected)
        } else {
            Err(TryRecvError::Empty)
        }
    }

    pub(super) async fn closed(&self) {
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

    pub(super) fn add_sender(&self) {
        self.lock().senders += 1;
    }

    pub(super) fn drop_sender(&self) {
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

    pub(super) fn upgrade(&self) -> bool {
        let mut st = self.lock();
        if st.senders == 0 {
            return false;
        }
        st.senders += 1;
        true
    }
}

/// Wakes a closed channel's receiver when dropped, if the channel is then
/// idle (see [`Chan::reserve`]).
struct WakeIfIdle<'a, T>(&'a Chan<T>);

impl<T> Drop for WakeIfIdle<'_, T> {
    fn drop(&mut self) {
        self.0.wake_if_idle();
    }
}
