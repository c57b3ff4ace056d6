//! The harness: a simulation of named hosts and client tasks, with faults
//! at virtual times.
//!
//! ```
//! use std::time::Duration;
//! use tokio::sim::{Fault, Sim};
//!
//! let mut sim = Sim::new();
//! // A server is built by a factory, so that it can restart.
//! sim.host("server", || async {
//!     let listener = tokio::net::TcpListener::bind("0.0.0.0:7").await.unwrap();
//!     loop {
//!         let (mut s, _) = listener.accept().await.unwrap();
//!         tokio::spawn(async move {
//!             let (mut r, mut w) = s.split();
//!             let _ = tokio::io::copy(&mut r, &mut w).await;
//!         });
//!     }
//! });
//! sim.client("client", async {
//!     let s = tokio::net::TcpStream::connect("server:7").await.unwrap();
//!     drop(s);
//!     tokio::time::sleep(Duration::from_secs(10)).await;
//! });
//! sim.at(Duration::from_secs(5), Fault::Crash("server".into()));
//! let report = sim.run();
//! println!("{}", report.trace_hash);
//! ```

use crate::checker::CheckFn;
use crate::host::{named as host, BoxFuture, Factory};
use crate::liveness::Property;
use crate::nemesis::Nemesis;
use crate::observe::Observations;
use crate::swarm::Swarm;
use sim_fs::DiskConfig;
use sim_net::{with_net, HostId, LinkConfig, Network};
use sim_runtime::{Core, Output, RuntimeOptions, SimConfig, TaskMeta};
use std::future::Future;
use std::panic::Location;
use std::rc::Rc;
use std::task::Poll;
use std::time::Duration;

pub use crate::fault::Fault;

/// The most scheduler turns the hosts get to boot before clients start.
const BOOT_YIELDS_MAX: usize = 100_000;

/// Gives the scheduler one turn.
async fn yield_once() {
    let mut yielded = false;
    std::future::poll_fn(|cx| {
        if yielded {
            return Poll::Ready(());
        }
        yielded = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    })
    .await
}

/// What a finished simulation reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimReport {
    /// The seed.
    pub seed: u64,
    /// The SHA-256 of the trace, in hex.
    pub trace_hash: String,
    /// Events recorded.
    pub events: u64,
    /// Virtual time at the end.
    pub end: Duration,
    /// The histories the run recorded (`tokio::sim::history`), by name.
    pub histories: std::collections::BTreeMap<String, crate::history::History>,
}

/// A simulation of named hosts and clients. See the module docs.
///
/// # Examples
///
/// A server and a client on the simulated network. The run ends when the
/// client does; the report names the seed and the trace's hash.
///
/// ```
/// use tokio::io::{AsyncReadExt, AsyncWriteExt};
/// use tokio::net::{TcpListener, TcpStream};
/// use tokio::sim::Sim;
///
/// let mut sim = Sim::new();
/// sim.host("server", || async {
///     let listener = TcpListener::bind("0.0.0.0:7").await.unwrap();
///     let (mut stream, _) = listener.accept().await.unwrap();
///     let mut word = [0; 5];
///     stream.read_exact(&mut word).await.unwrap();
///     stream.write_all(&word).await.unwrap();
/// });
/// sim.client("client", async {
///     let mut stream = TcpStream::connect("server:7").await.unwrap();
///     stream.write_all(b"hello").await.unwrap();
///     let mut echo = [0; 5];
///     stream.read_exact(&mut echo).await.unwrap();
///     assert_eq!(&echo, b"hello");
/// });
/// let report = sim.run();
/// assert!(report.events > 0);
/// assert_eq!(report.trace_hash.len(), 64);
/// ```
pub struct Sim {
    config: SimConfig,
    /// Says, while the test builds this simulation, why a timer or socket
    /// made outside the run has nothing to bind to.
    _building: sim_runtime::context::BuildingSim,
    /// What the test gave: hosts, clients, faults, links, disks, checkers,
    /// properties, the nemesis and workers.
    world: World,
    swarm: Option<Swarm>,
}

impl Default for Sim {
    fn default() -> Sim {
        Sim::new()
    }
}

impl Sim {
    /// A simulation seeded from `SIM_SEED` (or a fresh seed).
    ///
    /// # Panics
    /// When a `SIM_*` variable holds a bad value.
    pub fn new() -> Sim {
        Sim::with_config(SimConfig::from_env())
    }

    /// A simulation with an explicit configuration.
    pub fn with_config(config: SimConfig) -> Sim {
        Sim {
            config,
            _building: sim_runtime::context::BuildingSim::start(),
            world: World::new(),
            swarm: None,
        }
    }

    /// Gives every poll of a task a cost in virtual time, drawn per poll in
    /// `0..=max`, so timers can fire in the middle of a service's work.
    pub fn poll_cost(&mut self, max: Duration) -> &mut Self {
        self.config.poll_cost_max_ns = max.as_nanos().min(u64::MAX as u128) as u64;
        self
    }

    /// Draws the run's fault settings from `swarm` (see [`crate::swarm`]):
    /// the default link, the hosts' disks and a nemesis, unless the test set
    /// them itself ([`Sim::default_link`], [`Sim::disk`]).
    pub fn swarm(&mut self, swarm: Swarm) -> &mut Self {
        self.swarm = Some(swarm);
        self
    }

    /// Adds an invariant, checked after every harness event (a delivery, a
    /// fault, a lifecycle event, a [`crate::publish`]) and at the end. An
    /// `Err` fails the run with class `correctness`, naming `name`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use tokio::sim::{publish, Sim};
    ///
    /// let mut sim = Sim::new();
    /// sim.check("the counter never goes back", |obs| {
    ///     let values: Vec<u64> = obs
    ///         .history("counter")
    ///         .iter()
    ///         .map(|p| p.value.parse().unwrap())
    ///         .collect();
    ///     match values.windows(2).find(|w| w[1] < w[0]) {
    ///         None => Ok(()),
    ///         Some(w) => Err(format!("the counter went from {} to {}", w[0], w[1])),
    ///     }
    /// });
    /// sim.client("counter", async {
    ///     for n in 0..3 {
    ///         publish("counter", n);
    ///         tokio::time::sleep(Duration::from_millis(10)).await;
    ///     }
    /// });
    /// sim.run();
    /// ```
    pub fn check<F>(&mut self, name: &str, check: F) -> &mut Self
    where
        F: Fn(&Observations<'_>) -> Result<(), String> + 'static,
    {
        self.world.checkers.push((name.to_string(), Rc::new(check)));
        self
    }

    /// Checks a history of the run's client operations (recorded with
    /// [`crate::history::op`]): its linearizability against a model
    /// ([`crate::history::Linearizable`]) or its transactions' anomalies
    /// ([`crate::history::Transactional`]), at the end of the run or as it
    /// goes. What it finds fails the run with class `consistency`, with the
    /// smallest window of operations at fault as a table of clients by
    /// time.
    ///
    /// # Examples
    ///
    /// A register whose reads see the last write: linearizable.
    ///
    /// ```
    /// use std::cell::Cell;
    /// use std::rc::Rc;
    /// use tokio::sim::history::{self, models, Linearizable, Op};
    /// use tokio::sim::Sim;
    ///
    /// let mut sim = Sim::new();
    /// sim.check_history(Linearizable::new(models::Register::new()));
    /// let register = Rc::new(Cell::new(0));
    /// for client in ["a", "b"] {
    ///     let register = register.clone();
    ///     sim.client(client, async move {
    ///         for n in 1..=5 {
    ///             let value = n * 10 + i64::from(client == "b");
    ///             history::op(Op::write("r", value), async { register.set(value); Ok::<_, ()>(()) }).await.unwrap();
    ///             tokio::task::yield_now().await;
    ///             history::op(Op::read("r"), async { Ok::<_, ()>(register.get()) }).await.unwrap();
    ///         }
    ///     });
    /// }
    /// let report = sim.run();
    /// assert_eq!(report.histories["ops"].operations().len(), 20);
    /// ```
    pub fn check_history(
        &mut self,
        check: impl crate::history::HistoryCheck + 'static,
    ) -> &mut Self {
        self.world.history_checks.push(Rc::new(check));
        self
    }

    /// Adds a liveness property: after the workload (every client done),
    /// the liveness phase stops the faults, heals the core's network and
    /// restarts its crashed hosts; then `holds` must become true within
    /// `bound` of virtual time, or the run fails with class `liveness`.
    ///
    /// # Examples
    ///
    /// The server becomes ready 2 s in, after the client is done: the liveness
    /// phase waits for it, up to the bound.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tokio::sim::{publish, Sim};
    ///
    /// let mut sim = Sim::new();
    /// sim.host("server", || async {
    ///     tokio::time::sleep(Duration::from_secs(2)).await;
    ///     publish("ready", true);
    ///     std::future::pending::<()>().await;
    /// });
    /// sim.client("client", async {});
    /// sim.eventually("the server becomes ready", Duration::from_secs(5), |obs| {
    ///     obs.get("server", "ready") == Some("true")
    /// });
    /// sim.run();
    /// ```
    pub fn eventually<F>(&mut self, name: &str, bound: Duration, holds: F) -> &mut Self
    where
        F: Fn(&Observations<'_>) -> bool + 'static,
    {
        self.world.properties.push(Property {
            name: name.to_string(),
            bound,
            holds: Rc::new(holds),
        });
        self
    }

    /// The hosts the liveness phase heals and restarts (default: every
    /// host registered with [`Sim::host`]).
    pub fn liveness_core(&mut self, hosts: &[&str]) -> &mut Self {
        self.world.liveness_core = Some(hosts.iter().map(|h| h.to_string()).collect());
        self
    }

    /// Adds the nemesis's generators to the run.
    pub fn nemesis(&mut self, nemesis: Nemesis) -> &mut Self {
        let mut all = std::mem::take(&mut self.world.nemesis);
        all.extend(nemesis);
        self.world.nemesis = all;
        self
    }

    /// Adds a host whose tasks `factory` starts; it runs again on restart.
    ///
    /// # Examples
    ///
    /// A crash stops the host's tasks; a restart calls the factory again.
    ///
    /// ```
    /// use std::cell::Cell;
    /// use std::rc::Rc;
    /// use std::time::Duration;
    /// use tokio::sim::{Fault, Sim};
    ///
    /// let starts = Rc::new(Cell::new(0));
    /// let counted = starts.clone();
    /// let mut sim = Sim::new();
    /// sim.host("db", move || {
    ///     counted.set(counted.get() + 1);
    ///     std::future::pending::<()>()
    /// });
    /// sim.at(Duration::from_secs(1), Fault::Crash("db".into()));
    /// sim.at(Duration::from_secs(2), Fault::Restart("db".into()));
    /// sim.client("clock", async {
    ///     tokio::time::sleep(Duration::from_secs(3)).await;
    /// });
    /// sim.run();
    /// assert_eq!(starts.get(), 2);
    /// ```
    #[track_caller]
    pub fn host<F, Fut>(&mut self, name: &str, factory: F) -> &mut Self
    where
        F: Fn() -> Fut + 'static,
        Fut: Future<Output = ()> + 'static,
    {
        let factory: Factory = Rc::new(move || Box::pin(factory()) as BoxFuture);
        self.world
            .hosts
            .push((name.to_string(), factory, Location::caller()));
        self
    }

    /// Adds a client: a host running `future`. The run ends when every
    /// client has finished.
    ///
    /// # Examples
    ///
    /// The run lasts as long as its longest client, in virtual time: no wall
    /// time passes.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tokio::sim::Sim;
    ///
    /// let mut sim = Sim::new();
    /// sim.client("quick", async {
    ///     tokio::time::sleep(Duration::from_secs(1)).await;
    /// });
    /// sim.client("slow", async {
    ///     tokio::time::sleep(Duration::from_secs(60)).await;
    /// });
    /// let report = sim.run();
    /// assert!(report.end >= Duration::from_secs(60));
    /// ```
    #[track_caller]
    pub fn client<Fut>(&mut self, name: &str, future: Fut) -> &mut Self
    where
        Fut: Future<Output = ()> + 'static,
    {
        self.world
            .clients
            .push((name.to_string(), Box::pin(future), Location::caller()));
        self
    }

    /// Configures the directed link `from -> to`.
    ///
    /// # Examples
    ///
    /// A link of 20 ms each way: a datagram's round trip takes 40 ms of virtual
    /// time.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tokio::net::UdpSocket;
    /// use tokio::sim::{LinkConfig, Sim};
    ///
    /// let slow = LinkConfig {
    ///     latency_min: Duration::from_millis(20),
    ///     latency_max: Duration::from_millis(20),
    ///     ..LinkConfig::default()
    /// };
    /// let mut sim = Sim::new();
    /// sim.link("client", "server", slow.clone());
    /// sim.link("server", "client", slow);
    /// sim.host("server", || async {
    ///     let socket = UdpSocket::bind("0.0.0.0:9").await.unwrap();
    ///     let mut buf = [0; 16];
    ///     loop {
    ///         let (n, from) = socket.recv_from(&mut buf).await.unwrap();
    ///         socket.send_to(&buf[..n], from).await.unwrap();
    ///     }
    /// });
    /// sim.client("client", async {
    ///     let socket = UdpSocket::bind("0.0.0.0:0").await.unwrap();
    ///     let sent = tokio::time::Instant::now();
    ///     socket.send_to(b"ping", "server:9").await.unwrap();
    ///     let mut buf = [0; 16];
    ///     socket.recv_from(&mut buf).await.unwrap();
    ///     assert!(sent.elapsed() >= Duration::from_millis(40));
    /// });
    /// sim.run();
    /// ```
    pub fn link(&mut self, from: &str, to: &str, config: LinkConfig) -> &mut Self {
        config.validate();
        self.world
            .links
            .push((from.to_string(), to.to_string(), config));
        self
    }

    /// Configures every link not configured with [`Sim::link`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use tokio::sim::{LinkConfig, Sim};
    ///
    /// let mut sim = Sim::new();
    /// sim.default_link(LinkConfig {
    ///     latency_min: Duration::from_millis(1),
    ///     latency_max: Duration::from_millis(50),
    ///     udp_drop_rate: 0.01,
    ///     ..LinkConfig::default()
    /// });
    /// ```
    pub fn default_link(&mut self, config: LinkConfig) -> &mut Self {
        config.validate();
        self.world.default_link = Some(config);
        self
    }

    /// Configures `host`'s disk (capacity, latency, faults) for the run.
    ///
    /// # Panics
    /// On a configuration that does not validate.
    ///
    /// # Examples
    ///
    /// A disk of 4 KiB: the write that does not fit fails as on a full disk.
    ///
    /// ```
    /// use tokio::io::AsyncWriteExt;
    /// use tokio::sim::{DiskConfig, Sim};
    ///
    /// let mut sim = Sim::new();
    /// sim.disk("db", DiskConfig { capacity_bytes: 4096, ..DiskConfig::default() });
    /// sim.client("db", async {
    ///     let path = std::env::temp_dir().join("full-disk-example");
    ///     let mut file = tokio::fs::File::create(&path).await.unwrap();
    ///     let written = async {
    ///         file.write_all(&[0; 8192]).await?;
    ///         file.sync_all().await
    ///     };
    ///     let err = written.await.unwrap_err();
    ///     assert_eq!(err.kind(), std::io::ErrorKind::StorageFull);
    /// });
    /// sim.run();
    /// ```
    pub fn disk(&mut self, host: &str, config: DiskConfig) -> &mut Self {
        config.validate();
        self.world.disks.push((host.to_string(), config));
        self
    }

    /// Runs `host`'s tasks on `count` simulated workers, as a process
    /// running a `multi_thread` runtime does (see the README's "What is
    /// simulated"): the seed picks which worker polls next and a worker may
    /// stall, so a task can be starved at any await point. Without it a
    /// host's tasks are picked as on one thread.
    ///
    /// # Panics
    /// For 0 workers, or more than `sim_runtime::scheduler::WORKERS_MAX`.
    ///
    /// # Examples
    ///
    /// ```
    /// use tokio::sim::Sim;
    ///
    /// let mut sim = Sim::new();
    /// sim.workers("api", 4);
    /// sim.client("api", async {
    ///     let tasks: Vec<_> = (0..8u64).map(|n| tokio::spawn(async move { n * n })).collect();
    ///     let mut sum = 0;
    ///     for task in tasks {
    ///         sum += task.await.unwrap();
    ///     }
    ///     assert_eq!(sum, 140);
    /// });
    /// sim.run();
    /// ```
    pub fn workers(&mut self, host: &str, count: u16) -> &mut Self {
        assert!(
            (1..=sim_runtime::scheduler::WORKERS_MAX).contains(&count),
            "sim: Sim::workers({host:?}, {count}): a host has 1 to {} workers",
            sim_runtime::scheduler::WORKERS_MAX
        );
        self.world.host_workers.push((host.to_string(), count));
        self
    }

    /// Applies `fault` at virtual time `at` from the start.
    ///
    /// # Examples
    ///
    /// A partition from the start, healed at 5 s: the client's connection gets
    /// through only after the heal.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tokio::net::{TcpListener, TcpStream};
    /// use tokio::sim::{Fault, Sim};
    ///
    /// let mut sim = Sim::new();
    /// sim.host("server", || async {
    ///     let listener = TcpListener::bind("0.0.0.0:7").await.unwrap();
    ///     loop {
    ///         drop(listener.accept().await.unwrap());
    ///     }
    /// });
    /// sim.at(Duration::ZERO, Fault::partition("client", "server"));
    /// sim.at(Duration::from_secs(5), Fault::heal("client", "server"));
    /// sim.client("client", async {
    ///     TcpStream::connect("server:7").await.unwrap();
    ///     assert!(tokio::sim::now() >= Duration::from_secs(5));
    /// });
    /// sim.run();
    /// ```
    pub fn at(&mut self, at: Duration, fault: Fault) -> &mut Self {
        self.world.faults.push((at, fault));
        self
    }

    /// Runs until every client finishes.
    ///
    /// # Panics
    /// When a client panics (with its panic), on a deadlock, or at the
    /// run's time or step limit.
    ///
    /// # Examples
    ///
    /// The same seed gives the same run, event for event: the traces' hashes
    /// are equal.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tokio::sim::{Sim, SimReport};
    ///
    /// fn one_run() -> SimReport {
    ///     let mut sim = Sim::new();
    ///     sim.client("client", async {
    ///         let jitter = tokio::sim::rng("jitter").range(0..100);
    ///         tokio::time::sleep(Duration::from_millis(jitter)).await;
    ///     });
    ///     sim.run()
    /// }
    ///
    /// std::env::set_var("SIM_SEED", "0x2a");
    /// let first = one_run();
    /// let second = one_run();
    /// assert_eq!(first.seed, 0x2a);
    /// assert_eq!(first.trace_hash, second.trace_hash);
    /// ```
    pub fn run(mut self) -> SimReport {
        // std::fs under the temporary directory goes to the simulated disk.
        sim_os::install();
        sim_fs::install();
        let measuring = self.pace_swarm();
        let plan = self
            .swarm
            .as_ref()
            .map(|swarm| swarm.plan(self.config.seed));
        if let Some(plan) = &plan {
            if self.config.poll_cost_max_ns == 0 {
                self.config.poll_cost_max_ns = plan.poll_cost_max_us * 1_000;
            }
        }
        let core = sim_runtime::launch(
            self.config,
            RuntimeOptions {
                start_paused: true,
                ..RuntimeOptions::current_thread()
            },
        );
        let id = core.id();
        let Sim {
            mut world, swarm, ..
        } = self;
        if let (Some(swarm), Some(plan)) = (&swarm, plan) {
            world.take_plan(swarm, plan);
        }
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            core.block_on(world.drive())
        }));
        let histories = core
            .extension(crate::history::Recorder::default)
            .histories
            .take();
        Core::close(id);
        drop(core);
        if let (Some(path), Some(run)) = (&measuring, sim_runtime::last_run()) {
            crate::horizon::record(path, Duration::from_nanos(run.end_ns));
        }
        if let Err(payload) = result {
            std::panic::resume_unwind(payload);
        }
        let summary = sim_runtime::last_run().expect("the run reported");
        SimReport {
            seed: summary.seed,
            trace_hash: summary.trace_hash,
            events: summary.events,
            end: Duration::from_nanos(summary.end_ns),
            histories,
        }
    }

    /// A swarm paced by the test's measured length: in the measuring
    /// child this run goes without it (the file to record its length in is
    /// returned); otherwise it takes the length.
    fn pace_swarm(&mut self) -> Option<std::path::PathBuf> {
        let swarm = self.swarm.take()?;
        if !swarm.paces_by_measure() {
            self.swarm = Some(swarm);
            return None;
        }
        if let Some(path) = crate::horizon::measuring() {
            return Some(path);
        }
        self.swarm = Some(swarm.measured_horizon(crate::horizon::next()));
        None
    }
}

/// What a test gives a [`Sim`] and its run drives.
struct World {
    hosts: Vec<(String, Factory, &'static Location<'static>)>,
    clients: Vec<(String, BoxFuture, &'static Location<'static>)>,
    faults: Vec<(Duration, Fault)>,
    links: Vec<(String, String, LinkConfig)>,
    default_link: Option<LinkConfig>,
    disks: Vec<(String, DiskConfig)>,
    checkers: Vec<(String, CheckFn)>,
    history_checks: Vec<Rc<dyn crate::history::HistoryCheck>>,
    properties: Vec<Property>,
    liveness_core: Option<Vec<String>>,
    nemesis: Nemesis,
    /// Hosts given simulated workers (`Sim::workers`).
    host_workers: Vec<(String, u16)>,
    /// The swarm's plan in words: printed, and a note at the trace's head.
    plan_note: Option<String>,
}

impl World {
    fn new() -> World {
        World {
            hosts: Vec::new(),
            clients: Vec::new(),
            faults: Vec::new(),
            links: Vec::new(),
            default_link: None,
            disks: Vec::new(),
            checkers: Vec::new(),
            history_checks: Vec::new(),
            properties: Vec::new(),
            liveness_core: None,
            nemesis: Nemesis::new(),
            host_workers: Vec::new(),
            plan_note: None,
        }
    }

    /// The swarm's plan, drawn from the seed: a default link, the swarm's
    /// hosts' disks and workers (where the test set none), its nemesis.
    fn take_plan(&mut self, swarm: &Swarm, plan: crate::swarm::Plan) {
        let line = plan.describe();
        eprintln!("sim: {line}");
        self.plan_note = Some(line);
        self.default_link.get_or_insert_with(|| plan.link());
        for host in swarm.hosts() {
            if !self.disks.iter().any(|(name, _)| name == host) {
                self.disks.push((host.to_string(), plan.disk()));
            }
        }
        self.nemesis.extend(swarm.nemesis(&plan));
        if let Some(count) = plan.workers {
            for host in swarm.hosts() {
                if !self.host_workers.iter().any(|(name, _)| name == host) {
                    self.host_workers.push((host.to_string(), count));
                }
            }
        }
    }

    /// The run's root future: the world built, hosts booted, clients run
    /// to their end, then the liveness phase and the checkers.
    async fn drive(self) {
        let World {
            hosts,
            clients,
            faults,
            links,
            default_link,
            disks,
            checkers,
            history_checks,
            properties,
            liveness_core,
            nemesis,
            host_workers,
            plan_note,
        } = self;
        let host_names: Vec<String> = hosts.iter().map(|(name, _, _)| name.clone()).collect();
        let client_ids = with_net(|net| {
            set_default_link(net, plan_note.as_deref(), default_link);
            for (name, factory, location) in hosts {
                let id = net.add_host(&name);
                crate::host::register(id, factory, location);
            }
            let client_ids: Vec<HostId> = clients
                .iter()
                .map(|(name, _, _)| net.add_host(name))
                .collect();
            configure_hosts(net, &host_workers, links, disks);
            for index in 1..net_host_count(net) {
                crate::host::start(HostId(index));
            }
            schedule_faults(net, faults);
            client_ids
        });
        crate::checker::install(checkers);
        crate::history::install(history_checks);
        crate::nemesis::start(nemesis);
        boot().await;
        let client_tasks = spawn_clients(clients, client_ids);
        join_clients(client_tasks).await;
        if !properties.is_empty() {
            let core_hosts: Vec<HostId> = with_net(|net| {
                liveness_core
                    .unwrap_or(host_names)
                    .iter()
                    .map(|name| host(net, name))
                    .collect()
            });
            crate::liveness::phase(core_hosts, properties).await;
        }
        crate::checker::check_now();
        crate::history::check_at_end();
    }
}

/// The swarm plan's note, and the default link (every link at 0 ms for a
/// shrunk run that asks for fast links).
fn set_default_link(net: &Network, plan_note: Option<&str>, default_link: Option<LinkConfig>) {
    if let Some(note) = plan_note {
        net.note(note);
    }
    if let Some(config) = default_link {
        net.set_default_link(config);
    }
    if crate::shrink::fast_links() {
        net.note("shrink: every link's latency is 0");
        net.set_default_link(LinkConfig {
            latency_min: Duration::ZERO,
            latency_max: Duration::ZERO,
            ..LinkConfig::default()
        });
    }
}

/// Workers (before any of their tasks starts), links and disks.
fn configure_hosts(
    net: &Network,
    host_workers: &[(String, u16)],
    links: Vec<(String, String, LinkConfig)>,
    disks: Vec<(String, DiskConfig)>,
) {
    for (name, count) in host_workers {
        let id = host(net, name);
        sim_runtime::context::with_current(|core| core.add_host_workers(id.0, *count));
    }
    for (from, to, mut config) in links {
        if crate::shrink::fast_links() {
            config.latency_min = Duration::ZERO;
            config.latency_max = Duration::ZERO;
        }
        net.set_link(host(net, &from), host(net, &to), config);
    }
    for (name, config) in disks {
        sim_fs::set_disk_config(host(net, &name).0, config);
    }
}

/// Each `Sim::at` fault at its time, as a shrinker unit (left out, or
/// moved later, when a shrink asks).
fn schedule_faults(net: &Network, faults: Vec<(Duration, Fault)>) {
    for (at, fault) in faults {
        net.after(
            at,
            "fault",
            Box::new(move || {
                if let Some(unit) = crate::shrink::begin_unit() {
                    let delay = crate::shrink::delay_of(unit);
                    crate::shrink::after(delay, "fault", move || {
                        crate::shrink::applied(unit, &fault);
                        fault.apply();
                    });
                }
            }),
        );
    }
}

/// Hosts boot before clients start: runs until every host task has gone
/// idle at this instant (its listeners bound), as a cluster is up before
/// the first request. Bounded.
async fn boot() {
    for _ in 0..BOOT_YIELDS_MAX {
        let busy =
            sim_runtime::context::with_current(|core| core.ready_count() > 0).unwrap_or(false);
        if !busy {
            break;
        }
        yield_once().await;
    }
}

/// Each client as a task on its host.
fn spawn_clients(
    clients: Vec<(String, BoxFuture, &'static Location<'static>)>,
    client_ids: Vec<HostId>,
) -> Vec<sim_runtime::RawTask> {
    let mut client_tasks = Vec::new();
    with_net(|_| {
        sim_runtime::context::with_current(|core| {
            for ((name, future, location), host) in clients.into_iter().zip(client_ids) {
                let meta = TaskMeta {
                    name: Some(name.into_boxed_str()),
                    location,
                    kind: "client",
                };
                client_tasks.push(core.spawn_on_node(future, meta, host.0));
            }
        });
    });
    client_tasks
}

/// Waits for every client; a client's panic fails the run.
async fn join_clients(client_tasks: Vec<sim_runtime::RawTask>) {
    for raw in client_tasks {
        let mut output: Output<()> = None;
        std::future::poll_fn(|cx| {
            let dst = &mut output as *mut Output<()> as *mut ();
            sim_runtime::context::with_current(|core| {
                // SAFETY: the client futures all return `()`.
                unsafe { core.poll_join(raw, cx, dst) }
            })
            .unwrap_or(Poll::Ready(()))
        })
        .await;
        if let Some(Err(sim_runtime::Failure::Panic(payload))) = output {
            std::panic::resume_unwind(payload);
        }
    }
}

fn net_host_count(net: &Network) -> u32 {
    net.host_count()
}
