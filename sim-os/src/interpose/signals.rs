//! Signals: `kill` and `raise` of the process itself reach the current host's
//! handlers; `kill` of a simulated pid reaches that process.

use super::{PROCESS_SIGNALLER, SIGNALLER, SIMULATED_PID_MIN};
use crate::symbols::libc_fn;

/// Signals a test may send itself to reach its own handlers: any a
/// `tokio::signal` stream can take, realtime ones included. The others (an
/// abort, a fault, KILL, STOP, a trap) stay real.
fn simulated(sig: libc::c_int) -> bool {
    const REAL: &[libc::c_int] = &[
        libc::SIGILL,
        libc::SIGTRAP,
        libc::SIGABRT,
        libc::SIGBUS,
        libc::SIGFPE,
        libc::SIGKILL,
        libc::SIGSEGV,
        libc::SIGSTOP,
        libc::SIGSYS,
    ];
    sig > 0 && sig <= libc::SIGRTMAX() && !REAL.contains(&sig)
}

/// Hands `sig` to the simulation: the current one, or, on a thread
/// outside any `block_on`, the newest runtime alive on it (a signal is
/// the process's; the runtime takes it at its next turn, as tokio's
/// driver does). `false` leaves it to the real process.
fn deliver(sig: libc::c_int) -> bool {
    let Some(signaller) = SIGNALLER.get().filter(|_| simulated(sig)) else {
        return false;
    };
    if sim_runtime::context::with_simulation(|_| ()).is_some() {
        return signaller(sig);
    }
    match sim_runtime::context::thread_core() {
        Some(core) => {
            let _enter = sim_runtime::context::Enter::new(core);
            signaller(sig)
        }
        None => false,
    }
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
