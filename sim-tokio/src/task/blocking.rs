use super::JoinHandle;
use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

/// A blocking closure as a task. At its first poll it starts the closure on
/// a thread of its own, as tokio's blocking pool does: in a simulation, a
/// simulated thread (run one at a time, in the seed's order), so blocking
/// code that waits for a task makes progress. The task then waits for the
/// closure's result. With `SIM_ALLOW_THREADS=1` (real threads, which cannot
/// use the simulation) the closure runs inline, whole, on that poll.
pub(crate) struct BlockingTask<F, R> {
    state: State<F, R>,
}

enum State<F, R> {
    Start(F),
    Running(Arc<Mutex<Outcome<R>>>),
    Done,
}

/// What the closure's thread left: nothing yet (and who waits), or its
/// result or panic.
struct Outcome<R> {
    result: Option<std::thread::Result<R>>,
    waker: Option<Waker>,
}

impl<F, R> BlockingTask<F, R> {
    pub(crate) fn new(func: F) -> BlockingTask<F, R> {
        BlockingTask {
            state: State::Start(func),
        }
    }
}

impl<F, R> Unpin for BlockingTask<F, R> {}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl<F, R> Future for BlockingTask<F, R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    type Output = R;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<R> {
        if let State::Start(_) = self.state {
            let State::Start(func) = std::mem::replace(&mut self.state, State::Done) else {
                unreachable!("checked above")
            };
            let real_threads =
                sim_runtime::context::with_current(|core| core.config().allow_threads)
                    .unwrap_or(true);
            if real_threads {
                // Off the runtime's tasks, as on tokio's blocking pool: it
                // may block on a runtime.
                return Poll::Ready(sim_runtime::context::blocking_section(func));
            }
            let outcome = Arc::new(Mutex::new(Outcome {
                result: None,
                waker: None,
            }));
            let shared = outcome.clone();
            let handle = crate::runtime::Handle::current();
            let started = std::thread::Builder::new()
                .name("tokio-runtime-worker".into())
                .spawn(move || {
                    // The blocking pool's threads are in the runtime's
                    // context, as tokio's are.
                    let _enter = handle.enter();
                    sim_runtime::context::join_blocking_pool();
                    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(func));
                    let waker = {
                        let mut outcome = lock(&shared);
                        outcome.result = Some(result);
                        outcome.waker.take()
                    };
                    if let Some(w) = waker {
                        w.wake();
                    }
                });
            if let Err(e) = started {
                panic!("sim: spawn_blocking could not start its thread: {e}");
            }
            self.state = State::Running(outcome);
        }
        let State::Running(outcome) = &self.state else {
            panic!("a blocking task is polled after it finished");
        };
        let mut guard = lock(outcome);
        match guard.result.take() {
            Some(result) => {
                drop(guard);
                self.state = State::Done;
                match result {
                    Ok(value) => Poll::Ready(value),
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
            None => {
                guard.waker = Some(cx.waker().clone());
                drop(guard);
                crate::util::note_wait(
                    "spawn_blocking (its closure's thread)",
                    sim_runtime::WaitDetail::None,
                    None,
                );
                Poll::Pending
            }
        }
    }
}

/// Runs a blocking closure on a thread of its own, as tokio's blocking pool:
/// in a simulation a simulated thread, which runs when the seed picks it
/// and takes no virtual time unless it sleeps; blocking code in it may wait
/// for tasks. Its result is the returned handle's.
///
/// Cancelling it before it runs means `f` never runs; once it runs it
/// finishes, as in tokio.
///
/// # Panics
/// Outside a runtime.
#[track_caller]
pub fn spawn_blocking<F, R>(f: F) -> JoinHandle<R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    let location = std::panic::Location::caller();
    crate::util::with_runtime(|core| {
        super::spawn::spawn_at(core, BlockingTask::new(f), None, "blocking", 0, location)
    })
}

/// Runs `f` in place. tokio requires the `multi_thread` flavor for this and
/// so does the simulator; there it runs inline, as the simulation has no
/// other thread to move tasks to.
///
/// # Panics
/// On a `current_thread` runtime, as in tokio.
#[track_caller]
pub fn block_in_place<F, R>(f: F) -> R
where
    F: FnOnce() -> R,
{
    let flavor = sim_runtime::context::with_current(|core| core.flavor());
    // On a current_thread runtime, or in a LocalSet's task, as in tokio.
    let in_local =
        sim_runtime::context::with_current(|core| core.current_local() != 0).unwrap_or(false);
    let refused = flavor == Some(sim_runtime::Flavor::CurrentThread) || in_local;
    if refused && !ALLOWED.with(Cell::get) {
        panic!("can call blocking only when running on the multi-threaded runtime");
    }
    // A blocking section has no budget, as in tokio; the task's comes back
    // after it, even if `f` panics.
    struct Restore(Option<bool>);
    impl Drop for Restore {
        fn drop(&mut self) {
            if let Some(previous) = self.0 {
                sim_runtime::context::with_current(|core| core.set_unconstrained(previous));
            }
        }
    }
    let _restore = Restore(sim_runtime::context::with_current(|core| {
        core.set_unconstrained(true)
    }));
    sim_runtime::context::blocking_section(f)
}

thread_local! {
    /// A future of `Handle::block_on` is being polled: `block_in_place`
    /// runs its closure there whatever the runtime's flavor, as in tokio.
    static ALLOWED: Cell<bool> = const { Cell::new(false) };
}

pin_project_lite::pin_project! {
    /// The future of a `Handle::block_on`: `block_in_place` is allowed
    /// while it is polled.
    pub(crate) struct AllowBlockInPlace<F> {
        #[pin]
        future: F,
    }
}

impl<F> AllowBlockInPlace<F> {
    pub(crate) fn new(future: F) -> AllowBlockInPlace<F> {
        AllowBlockInPlace { future }
    }
}

impl<F: Future> Future for AllowBlockInPlace<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        struct Restore(bool);
        impl Drop for Restore {
            fn drop(&mut self) {
                ALLOWED.with(|a| a.set(self.0));
            }
        }
        let _restore = Restore(ALLOWED.with(|a| a.replace(true)));
        self.project().future.poll(cx)
    }
}
