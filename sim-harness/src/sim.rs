//! The harness: a simulation of named hosts and client tasks, with faults
//! at virtual times.
//!
//! ```no_run
//! use sim_harness::{Fault, Sim};
//! use std::time::Duration;
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
//! });
//! sim.at(Duration::from_secs(5), Fault::Crash("server".into()));
//! let report = sim.run();
//! println!("{}", report.trace_hash);
//! ```

use crate::checker::CheckFn;
use crate::liveness::Property;
use crate::nemesis::Nemesis;
use crate::observe::Observations;
use crate::swarm::Swarm;
use sim_fs::DiskConfig;
use sim_net::{with_net, ConnectPolicy, HostId, LinkConfig, Network};
use sim_runtime::{Core, Flavor, Output, RuntimeOptions, SimConfig, TaskMeta};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;
use std::panic::Location;
use std::pin::Pin;
use std::rc::Rc;
use std::task::Poll;
use std::time::Duration;

pub(crate) type BoxFuture = Pin<Box<dyn Future<Output = ()>>>;
pub(crate) type Factory = Rc<dyn Fn() -> BoxFuture>;

/// A fault, scheduled with [`Sim::at`] or applied at once with
/// [`Fault::apply`]. Hosts are named.
#[derive(Clone, Debug, PartialEq)]
pub enum Fault {
    /// Cut both directions between two hosts.
    Partition(String, String),
    /// Cut one direction.
    PartitionOneWay(String, String),
    /// Restore both directions.
    Heal(String, String),
    /// Restore one direction.
    HealOneWay(String, String),
    /// Hold one direction: bytes wait, then resume intact.
    Hold(String, String),
    /// Release a held direction.
    Release(String, String),
    /// Crash a host: its tasks and sockets vanish.
    Crash(String),
    /// Restart a crashed host: its factory runs again.
    Restart(String),
    /// Refuse every connection to a host.
    Refuse(String),
    /// Drop every connection attempt to a host silently.
    BlackHole(String),
    /// Answer connections normally again.
    Accept(String),
    /// Deliver a signal (by number: 15 is SIGTERM, 2 SIGINT) to a host.
    /// Without a handler, a terminating signal crashes the host.
    Signal(String, i32),
    /// Replace a host's disk configuration (its faults, latency and
    /// capacity) from now on.
    Disk(String, DiskConfig),
    /// Cut a host off from every other host, both directions.
    Isolate(String),
    /// Split the hosts into two sides: every link between a host of one
    /// side and a host of the other is cut, both directions.
    Split(Vec<String>, Vec<String>),
    /// Heal every cut and release every held link between any two hosts,
    /// and lift every scripted control (byte budgets, reset rules, silent
    /// ports, read throttles, DNS delays; routes stay).
    HealAll,
    /// Pause a host's TCP listener on a port: connects complete into its
    /// backlog, but `accept` waits (a server too busy to accept).
    PauseListener(String, u16),
    /// Resume a paused listener: `accept` takes what waited.
    ResumeListener(String, u16),
    /// Make the resolution of a host name fail (every resolver: `tokio`'s,
    /// std's, libc's `getaddrinfo`).
    DnsFail(String),
    /// Make a failing name resolve again.
    DnsRestore(String),
    /// Skew a host's clocks: its `Instant` and `SystemTime` read this far
    /// ahead of true time from now on (hosts booted at other times).
    /// Sleeps and timeouts last the same; the trace stays on true time.
    ClockSkew(String, Duration),
    /// Jump a host's wall clock (`SystemTime`) by this many milliseconds,
    /// forward or back, as NTP may; its `Instant` does not move.
    WallClockJump(String, i64),
    /// Make a host's clocks (`Instant` and `SystemTime`) run this many
    /// parts per million fast (or slow, below zero) from now on; what they
    /// read now does not jump. Its timers run on its own clock, as a real
    /// machine's do: at +1,000 ppm a 10 s sleep lasts 9.99 s of true time,
    /// so leases and timeouts feel the drift. The trace stays on true time.
    /// At most ±100,000 ppm.
    ClockDrift(String, i64),
    /// Let this many more bytes of TCP data through `from -> to`, then
    /// hold that direction (as [`Fault::Hold`]) until a release: "the
    /// request was processed, the response is lost".
    HoldAfterBytes(String, String, u64),
    /// Reset, now, every open connection in the set: both ends see
    /// `ConnectionReset` (a middlebox's RST).
    Reset(crate::control::Conns),
    /// From now on, reset a connection of the set when it sends (with
    /// [`crate::control::Conns::containing`]: when it sends those bytes)
    /// instead of delivering; until [`Fault::HealAll`].
    ResetWhen(crate::control::Conns),
    /// Connections to a host's port complete, but nobody ever reads or
    /// answers (a hung process): clients see only their own timeouts.
    SilencePort(String, u16),
    /// A silent port answers again (new connections only).
    UnsilencePort(String, u16),
    /// A host's TCP reads get at most this many bytes per second (a slow
    /// consumer); what it does not read pushes back on its peers' writers.
    ThrottleReader(String, u64),
    /// Lift a host's read throttle.
    UnthrottleReader(String),
    /// A name's resolution takes this long (zero: at once again), for
    /// tokio's resolvers (`lookup_host`, connects and sends by name).
    DnsDelay(String, Duration),
    /// Route a name over hosts: each resolution answers with the next one
    /// in turn, so each connection goes to one. Set again to change it; an
    /// empty list removes it.
    Route(String, Vec<String>),
    /// Replace the hosts behind a route one at a time by a new version
    /// (see [`crate::rollout`]).
    Rollout(crate::rollout::Rollout),
}

fn owned(hosts: &[&str]) -> Vec<String> {
    hosts.iter().map(|h| h.to_string()).collect()
}

/// Constructors that take host names as `&str`.
impl Fault {
    /// [`Fault::Partition`] of `a` and `b`.
    pub fn partition(a: &str, b: &str) -> Fault {
        Fault::Partition(a.into(), b.into())
    }

    /// [`Fault::Heal`] of `a` and `b`.
    pub fn heal(a: &str, b: &str) -> Fault {
        Fault::Heal(a.into(), b.into())
    }

    /// [`Fault::Crash`] of `host`.
    pub fn crash(host: &str) -> Fault {
        Fault::Crash(host.into())
    }

    /// [`Fault::Restart`] of `host`.
    pub fn restart(host: &str) -> Fault {
        Fault::Restart(host.into())
    }

    /// [`Fault::Isolate`] of `host`.
    pub fn isolate(host: &str) -> Fault {
        Fault::Isolate(host.into())
    }

    /// [`Fault::PauseListener`] of `host`'s listener on `port`.
    pub fn pause_listener(host: &str, port: u16) -> Fault {
        Fault::PauseListener(host.into(), port)
    }

    /// [`Fault::ResumeListener`] of `host`'s listener on `port`.
    pub fn resume_listener(host: &str, port: u16) -> Fault {
        Fault::ResumeListener(host.into(), port)
    }

    /// [`Fault::Split`] into `side_a` and `side_b`.
    pub fn split(side_a: &[&str], side_b: &[&str]) -> Fault {
        Fault::Split(owned(side_a), owned(side_b))
    }

    /// [`Fault::HoldAfterBytes`] of `from -> to` after `bytes`.
    pub fn hold_after_bytes(from: &str, to: &str, bytes: u64) -> Fault {
        Fault::HoldAfterBytes(from.into(), to.into(), bytes)
    }

    /// [`Fault::Release`] of `from -> to`.
    pub fn release(from: &str, to: &str) -> Fault {
        Fault::Release(from.into(), to.into())
    }

    /// [`Fault::SilencePort`] of `host`'s `port`.
    pub fn silence_port(host: &str, port: u16) -> Fault {
        Fault::SilencePort(host.into(), port)
    }

    /// [`Fault::ThrottleReader`] of `host` to `bytes_per_s`.
    pub fn throttle_reader(host: &str, bytes_per_s: u64) -> Fault {
        Fault::ThrottleReader(host.into(), bytes_per_s)
    }

    /// [`Fault::DnsDelay`] of `name`.
    pub fn dns_delay(name: &str, delay: Duration) -> Fault {
        Fault::DnsDelay(name.into(), delay)
    }

    /// [`Fault::Route`] of `name` over `hosts`.
    pub fn route(name: &str, hosts: &[&str]) -> Fault {
        Fault::Route(name.into(), owned(hosts))
    }
}

impl Fault {
    /// The fault as Rust code (`Fault::Crash("db".into())`), for a scenario
    /// test a shrunk run prints.
    pub fn to_code(&self) -> String {
        let q = |s: &String| format!("{s:?}.into()");
        let list = |v: &[String]| {
            format!(
                "vec![{}]",
                v.iter()
                    .map(|s| format!("{s:?}.into()"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        match self {
            Fault::Partition(a, b) => format!("Fault::Partition({}, {})", q(a), q(b)),
            Fault::PartitionOneWay(a, b) => format!("Fault::PartitionOneWay({}, {})", q(a), q(b)),
            Fault::Heal(a, b) => format!("Fault::Heal({}, {})", q(a), q(b)),
            Fault::HealOneWay(a, b) => format!("Fault::HealOneWay({}, {})", q(a), q(b)),
            Fault::Hold(a, b) => format!("Fault::Hold({}, {})", q(a), q(b)),
            Fault::Release(a, b) => format!("Fault::Release({}, {})", q(a), q(b)),
            Fault::Crash(h) => format!("Fault::Crash({})", q(h)),
            Fault::Restart(h) => format!("Fault::Restart({})", q(h)),
            Fault::Isolate(h) => format!("Fault::Isolate({})", q(h)),
            Fault::Signal(h, n) => format!("Fault::Signal({}, {n})", q(h)),
            Fault::Split(a, b) => format!("Fault::Split({}, {})", list(a), list(b)),
            Fault::ClockSkew(h, d) => {
                format!(
                    "Fault::ClockSkew({}, Duration::from_nanos({}))",
                    q(h),
                    d.as_nanos()
                )
            }
            Fault::WallClockJump(h, ms) => format!("Fault::WallClockJump({}, {ms})", q(h)),
            Fault::ClockDrift(h, ppm) => format!("Fault::ClockDrift({}, {ppm})", q(h)),
            // The rest as Debug writes them (strings may need `.into()`).
            other => format!("Fault::{other:?}"),
        }
    }
}

/// Factories of the hosts, so restarts can run them again.
#[derive(Default)]
struct Factories(RefCell<BTreeMap<u32, (Factory, &'static Location<'static>)>>);

#[track_caller]
fn host(net: &Network, name: &str) -> HostId {
    net.host_id(name).unwrap_or_else(|| {
        panic!("sim-net: no host named {name:?} in this simulation; register it with Sim::host")
    })
}

impl Fault {
    /// Applies the fault now, in the current simulation.
    ///
    /// # Panics
    /// Outside a simulation, or for an unknown host name.
    #[track_caller]
    pub fn apply(&self) {
        with_net(|net| match self {
            Fault::Partition(a, b) => net.partition(host(net, a), host(net, b)),
            Fault::PartitionOneWay(a, b) => net.partition_one_way(host(net, a), host(net, b)),
            Fault::Heal(a, b) => net.heal(host(net, a), host(net, b)),
            Fault::HealOneWay(a, b) => net.heal_one_way(host(net, a), host(net, b)),
            Fault::Hold(a, b) => net.hold(host(net, a), host(net, b)),
            Fault::Release(a, b) => net.release(host(net, a), host(net, b)),
            Fault::Crash(h) => net.crash(host(net, h)),
            Fault::Restart(h) => restart(net, host(net, h)),
            Fault::Refuse(h) => net.set_connect_policy(host(net, h), ConnectPolicy::Refuse),
            Fault::BlackHole(h) => net.set_connect_policy(host(net, h), ConnectPolicy::BlackHole),
            Fault::Accept(h) => net.set_connect_policy(host(net, h), ConnectPolicy::Normal),
            Fault::Signal(h, signum) => net.signal(host(net, h), *signum),
            Fault::Disk(h, config) => {
                net.note(&format!("disk config {h}: {config:?}"));
                sim_fs::set_disk_config(host(net, h).0, config.clone());
            }
            Fault::Isolate(h) => {
                let cut = host(net, h);
                for other in (1..net.host_count()).map(HostId).filter(|&o| o != cut) {
                    net.partition(cut, other);
                }
            }
            Fault::Split(a, b) => {
                for x in a {
                    for y in b {
                        net.partition(host(net, x), host(net, y));
                    }
                }
            }
            Fault::HealAll => {
                net.heal_all(|_| true);
                net.clear_controls();
            }
            Fault::HoldAfterBytes(a, b, bytes) => {
                net.hold_after_bytes(host(net, a), host(net, b), *bytes)
            }
            Fault::Reset(conns) => {
                assert!(
                    !conns.has_bytes(),
                    "sim: Fault::Reset({conns:?}) acts now, on no bytes; a reset by content is \
                     Fault::ResetWhen"
                );
                net.reset_now(&format!("{conns:?}"), &conns.predicate(net));
            }
            Fault::ResetWhen(conns) => net.reset_when(&format!("{conns:?}"), conns.predicate(net)),
            Fault::SilencePort(h, port) => net.set_silent(host(net, h), *port, true),
            Fault::UnsilencePort(h, port) => net.set_silent(host(net, h), *port, false),
            Fault::ThrottleReader(h, rate) => net.set_read_rate(host(net, h), Some(*rate)),
            Fault::UnthrottleReader(h) => net.set_read_rate(host(net, h), None),
            Fault::DnsDelay(name, delay) => net.set_dns_delay(name, *delay),
            Fault::Route(name, hosts) => {
                let ids: Vec<HostId> = hosts.iter().map(|h| host(net, h)).collect();
                net.set_route(name, &ids);
            }
            Fault::Rollout(rollout) => crate::rollout::start(rollout),
            Fault::ClockSkew(h, offset) => {
                let id = host(net, h).0;
                net.note(&format!("clock {h} skew {offset:?}"));
                sim_runtime::context::with_current(|core| {
                    let mut clock = core.node_clock(id);
                    clock.monotonic_offset_ns = offset.as_nanos().min(u64::MAX as u128) as u64;
                    core.set_node_clock(id, clock);
                });
            }
            Fault::WallClockJump(h, delta_ms) => {
                let id = host(net, h).0;
                net.note(&format!("clock {h} wall jump {delta_ms}ms"));
                sim_runtime::context::with_current(|core| {
                    let mut clock = core.node_clock(id);
                    clock.wall_offset_ns = clock
                        .wall_offset_ns
                        .saturating_add(delta_ms.saturating_mul(1_000_000));
                    core.set_node_clock(id, clock);
                });
            }
            Fault::ClockDrift(h, ppm) => {
                assert!(
                    ppm.abs() <= sim_runtime::executor::DRIFT_PPM_MAX,
                    "sim: Fault::ClockDrift({h:?}, {ppm}): a drift is at most ±{} ppm",
                    sim_runtime::executor::DRIFT_PPM_MAX
                );
                let id = host(net, h).0;
                net.note(&format!("clock {h} drift {ppm}ppm"));
                sim_runtime::context::with_current(|core| {
                    let clock = core.node_clock(id);
                    let now = core.now_ns();
                    // Fold the drift so far into the offset: the clock goes
                    // on from what it reads now, at its new rate.
                    let local = clock.local_ns(now);
                    core.set_node_clock(
                        id,
                        sim_runtime::NodeClock {
                            monotonic_offset_ns: local.saturating_sub(now),
                            drift_ppm: *ppm,
                            drift_since_ns: now,
                            ..clock
                        },
                    );
                });
            }
            Fault::DnsFail(name) => net.set_name_failing(name, true),
            Fault::DnsRestore(name) => net.set_name_failing(name, false),
            Fault::PauseListener(h, port) | Fault::ResumeListener(h, port) => {
                let paused = matches!(self, Fault::PauseListener(..));
                if !net.tcp_pause_listener(host(net, h), *port, paused) {
                    panic!("sim: {self:?}: host {h:?} has no TCP listener on port {port}");
                }
            }
        })
    }
}

fn factories() -> Rc<Factories> {
    sim_runtime::context::with_current(|core| core.extension(Factories::default))
        .expect("inside a simulation")
}

fn start_host(host: HostId) {
    let entry = factories().0.borrow().get(&host.0).cloned();
    let Some((factory, location)) = entry else {
        return;
    };
    let name = with_net(|net| net.host_name(host));
    let main = HostMain {
        name: name.clone(),
        future: factory(),
    };
    sim_runtime::context::with_current(|core| {
        let meta = TaskMeta {
            name: Some(name.into_boxed_str()),
            location,
            kind: "host",
        };
        core.spawn_on_node(Box::pin(main), meta, host.0);
    });
}

/// A host's main task, as a process's `main`: when it returns, the host
/// exits (its connections close, its other tasks go, it stays down until a
/// restart); when it panics, the run fails (a panic in a task it spawned
/// stays in that task, as in tokio).
struct HostMain {
    name: String,
    future: BoxFuture,
}

impl Future for HostMain {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<()> {
        let this = &mut *self;
        let polled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            this.future.as_mut().poll(cx)
        }));
        match polled {
            Ok(Poll::Ready(())) => {
                // Right after this poll: the exit drops the host's tasks.
                let name = this.name.clone();
                with_net(|net| {
                    net.after(
                        Duration::ZERO,
                        "host-exit",
                        Box::new(move || {
                            with_net(|net| {
                                if let Some(id) = net.host_id(&name) {
                                    net.exit(id);
                                }
                            })
                        }),
                    )
                });
                Poll::Ready(())
            }
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => {
                let text = sim_runtime::sweep::payload_text(&*payload);
                sim_runtime::context::with_current(|core| {
                    core.fail_run(
                        sim_runtime::sweep::FailureClass::Panic,
                        format!(
                            "sim: host {:?}'s main task panicked at virtual time {:?} (seed \
                             {:#x}): {text}",
                            this.name,
                            Duration::from_nanos(core.now_ns()),
                            core.config().seed
                        ),
                    )
                });
                Poll::Ready(())
            }
        }
    }
}

/// Replaces `host`'s factory: its next start runs `factory` (a new
/// version, in a rollout).
pub(crate) fn set_factory(host: HostId, factory: Factory) {
    if let Some(entry) = factories().0.borrow_mut().get_mut(&host.0) {
        entry.0 = factory;
    }
}

pub(crate) fn restart(net: &Rc<Network>, host: HostId) {
    if net.is_alive(host) {
        // A restart of a running host is a crash and a start.
        net.crash(host);
    }
    net.revive(host);
    start_host(host);
}

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
}

/// A simulation of named hosts and clients. See the module docs.
pub struct Sim {
    config: SimConfig,
    hosts: Vec<(String, Factory, &'static Location<'static>)>,
    clients: Vec<(String, BoxFuture, &'static Location<'static>)>,
    faults: Vec<(Duration, Fault)>,
    links: Vec<(String, String, LinkConfig)>,
    default_link: Option<LinkConfig>,
    disks: Vec<(String, DiskConfig)>,
    checkers: Vec<(String, CheckFn)>,
    properties: Vec<Property>,
    liveness_core: Option<Vec<String>>,
    nemesis: Nemesis,
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
            hosts: Vec::new(),
            clients: Vec::new(),
            faults: Vec::new(),
            links: Vec::new(),
            default_link: None,
            disks: Vec::new(),
            checkers: Vec::new(),
            properties: Vec::new(),
            liveness_core: None,
            nemesis: Nemesis::new(),
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
    pub fn check<F>(&mut self, name: &str, check: F) -> &mut Self
    where
        F: Fn(&Observations<'_>) -> Result<(), String> + 'static,
    {
        self.checkers.push((name.to_string(), Rc::new(check)));
        self
    }

    /// Adds a liveness property: after the workload (every client done),
    /// the liveness phase stops the faults, heals the core's network and
    /// restarts its crashed hosts; then `holds` must become true within
    /// `bound` of virtual time, or the run fails with class `liveness`.
    pub fn eventually<F>(&mut self, name: &str, bound: Duration, holds: F) -> &mut Self
    where
        F: Fn(&Observations<'_>) -> bool + 'static,
    {
        self.properties.push(Property {
            name: name.to_string(),
            bound,
            holds: Rc::new(holds),
        });
        self
    }

    /// The hosts the liveness phase heals and restarts (default: every
    /// host registered with [`Sim::host`]).
    pub fn liveness_core(&mut self, hosts: &[&str]) -> &mut Self {
        self.liveness_core = Some(hosts.iter().map(|h| h.to_string()).collect());
        self
    }

    /// Adds the nemesis's generators to the run.
    pub fn nemesis(&mut self, nemesis: Nemesis) -> &mut Self {
        let mut all = std::mem::take(&mut self.nemesis);
        all.extend(nemesis);
        self.nemesis = all;
        self
    }

    /// Adds a host whose tasks `factory` starts; it runs again on restart.
    #[track_caller]
    pub fn host<F, Fut>(&mut self, name: &str, factory: F) -> &mut Self
    where
        F: Fn() -> Fut + 'static,
        Fut: Future<Output = ()> + 'static,
    {
        let factory: Factory = Rc::new(move || Box::pin(factory()) as BoxFuture);
        self.hosts
            .push((name.to_string(), factory, Location::caller()));
        self
    }

    /// Adds a client: a host running `future`. The run ends when every
    /// client has finished.
    #[track_caller]
    pub fn client<Fut>(&mut self, name: &str, future: Fut) -> &mut Self
    where
        Fut: Future<Output = ()> + 'static,
    {
        self.clients
            .push((name.to_string(), Box::pin(future), Location::caller()));
        self
    }

    /// Configures the directed link `from -> to`.
    pub fn link(&mut self, from: &str, to: &str, config: LinkConfig) -> &mut Self {
        config.validate();
        self.links.push((from.to_string(), to.to_string(), config));
        self
    }

    /// Configures every link not configured with [`Sim::link`].
    pub fn default_link(&mut self, config: LinkConfig) -> &mut Self {
        config.validate();
        self.default_link = Some(config);
        self
    }

    /// Configures `host`'s disk (capacity, latency, faults) for the run.
    ///
    /// # Panics
    /// On a configuration that does not validate.
    pub fn disk(&mut self, host: &str, config: DiskConfig) -> &mut Self {
        config.validate();
        self.disks.push((host.to_string(), config));
        self
    }

    /// Applies `fault` at virtual time `at` from the start.
    pub fn at(&mut self, at: Duration, fault: Fault) -> &mut Self {
        self.faults.push((at, fault));
        self
    }

    /// Runs until every client finishes.
    ///
    /// # Panics
    /// When a client panics (with its panic), on a deadlock, or at the
    /// run's time or step limit.
    pub fn run(mut self) -> SimReport {
        // std::fs under the temporary directory goes to the simulated disk.
        sim_fs::install();
        let plan = self
            .swarm
            .as_ref()
            .map(|swarm| swarm.plan(self.config.seed));
        if let Some(plan) = &plan {
            if self.config.poll_cost_max_ns == 0 {
                self.config.poll_cost_max_ns = plan.poll_cost_max_us * 1_000;
            }
        }
        let core = Core::new(
            self.config,
            RuntimeOptions {
                flavor: Flavor::CurrentThread,
                start_paused: true,
                local: false,
                enable_time: true,
                enable_io: true,
            },
        );
        let id = core.id();
        let Sim {
            hosts,
            clients,
            faults,
            links,
            mut default_link,
            mut disks,
            checkers,
            properties,
            liveness_core,
            mut nemesis,
            swarm,
            ..
        } = self;
        // The swarm's plan: drawn from the seed, printed, and (below) a note
        // at the head of the trace.
        let mut plan_note = None;
        if let (Some(swarm), Some(plan)) = (&swarm, plan) {
            let line = plan.describe();
            eprintln!("sim: {line}");
            plan_note = Some(line);
            default_link.get_or_insert_with(|| plan.link());
            for host in swarm.hosts() {
                if !disks.iter().any(|(name, _)| name == host) {
                    disks.push((host.to_string(), plan.disk()));
                }
            }
            nemesis.extend(plan.nemesis(&swarm.hosts()));
        }
        let host_names: Vec<String> = hosts.iter().map(|(name, _, _)| name.clone()).collect();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            core.block_on(async move {
                let mut client_tasks = Vec::new();
                let client_ids = with_net(|net| {
                    if let Some(note) = &plan_note {
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
                    for (name, factory, location) in hosts {
                        let id = net.add_host(&name);
                        factories().0.borrow_mut().insert(id.0, (factory, location));
                    }
                    let client_ids: Vec<HostId> = clients
                        .iter()
                        .map(|(name, _, _)| net.add_host(name))
                        .collect();
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
                    for index in 1..net_host_count(net) {
                        start_host(HostId(index));
                    }
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
                    client_ids
                });
                crate::checker::install(checkers);
                crate::nemesis::start(nemesis);
                // Hosts boot before clients start: run until every host
                // task has gone idle at this instant (its listeners bound),
                // as a cluster is up before the first request. Bounded.
                for _ in 0..BOOT_YIELDS_MAX {
                    let busy = sim_runtime::context::with_current(|core| core.ready_count() > 0)
                        .unwrap_or(false);
                    if !busy {
                        break;
                    }
                    yield_once().await;
                }
                with_net(|_| {
                    sim_runtime::context::with_current(|core| {
                        for ((name, future, location), host) in clients.into_iter().zip(client_ids)
                        {
                            let meta = TaskMeta {
                                name: Some(name.into_boxed_str()),
                                location,
                                kind: "client",
                            };
                            client_tasks.push(core.spawn_on_node(future, meta, host.0));
                        }
                    });
                });
                // Wait for every client; a client's panic fails the run.
                for raw in client_tasks {
                    let mut output: Output<()> = None;
                    std::future::poll_fn(|cx| {
                        let dst = &mut output as *mut Output<()> as *mut ();
                        sim_runtime::context::with_current(|core| {
                            // Safety: the client futures all return `()`.
                            unsafe { core.poll_join(raw, cx, dst) }
                        })
                        .unwrap_or(Poll::Ready(()))
                    })
                    .await;
                    if let Some(Err(sim_runtime::Failure::Panic(payload))) = output {
                        std::panic::resume_unwind(payload);
                    }
                }
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
            })
        }));
        Core::close(id);
        drop(core);
        if let Err(payload) = result {
            std::panic::resume_unwind(payload);
        }
        let summary = sim_runtime::last_run().expect("the run reported");
        SimReport {
            seed: summary.seed,
            trace_hash: summary.trace_hash,
            events: summary.events,
            end: Duration::from_nanos(summary.end_ns),
        }
    }
}

fn net_host_count(net: &Network) -> u32 {
    net.host_count()
}
