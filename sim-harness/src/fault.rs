//! Faults: what a test (`Sim::at`), the nemesis and the swarm do to the
//! simulated world, as values that can be scheduled, recorded and shrunk.

use crate::host::{named as host, restart};
use sim_fs::DiskConfig;
use sim_net::{with_net, ConnectPolicy, HostId, Network};
use std::time::Duration;

/// A fault, scheduled with [`Sim::at`](crate::Sim::at) or applied at once with
/// [`Fault::apply`]. Hosts are named.
///
/// # Examples
///
/// Faults scheduled at virtual times, and one a task applies itself.
///
/// ```
/// use std::time::Duration;
/// use tokio::sim::{Fault, Sim};
///
/// let mut sim = Sim::new();
/// sim.host("db", || std::future::pending::<()>());
/// sim.at(Duration::from_secs(1), Fault::crash("db"));
/// sim.at(Duration::from_secs(2), Fault::restart("db"));
/// sim.at(Duration::from_secs(3), Fault::ClockSkew("db".into(), Duration::from_millis(250)));
/// sim.client("client", async {
///     tokio::time::sleep(Duration::from_secs(4)).await;
///     Fault::isolate("db").apply();
/// });
/// sim.run();
/// ```
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
    /// Reset, now, every open connection in the set: both ends read what
    /// had arrived, then their next read or write gets `ConnectionReset`,
    /// once (a middlebox's RST, as Linux reports it).
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

impl Fault {
    /// Applies the fault now, in the current simulation.
    ///
    /// # Panics
    /// Outside a simulation, or for an unknown host name.
    ///
    /// # Examples
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
    /// sim.client("client", async {
    ///     Fault::partition("client", "server").apply();
    ///     let connect = TcpStream::connect("server:7");
    ///     // The SYN is lost until the heal: the connect waits.
    ///     assert!(tokio::time::timeout(Duration::from_secs(1), connect).await.is_err());
    ///     Fault::heal("client", "server").apply();
    ///     TcpStream::connect("server:7").await.unwrap();
    /// });
    /// sim.run();
    /// ```
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
                net.note(&format!("isolate {h}: cut off from every host"));
                let cut = host(net, h);
                for other in (1..net.host_count()).map(HostId).filter(|&o| o != cut) {
                    net.partition(cut, other);
                }
            }
            Fault::Split(a, b) => {
                net.note(&format!("split [{}] | [{}]", a.join(","), b.join(",")));
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
            Fault::ClockSkew(h, offset) => skew_clock(net, h, *offset),
            Fault::WallClockJump(h, delta_ms) => jump_wall_clock(net, h, *delta_ms),
            Fault::ClockDrift(h, ppm) => drift_clock(net, h, *ppm),
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

/// `Fault::ClockSkew`: host `h`'s monotonic clock reads `offset` ahead.
fn skew_clock(net: &Network, h: &str, offset: Duration) {
    let id = host(net, h).0;
    net.note(&format!("clock {h} skew {offset:?}"));
    sim_runtime::context::with_current(|core| {
        let mut clock = core.node_clock(id);
        clock.monotonic_offset_ns = offset.as_nanos().min(u64::MAX as u128) as u64;
        core.set_node_clock(id, clock);
    });
}

/// `Fault::WallClockJump`: host `h`'s wall clock jumps by `delta_ms`.
fn jump_wall_clock(net: &Network, h: &str, delta_ms: i64) {
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

/// `Fault::ClockDrift`: host `h`'s clock runs `ppm` fast (or slow) from now.
#[track_caller]
fn drift_clock(net: &Network, h: &str, ppm: i64) {
    assert!(
        ppm.abs() <= sim_runtime::DRIFT_PPM_MAX,
        "sim: Fault::ClockDrift({h:?}, {ppm}): a drift is at most ±{} ppm",
        sim_runtime::DRIFT_PPM_MAX
    );
    let id = host(net, h).0;
    net.note(&format!("clock {h} drift {ppm}ppm"));
    sim_runtime::context::with_current(|core| {
        let clock = core.node_clock(id);
        let now = core.now_ns();
        // Fold the drift so far into the offset: the clock goes on from
        // what it reads now, at its new rate.
        let local = clock.local_ns(now);
        core.set_node_clock(
            id,
            sim_runtime::NodeClock {
                monotonic_offset_ns: local.saturating_sub(now),
                drift_ppm: ppm,
                drift_since_ns: now,
                ..clock
            },
        );
    });
}
