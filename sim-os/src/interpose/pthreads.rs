//! Threads: `pthread_create` starts a simulated thread during a run (see
//! `crate::threads`); `pthread_join`, `pthread_detach`, `pthread_setname_np`
//! and `sched_yield` act on it.

use crate::symbols::{libc_fn, real, real_pthread_create};

/// libc's `pthread_create`: during a run, a simulated thread (see
/// `threads/`), real with `SIM_ALLOW_THREADS=1`.
///
/// # Safety
/// As libc's.
#[no_mangle]
pub unsafe extern "C" fn pthread_create(
    thread: *mut libc::pthread_t,
    attr: *const libc::pthread_attr_t,
    start: extern "C" fn(*mut libc::c_void) -> *mut libc::c_void,
    arg: *mut libc::c_void,
) -> libc::c_int {
    // During a run, a thread runs one at a time with the simulation
    // (`threads/`), unless real, parallel threads were asked for.
    // The thread that drives a simulation in the background: a plain one.
    if crate::threads::starting_driver() {
        let Some(real) = real_pthread_create() else {
            return libc::EAGAIN;
        };
        return real(thread, attr, start, arg);
    }
    // Outside a `block_on`, a thread started by the thread that built a
    // live runtime belongs to that runtime's simulation too: it runs while
    // the runtime is blocked on, or driven in the background.
    let spawn = |core: &sim_runtime::Core| {
        (!core.config().allow_threads)
            .then(|| crate::threads::spawn(core, thread, attr, start, arg))
    };
    let simulated = sim_runtime::context::with_simulation(spawn)
        .or_else(|| sim_runtime::context::thread_core().map(|core| spawn(&core)))
        // A plain test's first thread, under `cargo sim test`: its
        // simulation begins (`threads/ambient.rs`).
        .or_else(|| crate::threads::ambient::core().map(|core| spawn(&core)))
        .flatten();
    if let Some(rc) = simulated {
        return rc;
    }
    // A real thread, counted while it runs (see `real_threads`).
    let Some(real) = real_pthread_create() else {
        return libc::EAGAIN;
    };
    let counted = Box::into_raw(Box::new(crate::real_threads::Start { start, arg }));
    crate::real_threads::starting();
    let rc = real(
        thread,
        attr,
        crate::real_threads::trampoline,
        counted.cast(),
    );
    if rc != 0 {
        crate::real_threads::not_started();
        // SAFETY: the thread did not start, so the box is still ours.
        drop(Box::from_raw(counted));
    }
    rc
}

/// libc's `pthread_join`: a simulated thread is waited for in the run.
///
/// # Safety
/// As libc's.
#[no_mangle]
pub unsafe extern "C" fn pthread_join(
    thread: libc::pthread_t,
    retval: *mut *mut libc::c_void,
) -> libc::c_int {
    if let Some(rc) = crate::threads::join(thread, retval) {
        return rc;
    }
    match libc_fn!(
        c"pthread_join",
        fn(libc::pthread_t, *mut *mut libc::c_void) -> libc::c_int
    ) {
        Some(real) => real(thread, retval),
        None => libc::ESRCH,
    }
}

/// libc's `pthread_detach`: a simulated thread's handle is let go.
///
/// # Safety
/// As libc's.
#[no_mangle]
pub unsafe extern "C" fn pthread_detach(thread: libc::pthread_t) -> libc::c_int {
    if let Some(rc) = crate::threads::detach(thread) {
        return rc;
    }
    match libc_fn!(c"pthread_detach", fn(libc::pthread_t) -> libc::c_int) {
        Some(real) => real(thread),
        None => libc::ESRCH,
    }
}

/// libc's `pthread_setname_np`: a simulated thread's name, for reports.
///
/// # Safety
/// As libc's.
#[no_mangle]
pub unsafe extern "C" fn pthread_setname_np(
    thread: libc::pthread_t,
    name: *const libc::c_char,
) -> libc::c_int {
    if !name.is_null() && thread == libc::pthread_self() {
        crate::threads::set_name(&std::ffi::CStr::from_ptr(name).to_string_lossy());
    }
    match libc_fn!(
        c"pthread_setname_np",
        fn(libc::pthread_t, *const libc::c_char) -> libc::c_int
    ) {
        Some(real) => real(thread, name),
        None => 0,
    }
}

/// libc's `sched_yield`: a scheduling point on a simulated thread.
///
/// # Safety
/// As libc's.
#[no_mangle]
pub unsafe extern "C" fn sched_yield() -> libc::c_int {
    if crate::threads::yield_now() || crate::threads::yield_in_background() {
        return 0;
    }
    real!(c"sched_yield", fn() -> libc::c_int)
}
