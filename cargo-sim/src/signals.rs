//! Signals: Ctrl-C, SIGTERM and SIGHUP end a run at once, and never before
//! the user's `Cargo.lock` is back.
//!
//! The handler only records the signal. Every wait of `cargo sim` polls
//! [`received`] and, when it is set, stops its children, puts the lock back
//! and exits with 128 + the signal's number, as a shell reports it.

use std::process::{Child, ExitStatus};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

static RECEIVED: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(signal: libc::c_int) {
    // Async-signal-safe: one atomic store.
    RECEIVED.store(signal, Ordering::SeqCst);
}

/// Installs the handler for SIGINT, SIGTERM and SIGHUP. Children started
/// afterwards get the default dispositions back at `exec`, so a test
/// process dies on Ctrl-C as it would under plain `cargo test`.
pub fn install() {
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: a zeroed sigaction with a handler that only stores an
        // atomic is valid; SA_RESTART is left off so sleeps wake.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as *const () as usize;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

/// A read-only command (`diff`, `timeline`, `merge`'s report) whose
/// reader goes away (`cargo sim diff A B | head`) ends quietly, as a Unix
/// tool does: SIGPIPE's default action, not Rust's ignored SIGPIPE and a
/// panic at the next print. Not for `test`, which must put the lock back.
pub fn die_quietly_on_closed_pipe() {
    // SAFETY: restoring a signal's default disposition has no
    // precondition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// The signal received, if any.
pub fn received() -> Option<i32> {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => None,
        signal => Some(signal),
    }
}

/// Why a wait ended early.
#[derive(Debug)]
pub struct Interrupted(pub i32);

/// Waits for `child`, polling for signals. On a signal, `child` gets it too
/// (then SIGKILL if it has not ended after a grace period) before this
/// returns `Err`.
pub fn wait(child: &mut Child) -> Result<ExitStatus, Interrupted> {
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Ok(status);
        }
        if let Some(signal) = received() {
            stop(child, signal);
            return Err(Interrupted(signal));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Sends `signal` to `child`, waits up to two seconds, then kills it.
pub fn stop(child: &mut Child, signal: i32) {
    // SAFETY: signalling a child we started and have not reaped.
    unsafe { libc::kill(child.id() as libc::pid_t, signal) };
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
}
