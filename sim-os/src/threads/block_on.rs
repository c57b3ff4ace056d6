//! A simulated thread's `block_on`, and the polls of its runtime's tasks
//! that the simulator's thread hands it while it waits there.

use super::calls::{fatal, simulator_waits};
use super::{lock, me, restore_current, save_current, SimThread, THREADS};
use sim_runtime::Core;
use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

/// A call the simulator's thread hands to a thread waiting in its
/// `block_on`: a poll of a task of the runtime it blocks on.
pub(super) struct Request {
    /// The call, its lifetime erased: the simulator's thread waits until it
    /// is `Done`, with the call's frame on its stack.
    call: *mut (dyn FnMut() + 'static),
    /// The core's scope and host for the call (the task's).
    current: Option<(u16, u32)>,
    state: RequestState,
}

pub(super) enum RequestState {
    Handed,
    Running,
    /// Ran; a panic's payload goes on in the simulator's thread.
    Done(Option<Box<dyn std::any::Any + Send>>),
}

// SAFETY: only one OS thread runs at a time (the turn), and the call is made
// only while its owner waits for it.
unsafe impl Send for Request {}

/// Wakes a simulated thread blocked in `block_on`.
struct ThreadWake(Arc<SimThread>);

impl std::task::Wake for ThreadWake {
    fn wake(self: Arc<Self>) {
        self.0.notify();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.notify();
    }
}

/// `block_on` on a simulated thread (a thread that runs its own runtime, as
/// tokio-util's `LocalPoolHandle` does): the thread polls its future in the
/// runtime's context and scope, and between polls hands the turn back, so
/// the simulation (its clock, its tasks, this runtime's tasks) runs on
/// until the future's waker makes the thread runnable again. While it
/// waits, the simulator's thread hands it the polls of its runtime's tasks
/// (`run_on_thread`): they run on this thread, as in tokio.
pub(crate) fn block_on<F: Future>(core: &Rc<Core>, future: F) -> F::Output {
    let thread = me().expect("block_on on a simulated thread");
    let waker = Waker::from(Arc::new(ThreadWake(thread.clone())));
    let mut cx = Context::from_waker(&waker);
    let scope = core.current_scope();
    let _enter = sim_runtime::context::Enter::new(core.clone());
    // The runtime is blocked on: its current_thread tasks may run, here.
    let driving_scope = sim_runtime::executor::ScopeDriving::on_thread(core, token(&thread));
    // Its future is no blocking section: what it runs drives tasks.
    let _driving = sim_runtime::context::Driving::new();
    let mut future = std::pin::pin!(future);
    // Bounded by the run: each pass waits for a wake of the future.
    loop {
        // The simulator's thread changes the scope between turns.
        let previous = core.set_scope(scope);
        let polled = future.as_mut().poll(&mut cx);
        core.set_scope(previous);
        if let Poll::Ready(output) = polled {
            return output;
        }
        wait_in_block_on(&thread, &driving_scope);
        if thread.free.load(std::sync::atomic::Ordering::SeqCst) {
            stay_parked();
        }
    }
}

/// The simulation this thread blocks on ended while it waited (its
/// runtime was dropped): its `block_on` cannot go on, and does not return.
/// The thread waits, without spinning, until the process ends; what it
/// holds of the simulation is not touched again, since it now runs beside
/// the simulator's thread.
fn stay_parked() -> ! {
    loop {
        std::thread::park();
    }
}

/// A thread in `block_on` hands the turn back until its future is woken,
/// polling the tasks the simulator's thread hands it meanwhile.
fn wait_in_block_on(thread: &Arc<SimThread>, driving: &sim_runtime::executor::ScopeDriving<'_>) {
    driving.set_idle(true);
    {
        let mut inner = lock(&thread.inner);
        inner.waits = "the future it blocks on (block_on)";
        inner.idle = true;
    }
    thread.pause();
    // Bounded by the simulation: each pass is one poll handed over.
    loop {
        let call = {
            let mut request = lock(&thread.request);
            match request.as_mut() {
                Some(r) if matches!(r.state, RequestState::Handed) => {
                    r.state = RequestState::Running;
                    Some((r.call, r.current))
                }
                _ => None,
            }
        };
        let Some((call, current)) = call else {
            break;
        };
        lock(&thread.inner).idle = false;
        driving.set_idle(false);
        restore_current(current);
        // SAFETY: the simulator's thread waits for `Done` with the call
        // alive on its stack (`run_on_thread`).
        let outcome =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe { (*call)() }));
        if let Some(r) = lock(&thread.request).as_mut() {
            r.state = RequestState::Done(outcome.err());
        }
        driving.set_idle(true);
        {
            let mut inner = lock(&thread.inner);
            inner.waits = "the future it blocks on (block_on)";
            inner.idle = true;
        }
        thread.pause();
    }
    lock(&thread.inner).idle = false;
    driving.set_idle(false);
}

/// The token the core knows a simulated thread by (its handle).
pub(super) fn token(thread: &SimThread) -> u64 {
    (thread.number << 1) | 1
}

/// The calling thread's token, if it is a simulated thread.
pub(crate) fn current_token() -> Option<u64> {
    me().map(|t| token(&t))
}

/// The simulator's side of a poll handed to the thread `token` waiting in
/// its `block_on`: hands it `call` and waits until it ran. While the thread
/// blocks inside the call (a std lock, a sleep), the simulator's thread
/// runs the other runnable threads, as when it blocks itself. False when
/// the thread does not wait in its `block_on`.
pub(crate) fn run_on_thread(token: u64, call: &mut dyn FnMut()) -> bool {
    let Some(thread) = lock(&THREADS).get(&token).cloned() else {
        return false;
    };
    {
        let inner = lock(&thread.inner);
        if !inner.idle || inner.exited {
            return false;
        }
    }
    let call: *mut (dyn FnMut() + '_) = call;
    // SAFETY: the lifetime is erased only until the call is `Done`, which
    // this function waits for before it returns.
    let call: *mut (dyn FnMut() + 'static) = unsafe { std::mem::transmute(call) };
    *lock(&thread.request) = Some(Request {
        call,
        current: save_current(),
        state: RequestState::Handed,
    });
    let done = || {
        matches!(
            lock(&thread.request).as_ref().map(|r| &r.state),
            Some(RequestState::Done(_))
        )
    };
    thread.run();
    if !done() {
        if let Err(report) =
            simulator_waits(done, None, None, "a task polled on its runtime's thread")
        {
            // The call's frame is on the blocked thread's stack: the run
            // cannot go on.
            fatal(&report);
        }
    }
    let request = lock(&thread.request).take();
    if let Some(Request {
        state: RequestState::Done(Some(payload)),
        ..
    }) = request
    {
        std::panic::resume_unwind(payload);
    }
    true
}
