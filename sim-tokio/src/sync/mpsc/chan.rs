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

    pub(super) async fn reserve(&self, n: usize) -> Result<(), ()> {
        if self.sem().acquire(n).await.is_err() {
            return Err(());
        }
        self.lock().outstanding += n;
        Ok(())
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

    pub(super) fn is_done(st: &State<T>) -> bool {
        st.queue.is_empty() && (st.senders == 0 || (st.rx_closed && st.outstanding == 0))
    }

    pub(super) fn take_one(&self, st: &mut State<T>) -> Option<T> {
        let value = st.queue.pop_front()?;
        if let Some(sem) = &self.sem {
            sem.release(1);
        }
        Some(value)
    }

    pub(super) fn poll_recv(&self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        if crate::sync::budget(cx).is_pending() {
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

    pub(super) fn poll_recv_many(
        &self,
        cx: &mut Context<'_>,
        buffer: &mut Vec<T>,
        limit: usize,
    ) -> Poll<usize> {
        if limit == 0 {
            return Poll::Ready(0);
        }
        if crate::sync::budget(cx).is_pending() {
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
        if Self::is_done(&st) {
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
