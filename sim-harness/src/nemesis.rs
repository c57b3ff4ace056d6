//! The nemesis: built-in generators of lifecycle events and faults, at
//! times drawn from the seed tree (each generator has a stream of its own,
//! so adding one shifts no other's times). It is not a host: its events are
//! scheduled callbacks on the one event queue, like every other fault, and
//! it stops when the liveness phase begins.
//!
//! ```no_run
//! # use std::time::Duration;
//! # let mut sim = sim_harness::Sim::new();
//! let s = Duration::from_secs;
//! sim.nemesis(
//!     sim_harness::Nemesis::new()
//!         .crash_restart(&["a", "b", "c"], s(5)..s(20), s(1)..s(4))
//!         .isolate(&["a", "b", "c"], s(10)..s(30), s(2)..s(6)),
//! );
//! ```

use sim_net::{with_net, HostId};
use std::cell::Cell;
use std::ops::Range;
use std::rc::Rc;
use std::time::Duration;

/// One kind of fault, on a group of hosts.
#[derive(Clone, Debug)]
enum Generator {
    /// Crash a host, restart it after a downtime.
    CrashRestart {
        hosts: Vec<String>,
        every: Range<Duration>,
        downtime: Range<Duration>,
    },
    /// SIGTERM a host, crash it after a grace period if it still runs,
    /// restart it after a downtime.
    KillAfterGrace {
        hosts: Vec<String>,
        every: Range<Duration>,
        grace: Duration,
        downtime: Range<Duration>,
    },
    /// Cut a host off from every other host, heal after a while.
    Isolate {
        hosts: Vec<String>,
        every: Range<Duration>,
        duration: Range<Duration>,
    },
    /// Split the hosts into two sides (drawn, neither empty), heal after a
    /// while.
    Split {
        hosts: Vec<String>,
        every: Range<Duration>,
        duration: Range<Duration>,
    },
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
        "nemesis: {what} {range:?} is not a range of positive durations"
    );
}

impl Nemesis {
    /// No generators yet.
    pub fn new() -> Nemesis {
        Nemesis::default()
    }

    /// Every `every` (drawn anew each time), crash one of `hosts` (drawn)
    /// and restart it after `downtime`.
    pub fn crash_restart(
        mut self,
        hosts: &[&str],
        every: Range<Duration>,
        downtime: Range<Duration>,
    ) -> Nemesis {
        check_range("every", &every);
        check_range("downtime", &downtime);
        self.generators.push(Generator::CrashRestart {
            hosts: names(hosts),
            every,
            downtime,
        });
        self
    }

    /// Every `every`, send SIGTERM to one of `hosts`; `grace` later crash
    /// it if it is still up (a host that handles SIGTERM may exit first),
    /// and restart it after `downtime`.
    pub fn kill_after_grace(
        mut self,
        hosts: &[&str],
        every: Range<Duration>,
        grace: Duration,
        downtime: Range<Duration>,
    ) -> Nemesis {
        check_range("every", &every);
        check_range("downtime", &downtime);
        self.generators.push(Generator::KillAfterGrace {
            hosts: names(hosts),
            every,
            grace,
            downtime,
        });
        self
    }

    /// Every `every`, cut one of `hosts` off from every other host for
    /// `duration`.
    pub fn isolate(
        mut self,
        hosts: &[&str],
        every: Range<Duration>,
        duration: Range<Duration>,
    ) -> Nemesis {
        check_range("every", &every);
        check_range("duration", &duration);
        self.generators.push(Generator::Isolate {
            hosts: names(hosts),
            every,
            duration,
        });
        self
    }

    /// Every `every`, split `hosts` into two sides drawn from the seed
    /// (neither empty) and cut every link between them for `duration`.
    ///
    /// # Panics
    /// With fewer than two hosts.
    pub fn split(
        mut self,
        hosts: &[&str],
        every: Range<Duration>,
        duration: Range<Duration>,
    ) -> Nemesis {
        assert!(hosts.len() >= 2, "nemesis: a split needs two hosts or more");
        check_range("every", &every);
        check_range("duration", &duration);
        self.generators.push(Generator::Split {
            hosts: names(hosts),
            every,
            duration,
        });
        self
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

/// Whether the nemesis still acts in this run.
#[derive(Default)]
struct State {
    stopped: Cell<bool>,
}

fn state() -> Rc<State> {
    sim_runtime::context::with_current(|core| core.extension(State::default))
        .expect("the nemesis runs inside a simulation")
}

/// Stops every generator: what is pending does nothing.
pub(crate) fn stop() {
    state().stopped.set(true);
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
            .unwrap_or_else(|| panic!("nemesis: no host named {name:?} in this simulation"))
    })
}

/// Schedules every generator's first event.
pub(crate) fn start(nemesis: Nemesis) {
    for (index, generator) in nemesis.generators.into_iter().enumerate() {
        let stream = Rc::<str>::from(format!("nemesis {index}"));
        schedule_next(stream, Rc::new(generator));
    }
}

fn every(generator: &Generator) -> &Range<Duration> {
    match generator {
        Generator::CrashRestart { every, .. }
        | Generator::KillAfterGrace { every, .. }
        | Generator::Isolate { every, .. }
        | Generator::Split { every, .. } => every,
    }
}

fn schedule_next(stream: Rc<str>, generator: Rc<Generator>) {
    let wait = draw(&stream, every(&generator));
    with_net(|net| {
        net.after(
            wait,
            "nemesis",
            Box::new(move || {
                if !active() {
                    return;
                }
                act(&stream, &generator);
                schedule_next(stream, generator);
            }),
        )
    });
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

fn act(stream: &str, generator: &Generator) {
    match generator {
        Generator::CrashRestart {
            hosts, downtime, ..
        } => {
            let name = pick(stream, hosts);
            let id = host(&name);
            if !with_net(|net| net.is_alive(id)) {
                return;
            }
            with_net(|net| {
                net.note(&format!("nemesis: crash {name}"));
                net.crash(id);
            });
            later(draw(stream, downtime), move || {
                with_net(|net| {
                    net.note(&format!("nemesis: restart {name}"));
                    crate::sim::restart(net, id);
                })
            });
        }
        Generator::KillAfterGrace {
            hosts,
            grace,
            downtime,
            ..
        } => {
            let name = pick(stream, hosts);
            let id = host(&name);
            if !with_net(|net| net.is_alive(id)) {
                return;
            }
            let downtime = draw(stream, downtime);
            with_net(|net| {
                net.note(&format!("nemesis: SIGTERM {name}"));
                net.signal(id, SIGTERM);
            });
            later(*grace, move || {
                with_net(|net| {
                    if net.is_alive(id) {
                        net.note(&format!("nemesis: crash {name} after its grace period"));
                        net.crash(id);
                    }
                });
                later(downtime, move || {
                    with_net(|net| {
                        net.note(&format!("nemesis: restart {name}"));
                        crate::sim::restart(net, id);
                    })
                });
            });
        }
        Generator::Split {
            hosts, duration, ..
        } => {
            // Each host on side A or B; the first two are forced apart so
            // neither side is empty.
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
                let names = |side: &[HostId]| {
                    side.iter()
                        .map(|&h| net.host_name(h))
                        .collect::<Vec<_>>()
                        .join(",")
                };
                net.note(&format!(
                    "nemesis: split {} | {}",
                    names(&side_a),
                    names(&side_b)
                ));
                for &(a, b) in &pairs {
                    net.partition(a, b);
                }
            });
            later(draw(stream, duration), move || {
                with_net(|net| {
                    net.note("nemesis: heal the split");
                    for &(a, b) in &pairs {
                        net.heal(a, b);
                    }
                })
            });
        }
        Generator::Isolate {
            hosts, duration, ..
        } => {
            let name = pick(stream, hosts);
            let id = host(&name);
            let others: Vec<HostId> = with_net(|net| {
                (1..net.host_count())
                    .map(HostId)
                    .filter(|&h| h != id)
                    .collect()
            });
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
                        net.heal(id, other);
                    }
                })
            });
        }
    }
}

/// SIGTERM's number (15 on every platform this runs on).
const SIGTERM: i32 = 15;
