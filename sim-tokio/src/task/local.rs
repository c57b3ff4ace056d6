use super::JoinHandle;
use sim_runtime::Core;
use std::cell::Cell;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::panic::Location;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

/// A set of `!Send` tasks that run only while the set is driven (awaited,
/// or through [`LocalSet::run_until`] or [`LocalSet::block_on`]).
///
/// Which of its ready tasks runs next is drawn from the seed, as for every
/// task. The set binds to the runtime current when it is first used.
pub struct LocalSet {
    /// Auto traits as tokio's (see `crate::util::NoUnwindSafe`).
    _unwind: crate::util::NoUnwindSafe,
    id: crate::runtime::Id,
    bound: Cell<Option<(u16, u32)>>,
    _not_send: PhantomData<*const ()>,
}

/// Makes a local set current until dropped, so `spawn_local` spawns onto it.
pub struct LocalEnterGuard {
    core: Rc<Core>,
    previous: u32,
    _not_send: PhantomData<*const ()>,
}

thread_local! {
    /// The sets entered on this thread outside any runtime (`LocalSet::enter`
    /// before a runtime is built or entered): `spawn_local` goes to the
    /// innermost.
    static ENTERED: std::cell::RefCell<Vec<(Rc<Core>, u32)>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Drop for LocalEnterGuard {
    fn drop(&mut self) {
        self.core.set_current_local(self.previous);
        let _ = ENTERED.try_with(|e| e.borrow_mut().pop());
    }
}

impl fmt::Debug for LocalEnterGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalEnterGuard").finish()
    }
}

impl fmt::Debug for LocalSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalSet").finish()
    }
}

impl Default for LocalSet {
    fn default() -> LocalSet {
        LocalSet::new()
    }
}

impl LocalSet {
    /// An empty local set.
    pub fn new() -> LocalSet {
        LocalSet {
            _unwind: std::marker::PhantomData,
            id: crate::runtime::Id::for_local_set(),
            bound: Cell::new(None),
            _not_send: PhantomData,
        }
    }

    /// The runtime and owner number of this set, binding it on first use.
    #[track_caller]
    fn bind(&self) -> (Rc<Core>, u32) {
        if let Some((core_id, owner)) = self.bound.get() {
            if let Some(core) = sim_runtime::context::lookup(core_id) {
                return (core, owner);
            }
            panic!("sim: this LocalSet's runtime was dropped or belongs to another thread");
        }
        // Outside any runtime (as tokio allows), the set binds to the
        // thread's simulation: the one its live runtimes share, or, before
        // any, the one the next runtime built on this thread will be.
        let core =
            sim_runtime::context::with_current(|core| sim_runtime::context::lookup(core.id()))
                .flatten()
                .or_else(sim_runtime::context::thread_core)
                .unwrap_or_else(crate::runtime::builder::reserved_core);
        let owner = core.local_new();
        self.bound.set(Some((core.id(), owner)));
        (core, owner)
    }

    /// The set's id: a runtime id of its own, unique in the process.
    pub fn id(&self) -> crate::runtime::Id {
        self.id
    }

    /// Makes this set current until the guard drops.
    #[track_caller]
    pub fn enter(&self) -> LocalEnterGuard {
        let (core, owner) = self.bind();
        let previous = core.set_current_local(owner);
        ENTERED.with(|e| e.borrow_mut().push((core.clone(), owner)));
        LocalEnterGuard {
            core,
            previous,
            _not_send: PhantomData,
        }
    }

    /// Spawns a `!Send` task onto this set.
    #[track_caller]
    pub fn spawn_local<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + 'static,
        F::Output: 'static,
    {
        self.spawn_named(future, None, Location::caller())
    }

    pub(crate) fn spawn_named<F>(
        &self,
        future: F,
        name: Option<&str>,
        location: &'static Location<'static>,
    ) -> JoinHandle<F::Output>
    where
        F: Future + 'static,
    {
        let (core, owner) = self.bind();
        super::spawn::spawn_at(&core, future, name, "local", owner, location)
    }

    /// Runs `future` on `rt`, with this set's tasks, until it completes.
    #[track_caller]
    pub fn block_on<F>(&self, rt: &crate::runtime::Runtime, future: F) -> F::Output
    where
        F: Future,
    {
        rt.block_on(self.run_until(future))
    }

    /// Runs `future`, and this set's tasks alongside it, until `future`
    /// completes. Unfinished tasks stay in the set.
    pub async fn run_until<F>(&self, future: F) -> F::Output
    where
        F: Future,
    {
        RunUntil {
            local: self,
            future,
        }
        .await
    }

    /// A set's tasks run on the simulation it was bound to: driven from
    /// another runtime's thread of control, they never would.
    #[track_caller]
    fn check_driven_by(&self, core: &Core) {
        let current = sim_runtime::context::with_current(|c| c.id());
        if current.is_some_and(|id| id != core.id()) {
            panic!(
                "sim: this LocalSet belongs to another runtime than the one \
                 driving it (it was first used under that runtime, or before \
                 any runtime, which binds it to the next one built from the \
                 environment on this thread). Drive it with the runtime it was \
                 first used with."
            );
        }
    }

    fn tick(&self, core: &Core, owner: u32, cx: &mut Context<'_>) {
        if core.local_tick(owner, cx.waker()) {
            // More of the set's tasks are ready: come back after the
            // scheduler's next pick, so the set's tasks interleave with the
            // rest of the simulation.
            cx.waker().wake_by_ref();
        }
    }
}

pin_project_lite::pin_project! {
    struct RunUntil<'a, F> {
        local: &'a LocalSet,
        #[pin]
        future: F,
    }
}

impl<F: Future> Future for RunUntil<'_, F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let (core, owner) = this.local.bind();
        this.local.check_driven_by(&core);
        let previous = core.set_current_local(owner);
        let result = this.future.poll(cx);
        core.set_current_local(previous);
        if result.is_ready() {
            return result;
        }
        this.local.tick(&core, owner, cx);
        Poll::Pending
    }
}

impl Future for LocalSet {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let (core, owner) = self.bind();
        self.check_driven_by(&core);
        self.tick(&core, owner, cx);
        if core.local_live(owner) == 0 {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

impl Drop for LocalSet {
    fn drop(&mut self) {
        if let Some((core_id, owner)) = self.bound.get() {
            if let Some(core) = sim_runtime::context::lookup(core_id) {
                let _enter = sim_runtime::context::Enter::new(core.clone());
                core.local_drop(owner);
            }
        }
    }
}

/// Spawns a `!Send` task onto the current local set.
///
/// # Panics
/// Outside a local set, as in tokio.
#[track_caller]
pub fn spawn_local<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + 'static,
    F::Output: 'static,
{
    spawn_local_named(future, None, Location::caller())
}

#[track_caller]
pub(crate) fn spawn_local_named<F>(
    future: F,
    name: Option<&str>,
    location: &'static Location<'static>,
) -> JoinHandle<F::Output>
where
    F: Future + 'static,
{
    let mut future = Some(future);
    let spawned = sim_runtime::context::with_current(|core| {
        let owner = core.current_local();
        // A LocalRuntime runs `!Send` tasks itself: every task is on this
        // one thread anyway.
        (owner != 0 || core.is_local_runtime()).then(|| {
            let future = future.take().expect("spawned once");
            super::spawn::spawn_at(core, future, name, "local", owner, location)
        })
    })
    .flatten();
    if let Some(handle) = spawned {
        return handle;
    }
    // Outside any runtime, under a set's `enter` guard: onto that set.
    match ENTERED.with(|e| e.borrow().last().cloned()) {
        Some((core, owner)) => {
            let future = future.take().expect("spawned once");
            super::spawn::spawn_at(&core, future, name, "local", owner, location)
        }
        None => panic!(
            "`spawn_local` called from outside of a `task::LocalSet` or `runtime::LocalRuntime`"
        ),
    }
}
