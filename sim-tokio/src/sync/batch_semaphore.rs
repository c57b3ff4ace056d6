//! The FIFO semaphore under `Semaphore`, `Mutex`, `RwLock` and bounded
//! `mpsc`.
//!
//! Waiters queue in arrival order. Released permits go to the waiter at the
//! head, even in part, until it has all it asked for; nobody behind it is
//! served first, so a large request cannot be starved by small ones. A
//! waiter whose future is dropped leaves the queue and gives back what it
//! was assigned, which then flows to the next waiter: cancelling loses
//! nothing and wedges no one.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex as StdMutex;
use std::task::{Context, Poll, Waker};

/// The error of acquiring from a closed semaphore.
#[derive(Debug)]
pub struct AcquireError(());

impl AcquireError {
    pub(crate) fn closed() -> AcquireError {
        AcquireError(())
    }
}

impl fmt::Display for AcquireError {
    fn fmt(&self, fmt: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(fmt, "semaphore closed")
    }
}

impl std::error::Error for AcquireError {}

/// Why a `try_acquire` failed.
#[derive(Debug, PartialEq, Eq)]
pub enum TryAcquireError {
    /// The semaphore is closed.
    Closed,
    /// Not enough permits are free now.
    NoPermits,
}

impl TryAcquireError {
    /// Whether the semaphore is closed.
    pub(crate) fn is_closed(&self) -> bool {
        matches!(self, TryAcquireError::Closed)
    }

    /// Whether there were not enough permits.
    #[allow(dead_code)]
    pub(crate) fn is_no_permits(&self) -> bool {
        matches!(self, TryAcquireError::NoPermits)
    }
}

impl fmt::Display for TryAcquireError {
    fn fmt(&self, fmt: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TryAcquireError::Closed => write!(fmt, "semaphore closed"),
            TryAcquireError::NoPermits => write!(fmt, "no permits available"),
        }
    }
}

impl std::error::Error for TryAcquireError {}

struct Waiter {
    needed: usize,
    assigned: usize,
    waker: Option<Waker>,
    /// The task that waits (0 outside a simulation).
    task: u64,
}

struct State {
    permits: usize,
    closed: bool,
    queue: VecDeque<u64>,
    waiters: BTreeMap<u64, Waiter>,
    next_id: u64,
    /// For a lock (`Mutex`, `RwLock`): what it is, for reports; and which
    /// tasks hold how many permits (the task that acquired them; a guard
    /// moved to another task still counts for the first). `None` for a
    /// semaphore or a channel, whose permits anyone may release.
    lock: Option<&'static str>,
    holders: Vec<(u64, usize)>,
}

pub(crate) struct Semaphore {
    state: StdMutex<State>,
}

impl fmt::Debug for Semaphore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = self.lock();
        f.debug_struct("Semaphore")
            .field("permits", &st.permits)
            .field("closed", &st.closed)
            .field("waiters", &st.queue.len())
            .finish()
    }
}

impl Semaphore {
    /// The most permits a semaphore holds (as tokio: `usize::MAX >> 3`).
    pub(crate) const MAX_PERMITS: usize = usize::MAX >> 3;

    pub(crate) const fn new(permits: usize) -> Semaphore {
        Semaphore::with_lock(permits, None)
    }

    /// The semaphore of a lock (`kind`: "Mutex", "RwLock"): its holders are
    /// tracked, so a cycle of tasks waiting on each other's locks is found
    /// when it forms (see `waits.rs`).
    pub(crate) const fn new_lock(permits: usize, kind: &'static str) -> Semaphore {
        Semaphore::with_lock(permits, Some(kind))
    }

    const fn with_lock(permits: usize, lock: Option<&'static str>) -> Semaphore {
        Semaphore {
            state: StdMutex::new(State {
                permits,
                closed: false,
                queue: VecDeque::new(),
                waiters: BTreeMap::new(),
                next_id: 1,
                lock,
                holders: Vec::new(),
            }),
        }
    }

    fn hold(st: &mut State, task: u64, n: usize) {
        if st.lock.is_some() {
            st.holders.push((task, n));
        }
    }

    fn unhold(st: &mut State, n: usize) {
        if st.lock.is_none() || st.holders.is_empty() {
            return;
        }
        if st.holders.len() == 1 && st.holders[0].1 <= n {
            // A mutex's one holder: no need to ask who releases.
            st.holders.clear();
            return;
        }
        // The current task's holding first; else the oldest.
        let me = current_task();
        let index = st.holders.iter().position(|(t, _)| *t == me).unwrap_or(0);
        let entry = &mut st.holders[index];
        entry.1 = entry.1.saturating_sub(n);
        if entry.1 == 0 {
            st.holders.remove(index);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        super::lock(&self.state)
    }

    /// The permits given to waiters that have not taken them yet: in use,
    /// though nobody holds them (an mpsc channel is not idle while its
    /// queued reservations have slots).
    pub(crate) fn assigned_to_waiters(&self) -> usize {
        self.lock().waiters.values().map(|w| w.assigned).sum()
    }

    pub(crate) fn available_permits(&self) -> usize {
        self.lock().permits
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// Closes: waiters and later acquires fail; permits can still be
    /// released.
    pub(crate) fn close(&self) {
        let wakers: Vec<Waker> = {
            let mut st = self.lock();
            st.closed = true;
            st.waiters
                .values_mut()
                .filter_map(|w| w.waker.take())
                .collect()
        };
        for w in wakers {
            w.wake();
        }
    }

    pub(crate) fn try_acquire(&self, n: usize) -> Result<(), TryAcquireError> {
        let mut st = self.lock();
        if st.closed {
            return Err(TryAcquireError::Closed);
        }
        // Queued waiters come first: taking permits past them would starve
        // them.
        if !st.queue.is_empty() || st.permits < n {
            return Err(TryAcquireError::NoPermits);
        }
        st.permits -= n;
        if st.lock.is_some() {
            Self::hold(&mut st, current_task(), n);
        }
        Ok(())
    }

    /// Adds permits and hands them to waiters in order.
    ///
    /// # Panics
    /// When the total would pass `MAX_PERMITS`.
    #[track_caller]
    pub(crate) fn release(&self, n: usize) {
        if n == 0 {
            return;
        }
        let wakers = {
            let mut st = self.lock();
            let total = st.permits + n;
            assert!(
                total <= Self::MAX_PERMITS,
                "a semaphore may not have more than MAX_PERMITS permits ({})",
                Self::MAX_PERMITS
            );
            st.permits = total;
            Self::unhold(&mut st, n);
            Self::assign(&mut st)
        };
        for w in wakers {
            w.wake();
        }
    }

    /// Removes up to `n` free permits; returns how many.
    pub(crate) fn forget_permits(&self, n: usize) -> usize {
        let mut st = self.lock();
        let taken = n.min(st.permits);
        st.permits -= taken;
        taken
    }

    fn assign(st: &mut State) -> Vec<Waker> {
        let mut wakers = Vec::new();
        // A closed semaphore serves no waiter: each fails (see `close`).
        if st.closed {
            return wakers;
        }
        // Bounded by the queue's length: each turn serves or stops.
        while let Some(&id) = st.queue.front() {
            let waiter = st
                .waiters
                .get_mut(&id)
                .expect("queued waiters are registered");
            let take = st.permits.min(waiter.needed - waiter.assigned);
            waiter.assigned += take;
            st.permits -= take;
            if waiter.assigned < waiter.needed {
                break;
            }
            st.queue.pop_front();
            if let Some(w) = waiter.waker.take() {
                wakers.push(w);
            }
            // Served: it holds the lock from now (it is woken to take it).
            let (task, needed) = (waiter.task, waiter.needed);
            Self::hold(st, task, needed);
        }
        wakers
    }

    pub(crate) fn acquire(&self, n: usize) -> Acquire<'_> {
        self.acquire_as(n, "semaphore")
    }

    /// As `acquire`, naming what is acquired (a lock's type) for reports.
    pub(crate) fn acquire_as(&self, n: usize, what: &'static str) -> Acquire<'_> {
        Acquire {
            sem: self,
            needed: n,
            id: 0,
            done: false,
            what,
            wait: None,
        }
    }

    /// Polls an acquire, spending a unit of the task's budget only when it
    /// completes (as tokio's: a wait that goes on costs nothing).
    fn poll_acquire(
        &self,
        acq: &mut AcquireState,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), AcquireError>> {
        let coop = std::task::ready!(crate::task::coop::poll_proceed(cx));
        let result = self.poll_acquire_now(acq, cx);
        if result.is_ready() {
            coop.made_progress();
        }
        result
    }

    fn poll_acquire_now(
        &self,
        acq: &mut AcquireState,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), AcquireError>> {
        let mut st = self.lock();
        if acq.id == 0 {
            if st.closed {
                return Poll::Ready(Err(AcquireError::closed()));
            }
            if st.queue.is_empty() && st.permits >= acq.needed {
                st.permits -= acq.needed;
                if st.lock.is_some() {
                    Self::hold(&mut st, current_task(), acq.needed);
                }
                return Poll::Ready(Ok(()));
            }
            let id = st.next_id;
            st.next_id += 1;
            // With no queue ahead, free permits go to this waiter at once.
            let take = if st.queue.is_empty() {
                st.permits.min(acq.needed)
            } else {
                0
            };
            st.permits -= take;
            let task = current_task();
            st.waiters.insert(
                id,
                Waiter {
                    needed: acq.needed,
                    assigned: take,
                    waker: Some(cx.waker().clone()),
                    task,
                },
            );
            st.queue.push_back(id);
            acq.id = id;
            let lock = st.lock;
            drop(st);
            if let Some(kind) = lock {
                acq.wait = super::waits::lock_wait(self, id, kind, acq.what, acq.needed);
            }
            return Poll::Pending;
        }
        let st = &mut *st;
        let waiter = st
            .waiters
            .get_mut(&acq.id)
            .expect("a pending acquire is registered");
        if waiter.assigned == waiter.needed {
            st.waiters.remove(&acq.id);
            acq.id = 0;
            super::waits::lock_wait_done(&mut acq.wait);
            return Poll::Ready(Ok(()));
        }
        if st.closed {
            let assigned = waiter.assigned;
            st.waiters.remove(&acq.id);
            st.queue.retain(|id| *id != acq.id);
            acq.id = 0;
            st.permits += assigned;
            super::waits::lock_wait_done(&mut acq.wait);
            return Poll::Ready(Err(AcquireError::closed()));
        }
        match &waiter.waker {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => waiter.waker = Some(cx.waker().clone()),
        }
        Poll::Pending
    }

    fn cancel(&self, id: u64) {
        let wakers = {
            let mut st = self.lock();
            let Some(waiter) = st.waiters.remove(&id) else {
                return;
            };
            st.queue.retain(|queued| *queued != id);
            if waiter.assigned == waiter.needed && st.lock.is_some() {
                // Served but never taken: it holds nothing after all.
                if let Some(i) = st
                    .holders
                    .iter()
                    .position(|(t, n)| *t == waiter.task && *n == waiter.needed)
                {
                    st.holders.remove(i);
                }
            }
            // Whatever it was given goes on to the next in line.
            st.permits += waiter.assigned;
            Self::assign(&mut st)
        };
        for w in wakers {
            w.wake();
        }
    }
}

struct AcquireState {
    needed: usize,
    id: u64,
    what: &'static str,
    wait: Option<super::waits::WaitToken>,
}

/// The future of `Semaphore::acquire`: resolves once all `needed` permits
/// are held by the caller.
pub(crate) struct Acquire<'a> {
    sem: &'a Semaphore,
    needed: usize,
    id: u64,
    done: bool,
    /// The lock's type, for reports.
    what: &'static str,
    /// Its registration as a lock wait, while it waits.
    wait: Option<super::waits::WaitToken>,
}

/// The running task's id (0 outside a simulation).
fn current_task() -> u64 {
    sim_runtime::context::with_current(|core| core.current_task()).unwrap_or(0)
}

impl Future for Acquire<'_> {
    type Output = Result<(), AcquireError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let mut state = AcquireState {
            needed: this.needed,
            id: this.id,
            what: this.what,
            wait: this.wait.take(),
        };
        let result = this.sem.poll_acquire(&mut state, cx);
        this.id = state.id;
        this.wait = state.wait;
        if result.is_ready() {
            this.done = true;
        }
        result
    }
}

impl Drop for Acquire<'_> {
    fn drop(&mut self) {
        super::waits::lock_wait_done(&mut self.wait);
        if self.id != 0 && !self.done {
            self.sem.cancel(self.id);
        }
    }
}

impl super::waits::WaitedLock for Semaphore {
    /// For a lock: the tasks that hold it, and those queued ahead of
    /// `waiter` (who will hold it first). Also whether the free permits
    /// would serve `waiter` (then it is not blocked by anyone).
    fn blockers(&self, waiter: u64) -> (Vec<u64>, bool) {
        let st = self.lock();
        let mut tasks: Vec<u64> = st.holders.iter().map(|(task, _)| *task).collect();
        for id in st.queue.iter().take_while(|id| **id != waiter) {
            if let Some(w) = st.waiters.get(id) {
                tasks.push(w.task);
            }
        }
        let free = st
            .waiters
            .get(&waiter)
            .is_some_and(|w| w.assigned == w.needed);
        (tasks, free)
    }

    /// The waker a waiter keeps, for telling whose it is.
    fn waiter_waker(&self, waiter: u64) -> Option<Waker> {
        self.lock()
            .waiters
            .get(&waiter)
            .and_then(|w| w.waker.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::task::Waker;

    fn poll(acq: &mut Pin<Box<Acquire<'_>>>) -> Poll<Result<(), AcquireError>> {
        acq.as_mut().poll(&mut Context::from_waker(Waker::noop()))
    }

    #[test]
    fn the_head_waiter_is_served_first_even_when_small_ones_could_go() {
        let sem = Semaphore::new(1);
        let mut big = Box::pin(sem.acquire(3));
        assert!(poll(&mut big).is_pending());
        assert_eq!(sem.available_permits(), 0, "the head took the free permit");
        let mut small = Box::pin(sem.acquire(1));
        assert!(poll(&mut small).is_pending());
        sem.release(1);
        assert!(
            poll(&mut small).is_pending(),
            "the small one waits its turn"
        );
        sem.release(1);
        assert!(poll(&mut big).is_ready());
        assert!(poll(&mut small).is_pending());
        sem.release(1);
        assert!(poll(&mut small).is_ready());
    }

    #[test]
    fn a_dropped_waiter_passes_its_permits_on() {
        let sem = Semaphore::new(0);
        let mut first = Box::pin(sem.acquire(2));
        let mut second = Box::pin(sem.acquire(1));
        assert!(poll(&mut first).is_pending());
        assert!(poll(&mut second).is_pending());
        sem.release(1);
        drop(first);
        assert!(poll(&mut second).is_ready());
        assert_eq!(sem.available_permits(), 0);
    }

    #[test]
    fn close_fails_waiters_and_try_acquire() {
        let sem = Semaphore::new(0);
        let mut waiting = Box::pin(sem.acquire(1));
        assert!(poll(&mut waiting).is_pending());
        sem.close();
        assert!(matches!(poll(&mut waiting), Poll::Ready(Err(_))));
        assert_eq!(sem.try_acquire(1), Err(TryAcquireError::Closed));
    }
}
