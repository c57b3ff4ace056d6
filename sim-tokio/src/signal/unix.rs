//! Unix signals on the simulated hosts.

use std::io;
use std::os::raw::c_int;
use std::task::{Context, Poll};

/// A kind of signal: a signal number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SignalKind(c_int);

impl SignalKind {
    /// The kind for a raw signal number.
    pub const fn from_raw(signum: std::os::raw::c_int) -> Self {
        Self(signum)
    }

    /// The raw signal number.
    pub const fn as_raw_value(&self) -> std::os::raw::c_int {
        self.0
    }

    /// SIGALRM.
    pub const fn alarm() -> Self {
        Self(14)
    }

    /// SIGCHLD.
    pub const fn child() -> Self {
        Self(17)
    }

    /// SIGHUP.
    pub const fn hangup() -> Self {
        Self(1)
    }

    /// SIGINT.
    pub const fn interrupt() -> Self {
        Self(2)
    }

    /// SIGIO.
    pub const fn io() -> Self {
        Self(29)
    }

    /// SIGPIPE.
    pub const fn pipe() -> Self {
        Self(13)
    }

    /// SIGQUIT.
    pub const fn quit() -> Self {
        Self(3)
    }

    /// SIGTERM.
    pub const fn terminate() -> Self {
        Self(15)
    }

    /// SIGUSR1.
    pub const fn user_defined1() -> Self {
        Self(10)
    }

    /// SIGUSR2.
    pub const fn user_defined2() -> Self {
        Self(12)
    }

    /// SIGWINCH.
    pub const fn window_change() -> Self {
        Self(28)
    }
}

impl From<std::os::raw::c_int> for SignalKind {
    fn from(signum: std::os::raw::c_int) -> Self {
        Self::from_raw(signum)
    }
}

impl From<SignalKind> for std::os::raw::c_int {
    fn from(kind: SignalKind) -> Self {
        kind.as_raw_value()
    }
}

/// A stream of one signal's deliveries to this task's host. Deliveries
/// coalesce until received.
#[must_use = "streams do nothing unless polled"]
#[derive(Debug)]
pub struct Signal {
    /// Auto traits as tokio's (see `crate::util::NoUnwindSafety`).
    _unwind: crate::util::NoUnwindSafety,
    id: sim_net::signal::SignalId,
}

/// SIGILL, SIGFPE, SIGKILL, SIGSEGV, SIGSTOP: tokio refuses these.
const FORBIDDEN: &[c_int] = &[4, 8, 9, 11, 19];

/// Registers this task's host for `kind`: from now on it is delivered to
/// the returned stream (and the host no longer takes the default action).
///
/// # Errors
/// For a signal that cannot be handled (SIGKILL, SIGSTOP, ...), a number
/// of 0 or less, or one above `SIGRTMAX`, as tokio.
///
/// # Panics
/// Outside a runtime, or on one built without `enable_io` (tokio's signal
/// driver comes with its I/O driver), with tokio's messages, at the
/// caller's line.
#[track_caller]
pub fn signal(kind: SignalKind) -> io::Result<Signal> {
    crate::util::require_io();
    let signum = kind.as_raw_value();
    if signum <= 0 || FORBIDDEN.contains(&signum) {
        return Err(io::Error::other(format!(
            "Refusing to register signal {signum}"
        )));
    }
    // As tokio: one slot per signal number up to SIGRTMAX.
    if signum > libc_dep::SIGRTMAX() {
        return Err(io::Error::other("signal too large"));
    }
    let id = sim_net::with_net(|net| net.signal_register(signum));
    Ok(Signal {
        _unwind: std::marker::PhantomData,
        id,
    })
}

impl Signal {
    /// Waits for the next delivery; `None` once no more can come (the
    /// host crashed).
    pub async fn recv(&mut self) -> Option<()> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// Polls for the next delivery.
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<()>> {
        std::task::ready!(crate::sync::budget(cx));
        sim_net::with_net(|net| net.signal_poll_recv(self.id, cx))
    }
}

impl Drop for Signal {
    fn drop(&mut self) {
        let id = self.id;
        sim_net::try_with_net(|net| net.signal_drop(id));
    }
}
