use super::{LocalOptions, LocalRuntime, Runtime, RuntimeFlavor};
use sim_runtime::{Flavor, RuntimeOptions, SimConfig};
use std::fmt;
use std::io;
use std::sync::Arc;
use std::time::Duration;

type Callback = Arc<dyn Fn() + Send + Sync>;

/// Builds a simulated runtime, with tokio's builder API.
///
/// The seed and limits come from the environment (`SIM_SEED`,
/// `SIM_TIME_LIMIT_S`, `SIM_STEP_LIMIT`): see `sim_runtime::SimConfig`.
/// Thread settings (`worker_threads`, `thread_name`, ...) are validated as
/// tokio validates them and recorded; no worker thread is ever started. The
/// one simulated thread runs the `on_thread_*` hooks: `on_thread_start` once
/// when the runtime is built, `on_thread_park`/`on_thread_unpark` around
/// each time nothing is ready and the clock must move, `on_thread_stop` once
/// when it shuts down.
///
/// ```
/// let rt = tokio::runtime::Builder::new_current_thread()
///     .enable_all()
///     .start_paused(true)
///     .build()
///     .unwrap();
/// assert_eq!(rt.block_on(async { 1 + 1 }), 2);
/// ```
pub struct Builder {
    flavor: RuntimeFlavor,
    start_paused: bool,
    enable_io: bool,
    enable_time: bool,
    worker_threads: Option<usize>,
    max_blocking_threads: usize,
    thread_name: String,
    name: Option<String>,
    thread_stack_size: Option<usize>,
    thread_keep_alive: Option<Duration>,
    global_queue_interval: Option<u32>,
    event_interval: u32,
    max_io_events_per_tick: usize,
    hooks: Vec<(&'static str, Callback)>,
}

impl fmt::Debug for Builder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder")
            .field("flavor", &self.flavor)
            .field("start_paused", &self.start_paused)
            .field("worker_threads", &self.worker_threads)
            .field("thread_name", &self.thread_name)
            .finish_non_exhaustive()
    }
}

impl Builder {
    fn new(flavor: RuntimeFlavor) -> Builder {
        Builder {
            flavor,
            start_paused: false,
            enable_io: false,
            enable_time: false,
            worker_threads: None,
            max_blocking_threads: 512,
            thread_name: "tokio-runtime-worker".to_string(),
            name: None,
            thread_stack_size: None,
            thread_keep_alive: None,
            global_queue_interval: None,
            event_interval: 61,
            max_io_events_per_tick: 1024,
            hooks: Vec::new(),
        }
    }

    /// A builder for a `current_thread` runtime.
    pub fn new_current_thread() -> Builder {
        Builder::new(RuntimeFlavor::CurrentThread)
    }

    /// A builder for a `multi_thread` runtime. It runs on the calling
    /// thread too, like every simulated runtime.
    pub fn new_multi_thread() -> Builder {
        Builder::new(RuntimeFlavor::MultiThread)
    }

    /// Enables the I/O and time drivers.
    pub fn enable_all(&mut self) -> &mut Self {
        self.enable_io = true;
        self.enable_time = true;
        self
    }

    /// Enables the I/O driver.
    pub fn enable_io(&mut self) -> &mut Self {
        self.enable_io = true;
        self
    }

    /// Enables the time driver.
    pub fn enable_time(&mut self) -> &mut Self {
        self.enable_time = true;
        self
    }

    /// Starts with time paused, as `time::pause` would. The virtual clock
    /// auto-advances when every task is idle either way; this decides what
    /// `pause`, `resume` and `advance` accept.
    pub fn start_paused(&mut self, start_paused: bool) -> &mut Self {
        self.start_paused = start_paused;
        self
    }

    /// Sets the number of worker threads (recorded; see the type's docs).
    ///
    /// # Panics
    /// When `val` is 0, as tokio does.
    #[track_caller]
    pub fn worker_threads(&mut self, val: usize) -> &mut Self {
        assert!(val > 0, "Worker threads cannot be set to 0");
        self.worker_threads = Some(val);
        self
    }

    /// Sets the blocking-pool size (recorded: blocking closures run inline).
    ///
    /// # Panics
    /// When `val` is 0, as tokio does.
    #[track_caller]
    pub fn max_blocking_threads(&mut self, val: usize) -> &mut Self {
        assert!(val > 0, "Max blocking threads cannot be set to 0");
        self.max_blocking_threads = val;
        self
    }

    /// Sets the worker threads' name (recorded).
    pub fn thread_name(&mut self, val: impl Into<String>) -> &mut Self {
        self.thread_name = val.into();
        self
    }

    /// Sets the runtime's name, returned by [`super::Handle::name`].
    ///
    /// # Panics
    /// When the name is empty or only whitespace, as tokio does.
    #[track_caller]
    pub fn name(&mut self, val: impl Into<String>) -> &mut Self {
        let val = val.into();
        assert!(!val.trim().is_empty(), "runtime name shouldn't be empty");
        self.name = Some(val);
        self
    }

    /// Sets a function that names worker threads (recorded).
    pub fn thread_name_fn<F>(&mut self, f: F) -> &mut Self
    where
        F: Fn() -> String + Send + Sync + 'static,
    {
        self.thread_name = f();
        self
    }

    /// Sets the worker threads' stack size (recorded).
    pub fn thread_stack_size(&mut self, val: usize) -> &mut Self {
        self.thread_stack_size = Some(val);
        self
    }

    /// Runs `f` once, when the runtime's one simulated thread starts (as
    /// the runtime is built).
    pub fn on_thread_start<F>(&mut self, f: F) -> &mut Self
    where
        F: Fn() + Send + Sync + 'static,
    {
        self.hooks.push(("on_thread_start", Arc::new(f)));
        self
    }

    /// Runs `f` once, when the runtime shuts down.
    pub fn on_thread_stop<F>(&mut self, f: F) -> &mut Self
    where
        F: Fn() + Send + Sync + 'static,
    {
        self.hooks.push(("on_thread_stop", Arc::new(f)));
        self
    }

    /// Runs `f` each time the thread would park: nothing is ready, and the
    /// virtual clock must move to the next event. `f` may spawn or wake a
    /// task; then the clock stays.
    pub fn on_thread_park<F>(&mut self, f: F) -> &mut Self
    where
        F: Fn() + Send + Sync + 'static,
    {
        self.hooks.push(("on_thread_park", Arc::new(f)));
        self
    }

    /// Runs `f` each time the thread unparks after a park.
    pub fn on_thread_unpark<F>(&mut self, f: F) -> &mut Self
    where
        F: Fn() + Send + Sync + 'static,
    {
        self.hooks.push(("on_thread_unpark", Arc::new(f)));
        self
    }

    /// Sets how long idle blocking threads live (recorded).
    pub fn thread_keep_alive(&mut self, duration: Duration) -> &mut Self {
        self.thread_keep_alive = Some(duration);
        self
    }

    /// Sets the global queue interval (recorded: the scheduler is seeded).
    ///
    /// # Panics
    /// When `val` is 0, as tokio does.
    #[track_caller]
    pub fn global_queue_interval(&mut self, val: u32) -> &mut Self {
        assert!(val > 0, "global_queue_interval must be greater than 0");
        self.global_queue_interval = Some(val);
        self
    }

    /// Sets the event interval (recorded).
    ///
    /// # Panics
    /// When `val` is 0, as in tokio.
    #[track_caller]
    pub fn event_interval(&mut self, val: u32) -> &mut Self {
        assert!(val > 0, "event_interval must be greater than 0");
        self.event_interval = val;
        self
    }

    /// Sets the I/O events per tick (recorded).
    ///
    /// # Panics
    /// When `capacity` is 0.
    #[track_caller]
    pub fn max_io_events_per_tick(&mut self, capacity: usize) -> &mut Self {
        assert!(
            capacity > 0,
            "max_io_events_per_tick must be greater than 0"
        );
        self.max_io_events_per_tick = capacity;
        self
    }

    /// Sets the I/O events per busy tick (recorded).
    ///
    /// # Panics
    /// When `capacity` is 0.
    #[track_caller]
    pub fn max_io_events_per_busy_tick(&mut self, capacity: usize) -> &mut Self {
        assert!(
            capacity > 0,
            "max_io_events_per_busy_tick must be greater than 0"
        );
        self.max_io_events_per_tick = capacity;
        self
    }

    /// Builds a [`LocalRuntime`]: a `current_thread` runtime whose tasks may
    /// be `!Send` (`spawn_local` works without a `LocalSet`).
    ///
    /// # Errors
    /// When a `SIM_*` variable holds a bad value.
    ///
    /// # Panics
    /// On a `multi_thread` builder, as in tokio.
    #[track_caller]
    pub fn build_local(&mut self, options: LocalOptions) -> io::Result<LocalRuntime> {
        let _ = options;
        assert!(
            self.flavor == RuntimeFlavor::CurrentThread,
            "Only current_thread is supported when building a local runtime"
        );
        let runtime = self.build_runtime(Config::Env(env_config()?), true);
        Ok(LocalRuntime::from_runtime(runtime))
    }

    /// Builds the runtime: a new simulation, seeded from `SIM_SEED`.
    ///
    /// # Errors
    /// When a `SIM_*` variable holds a bad value; the error names it.
    pub fn build(&mut self) -> io::Result<Runtime> {
        Ok(self.build_runtime(Config::Env(env_config()?), false))
    }

    /// Builds the runtime with an explicit simulation configuration (a seed
    /// chosen by the test instead of `SIM_SEED`). Not in tokio's API.
    pub fn build_with(&mut self, config: SimConfig) -> Runtime {
        self.build_runtime(Config::Given(config), false)
    }

    fn build_runtime(&self, config: Config, local: bool) -> Runtime {
        let options = RuntimeOptions {
            flavor: match self.flavor {
                RuntimeFlavor::CurrentThread => Flavor::CurrentThread,
                RuntimeFlavor::MultiThread => Flavor::MultiThread,
            },
            start_paused: self.start_paused,
            local,
            enable_time: self.enable_time,
            enable_io: self.enable_io,
            workers: match self.flavor {
                RuntimeFlavor::CurrentThread => 0,
                RuntimeFlavor::MultiThread => self
                    .worker_threads
                    .map_or(sim_runtime::scheduler::WORKERS_DEFAULT, |n| {
                        n.min(usize::from(sim_runtime::scheduler::WORKERS_MAX)) as u16
                    }),
            },
        };
        let workers = match self.flavor {
            RuntimeFlavor::CurrentThread => 1,
            RuntimeFlavor::MultiThread => usize::from(options.workers),
        };
        // std::fs under the temporary directory goes to the simulated disk.
        sim_os::install();
        sim_fs::install();
        sim_net::std_net::install();
        let hook = |name: &str| -> Option<std::rc::Rc<dyn Fn()>> {
            let f: Callback = self.hooks.iter().rev().find(|(n, _)| *n == name)?.1.clone();
            Some(std::rc::Rc::new(move || f()))
        };
        // A runtime built while another is alive on this thread joins its
        // simulation: one clock, one event queue, one trace, so a future
        // under either runtime's handle (tokio-util's `TokioContext`) and
        // tasks on either make progress together, in virtual time.
        if let Config::Env(_) = &config {
            if let Some(core) = joinable() {
                let scope = core.add_scope(options);
                // Its thread is the simulation's: only its start hook has
                // a moment of its own to run in.
                if let Some(start) = hook("on_thread_start") {
                    let _enter = sim_runtime::context::Enter::new(core.clone());
                    core.with_scope(scope, || start());
                }
                return Runtime::from_core(core, scope, self.flavor, self.name.clone(), workers);
            }
        }
        // `SIM_SWARM=1`: this seed's one-host swarm (loopback latency,
        // segment cuts, disk faults, poll cost).
        let swarm = sim_harness::one_host::enabled().then(|| {
            let seed = match &config {
                Config::Env(c) | Config::Given(c) => c.seed,
            };
            sim_harness::one_host::OneHostPlan::draw(seed)
        });
        let core = match config {
            // A LocalSet used before any runtime made this thread's next
            // simulation already: this runtime is it.
            Config::Env(mut config) => match take_reserved() {
                Some(core) => {
                    core.adopt_options(options);
                    core
                }
                None => {
                    if let Some(plan) = &swarm {
                        plan.configure(&mut config);
                    }
                    sim_runtime::launch(config, options)
                }
            },
            Config::Given(mut config) => {
                if let Some(plan) = &swarm {
                    plan.configure(&mut config);
                }
                sim_runtime::launch(config, options)
            }
        };
        if let Some(plan) = &swarm {
            if sim_runtime::sweep::verbose() || std::thread::current().name() == Some("main") {
                eprintln!("sim: swarm: {plan}");
            }
            plan.apply(&core);
        }
        // The one thread's hooks: it starts now, parks whenever the clock
        // must move, and stops when the runtime shuts down.
        // A hook set twice keeps the last, as in tokio.
        core.set_hooks(sim_runtime::RuntimeHooks {
            on_park: hook("on_thread_park"),
            on_unpark: hook("on_thread_unpark"),
            on_stop: hook("on_thread_stop"),
        });
        if let Some(start) = hook("on_thread_start") {
            let _enter = sim_runtime::context::Enter::new(core.clone());
            start();
        }
        Runtime::from_core(core, 0, self.flavor, self.name.clone(), workers)
    }
}

/// The simulation alive on this thread that a new runtime joins, if any: a
/// LocalSet's reserved one is taken first (see `take_reserved`).
fn joinable() -> Option<std::rc::Rc<sim_runtime::Core>> {
    if RESERVED.with(|r| r.borrow().is_some()) {
        return None;
    }
    sim_runtime::context::alive()
        .into_iter()
        .find(|core| !core.is_shut_down())
}

/// Where a runtime's configuration comes from.
enum Config {
    /// The `SIM_*` variables (`build`).
    Env(SimConfig),
    /// The test's own (`build_with`).
    Given(SimConfig),
}

thread_local! {
    /// The simulation a `LocalSet` bound to before any runtime existed on
    /// this thread; the next runtime built from the environment adopts it.
    static RESERVED: std::cell::RefCell<Option<std::rc::Rc<sim_runtime::Core>>> =
        const { std::cell::RefCell::new(None) };
}

fn take_reserved() -> Option<std::rc::Rc<sim_runtime::Core>> {
    RESERVED
        .try_with(|r| r.borrow_mut().take())
        .ok()
        .flatten()
        .filter(|core| !core.is_shut_down())
}

/// The simulation that the next runtime built on this thread will be: for
/// a `LocalSet` used before any runtime, as tokio allows. Made from the
/// `SIM_*` variables on first use.
///
/// # Panics
/// When a `SIM_*` variable holds a bad value.
pub(crate) fn reserved_core() -> std::rc::Rc<sim_runtime::Core> {
    if let Some(core) = RESERVED
        .with(|r| r.borrow().clone())
        .filter(|c| !c.is_shut_down())
    {
        return core;
    }
    let options = RuntimeOptions::current_thread();
    let config = env_config().unwrap_or_else(|e| panic!("{e}"));
    sim_os::install();
    sim_fs::install();
    sim_net::std_net::install();
    let core = sim_runtime::launch(config, options);
    RESERVED.with(|r| *r.borrow_mut() = Some(core.clone()));
    core
}

/// The run's configuration from the `SIM_*` variables.
fn env_config() -> io::Result<SimConfig> {
    SimConfig::try_from_env().map_err(|message| {
        // Callers usually `expect` this error, which prints it escaped; say
        // it plainly on stderr as well.
        eprintln!("{message}");
        io::Error::new(io::ErrorKind::InvalidInput, message)
    })
}
