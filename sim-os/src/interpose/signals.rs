//! Signals: `kill` and `raise` of the process itself reach the current host's
//! handlers; `kill` of a simulated pid reaches that process.

use super::{PROCESS_SIGNALLER, SIGNALLER, SIMULATED_PID_MIN};
use crate::symbols::libc_fn;

/// Signals a test may send itself to reach its own handlers. The
/// others (an abort, a fault, KILL, STOP) stay real.
fn simulated(sig: libc::c_int) -> bool {
    matches!(
        sig,
        libc::SIGHUP
            | libc::SIGINT
            | libc::SIGQUIT
            | libc::SIGUSR1
            | libc::SIGUSR2
            | libc::SIGPIPE
            | libc::SIGALRM
            | libc::SIGTERM
            | libc::SIGCHLD
            | libc::SIGWINCH
    )
}

fn deliver(sig: libc::c_int) -> bool {
    simulated(sig)
        && sim_runtime::context::with_simulation(|_| ()).is_some()
        && SIGNALLER.get().is_some_and(|f| f(sig))
}

/// libc's `kill`: a signal the process sends itself during a run goes
/// to the current simulated host (its `tokio::signal` handlers);
/// everything else is libc's.
///
/// # Safety
/// As libc's.
#[no_mangle]
pub unsafe extern "C" fn kill(pid: libc::pid_t, sig: libc::c_int) -> libc::c_int {
    if (pid == 0 || pid == libc::getpid()) && deliver(sig) {
        return 0;
    }
    if pid > 0
        && pid as u32 >= SIMULATED_PID_MIN
        && sim_runtime::context::with_simulation(|_| ()).is_some()
    {
        if let Some(f) = PROCESS_SIGNALLER.get() {
            return match f(pid as u32, sig) {
                Ok(()) => 0,
                Err(errno) => {
                    *libc::__errno_location() = errno;
                    -1
                }
            };
        }
    }
    match libc_fn!(c"kill", fn(libc::pid_t, libc::c_int) -> libc::c_int) {
        Some(f) => f(pid, sig),
        None => libc::syscall(libc::SYS_kill, pid, sig) as libc::c_int,
    }
}

/// libc's `raise`: as [`kill`] of the process itself.
///
/// # Safety
/// As libc's.
#[no_mangle]
pub unsafe extern "C" fn raise(sig: libc::c_int) -> libc::c_int {
    if deliver(sig) {
        return 0;
    }
    match libc_fn!(c"raise", fn(libc::c_int) -> libc::c_int) {
        Some(f) => f(sig),
        None => libc::syscall(libc::SYS_tgkill, libc::getpid(), libc::gettid(), sig) as libc::c_int,
    }
}
