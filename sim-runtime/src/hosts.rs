//! Hosts, a part of the core: which simulated host the running code
//! belongs to, and what else a crash of a host takes down.
//!
//! A host is a number: 0 is the implicit host of a plain test; the harness
//! (`tokio::sim`) adds named ones. A task belongs to the host that spawned
//! it. Each host's clock is the time part's (`crate::time::host_clock`).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// What runs when a host crashes (see `Core::on_node_crash`).
pub type CrashListener = Rc<dyn Fn(u32)>;

/// The hosts part.
#[derive(Default)]
pub(crate) struct Hosts {
    /// The host of the task being polled.
    current: Cell<u32>,
    /// What else a crash of a host takes down (its disk's unsynced state),
    /// in registration order.
    crash_listeners: RefCell<Vec<CrashListener>>,
}

impl Hosts {
    /// The host of the running code.
    #[inline]
    pub(crate) fn current(&self) -> u32 {
        self.current.get()
    }

    /// Makes `node` the running code's host; returns the previous one.
    #[inline]
    pub(crate) fn set_current(&self, node: u32) -> u32 {
        self.current.replace(node)
    }

    /// Adds a crash listener.
    pub(crate) fn on_crash(&self, listener: CrashListener) {
        self.crash_listeners.borrow_mut().push(listener);
    }

    /// The crash listeners, in registration order.
    pub(crate) fn crash_listeners(&self) -> Vec<CrashListener> {
        self.crash_listeners.borrow().clone()
    }
}
