//! Runtime scopes, a part of the core: the runtimes that share one
//! simulation. A runtime built while another is alive on the thread joins
//! its simulation as a scope: one clock, one event queue, one trace,
//! network and disks. Its own are its options (flavor, drivers), its
//! tasks, its shutdown, and when its tasks run: a `current_thread`
//! runtime's only while it is blocked on, as in tokio.

use std::cell::{Cell, RefCell};

/// The flavor the runtime was built as. Both run on one thread; the flavor
/// decides only what tokio's API allows (`block_in_place`, `pause`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    /// Built by `Builder::new_current_thread`.
    CurrentThread,
    /// Built by `Builder::new_multi_thread`.
    MultiThread,
}

/// Everything the runtime needs besides the seed.
#[derive(Clone, Copy, Debug)]
pub struct RuntimeOptions {
    /// The flavor tokio's builder asked for.
    pub flavor: Flavor,
    /// Whether `time::pause` is in force from the start.
    pub start_paused: bool,
    /// Built as a `LocalRuntime`: `spawn_local` needs no `LocalSet`.
    pub local: bool,
    /// Timers work (`Builder::enable_time`); otherwise using one panics, as
    /// in tokio.
    pub enable_time: bool,
    /// Sockets work (`Builder::enable_io`); otherwise using one panics.
    pub enable_io: bool,
    /// A `multi_thread` runtime's simulated workers (`worker_threads`); 0
    /// for a `current_thread` runtime, whose tasks run on the thread that
    /// blocks on it.
    pub workers: u16,
}

impl RuntimeOptions {
    /// A `current_thread` runtime with time and sockets enabled, its clock
    /// running: what the simulator builds for itself (a plain test's
    /// simulation, a runtime reserved before a builder asked for one).
    pub const fn current_thread() -> RuntimeOptions {
        RuntimeOptions {
            flavor: Flavor::CurrentThread,
            start_paused: false,
            local: false,
            enable_time: true,
            enable_io: true,
            workers: 0,
        }
    }
}

/// One runtime of a simulation.
#[derive(Clone, Copy, Debug)]
struct Scope {
    options: RuntimeOptions,
    shut_down: bool,
    /// How many `block_on`s of this runtime are on the stack.
    driving: u32,
    /// A `current_thread` runtime blocked on from a simulated OS thread:
    /// that thread (the OS layer's token). Its tasks are polled there, as
    /// tokio polls them on the thread in `block_on`.
    home: Option<u64>,
    /// The home thread waits in its `block_on` (between polls of its
    /// future), so it can poll the runtime's tasks. While it runs its
    /// future, or blocks inside it, they wait, as in tokio.
    home_idle: bool,
}

/// The scopes part.
pub(crate) struct Scopes {
    /// The runtime scope of the running code; `options` holds its options.
    current: Cell<u16>,
    options: Cell<RuntimeOptions>,
    /// Every runtime sharing this simulation, by scope: 0 is the one that
    /// made it.
    list: RefCell<Vec<Scope>>,
    /// Whether more than one scope exists (the scheduler then checks which
    /// ready tasks may run).
    multi: Cell<bool>,
    /// How many scopes have a home thread (0 keeps polls on the fast path).
    homes: Cell<u32>,
    /// The simulation runs in the background of a thread blocked outside
    /// `block_on`: no runtime is blocked on, so only `multi_thread`
    /// runtimes' tasks (and threads) run, and the scheduler checks.
    background: Cell<bool>,
}

impl Scopes {
    /// The first runtime's scope, current.
    pub(crate) fn new(options: RuntimeOptions) -> Scopes {
        Scopes {
            current: Cell::new(0),
            options: Cell::new(options),
            list: RefCell::new(vec![Scope {
                options,
                shut_down: false,
                driving: 0,
                home: None,
                home_idle: false,
            }]),
            multi: Cell::new(false),
            homes: Cell::new(0),
            background: Cell::new(false),
        }
    }

    /// Adds a runtime; returns its scope.
    pub(crate) fn add(&self, options: RuntimeOptions) -> u16 {
        let mut list = self.list.borrow_mut();
        assert!(
            list.len() < usize::from(u16::MAX),
            "sim: more than {} runtimes in one simulation",
            u16::MAX
        );
        list.push(Scope {
            options,
            shut_down: false,
            driving: 0,
            home: None,
            home_idle: false,
        });
        self.multi.set(true);
        (list.len() - 1) as u16
    }

    /// The current scope.
    #[inline]
    pub(crate) fn current(&self) -> u16 {
        self.current.get()
    }

    /// The current scope's options.
    #[inline]
    pub(crate) fn options(&self) -> RuntimeOptions {
        self.options.get()
    }

    /// Makes `scope` current; returns the previous one.
    pub(crate) fn set(&self, scope: u16) -> u16 {
        let previous = self.current.replace(scope);
        if previous != scope {
            let options = self.list.borrow()[usize::from(scope)].options;
            self.options.set(options);
        }
        previous
    }

    /// The first runtime takes `options` (a core made before any runtime,
    /// adopted by the runtime built next).
    pub(crate) fn adopt(&self, options: RuntimeOptions) {
        self.options.set(options);
        self.list.borrow_mut()[0].options = options;
    }

    /// Whether `scope`'s runtime was shut down (or never existed).
    #[inline]
    pub(crate) fn is_shut_down(&self, scope: u16) -> bool {
        self.list
            .borrow()
            .get(usize::from(scope))
            .is_none_or(|s| s.shut_down)
    }

    /// Marks `scope` shut down; false when it already was, or is unknown.
    pub(crate) fn shut_down(&self, scope: u16) -> bool {
        let mut list = self.list.borrow_mut();
        match list.get_mut(usize::from(scope)) {
            Some(entry) if !entry.shut_down => {
                entry.shut_down = true;
                true
            }
            _ => false,
        }
    }

    /// How many runtimes are alive.
    pub(crate) fn live(&self) -> usize {
        self.list.borrow().iter().filter(|s| !s.shut_down).count()
    }

    /// Whether more than one runtime shares the simulation.
    #[inline]
    pub(crate) fn multi(&self) -> bool {
        self.multi.get() || self.background.get()
    }

    /// Marks a drive in the background (see `background`); returns what it
    /// was.
    pub(crate) fn set_background(&self, background: bool) -> bool {
        self.background.replace(background)
    }

    /// Whether some live runtime is `multi_thread` (its tasks run in the
    /// background of a thread blocked outside `block_on`).
    pub(crate) fn has_live_multi_thread(&self) -> bool {
        self.list
            .borrow()
            .iter()
            .any(|s| !s.shut_down && s.options.flavor == Flavor::MultiThread)
    }

    /// Per scope: whether its tasks may run now (a `multi_thread` runtime's
    /// always, a `current_thread` runtime's while it is blocked on and, when
    /// a simulated thread blocks on it, while that thread waits in
    /// `block_on`).
    pub(crate) fn running(&self) -> Vec<bool> {
        self.list
            .borrow()
            .iter()
            .map(|s| {
                s.options.flavor == Flavor::MultiThread
                    || (s.driving > 0 && (s.home.is_none() || s.home_idle))
            })
            .collect()
    }

    /// A `block_on` of `scope` starts; `thread` is the simulated OS thread
    /// that blocks on it, if one does.
    pub(crate) fn drive(&self, scope: u16, thread: Option<u64>) {
        let mut list = self.list.borrow_mut();
        let entry = &mut list[usize::from(scope)];
        entry.driving += 1;
        // The first `block_on` of a `current_thread` runtime holds it: its
        // tasks run on that thread, even while another thread blocks on it
        // too (that one polls only its own future). A `multi_thread`
        // runtime's tasks run on its workers.
        if let (Some(thread), 1, Flavor::CurrentThread) =
            (thread, entry.driving, entry.options.flavor)
        {
            entry.home = Some(thread);
            entry.home_idle = false;
            self.homes.set(self.homes.get() + 1);
        }
    }

    /// A `block_on` of `scope` ended (`thread`'s, if a simulated thread's).
    pub(crate) fn undrive(&self, scope: u16, thread: Option<u64>) {
        if let Ok(mut list) = self.list.try_borrow_mut() {
            let entry = &mut list[usize::from(scope)];
            entry.driving -= 1;
            // The holder's `block_on` ended: the runtime has no home thread
            // until a thread blocks on it first again.
            if entry.home.is_some() && (entry.driving == 0 || entry.home == thread) {
                entry.home = None;
                entry.home_idle = false;
                self.homes.set(self.homes.get() - 1);
            }
        }
    }

    /// The home thread of `scope` waits in its `block_on` (`idle`), or runs.
    pub(crate) fn set_home_idle(&self, scope: u16, idle: bool) {
        let mut list = self.list.borrow_mut();
        let entry = &mut list[usize::from(scope)];
        assert!(
            entry.home.is_some(),
            "only a scope with a home thread idles"
        );
        entry.home_idle = idle;
    }

    /// The simulated thread whose `block_on` polls `scope`'s tasks, if any.
    #[inline]
    pub(crate) fn home(&self, scope: u16) -> Option<u64> {
        if self.homes.get() == 0 {
            return None;
        }
        self.list
            .borrow()
            .get(usize::from(scope))
            .and_then(|s| s.home)
    }
}
