//! The process table of one simulation (a runtime extension): the pids
//! given out, and each process's task, exit status and signal disposition.
//! The programs registered by name live beside `Invocation`, in the
//! `tokio::sim::process` module.

use crate::signal::unix::SignalKind;
use crate::sync::mpsc::UnboundedSender;
use sim_runtime::{Core, RawTask};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::task::{Context, Poll, Waker};

/// The exit status of a program the simulation cancelled (its host
/// crashed, or the runtime shut down): killed, as the kernel would.
pub(crate) const CANCELLED_SIGNAL: i32 = libc_dep::SIGKILL;

pub(crate) struct Processes {
    state: RefCell<State>,
}

#[derive(Default)]
struct State {
    /// The next pid to give out, from `SIMULATED_PID_MIN`.
    next_pid: u32,
    /// Every process of the run, by pid (kept after exit, so a late `kill`
    /// of an exited pid answers as the kernel does for a zombie).
    procs: BTreeMap<u32, Proc>,
}

struct Proc {
    task: Option<RawTask>,
    /// Set once the program's task is gone.
    status: Option<ExitStatus>,
    /// A terminating signal sent while it ran: its exit status, once the
    /// task is dropped.
    killed_by: Option<i32>,
    /// The `Child` has collected the status (a later `kill` is `ESRCH`).
    reaped: bool,
    /// Who waits for the exit (the `Child`'s wait; at most one in practice,
    /// bounded by the number of concurrent waits on one `Child`).
    waiters: Vec<Waker>,
    /// Where signals go once the program took them over.
    signals: Option<UnboundedSender<SignalKind>>,
}

/// Runs `f` on the current simulation's process table.
pub(crate) fn with_processes<R>(f: impl FnOnce(&Core, &Processes) -> R) -> Option<R> {
    sim_runtime::context::with_current(|core| {
        let table = core.extension(Processes::new);
        f(core, &table)
    })
}

/// Runs `f` on the process table of simulation `sim` (a child's, which
/// may be another runtime's of this thread than the current one); `None`
/// once that simulation is gone.
pub(crate) fn with_child_table<R>(sim: u16, f: impl FnOnce(&Core, &Processes) -> R) -> Option<R> {
    sim_runtime::context::with_core(sim, |core| {
        let table = core.extension(Processes::new);
        f(core, &table)
    })
}

impl Processes {
    fn new() -> Processes {
        // `kill(pid, sig)` of a simulated pid (nix, libc) reaches the table.
        sim_os::interpose::set_process_signaller(|pid, sig| {
            with_processes(|core, table| table.signal(core, pid, sig))
                .unwrap_or(Err(libc_dep::ESRCH))
        });
        Processes {
            state: RefCell::new(State {
                next_pid: sim_os::interpose::SIMULATED_PID_MIN,
                ..State::default()
            }),
        }
    }

    pub(crate) fn next_pid(&self) -> u32 {
        let mut state = self.state.borrow_mut();
        let pid = state.next_pid;
        state.next_pid = pid.checked_add(1).expect("sim: ran out of simulated pids");
        assert!(
            pid < i32::MAX as u32,
            "sim: ran out of simulated pids (more than {} processes in one run)",
            i32::MAX as u32 - sim_os::interpose::SIMULATED_PID_MIN
        );
        pid
    }

    pub(crate) fn started(&self, pid: u32, task: RawTask) {
        let mut state = self.state.borrow_mut();
        let previous = state.procs.insert(
            pid,
            Proc {
                task: Some(task),
                status: None,
                killed_by: None,
                reaped: false,
                waiters: Vec::new(),
                signals: None,
            },
        );
        assert!(previous.is_none(), "sim: pid {pid} given out twice");
    }

    /// The program's task is gone: `code` if it returned one.
    pub(crate) fn exited(&self, pid: u32, code: Option<i32>) {
        let waiters = {
            let mut state = self.state.borrow_mut();
            let Some(proc) = state.procs.get_mut(&pid) else {
                return;
            };
            assert!(proc.status.is_none(), "sim: process {pid} exited twice");
            let raw = match (proc.killed_by, code) {
                (Some(sig), _) => sig,
                // The low byte of an exit code, in a wait status.
                (None, Some(code)) => (code & 0xff) << 8,
                (None, None) => CANCELLED_SIGNAL,
            };
            proc.status = Some(ExitStatus::from_raw(raw));
            proc.task = None;
            proc.signals = None;
            std::mem::take(&mut proc.waiters)
        };
        // Woken outside the borrow: a wake may reach back into the table.
        for w in waiters {
            w.wake();
        }
    }

    /// The exit status, or `Pending` with `cx` registered.
    pub(crate) fn poll_exit(&self, pid: u32, cx: &mut Context<'_>) -> Poll<ExitStatus> {
        let mut state = self.state.borrow_mut();
        let proc = state
            .procs
            .get_mut(&pid)
            .expect("sim: a child's pid is in the table");
        match proc.status {
            Some(status) => {
                proc.reaped = true;
                Poll::Ready(status)
            }
            None => {
                if !proc.waiters.iter().any(|w| w.will_wake(cx.waker())) {
                    proc.waiters.push(cx.waker().clone());
                }
                let task = proc.task.map_or(0, |t| t.id);
                drop(state);
                crate::util::note_wait("Child::wait", sim_runtime::WaitDetail::Task(task), None);
                Poll::Pending
            }
        }
    }

    /// The exit status if the process has exited (then it is reaped).
    pub(crate) fn try_exit(&self, pid: u32) -> Option<ExitStatus> {
        let mut state = self.state.borrow_mut();
        let proc = state.procs.get_mut(&pid)?;
        let status = proc.status?;
        proc.reaped = true;
        Some(status)
    }

    /// Where signals to `pid` go from now on, instead of their default
    /// actions (`SIGKILL` and `SIGSTOP` keep theirs).
    pub(crate) fn take_signals(&self, pid: u32, sender: UnboundedSender<SignalKind>) {
        if let Some(proc) = self.state.borrow_mut().procs.get_mut(&pid) {
            proc.signals = Some(sender);
        }
    }

    /// `kill(pid, sig)`: the kernel's answers, and the default actions of a
    /// process that took no signals over: ignore `SIGCHLD`, `SIGURG`,
    /// `SIGWINCH` and `SIGCONT`, terminate on the rest (the stop signals
    /// too: a stopped simulated process is not modelled).
    pub(crate) fn signal(&self, core: &Core, pid: u32, sig: i32) -> Result<(), i32> {
        if !(0..=64).contains(&sig) {
            return Err(libc_dep::EINVAL);
        }
        let abort = {
            let mut state = self.state.borrow_mut();
            let Some(proc) = state.procs.get_mut(&pid) else {
                return Err(libc_dep::ESRCH);
            };
            if proc.reaped {
                return Err(libc_dep::ESRCH);
            }
            if sig == 0 || proc.status.is_some() || proc.killed_by.is_some() {
                return Ok(());
            }
            let catchable = sig != libc_dep::SIGKILL && sig != libc_dep::SIGSTOP;
            if let (true, Some(sender)) = (catchable, &proc.signals) {
                if sender.send(SignalKind::from_raw(sig)).is_ok() {
                    return Ok(());
                }
            }
            let ignored = matches!(
                sig,
                libc_dep::SIGCHLD | libc_dep::SIGURG | libc_dep::SIGWINCH | libc_dep::SIGCONT
            );
            if ignored {
                return Ok(());
            }
            proc.killed_by = Some(sig);
            proc.task
        };
        if let Some(task) = abort {
            core.abort(task);
        }
        Ok(())
    }
}

/// Kept in a program's task: records the exit when the task ends, however
/// it ends (returned, killed, cancelled by a crash).
pub(crate) struct ExitGuard {
    pub(crate) pid: u32,
    pub(crate) code: Option<i32>,
}

impl Drop for ExitGuard {
    fn drop(&mut self) {
        let (pid, code) = (self.pid, self.code);
        with_processes(|_, table| table.exited(pid, code));
    }
}
