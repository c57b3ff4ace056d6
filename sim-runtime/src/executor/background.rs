//! The simulation in the background of a thread blocked outside `block_on`.
//!
//! On tokio, a `multi_thread` runtime's workers run its tasks while the
//! thread that built it does something else, and OS threads run whether or
//! not a runtime is blocked on. A test that spawns tasks with
//! `Runtime::spawn` and then waits on a `std` channel, joins a thread or
//! sleeps relies on that. Here every task and thread of the simulation runs
//! on the simulator's thread, one at a time, so while that thread blocks
//! outside `block_on` (in a futex wait, a join, a sleep, a tokio blocking
//! call) the OS layer drives the simulation meanwhile: its threads, its
//! `multi_thread` runtimes' tasks, its timers and deliveries, all picked by
//! the seed as in a `block_on`. A `current_thread` runtime's tasks wait for
//! a `block_on`, as in tokio.

use super::Core;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

impl Core {
    /// Whether the simulation has work that runs without a `block_on`: a
    /// live `multi_thread` runtime (its workers), or some other activity the
    /// caller knows of (its simulated threads).
    pub fn runs_in_background(&self) -> bool {
        !self.shut_down.get()
            && !self.in_block_on.get()
            && (self.scopes.has_live_multi_thread()
                || self.tasks.borrow().unscoped_unfinished() > 0)
    }

    /// A runtime (`scope`) shuts down: as tokio's, it waits for the
    /// closures its blocking pool runs (`spawn_blocking`) to finish, at most
    /// `limit_ns` of virtual time (`None`: for as long as they run), while
    /// the simulation runs in the background. Its other tasks are
    /// cancelled first. Nothing waits when a `block_on` of the simulation is
    /// on the stack, or when nothing in the simulation can move any more.
    pub fn wait_for_blocking_pool(self: &Rc<Self>, scope: u16, limit_ns: Option<u64>) {
        if self.shut_down.get() || self.in_block_on.get() || limit_ns == Some(0) {
            return;
        }
        {
            // Inside the runtime, as tokio drops a shut-down runtime's tasks
            // (a future's drop may ask for `Handle::current`).
            let _enter = super::context::Enter::new(self.clone());
            self.with_scope(scope, || {
                self.cancel_live_tasks(|t| t.scope == scope && t.flags & crate::task::THREAD == 0)
            });
        }
        let left = || self.tasks.borrow().count_unfinished_blocking(scope);
        if left() == 0 {
            return;
        }
        let deadline = limit_ns.map(|limit| self.time.now_ns().saturating_add(limit));
        let woken_at_deadline: Rc<std::cell::RefCell<Option<std::task::Waker>>> = Rc::default();
        let timer = deadline.map(|at| {
            let waker = woken_at_deadline.clone();
            self.schedule(
                at,
                "runtime shutdown timeout",
                Box::new(move || {
                    if let Some(w) = waker.borrow_mut().take() {
                        w.wake();
                    }
                }),
            )
        });
        let root = std::pin::pin!(std::future::poll_fn(|cx| {
            let late = deadline.is_some_and(|at| self.time.now_ns() >= at);
            if left() == 0 || late {
                return Poll::Ready(());
            }
            self.finish_waiters.borrow_mut().push(cx.waker().clone());
            *woken_at_deadline.borrow_mut() = Some(cx.waker().clone());
            Poll::Pending
        }));
        // Pending: nothing can finish them any more; the shutdown goes on.
        let _ = self.drive_background(root);
        if let Some(key) = timer {
            self.event_cancel(key);
        }
    }

    /// Runs the simulation in the background until `future` completes
    /// (`Ready` with its output) or nothing in the simulation can move any
    /// more (`Pending`: no task or thread can run and no event is pending;
    /// something outside it, a real thread, may still complete the future).
    ///
    /// The future is polled as a `block_on`'s root, in the runtime's
    /// context; only `multi_thread` runtimes' tasks and simulated threads
    /// run besides it.
    ///
    /// # Panics
    /// Inside a `block_on` of this simulation (its tasks are on the stack),
    /// and with the run's failure when one is raised meanwhile.
    pub fn drive_background<F: Future + ?Sized>(
        self: &Rc<Self>,
        future: Pin<&mut F>,
    ) -> Poll<F::Output> {
        assert!(
            !self.in_block_on.get(),
            "sim: the simulation is driven in the background only outside its block_on"
        );
        let was_background = self.scopes.set_background(true);
        let _restore = RestoreBackground(self, was_background);
        let previous = self.background.replace(true);
        let _restore_flag = RestoreFlag(&self.background, previous);
        self.background_idle.set(false);
        let mut future = future;
        let root = std::future::poll_fn(|cx: &mut Context<'_>| {
            if let Poll::Ready(output) = future.as_mut().poll(cx) {
                return Poll::Ready(Poll::Ready(output));
            }
            if self.background_idle.replace(false) {
                return Poll::Ready(Poll::Pending);
            }
            Poll::Pending
        });
        self.block_on_here(root, false)
    }

    /// The loop found nothing to do: in a drive in the background, the
    /// root is queued once more to end it (true); otherwise false (the
    /// loop reports a deadlock).
    pub(super) fn background_idles(&self) -> bool {
        if !self.background.get() {
            return false;
        }
        self.background_idle.set(true);
        self.scheduler.borrow_mut().queue_root();
        true
    }
}

/// Puts the scopes' background mark back.
struct RestoreBackground<'a>(&'a Core, bool);

impl Drop for RestoreBackground<'_> {
    fn drop(&mut self) {
        self.0.scopes.set_background(self.1);
    }
}

/// Puts a flag back.
struct RestoreFlag<'a>(&'a std::cell::Cell<bool>, bool);

impl Drop for RestoreFlag<'_> {
    fn drop(&mut self) {
        self.0.set(self.1);
    }
}

/// Blocks the calling thread on `future` while the simulation runs in the
/// background, when this thread drives one that way (see
/// `OsLayer::block_in_background`): `Some` with the output; `None`, without
/// polling the future, on any other thread.
///
/// # Panics
/// With a deadlock report (class `deadlock`), when nothing in the
/// simulation or outside it can complete the future.
pub fn block_in_background<F: Future + ?Sized>(future: Pin<&mut F>) -> Option<F::Output> {
    let os = crate::seams::os_layer()?;
    let mut output = None;
    let mut future = future;
    let wrapped = std::pin::pin!(async {
        output = Some(future.as_mut().await);
    });
    match os.block_in_background(wrapped)? {
        Ok(()) => Some(output.expect("the future completed")),
        Err(report) => {
            crate::failure::set_failure_class(crate::failure::FailureClass::Deadlock);
            panic!("{report}")
        }
    }
}
