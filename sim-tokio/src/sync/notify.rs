use std::collections::VecDeque;
use std::future::Future;
use std::marker::PhantomPinned;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::Mutex as StdMutex;
use std::task::{Context, Poll, Waker};

/// Wakes one task or all of them.
///
/// `notify_one` with nobody waiting stores a single permit, which the next
/// `notified().await` consumes at once. `notify_waiters` wakes every
/// `Notified` created before the call and stores nothing.
#[derive(Debug)]
pub struct Notify {
    state: StdMutex<State>,
}

#[derive(Debug)]
struct State {
    permit: bool,
    /// Bumped by every `notify_waiters`.
    generation: u64,
    waiters: VecDeque<(u64, Option<Waker>)>,
    /// Waiters chosen by `notify_one` (false) or `notify_last` (true) that
    /// have not yet seen it.
    chosen: Vec<(u64, bool)>,
    next_id: u64,
}

impl std::panic::UnwindSafe for Notify {}
impl std::panic::RefUnwindSafe for Notify {}

impl Default for Notify {
    fn default() -> Notify {
        Notify::new()
    }
}

impl Notify {
    /// A `Notify` without a permit.
    pub fn new() -> Notify {
        Notify::const_new()
    }

    /// A `Notify` without a permit, in a `const` context.
    pub const fn const_new() -> Notify {
        Notify {
            state: StdMutex::new(State {
                permit: false,
                generation: 0,
                waiters: VecDeque::new(),
                chosen: Vec::new(),
                next_id: 1,
            }),
        }
    }

    /// A future that completes when notified.
    #[track_caller]
    pub fn notified(&self) -> Notified<'_> {
        Notified {
            _unwind: std::marker::PhantomData,
            wait: Wait::new(self),
            notify: self,
            site: std::panic::Location::caller(),
            _pinned: PhantomPinned,
        }
    }

    /// As [`Notify::notified`], holding the `Notify` through an `Arc`.
    #[track_caller]
    pub fn notified_owned(self: Arc<Self>) -> OwnedNotified {
        OwnedNotified {
            _unwind: std::marker::PhantomData,
            wait: Wait::new(&self),
            notify: self,
            site: std::panic::Location::caller(),
            _pinned: PhantomPinned,
        }
    }

    fn notify(&self, last: bool) {
        let waker = {
            let mut st = super::lock(&self.state);
            let chosen = if last {
                st.waiters.pop_back()
            } else {
                st.waiters.pop_front()
            };
            match chosen {
                Some((id, waker)) => {
                    st.chosen.push((id, last));
                    waker
                }
                None => {
                    st.permit = true;
                    None
                }
            }
        };
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// Wakes the longest-waiting task, or stores a permit if none waits.
    pub fn notify_one(&self) {
        self.notify(false);
    }

    /// Wakes the most recent waiter, or stores a permit if none waits.
    pub fn notify_last(&self) {
        self.notify(true);
    }

    /// Wakes every waiting task (and every `Notified` made before this
    /// call); stores no permit.
    pub fn notify_waiters(&self) {
        let wakers: Vec<Waker> = {
            let mut st = super::lock(&self.state);
            st.generation += 1;
            st.waiters.drain(..).filter_map(|(_, w)| w).collect()
        };
        for w in wakers {
            w.wake();
        }
    }
}

/// One waiter's progress, shared by [`Notified`] and [`OwnedNotified`].
#[derive(Debug)]
struct Wait {
    generation: u64,
    id: u64,
    done: bool,
}

impl Wait {
    fn new(notify: &Notify) -> Wait {
        Wait {
            generation: super::lock(&notify.state).generation,
            id: 0,
            done: false,
        }
    }

    /// Whether notified; registers (or refreshes) the waiter otherwise.
    fn check(&mut self, notify: &Notify, waker: Option<&Waker>) -> bool {
        if self.done {
            return true;
        }
        let mut st = super::lock(&notify.state);
        if st.generation != self.generation {
            let held = self.forget(&mut st);
            drop(st);
            drop(held);
            return true;
        }
        if self.id != 0 {
            if let Some(index) = st.chosen.iter().position(|(id, _)| *id == self.id) {
                st.chosen.swap_remove(index);
                self.id = 0;
                self.done = true;
                return true;
            }
            let mut replaced = None;
            if let Some(waker) = waker {
                if let Some((_, w)) = st.waiters.iter_mut().find(|(id, _)| *id == self.id) {
                    replaced = w.replace(waker.clone());
                }
            }
            drop(st);
            // Outside the lock: a waker's `Drop` may notify.
            drop(replaced);
            return false;
        }
        if st.permit {
            st.permit = false;
            self.done = true;
            return true;
        }
        let id = st.next_id;
        st.next_id += 1;
        st.waiters.push_back((id, waker.cloned()));
        self.id = id;
        false
    }

    /// Leaves the queue for good; returns the waker it held, for the
    /// caller to drop once the lock is let go.
    fn forget(&mut self, st: &mut State) -> Option<Waker> {
        let mut held = None;
        if self.id != 0 {
            if let Some(index) = st.waiters.iter().position(|(id, _)| *id == self.id) {
                held = st.waiters.remove(index).and_then(|(_, w)| w);
            }
            if let Some(index) = st.chosen.iter().position(|(id, _)| *id == self.id) {
                st.chosen.swap_remove(index);
            }
            self.id = 0;
        }
        self.done = true;
        held
    }

    /// Leaves the queue. A notification chosen for this waiter is not lost:
    /// it goes to the next waiter (the oldest for `notify_one`, the newest
    /// for `notify_last`), or becomes the permit.
    fn cancel(&mut self, notify: &Notify) {
        if self.id == 0 {
            return;
        }
        let (forward, held) = {
            let mut st = super::lock(&notify.state);
            let held = st
                .waiters
                .iter()
                .position(|(id, _)| *id == self.id)
                .and_then(|index| st.waiters.remove(index))
                .and_then(|(_, w)| w);
            let forward = st
                .chosen
                .iter()
                .position(|(id, _)| *id == self.id)
                .map(|index| st.chosen.swap_remove(index).1);
            (forward, held)
        };
        self.id = 0;
        drop(held);
        if let Some(last) = forward {
            notify.notify(last);
        }
    }
}

/// The future of [`Notify::notified`].
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Notified<'a> {
    /// Auto traits as tokio's (see `crate::util::NoUnwindSafety`).
    _unwind: crate::util::NoUnwindSafety,
    notify: &'a Notify,
    wait: Wait,
    /// Where `notified()` was called (for what a pending task waits on).
    site: &'static std::panic::Location<'static>,
    _pinned: PhantomPinned,
}

/// The future of [`Notify::notified_owned`].
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct OwnedNotified {
    /// Auto traits as tokio's (see `crate::util::NoUnwindSafety`).
    _unwind: crate::util::NoUnwindSafety,
    notify: Arc<Notify>,
    wait: Wait,
    site: &'static std::panic::Location<'static>,
    _pinned: PhantomPinned,
}

// SAFETY: `Notified` holds `&Notify` (`Sync`), its wait entry (plain ids, no
// pointer into another thread's data) and a `&'static Location`; its
// `PhantomPinned` is what makes it `!Unpin`, not a pointer that ties it to a
// thread.
unsafe impl Send for Notified<'_> {}
// SAFETY: a shared `&Notified` reaches nothing: every method that acts takes
// `Pin<&mut Self>` or `self`.
unsafe impl Sync for Notified<'_> {}
// SAFETY: as for `Notified`: a shared `&OwnedNotified` reaches nothing (it is
// `Send` of itself: `Arc<Notify>`, ids, a `&'static Location`).
unsafe impl Sync for OwnedNotified {}

impl Notified<'_> {
    /// Registers as a waiter without a waker, so a `notify_one` from now on
    /// is kept for this future. Returns whether it is already notified.
    pub fn enable(self: Pin<&mut Self>) -> bool {
        // SAFETY: no field is structurally pinned.
        let this = unsafe { self.get_unchecked_mut() };
        this.wait.check(this.notify, None)
    }
}

impl Future for Notified<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // SAFETY: no field is structurally pinned.
        let this = unsafe { self.get_unchecked_mut() };
        if this.wait.check(this.notify, Some(cx.waker())) {
            Poll::Ready(())
        } else {
            crate::util::note_wait(
                "Notify::notified",
                sim_runtime::WaitDetail::None,
                Some(this.site),
            );
            Poll::Pending
        }
    }
}

impl Drop for Notified<'_> {
    fn drop(&mut self) {
        self.wait.cancel(self.notify);
    }
}

impl OwnedNotified {
    /// As [`Notified::enable`].
    pub fn enable(self: Pin<&mut Self>) -> bool {
        // SAFETY: no field is structurally pinned.
        let this = unsafe { self.get_unchecked_mut() };
        this.wait.check(&this.notify, None)
    }
}

impl Future for OwnedNotified {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // SAFETY: no field is structurally pinned.
        let this = unsafe { self.get_unchecked_mut() };
        if this.wait.check(&this.notify, Some(cx.waker())) {
            Poll::Ready(())
        } else {
            crate::util::note_wait(
                "Notify::notified",
                sim_runtime::WaitDetail::None,
                Some(this.site),
            );
            Poll::Pending
        }
    }
}

impl Drop for OwnedNotified {
    fn drop(&mut self) {
        self.wait.cancel(&self.notify);
    }
}
