//! How a blocking `std::net` call waits: in virtual time, while the
//! simulation runs, with the socket's timeout as a timer of the run.

use super::{lock, on_net, view, Phase};
use sim_runtime::{Core, EventKey};
use std::future::Future;
use std::pin::pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

/// Waits for `future` on the calling thread, up to `timeout` of virtual
/// time (`EAGAIN` then, as a socket timeout gives).
///
/// - Inside the runtime (a task or a blocking section calls a blocking
///   `std::net` function): the runtime runs nested until it completes, as
///   the other workers of a real runtime would go on meanwhile.
/// - On a simulated thread: the thread gives the turn back until it is
///   woken.
/// - On the thread that built the runtime, outside `block_on`: the
///   simulation runs in the background meanwhile.
pub(super) fn wait<T>(
    core: &Rc<Core>,
    future: impl Future<Output = Result<T, i32>>,
    timeout: Option<Duration>,
) -> Result<T, i32> {
    let deadline_ns = timeout.filter(|t| !t.is_zero()).map(|t| {
        core.now_ns()
            .saturating_add(t.as_nanos().min(u128::from(u64::MAX)) as u64)
    });
    let mut timer = Deadline::new(core.clone(), deadline_ns);
    let mut future = pin!(future);
    let timed = std::future::poll_fn(move |cx| {
        if let Poll::Ready(r) = future.as_mut().poll(cx) {
            return Poll::Ready(r);
        }
        if timer.passed(cx) {
            return Poll::Ready(Err(libc::EAGAIN));
        }
        Poll::Pending
    });
    let output = block(core, timed);
    turn_point();
    output
}

/// A call on a simulated socket that did not wait: on a simulated thread,
/// a scheduling point all the same (the thread gives the turn back and is
/// runnable at once). A thread that polls a socket in a loop (reads at the
/// end of a stream, non-blocking reads) would otherwise hold the turn for
/// ever, where a real thread runs beside the others.
pub(super) fn turn_point() {
    if sim_runtime::seams::os_layer().is_some_and(|os| os.on_sim_thread()) {
        // SAFETY: a plain sched_yield, which the simulated thread's
        // interposition turns into giving the turn back.
        unsafe { libc::sched_yield() };
    }
}

/// Runs `future` to completion on the calling thread (see [`wait`]).
fn block<F: Future>(core: &Rc<Core>, future: F) -> F::Output {
    let in_runtime = sim_runtime::context::with_current(|c| c.in_block_on()) == Some(true);
    let on_thread = sim_runtime::seams::os_layer().is_some_and(|os| os.on_sim_thread());
    if in_runtime {
        // A task (or its blocking section) blocks: as a blocking section,
        // the runtime runs nested meanwhile.
        return sim_runtime::context::blocking_section(|| core.block_on(future));
    }
    if on_thread {
        return core.block_on(future);
    }
    let mut future = pin!(future);
    if let Some(output) = sim_runtime::block_in_background(future.as_mut()) {
        return output;
    }
    core.block_on(future)
}

/// A virtual deadline: a timer of the run that wakes the waiter.
struct Deadline {
    core: Rc<Core>,
    at_ns: Option<u64>,
    key: Option<EventKey>,
}

impl Deadline {
    fn new(core: Rc<Core>, at_ns: Option<u64>) -> Deadline {
        Deadline {
            core,
            at_ns,
            key: None,
        }
    }

    /// Whether the deadline passed; if not, the waker is woken when it does.
    fn passed(&mut self, cx: &mut Context<'_>) -> bool {
        let Some(at_ns) = self.at_ns else {
            return false;
        };
        if self.core.now_ns() >= at_ns {
            return true;
        }
        let armed = self
            .key
            .is_some_and(|key| self.core.timer_set_waker(key, cx.waker()));
        if !armed {
            self.key = Some(self.core.timer_insert(at_ns, Some(cx.waker())));
        }
        false
    }
}

impl Drop for Deadline {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            self.core.event_cancel(key);
        }
    }
}

/// `poll` over simulated sockets: each `revents` set; waits (up to
/// `timeout_ms` of virtual time; negative: without limit) until one is
/// ready.
pub(super) fn poll(fds: &mut [libc::pollfd], timeout_ms: i32) -> Result<usize, i32> {
    let (_, first) = view(fds[0].fd)?;
    let ready = scan(fds, &mut Context::from_waker(std::task::Waker::noop()))?;
    if ready > 0 || timeout_ms == 0 {
        return Ok(ready);
    }
    let core = super::thread_core()
        .filter(|c| c.id() == first.core)
        .or_else(|| sim_runtime::context::lookup(first.core))
        .ok_or(libc::ENOTCONN)?;
    let timeout = u64::try_from(timeout_ms).ok().map(Duration::from_millis);
    let waited = wait(
        &core,
        std::future::poll_fn(|cx| match scan(fds, cx) {
            Ok(0) => Poll::Pending,
            other => Poll::Ready(other),
        }),
        timeout,
    );
    match waited {
        Err(libc::EAGAIN) => {
            fds.iter_mut().for_each(|p| p.revents = 0);
            Ok(0)
        }
        other => other,
    }
}

/// Sets each entry's `revents`; registers `cx` where nothing is ready.
fn scan(fds: &mut [libc::pollfd], cx: &mut Context<'_>) -> Result<usize, i32> {
    let mut ready = 0;
    for p in fds.iter_mut() {
        p.revents = match view(p.fd) {
            Ok((sock, v)) => {
                let events = on_net(v.core, |net| readiness(net, &sock, v.phase, p.events, cx))
                    .unwrap_or(libc::POLLERR | libc::POLLHUP);
                let read_shut = if v.read_shut { libc::POLLIN } else { 0 };
                (events | read_shut) & (p.events | libc::POLLERR | libc::POLLHUP)
            }
            Err(_) => libc::POLLNVAL,
        };
        if p.revents != 0 {
            ready += 1;
        }
    }
    Ok(ready)
}

/// The poll events of one socket now.
fn readiness(
    net: &Rc<crate::Network>,
    sock: &super::Shared,
    phase: Phase,
    wanted: i16,
    cx: &mut Context<'_>,
) -> i16 {
    let wants_read = wanted & libc::POLLIN != 0;
    let wants_write = wanted & libc::POLLOUT != 0;
    match phase {
        Phase::Fresh(_) => libc::POLLOUT | libc::POLLHUP,
        Phase::Failed(_) => libc::POLLERR | libc::POLLHUP,
        Phase::Listening(id) => {
            if net.tcp_accept_ready(id, wants_read.then(|| cx.waker())) {
                libc::POLLIN
            } else {
                0
            }
        }
        Phase::Connecting(id) => match net.tcp_poll_connect(id, cx) {
            Poll::Pending => 0,
            Poll::Ready(Ok(())) => {
                lock(sock).phase = Phase::Connected(id);
                libc::POLLOUT
            }
            Poll::Ready(Err(e)) => {
                lock(sock).phase = Phase::Failed(super::errno_of(&e));
                libc::POLLOUT | libc::POLLERR | libc::POLLHUP
            }
        },
        Phase::Datagram(id) => {
            // A send never waits; a datagram waiting is readable.
            let mut events = libc::POLLOUT;
            if net.udp_read_ready(id) {
                events |= libc::POLLIN;
            } else if wants_read {
                net.udp_register_read(id, cx.waker());
            }
            events
        }
        Phase::Connected(id) => {
            let mut events = 0;
            // poll(2) is level-triggered: readable while a read would
            // not wait (a peek finds data, the end of stream or an error).
            let mut probe = [0u8; 1];
            let waker = if wants_read {
                cx.waker().clone()
            } else {
                std::task::Waker::noop().clone()
            };
            if net
                .tcp_poll_read(id, &mut Context::from_waker(&waker), &mut probe, true)
                .is_ready()
            {
                events |= libc::POLLIN;
            }
            if net.tcp_write_ready(id) {
                events |= libc::POLLOUT;
            } else if wants_write {
                net.tcp_register_write(id, cx.waker());
            }
            events
        }
    }
}
