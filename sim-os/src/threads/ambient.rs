//! The simulation of a plain test whose threads start before any runtime.
//!
//! A plain `#[test]` may start a server on a thread of its own, with its
//! own runtime, and talk to it from the test's thread (hyper's own tests
//! do, with blocking `std::net` sockets and `std::sync::mpsc`). Two
//! threads outside any simulation would be two worlds: the server's
//! simulation, and the test's real thread, which the kernel's network
//! cannot bring into it. So in a test process that `cargo sim test` runs
//! (one test, named with `--exact`, on libtest's thread of that name, with
//! a seed), the first thread that the test starts outside any simulation
//! makes one first, on the test's thread: the new thread is one of its
//! simulated threads, a runtime it builds joins it, and the test's own
//! blocking calls wait in it, in virtual time. It lasts until the thread
//! ends.
//!
//! A thread of it that starts a simulation of its own (a test that runs
//! seeds on fresh threads, each with `Sim::run` or `build_with`) leaves it
//! first, as a real thread: the two simulations never share a thread, and
//! a join of that thread waits for it as for any real one.

use sim_runtime::{RuntimeOptions, SimConfig};
use std::cell::RefCell;

/// Closes the thread's ambient simulation when the thread ends.
struct Ambient(u16);

impl Drop for Ambient {
    fn drop(&mut self) {
        ambient_cores().retain(|&id| id != self.0);
        sim_runtime::Core::close(self.0);
    }
}

/// Before any simulation starts: a simulated thread of an ambient
/// simulation leaves it (see the module docs).
fn before_launch() {
    let Some(id) = sim_runtime::context::with_simulation(|core| core.id()) else {
        return;
    };
    if ambient_cores().contains(&id) {
        super::release_self();
    }
}

/// The ambient simulations alive, by core id.
static AMBIENT_CORES: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());

fn ambient_cores() -> std::sync::MutexGuard<'static, Vec<u16>> {
    AMBIENT_CORES.lock().unwrap_or_else(|e| e.into_inner())
}

thread_local! {
    static AMBIENT: RefCell<Option<Ambient>> = const { RefCell::new(None) };
    /// The simulation is being made: a thread started meanwhile (the
    /// sweep's watchdog) is a plain one.
    static MAKING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the calling thread runs the one test of a test process of
/// `cargo sim test`: a seed, and libtest running the test named on the
/// command line (`--exact`) on a thread of that name.
fn test_thread() -> bool {
    if sim_runtime::settings::SEED.non_empty().is_none() {
        return false;
    }
    let current = std::thread::current();
    let Some(name) = current.name() else {
        return false;
    };
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    args.iter().any(|a| a == "--exact") && args.iter().any(|a| a.as_os_str() == name)
}

/// The simulation a thread outside any starts its threads in (made now,
/// see the module docs); `None` outside a test process of `cargo sim
/// test`, with real threads asked for, or when the calling thread has one
/// already.
pub(crate) fn core() -> Option<std::rc::Rc<sim_runtime::Core>> {
    if sim_runtime::outside::is_outside() || !test_thread() {
        return None;
    }
    if AMBIENT.try_with(|a| a.borrow().is_some()).unwrap_or(true) {
        return None;
    }
    let config = SimConfig::try_from_env().ok()?;
    if config.allow_threads {
        return None;
    }
    if MAKING.with(|m| m.replace(true)) {
        return None;
    }
    crate::install();
    let core = sim_runtime::launch(config, RuntimeOptions::current_thread());
    MAKING.with(|m| m.set(false));
    ambient_cores().push(core.id());
    sim_runtime::launch::set_before_launch(before_launch);
    AMBIENT.with(|a| *a.borrow_mut() = Some(Ambient(core.id())));
    Some(core)
}
