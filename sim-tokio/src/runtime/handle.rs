use super::{Id, RuntimeFlavor, RuntimeMetrics};
use crate::task::JoinHandle;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::rc::Rc;
use std::sync::Arc;
use std::thread::ThreadId;

/// A handle on a runtime: cheap to clone, and sendable, but usable only on
/// the runtime's own thread (a simulation has no other).
#[derive(Clone)]
pub struct Handle {
    core_id: u16,
    /// Which of the simulation's runtimes (see `Core::add_scope`).
    scope: u16,
    thread: ThreadId,
    flavor: RuntimeFlavor,
    name: Option<Arc<str>>,
    workers: usize,
    /// Park counts for the metrics (kept past shutdown).
    parks: Arc<super::parks::Parks>,
}

impl fmt::Debug for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handle")
            .field("id", &self.id())
            .field("flavor", &self.flavor)
            .finish()
    }
}

impl std::panic::UnwindSafe for Handle {}
impl std::panic::RefUnwindSafe for Handle {}

/// Makes a runtime current until dropped (from `Runtime::enter` or
/// `Handle::enter`).
#[must_use = "Creating and dropping a guard does nothing"]
pub struct EnterGuard<'a> {
    // Fields drop in order. The order check first; then the scope is put
    // back while the core is still entered. No `Drop` on the guard itself
    // (as in tokio): the borrow of the runtime ends at the guard's last
    // use, so `let _enter = rt.enter();` and then moving `rt` compiles.
    _order: OrderCheck,
    _scope: ScopeRestore,
    _enter: sim_runtime::context::Enter,
    _handle: PhantomData<&'a Handle>,
}

// SAFETY: as tokio's, a shared `&EnterGuard` may cross threads: nothing
// reachable through `&self` touches its fields (its `Debug` prints none of
// them); only its drop, on the thread that owns it, does.
unsafe impl Sync for EnterGuard<'_> {}

/// Checks, when an `EnterGuard` drops, that the guards of its thread drop
/// in the reverse order of their making.
struct OrderCheck {
    /// How many guards of this thread were alive with it (itself
    /// included).
    depth: usize,
}

thread_local! {
    /// The live `EnterGuard`s of this thread.
    static ENTER_DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl Drop for OrderCheck {
    fn drop(&mut self) {
        let depth = ENTER_DEPTH.with(|d| d.get());
        if depth != self.depth && !std::thread::panicking() {
            panic!(
                "`EnterGuard` values dropped out of order. Guards returned by \
                 `tokio::runtime::Handle::enter()` must be dropped in the reverse order as they \
                 were acquired."
            );
        }
        ENTER_DEPTH.with(|d| d.set(depth.saturating_sub(1)));
    }
}

/// Puts the entered core's previous runtime scope back.
struct ScopeRestore {
    core: std::mem::ManuallyDrop<Rc<sim_runtime::Core>>,
    previous: u16,
}

impl Drop for ScopeRestore {
    fn drop(&mut self) {
        // A thread released from its simulation no longer touches it (see
        // `sim_runtime::context::release_adopted`): its count stays.
        if sim_runtime::context::is_released() {
            return;
        }
        self.core.set_scope(self.previous);
        // SAFETY: dropped once, here; the field is not used again.
        unsafe { std::mem::ManuallyDrop::drop(&mut self.core) };
    }
}

impl fmt::Debug for EnterGuard<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnterGuard").finish_non_exhaustive()
    }
}

/// The error of [`Handle::try_current`]: no runtime is current.
#[derive(Debug)]
pub struct TryCurrentError {
    thread_local_destroyed: bool,
}

impl TryCurrentError {
    /// Whether the call was made outside any runtime.
    pub fn is_missing_context(&self) -> bool {
        !self.thread_local_destroyed
    }

    /// Whether the thread-local context was already destroyed.
    pub fn is_thread_local_destroyed(&self) -> bool {
        self.thread_local_destroyed
    }
}

impl fmt::Display for TryCurrentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.thread_local_destroyed {
            f.write_str("The Tokio context thread-local variable has been destroyed.")
        } else {
            f.write_str(crate::util::NO_RUNTIME)
        }
    }
}

impl std::error::Error for TryCurrentError {}

thread_local! {
    /// The handle of each runtime of this thread, by core id, so that
    /// `Handle::current` returns one with the runtime's flavor and name.
    static HANDLES: std::cell::RefCell<Vec<Handle>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Handle {
    pub(crate) fn new(
        core_id: u16,
        scope: u16,
        flavor: RuntimeFlavor,
        name: Option<String>,
        workers: usize,
    ) -> Handle {
        let handle = Handle {
            core_id,
            scope,
            thread: std::thread::current().id(),
            flavor,
            name: name.map(Arc::from),
            workers,
            parks: Arc::new(super::parks::Parks::new(
                core_id,
                flavor == RuntimeFlavor::MultiThread,
            )),
        };
        HANDLES.with(|h| {
            let mut h = h.borrow_mut();
            h.retain(|old| sim_runtime::context::lookup(old.core_id).is_some());
            h.push(handle.clone());
        });
        handle
    }

    pub(crate) fn core_id(&self) -> u16 {
        self.core_id
    }

    pub(crate) fn scope(&self) -> u16 {
        self.scope
    }

    pub(crate) fn thread(&self) -> ThreadId {
        self.thread
    }

    pub(crate) fn workers(&self) -> usize {
        self.workers
    }

    pub(crate) fn parks(&self) -> &super::parks::Parks {
        &self.parks
    }

    #[track_caller]
    pub(crate) fn core(&self) -> Rc<sim_runtime::Core> {
        match sim_runtime::context::lookup(self.core_id) {
            Some(core) => core,
            None if std::thread::current().id() != self.thread => panic!(
                "sim: escape refused: a runtime handle was used on a real thread other than the \
                 one that built the runtime. A simulation runs on one thread, and a thread \
                 started outside any simulation (as in a plain #[test]) is a real one. Start the \
                 threads inside the simulation (from a #[tokio::test], or from code the runtime \
                 runs): there they are simulated threads of its run and may use its handle."
            ),
            None => panic!("{}", super::runtime::SHUTDOWN_MESSAGE),
        }
    }

    /// The runtime, or `None` once it was shut down (on its own thread).
    #[track_caller]
    pub(crate) fn try_core(&self) -> Option<Rc<sim_runtime::Core>> {
        match sim_runtime::context::lookup(self.core_id) {
            Some(core) if !core.scope_shut_down(self.scope) => Some(core),
            Some(_) => None,
            None if std::thread::current().id() == self.thread => None,
            None => Some(self.core()),
        }
    }

    /// The handle of the current runtime.
    ///
    /// # Panics
    /// Outside a runtime, with tokio's message.
    #[track_caller]
    pub fn current() -> Self {
        match Handle::try_current() {
            Ok(handle) => handle,
            Err(error) => panic!("{error}"),
        }
    }

    /// The handle of the current runtime, if any.
    ///
    /// # Errors
    /// Outside a runtime.
    pub fn try_current() -> Result<Self, TryCurrentError> {
        let id = sim_runtime::context::current_id().ok_or(TryCurrentError {
            thread_local_destroyed: false,
        })?;
        let scope = sim_runtime::context::with_current(|core| core.current_scope()).unwrap_or(0);
        let found = HANDLES
            .try_with(|h| {
                h.borrow()
                    .iter()
                    .find(|h| h.core_id == id && h.scope == scope)
                    .cloned()
            })
            .map_err(|_| TryCurrentError {
                thread_local_destroyed: true,
            })?;
        // A simulation started by a harness (sim-net's `Sim`) has no Runtime
        // value: describe it from the core itself.
        Ok(found.unwrap_or_else(|| {
            let flavor = sim_runtime::context::with_current(|core| core.flavor()).map_or(
                RuntimeFlavor::CurrentThread,
                |f| match f {
                    sim_runtime::Flavor::CurrentThread => RuntimeFlavor::CurrentThread,
                    sim_runtime::Flavor::MultiThread => RuntimeFlavor::MultiThread,
                },
            );
            Handle::new(id, scope, flavor, None, 1)
        }))
    }

    /// Makes this runtime current until the guard drops.
    #[track_caller]
    pub fn enter(&self) -> EnterGuard<'_> {
        let depth = ENTER_DEPTH.with(|d| {
            d.set(d.get() + 1);
            d.get()
        });
        let core = self.core();
        let enter = sim_runtime::context::Enter::new(core.clone());
        let previous = core.set_scope(self.scope);
        EnterGuard {
            _order: OrderCheck { depth },
            _scope: ScopeRestore {
                core: std::mem::ManuallyDrop::new(core),
                previous,
            },
            _enter: enter,
            _handle: PhantomData,
        }
    }

    /// Spawns a task onto this runtime.
    #[track_caller]
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        // After a shutdown, as in tokio: the task is cancelled at once.
        let Some(core) = self.try_core() else {
            drop(future);
            return crate::task::JoinHandle::cancelled(self.core_id);
        };
        let location = std::panic::Location::caller();
        core.with_scope(self.scope, || {
            crate::task::spawn_at(&core, future, None, "task", 0, location)
        })
    }

    /// Runs a blocking closure as one scheduled step of this runtime.
    #[track_caller]
    pub fn spawn_blocking<F, R>(&self, func: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        // After a shutdown, as in tokio: the task is cancelled at once.
        let Some(core) = self.try_core() else {
            drop(func);
            return crate::task::JoinHandle::cancelled(self.core_id);
        };
        let location = std::panic::Location::caller();
        core.with_scope(self.scope, || {
            crate::task::spawn_at(
                &core,
                crate::task::BlockingTask::new(func),
                None,
                "blocking",
                0,
                location,
            )
        })
    }

    /// Runs the simulation until `future` completes. Unlike a real
    /// `current_thread` runtime, this drives timers and every task too: the
    /// simulation has no other thread that could.
    ///
    /// # Panics
    /// When called from inside a runtime.
    #[track_caller]
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        // Its future may call `block_in_place`, whatever the flavor, as in
        // tokio.
        let future = crate::task::AllowBlockInPlace::new(future);
        match self.try_core() {
            Some(core) => {
                super::runtime::assert_may_block();
                core.block_on_in(self.scope, future)
            }
            // After a shutdown, as in tokio: a future that needs no driver
            // still runs, on this thread.
            None => crate::util::poll_here(future),
        }
    }

    /// The flavor the runtime was built as.
    pub fn runtime_flavor(&self) -> RuntimeFlavor {
        self.flavor
    }

    /// The runtime's id.
    pub fn id(&self) -> Id {
        Id::new(self.core_id, self.scope)
    }

    /// The runtime's name, from [`super::Builder::name`].
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// What the runtime can tell about itself.
    pub fn metrics(&self) -> RuntimeMetrics {
        RuntimeMetrics::new(self.clone())
    }
}
