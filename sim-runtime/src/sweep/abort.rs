//! A test process that aborts (SIGABRT: `std::process::abort`, a panic
//! that cannot unwind, a failed check inside libc) says, before it dies,
//! where the abort was called and what its run did last. The runner's
//! crash report then carries those lines, not a bare signal number.

use std::sync::Once;

/// How long the report may take before the process dies anyway, in s: an
/// abort from inside the allocator holds its lock, and the report needs it.
const REPORT_BUDGET_S: u32 = 3;

/// Installs the SIGABRT report, once per process, unless the program has
/// a SIGABRT handler of its own.
pub(crate) fn install_abort_report() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: plain sigaction calls with zeroed, then filled, actions.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGABRT, std::ptr::null(), &mut old) != 0
                || old.sa_sigaction != libc::SIG_DFL
            {
                return;
            }
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_abort as *const () as usize;
            // One report: the handler resets to the default at entry, and
            // may raise the signal again from inside itself. It runs on the
            // aborting thread's own stack (an abort is no stack overflow),
            // since a backtrace does not fit the small signal stack.
            action.sa_flags = libc::SA_SIGINFO | libc::SA_RESETHAND | libc::SA_NODEFER;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGABRT, &action, std::ptr::null_mut());
        }
    });
}

extern "C" fn on_abort(_: libc::c_int, _: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: an alarm whose handler ends the process with SIGABRT, in case
    // the report cannot finish.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = die as *const () as usize;
        action.sa_flags = libc::SA_SIGINFO;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGALRM, &action, std::ptr::null_mut());
        libc::alarm(REPORT_BUDGET_S);
    }
    // A panic while reporting ends the report, not the abort.
    if let Ok(text) = std::panic::catch_unwind(report) {
        write_all(text.as_bytes());
    }
    die(libc::SIGABRT, std::ptr::null_mut(), std::ptr::null_mut());
}

/// Ends the process by SIGABRT, its disposition the default again.
extern "C" fn die(_: libc::c_int, _: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: async-signal-safe calls.
    unsafe {
        libc::signal(libc::SIGABRT, libc::SIG_DFL);
        libc::raise(libc::SIGABRT);
        libc::_exit(134);
    }
}

/// Writes to stderr with the raw call: std's stderr lock may be held by the
/// aborting code.
fn write_all(mut bytes: &[u8]) {
    // Bounded: each pass writes some bytes or stops.
    while !bytes.is_empty() {
        // SAFETY: a write of a live buffer.
        let n = unsafe { libc::write(2, bytes.as_ptr().cast(), bytes.len()) };
        if n <= 0 {
            return;
        }
        bytes = &bytes[n as usize..];
    }
}

/// What the runner's report shows: where the abort was called, in which
/// run, and the run's last events.
fn report() -> String {
    let seed = super::state::LAST_SEED.with(std::cell::Cell::get);
    let backtrace = std::backtrace::Backtrace::force_capture().to_string();
    let place = match crate::watch::user_frame(&backtrace) {
        Some(at) => format!("abort called at {at}"),
        None => "no frame of the program's own code on the stack".to_string(),
    };
    let (story, recent) =
        crate::executor::context::with_current(|core| (core.story_report(), core.recent_events()))
            .or_else(|| {
                crate::executor::context::alive()
                    .last()
                    .map(|core| (core.story_report(), core.recent_events()))
            })
            .unwrap_or_default();
    let mut text = match seed {
        Some(seed) => {
            format!("sim: the process aborts (SIGABRT) in the run of seed {seed:#x}: {place}\n")
        }
        None => format!("sim: the process aborts (SIGABRT) outside any run: {place}\n"),
    };
    text.push_str(&story);
    if !recent.is_empty() {
        text.push_str("The last events of the run before it:\n");
        for line in recent {
            text.push_str("  ");
            text.push_str(&line);
            text.push('\n');
        }
    }
    text
}
