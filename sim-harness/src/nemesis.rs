//! The nemesis: built-in generators of lifecycle events and faults, at
//! times drawn from the seed tree (each generator has a stream of its own,
//! so adding one shifts no other's times). It is not a host: its events are
//! scheduled callbacks on the one event queue, like every other fault, and
//! it stops when the liveness phase begins.
//!
//! ```
//! use std::cell::Cell;
//! use std::rc::Rc;
//! use std::time::Duration;
//! use tokio::sim::{Nemesis, Sim};
//!
//! let s = Duration::from_secs;
//! let starts = Rc::new(Cell::new(0));
//! let mut sim = Sim::new();
//! for name in ["a", "b", "c"] {
//!     let starts = starts.clone();
//!     sim.host(name, move || {
//!         starts.set(starts.get() + 1);
//!         std::future::pending::<()>()
//!     });
//! }
//! sim.nemesis(
//!     Nemesis::new()
//!         .crash_restart(&["a", "b", "c"], s(5)..s(20), s(1)..s(4))
//!         .isolate(&["a", "b", "c"], s(10)..s(30), s(2)..s(6)),
//! );
//! sim.client("workload", async move {
//!     tokio::time::sleep(Duration::from_secs(120)).await;
//! });
//! sim.run();
//! // Three first starts, and a restart after each crash.
//! assert!(starts.get() > 3);
//! ```

use crate::fault::Fault;
use sim_fs::DiskConfig;
use sim_net::{with_net, HostId};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::ops::Range;
use std::rc::Rc;
use std::time::Duration;

/// One kind of fault, drawn over a group of hosts every so often.
#[derive(Clone, Debug)]
struct Generator {
    hosts: Vec<String>,
    every: Range<Duration>,
    action: Action,
}

/// What a generator does each time.
#[derive(Clone, Debug)]
enum Action {
    /// Crash a host, restart it after a downtime.
    CrashRestart { downtime: Range<Duration> },
    /// SIGTERM a host, crash it after a grace period if it still runs,
    /// restart it after a downtime.
    KillAfterGrace {
        grace: Duration,
        downtime: Range<Duration>,
    },
    /// Cut a host off from every other host, heal after a while.
    Isolate { duration: Range<Duration> },
    /// Split the hosts into two sides (drawn, neither empty), heal after a
    /// while.
    Split { duration: Range<Duration> },
    /// Cut two hosts apart (both directions), heal after a while.
    Partition { duration: Range<Duration> },
    /// Cut one direction between two hosts, heal after a while.
    PartitionOneWay { duration: Range<Duration> },
    /// Hold one direction between two hosts (bytes wait), release after a
    /// while.
    Hold { duration: Range<Duration> },
    /// Skew a host's clocks ahead by up to this much.
    ClockSkew { max: Duration },
    /// Jump a host's wall clock by up to this many ms, either way.
    ClockJump { max_ms: u64 },
    /// Make a host's clocks drift by up to this many ppm, either way.
    ClockDrift { max_ppm: i64 },
    /// Give a host's disk these faults for a while, then its own config.
    DiskFaults {
        config: DiskConfig,
        duration: Range<Duration>,
    },
    /// Fill a host's disk (writes fail with ENOSPC) for a while.
    DiskFull { duration: Range<Duration> },
}

/// The fault generators of a run (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct Nemesis {
    generators: Vec<Generator>,
}

fn names(hosts: &[&str]) -> Vec<String> {
    assert!(
        !hosts.is_empty(),
        "a nemesis generator needs at least one host"
    );
    hosts.iter().map(|h| h.to_string()).collect()
}

fn check_range(what: &str, range: &Range<Duration>) {
    assert!(
        range.start <= range.end && range.end > Duration::ZERO,
        "sim: nemesis: {what} {range:?} is not a range of positive durations"
    );
}

impl Nemesis {
    /// No generators yet.
    pub fn new() -> Nemesis {
        Nemesis::default()
    }

    /// A generator whose faults last `duration`, over at least `hosts_min`
    /// hosts.
    fn timed(
        self,
        hosts: &[&str],
        every: Range<Duration>,
        duration: Range<Duration>,
        hosts_min: usize,
        action: fn(Range<Duration>) -> Action,
    ) -> Nemesis {
        check_range("duration", &duration);
        let action = action(duration);
        assert!(
            hosts.len() >= hosts_min,
            "sim: nemesis: {action:?} needs {hosts_min} hosts or more"
        );
        self.push(hosts, every, action)
    }

    fn push(mut self, hosts: &[&str], every: Range<Duration>, action: Action) -> Nemesis {
        check_range("every", &every);
        self.generators.push(Generator {
            hosts: names(hosts),
            every,
            action,
        });
        self
    }

    /// Every `every` (drawn anew each time), crash one of `hosts` (drawn)
    /// and restart it after `downtime`.
    pub fn crash_restart(
        self,
        hosts: &[&str],
        every: Range<Duration>,
        downtime: Range<Duration>,
    ) -> Nemesis {
        check_range("downtime", &downtime);
        self.push(hosts, every, Action::CrashRestart { downtime })
    }

    /// Every `every`, send SIGTERM to one of `hosts`; `grace` later crash
    /// it if it is still up (a host that handles SIGTERM may exit first),
    /// and restart it after `downtime`.
    pub fn kill_after_grace(
        self,
        hosts: &[&str],
        every: Range<Duration>,
        grace: Duration,
        downtime: Range<Duration>,
    ) -> Nemesis {
        check_range("downtime", &downtime);
        self.push(hosts, every, Action::KillAfterGrace { grace, downtime })
    }

    /// Every `every`, cut one of `hosts` off from every other host for
    /// `duration`.
    pub fn isolate(
        self,
        hosts: &[&str],
        every: Range<Duration>,
        duration: Range<Duration>,
    ) -> Nemesis {
        check_range("duration", &duration);
        self.push(hosts, every, Action::Isolate { duration })
    }

    /// Every `every`, split `hosts` into two sides drawn from the seed
    /// (neither empty) and cut every link between them for `duration`.
    ///
    /// # Panics
    /// With fewer than two hosts.
    pub fn split(
        self,
        hosts: &[&str],
        every: Range<Duration>,
        duration: Range<Duration>,
    ) -> Nemesis {
        self.timed(hosts, every, duration, 2, |duration| Action::Split {
            duration,
        })
    }

    /// Every `every`, cut two of `hosts` (drawn) apart, both directions,
    /// for `duration`.
    ///
    /// # Panics
    /// With fewer than two hosts.
    pub fn partition(
        self,
        hosts: &[&str],
        every: Range<Duration>,
        duration: Range<Duration>,
    ) -> Nemesis {
        self.timed(hosts, every, duration, 2, |duration| Action::Partition {
            duration,
        })
    }

    /// Every `every`, cut one direction between two of `hosts` (drawn, in
    /// a drawn order) for `duration`: one hears the other, not back.
    ///
    /// # Panics
    /// With fewer than two hosts.
    pub fn partition_one_way(
        self,
        hosts: &[&str],
        every: Range<Duration>,
        duration: Range<Duration>,
    ) -> Nemesis {
        self.timed(hosts, every, duration, 2, |duration| {
            Action::PartitionOneWay { duration }
        })
    }

    /// Every `every`, hold one direction between two of `hosts` (drawn)
    /// for `duration`: its bytes wait, then arrive intact (a stalled
    /// route, a long GC pause of a proxy).
    ///
    /// # Panics
    /// With fewer than two hosts.
    pub fn hold(
        self,
        hosts: &[&str],
        every: Range<Duration>,
        duration: Range<Duration>,
    ) -> Nemesis {
        self.timed(hosts, every, duration, 2, |duration| Action::Hold {
            duration,
        })
    }

    /// Every `every`, skew one of `hosts`'s clocks ahead by a drawn
    /// `0..=max` (see [`crate::Fault::ClockSkew`]).
    pub fn clock_skew(self, hosts: &[&str], every: Range<Duration>, max: Duration) -> Nemesis {
        self.push(hosts, every, Action::ClockSkew { max })
    }

    /// Every `every`, jump one of `hosts`'s wall clock by a drawn
    /// `-max_ms..=max_ms` (see [`crate::Fault::WallClockJump`]).
    pub fn clock_jump(self, hosts: &[&str], every: Range<Duration>, max_ms: u64) -> Nemesis {
        self.push(hosts, every, Action::ClockJump { max_ms })
    }

    /// Every `every`, set one of `hosts`'s clock drift to a drawn
    /// `-max_ppm..=max_ppm` (see [`crate::Fault::ClockDrift`]).
    ///
    /// # Panics
    /// Past the largest drift, 100,000 ppm.
    pub fn clock_drift(self, hosts: &[&str], every: Range<Duration>, max_ppm: u64) -> Nemesis {
        let max_ppm = max_ppm as i64;
        assert!(
            (0..=sim_runtime::DRIFT_PPM_MAX).contains(&max_ppm),
            "sim: nemesis: a clock drift is at most {} ppm, not {max_ppm}",
            sim_runtime::DRIFT_PPM_MAX
        );
        self.push(hosts, every, Action::ClockDrift { max_ppm })
    }

    /// Every `every`, give one of `hosts`'s disk `faults` (error rates,
    /// corruption, latency) for `duration`; then its own configuration
    /// comes back.
    pub fn disk_faults(
        self,
        hosts: &[&str],
        every: Range<Duration>,
        faults: DiskConfig,
        duration: Range<Duration>,
    ) -> Nemesis {
        faults.validate();
        check_range("duration", &duration);
        self.push(
            hosts,
            every,
            Action::DiskFaults {
                config: faults,
                duration,
            },
        )
    }

    /// Every `every`, fill one of `hosts`'s disk for `duration`: writes
    /// that need new space fail with `ENOSPC` (`StorageFull`).
    pub fn disk_full(
        self,
        hosts: &[&str],
        every: Range<Duration>,
        duration: Range<Duration>,
    ) -> Nemesis {
        check_range("duration", &duration);
        self.push(hosts, every, Action::DiskFull { duration })
    }

    /// Adds `other`'s generators to these.
    pub fn extend(&mut self, other: Nemesis) {
        self.generators.extend(other.generators);
    }

    /// Whether it has no generator.
    pub fn is_empty(&self) -> bool {
        self.generators.is_empty()
    }
}

/// Whether the nemesis still acts in this run, and what it must undo.
#[derive(Default)]
struct State {
    stopped: Cell<bool>,
    /// The own configuration of each disk the nemesis has broken or
    /// filled, by host: restored when the fault ends, or when it stops.
    disks: RefCell<BTreeMap<u32, DiskConfig>>,
}

fn state() -> Rc<State> {
    sim_runtime::context::with_current(|core| core.extension(State::default))
        .expect("the nemesis runs inside a simulation")
}

/// Stops every generator: what is pending does nothing.
pub(crate) fn stop() {
    let state = state();
    state.stopped.set(true);
    let disks = std::mem::take(&mut *state.disks.borrow_mut());
    for (node, own) in disks {
        note("nemesis: stops; a disk heals");
        sim_fs::set_disk_config(node, own);
    }
}

/// Gives `node`'s disk `config` until [`restore_disk`] (or the stop).
fn break_disk(node: u32, config: impl FnOnce(&DiskConfig, u64) -> DiskConfig) {
    let state = state();
    let (current, used) =
        sim_fs::with_disk_on(node, |disk| (disk.config().clone(), disk.used_bytes()));
    // Overlapping faults on one disk: the first remembers its own config.
    let own = state
        .disks
        .borrow_mut()
        .entry(node)
        .or_insert(current)
        .clone();
    sim_fs::set_disk_config(node, config(&own, used));
}

fn restore_disk(node: u32) {
    if let Some(own) = state().disks.borrow_mut().remove(&node) {
        sim_fs::set_disk_config(node, own);
    }
}

fn active() -> bool {
    !state().stopped.get()
}

/// A draw in `range` from the generator's stream.
fn draw(stream: &str, range: &Range<Duration>) -> Duration {
    let lo = range.start.as_nanos() as u64;
    let hi = range.end.as_nanos() as u64;
    let span = hi.saturating_sub(lo);
    let offset = if span == 0 {
        0
    } else {
        below(stream, span + 1)
    };
    Duration::from_nanos(lo + offset)
}

/// A draw in `0..n` from the generator's stream.
fn below(stream: &str, n: u64) -> u64 {
    sim_runtime::context::with_current(|core| core.stream_below(stream, n)).unwrap_or(0)
}

fn pick(stream: &str, hosts: &[String]) -> String {
    hosts[below(stream, hosts.len() as u64) as usize].clone()
}

fn host(name: &str) -> HostId {
    with_net(|net| {
        net.host_id(name)
            .unwrap_or_else(|| panic!("sim: nemesis: no host named {name:?} in this simulation"))
    })
}

/// Schedules every generator's first event.
pub(crate) fn start(nemesis: Nemesis) {
    for (index, generator) in nemesis.generators.into_iter().enumerate() {
        let stream = Rc::<str>::from(format!("nemesis {index}"));
        schedule_next(stream, Rc::new(generator), 0);
    }
}

fn schedule_next(stream: Rc<str>, generator: Rc<Generator>, occurrence: u64) {
    let wait = draw(&stream, &generator.every);
    with_net(|net| {
        net.after(
            wait,
            "nemesis",
            Box::new(move || {
                if !active() {
                    return;
                }
                // Each occurrence draws its hosts and durations from a
                // stream of its own, so leaving one out (shrinking) shifts
                // no other.
                if let Some(unit) = crate::shrink::begin_unit() {
                    let delay = crate::shrink::delay_of(unit);
                    let (name, generator) = (format!("{stream} #{occurrence}"), generator.clone());
                    crate::shrink::after(delay, "nemesis", move || {
                        if active() {
                            act(&name, &generator, unit);
                        }
                    });
                }
                schedule_next(stream, generator, occurrence + 1);
            }),
        )
    });
}

/// Remembers, for shrinking, that unit `unit` applied `fault` now.
fn record(unit: u64, fault: crate::fault::Fault) {
    crate::shrink::applied(unit, &fault);
}

fn later(delay: Duration, f: impl FnOnce() + 'static) {
    with_net(|net| {
        net.after(
            delay,
            "nemesis",
            Box::new(move || {
                if active() {
                    f();
                }
            }),
        )
    });
}

/// Two distinct hosts of `hosts`, drawn, in a drawn order.
fn pick_pair(stream: &str, hosts: &[String]) -> (String, String) {
    debug_assert!(hosts.len() >= 2);
    let first = below(stream, hosts.len() as u64) as usize;
    // The second is drawn from the others, so never the first.
    let mut second = below(stream, hosts.len() as u64 - 1) as usize;
    if second >= first {
        second += 1;
    }
    (hosts[first].clone(), hosts[second].clone())
}

/// A draw in `-max..=max`.
fn signed(stream: &str, max: u64) -> i64 {
    let span = max.saturating_mul(2).saturating_add(1);
    below(stream, span) as i64 - max as i64
}

fn note(text: &str) {
    with_net(|net| net.note(text));
}

/// A fault on `node`'s disk, as a fault note (reports name a host's last
/// faults).
fn disk_fault_note(node: u32, text: &str) {
    with_net(|net| net.note_fault(&[sim_net::HostId(node)], text));
}

fn act(stream: &str, generator: &Generator, unit: u64) {
    let hosts = &generator.hosts;
    match &generator.action {
        Action::CrashRestart { downtime } => crash_restart(stream, hosts, downtime, unit),
        Action::KillAfterGrace { grace, downtime } => {
            kill_after_grace(stream, hosts, *grace, downtime, unit)
        }
        Action::Split { duration } => split(stream, hosts, duration, unit),
        Action::Isolate { duration } => isolate(stream, hosts, duration, unit),
        Action::Partition { duration }
        | Action::PartitionOneWay { duration }
        | Action::Hold { duration } => pair_fault(stream, &generator.action, hosts, duration, unit),
        Action::ClockSkew { max } => {
            let name = pick(stream, hosts);
            let skew = draw(stream, &(Duration::ZERO..*max));
            apply_now(unit, Fault::ClockSkew(name, skew));
        }
        Action::ClockJump { max_ms } => {
            let name = pick(stream, hosts);
            apply_now(unit, Fault::WallClockJump(name, signed(stream, *max_ms)));
        }
        Action::ClockDrift { max_ppm } => {
            let name = pick(stream, hosts);
            apply_now(
                unit,
                Fault::ClockDrift(name, signed(stream, *max_ppm as u64)),
            );
        }
        Action::DiskFaults { config, duration } => {
            disk_faults(stream, hosts, config, duration, unit)
        }
        Action::DiskFull { duration } => disk_full(stream, hosts, duration),
    }
}

/// Records `fault` for the shrinker and applies it at once.
fn apply_now(unit: u64, fault: Fault) {
    record(unit, fault.clone());
    fault.apply();
}

/// A live host drawn from `hosts`: its name and id (`None`: it is down).
fn pick_alive(stream: &str, hosts: &[String]) -> Option<(String, HostId)> {
    let name = pick(stream, hosts);
    let id = host(&name);
    with_net(|net| net.is_alive(id)).then_some((name, id))
}

/// Crashes host `name` now (noted as `why`).
fn crash(unit: u64, name: &str, id: HostId, why: &str) {
    record(unit, Fault::Crash(name.to_string()));
    with_net(|net| {
        net.note(&format!("nemesis: crash {name}{why}"));
        net.crash(id);
    });
}

/// Restarts host `name` after `downtime`.
fn restart_later(unit: u64, name: String, id: HostId, downtime: Duration) {
    later(downtime, move || {
        record(unit, Fault::Restart(name.clone()));
        with_net(|net| {
            net.note(&format!("nemesis: restart {name}"));
            crate::host::restart(net, id);
        })
    });
}

fn crash_restart(stream: &str, hosts: &[String], downtime: &Range<Duration>, unit: u64) {
    let Some((name, id)) = pick_alive(stream, hosts) else {
        return;
    };
    crash(unit, &name, id, "");
    restart_later(unit, name, id, draw(stream, downtime));
}

/// SIGTERM, then a crash if the host still runs after its grace period,
/// then a restart.
fn kill_after_grace(
    stream: &str,
    hosts: &[String],
    grace: Duration,
    downtime: &Range<Duration>,
    unit: u64,
) {
    let Some((name, id)) = pick_alive(stream, hosts) else {
        return;
    };
    let downtime = draw(stream, downtime);
    record(unit, Fault::Signal(name.clone(), crate::host::SIGTERM));
    with_net(|net| {
        net.note(&format!("nemesis: SIGTERM {name}"));
        net.signal(id, crate::host::SIGTERM);
    });
    later(grace, move || {
        if with_net(|net| net.is_alive(id)) {
            crash(unit, &name, id, " after its grace period");
        }
        restart_later(unit, name, id, downtime);
    });
}

/// The hosts in two sides, every link between them cut, healed later.
fn split(stream: &str, hosts: &[String], duration: &Range<Duration>, unit: u64) {
    // Each host on side A or B; the first two are forced apart so neither
    // side is empty.
    let mut side_a = vec![host(&hosts[0])];
    let mut side_b = vec![host(&hosts[1])];
    for name in &hosts[2..] {
        if below(stream, 2) == 0 {
            side_a.push(host(name));
        } else {
            side_b.push(host(name));
        }
    }
    // Which host leads each side is drawn too.
    if below(stream, 2) == 1 {
        std::mem::swap(&mut side_a[0], &mut side_b[0]);
    }
    let pairs: Vec<(HostId, HostId)> = side_a
        .iter()
        .flat_map(|&a| side_b.iter().map(move |&b| (a, b)))
        .collect();
    with_net(|net| {
        let names =
            |side: &[HostId]| -> Vec<String> { side.iter().map(|&h| net.host_name(h)).collect() };
        net.note(&format!(
            "nemesis: split {} | {}",
            names(&side_a).join(","),
            names(&side_b).join(",")
        ));
        record(unit, Fault::Split(names(&side_a), names(&side_b)));
        for &(a, b) in &pairs {
            net.partition(a, b);
        }
    });
    later(draw(stream, duration), move || {
        with_net(|net| {
            net.note("nemesis: heal the split");
            for &(a, b) in &pairs {
                record(unit, Fault::Heal(net.host_name(a), net.host_name(b)));
                net.heal(a, b);
            }
        })
    });
}

/// One host cut from every other, healed later.
fn isolate(stream: &str, hosts: &[String], duration: &Range<Duration>, unit: u64) {
    let name = pick(stream, hosts);
    let id = host(&name);
    let others: Vec<HostId> = with_net(|net| {
        (1..net.host_count())
            .map(HostId)
            .filter(|&h| h != id)
            .collect()
    });
    record(unit, Fault::Isolate(name.clone()));
    with_net(|net| {
        net.note(&format!("nemesis: isolate {name}"));
        for &other in &others {
            net.partition(id, other);
        }
    });
    later(draw(stream, duration), move || {
        with_net(|net| {
            net.note(&format!("nemesis: heal {name}"));
            for &other in &others {
                record(unit, Fault::Heal(name.clone(), net.host_name(other)));
                net.heal(id, other);
            }
        })
    });
}

/// A fault between a pair of hosts (a partition, one way or both, or a
/// hold) and, later, its end.
fn pair_fault(
    stream: &str,
    action: &Action,
    hosts: &[String],
    duration: &Range<Duration>,
    unit: u64,
) {
    let (a, b) = pick_pair(stream, hosts);
    let (start, end) = match action {
        Action::Partition { .. } => (Fault::Partition(a.clone(), b.clone()), Fault::Heal(a, b)),
        Action::PartitionOneWay { .. } => (
            Fault::PartitionOneWay(a.clone(), b.clone()),
            Fault::HealOneWay(a, b),
        ),
        _ => (Fault::Hold(a.clone(), b.clone()), Fault::Release(a, b)),
    };
    note(&format!("nemesis: {start:?}"));
    apply_now(unit, start);
    later(draw(stream, duration), move || {
        note(&format!("nemesis: {end:?}"));
        apply_now(unit, end);
    });
}

fn disk_faults(
    stream: &str,
    hosts: &[String],
    config: &DiskConfig,
    duration: &Range<Duration>,
    unit: u64,
) {
    let name = pick(stream, hosts);
    let node = host(&name).0;
    disk_fault_note(node, &format!("nemesis: disk faults on {name}: {config:?}"));
    record(unit, Fault::Disk(name.clone(), config.clone()));
    break_disk(node, |_, _| config.clone());
    later(draw(stream, duration), move || {
        disk_fault_note(node, &format!("nemesis: {name}'s disk heals"));
        restore_disk(node);
    });
}

/// A host's disk full (its capacity what it holds now), with room again
/// later. Not a shrinker unit: it records no fault.
fn disk_full(stream: &str, hosts: &[String], duration: &Range<Duration>) {
    let name = pick(stream, hosts);
    let node = host(&name).0;
    disk_fault_note(node, &format!("nemesis: {name}'s disk is full"));
    break_disk(node, |own, used| DiskConfig {
        capacity_bytes: used,
        ..own.clone()
    });
    later(draw(stream, duration), move || {
        disk_fault_note(node, &format!("nemesis: {name}'s disk has room again"));
        restore_disk(node);
    });
}
