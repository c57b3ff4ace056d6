//! Small helpers shared across the facade.

use sim_runtime::Core;

/// The message tokio gives when a runtime is needed and none is current.
pub(crate) const NO_RUNTIME: &str =
    "there is no reactor running, must be called from the context of a Tokio 1.x runtime";

/// Runs `f` on the current runtime, or panics with tokio's message.
#[track_caller]
#[inline]
pub(crate) fn with_runtime<R>(f: impl FnOnce(&Core) -> R) -> R {
    match sim_runtime::context::with_current(f) {
        Some(r) => r,
        None => sim_runtime::context::no_runtime(),
    }
}

/// tokio's panic for an I/O object made outside a runtime, or on one built
/// without `enable_io`, at the caller's line (every function on the way is
/// `#[track_caller]`).
#[track_caller]
pub(crate) fn require_io() {
    let enabled = with_runtime(|core| core.io_enabled());
    assert!(
        enabled,
        "A Tokio 1.x context was found, but IO is disabled. Call `enable_io` on the runtime \
         builder to enable IO."
    );
}

/// Notes what the running task waits on (see `sim_runtime::WaitNote`),
/// for the reports that list pending tasks. Outside a runtime, nothing.
#[inline]
pub(crate) fn note_wait(
    what: &'static str,
    detail: sim_runtime::WaitDetail,
    site: Option<&'static std::panic::Location<'static>>,
) {
    let noted = sim_runtime::context::with_current(|core| {
        core.note_wait(sim_runtime::WaitNote { what, detail, site })
    });
    if noted.is_none() {
        sim_runtime::context::pending_outside_runtime();
    }
}

/// A tokio blocking call (`blocking_recv`, `blocking_lock`, ...) outside
/// an asynchronous context: the thread waits until `future` completes, as
/// tokio parks it. Who completes it depends on the thread:
/// - inside a blocking section of a task (`spawn_blocking`,
///   `block_in_place`), the runtime runs on meanwhile, as its other
///   workers would;
/// - on a simulated thread, the simulation runs on while it waits;
/// - on the thread that built a live runtime, outside its `block_on`, the
///   simulation runs in the background (a `multi_thread` runtime's tasks,
///   the threads);
/// - on a real thread, another thread (real, or running a simulation) may
///   complete it: the thread parks for real, unless it is the process's
///   only thread.
///
/// # Panics
/// Inside a runtime's asynchronous context, with tokio's message; when
/// nothing could ever complete the future.
#[track_caller]
pub(crate) fn block_outside_runtime<F: std::future::Future>(future: F) -> F::Output {
    let in_run = sim_runtime::context::with_current(|core| core.in_block_on());
    if in_run == Some(true) {
        if !sim_runtime::context::in_blocking_section() {
            panic!(
                "Cannot block the current thread from within a runtime. This happens because \
                 a function attempted to block the current thread while the thread is being \
                 used to drive asynchronous tasks."
            );
        }
        let core = sim_runtime::context::current_id()
            .and_then(sim_runtime::context::lookup)
            .expect("a runtime is current");
        return core.block_on(future);
    }
    let on_sim_thread = sim_runtime::seams::os_layer().is_some_and(|os| os.on_sim_thread());
    if on_sim_thread {
        if let Some(core) = sim_runtime::context::thread_core() {
            return core.block_on(future);
        }
    }
    let mut future = std::pin::pin!(future);
    if let Some(output) = sim_runtime::block_in_background(future.as_mut()) {
        return output;
    }
    if process_threads() > 1 {
        return park_until_ready(future);
    }
    poll_here(future)
}

/// How many threads the process has (Linux's `/proc/self/status`; 2 when
/// it cannot tell, so that a blocking call parks rather than fails).
fn process_threads() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("Threads:"))
                .and_then(|n| n.trim().parse().ok())
        })
        .unwrap_or(2)
}

/// Polls `future` until it completes, parking the (real) thread between
/// polls until its waker unparks it.
fn park_until_ready<F: std::future::Future>(future: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = std::task::Waker::from(std::sync::Arc::new(Unpark(std::thread::current())));
    let mut cx = std::task::Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    // Bounded by the thread that wakes it, as tokio's park.
    loop {
        if let std::task::Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        std::thread::park();
    }
}

/// Polls `future` on this thread until it completes, again each time it
/// woke itself during a poll (bounded); a future that waits on anything
/// else could only be woken by another thread, outside the simulation.
///
/// # Panics
/// When the future waits with nothing on this thread to wake it.
#[track_caller]
pub(crate) fn poll_here<F: std::future::Future>(future: F) -> F::Output {
    struct Flag(std::sync::atomic::AtomicBool);
    impl std::task::Wake for Flag {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }
    let flag = std::sync::Arc::new(Flag(std::sync::atomic::AtomicBool::new(false)));
    let waker = std::task::Waker::from(flag.clone());
    let mut cx = std::task::Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    // Bounded: a future that keeps waking itself is polled this often.
    for _ in 0..1_000_000 {
        flag.0.store(false, std::sync::atomic::Ordering::SeqCst);
        if let std::task::Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        if !flag.0.load(std::sync::atomic::Ordering::SeqCst) {
            break;
        }
    }
    panic!(
        "sim: a blocking call outside the runtime would wait forever: nothing else runs on \
         this thread to complete it, and other threads are outside the simulation. Call it \
         only when the value is already there, or await it inside the runtime."
    )
}

/// Zero-sized, and `Send`, `Sync`, `Unpin` and `UnwindSafe`, but not
/// `RefUnwindSafe` (it holds an `UnsafeCell`): what tokio's types that
/// share mutable state are. A field of one of these markers gives a facade
/// type the auto traits tokio's has (see `NoRefUnwindSafe` and the others).
pub(crate) struct NotRefUnwindSafe(std::marker::PhantomData<std::cell::UnsafeCell<()>>);

// SAFETY: it holds no data; `Sync` is what the types it marks are.
unsafe impl Sync for NotRefUnwindSafe {}

/// A field that takes `RefUnwindSafe` away (and nothing else).
pub(crate) type NoRefUnwindSafe = std::marker::PhantomData<NotRefUnwindSafe>;

/// A field that takes `UnwindSafe` away (and nothing else).
pub(crate) type NoUnwindSafe = std::marker::PhantomData<&'static mut ()>;

/// A field that takes both `UnwindSafe` and `RefUnwindSafe` away.
pub(crate) type NoUnwindSafety = std::marker::PhantomData<&'static mut NotRefUnwindSafe>;
