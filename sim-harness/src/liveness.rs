//! The liveness phase: after the workload, the harness stops injecting
//! faults, heals the network among a core of hosts, lifts the scripted
//! controls, stops the core's disks from failing (error and corruption
//! rates to zero) and restarts the crashed hosts in it. Then each `eventually` property must hold within its
//! bound of virtual time; one that does not fails the run with class
//! `liveness`, naming the property, what it read (each host's last
//! publication of each key, and the hosts that published nothing since the
//! phase began), the hosts down, and the story of the run's last events.

use crate::observe::{now, with_observations, with_observations_read, Observations, Publication};
use sim_net::{with_net, ConnectPolicy, HostId};
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

/// How often the properties are looked at, in virtual time.
const POLL_EVERY: Duration = Duration::from_millis(10);

/// A property that must come to hold.
pub(crate) struct Property {
    pub(crate) name: String,
    pub(crate) bound: Duration,
    pub(crate) holds: Rc<dyn Fn(&Observations<'_>) -> bool>,
}

/// Waits `delay` of virtual time.
struct Sleep {
    deadline_ns: u64,
    armed: bool,
}

impl Future for Sleep {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let now = sim_runtime::context::with_current(|core| core.now_ns()).unwrap_or(u64::MAX);
        if now >= self.deadline_ns {
            return Poll::Ready(());
        }
        if !self.armed {
            self.armed = true;
            let deadline = self.deadline_ns;
            sim_runtime::context::with_current(|core| {
                core.timer_insert(deadline, Some(cx.waker()));
            });
        }
        Poll::Pending
    }
}

fn sleep(delay: Duration) -> Sleep {
    let now = sim_runtime::context::with_current(|core| core.now_ns()).unwrap_or(0);
    Sleep {
        deadline_ns: now.saturating_add(delay.as_nanos() as u64),
        armed: false,
    }
}

/// How many hosts per key a liveness report lists.
const HOSTS_SHOWN_MAX: usize = 16;

/// What `property` read at the end, by key and host: each host's last
/// publication, and whether it came before the liveness phase (`start`)
/// and never again: a host that never came back.
fn observed(property: &Property, start: Duration) -> Vec<String> {
    let Some((_, keys)) = with_observations_read(|obs| (property.holds)(obs)) else {
        return Vec::new();
    };
    if keys.is_empty() {
        return vec!["(no published key)".to_string()];
    }
    with_observations(|obs| {
        let mut lines = Vec::new();
        for key in &keys {
            let mut last: BTreeMap<&str, &Publication> = BTreeMap::new();
            for publication in obs.history(key) {
                last.insert(publication.host.as_str(), publication);
            }
            if last.is_empty() {
                lines.push(format!("{key}: never published"));
            }
            for (host, p) in last.iter().take(HOSTS_SHOWN_MAX) {
                let stale = if p.time < start {
                    ": nothing since, so it never came back in the liveness phase"
                } else {
                    ""
                };
                lines.push(format!(
                    "{key} on {host}: {} at {:?}{stale}",
                    crate::checker::elide(&p.value),
                    p.time
                ));
            }
            if last.len() > HOSTS_SHOWN_MAX {
                lines.push(format!(
                    "{key}: and {} more hosts",
                    last.len() - HOSTS_SHOWN_MAX
                ));
            }
        }
        lines
    })
    .unwrap_or_default()
}

/// `\nHosts down at the end: a, b` when some host is not running.
fn hosts_down() -> String {
    let down: Vec<String> = sim_net::try_with_net(|net| {
        (1..net.host_count())
            .map(HostId)
            .filter(|&h| !net.is_alive(h))
            .map(|h| net.host_name(h))
            .collect()
    })
    .unwrap_or_default();
    if down.is_empty() {
        String::new()
    } else {
        format!("\nHosts down at the end: {}", down.join(", "))
    }
}

/// Runs the phase over `core` (host ids), then waits for `properties`.
pub(crate) async fn phase(core: Vec<HostId>, properties: Vec<Property>) {
    crate::nemesis::stop();
    with_net(|net| {
        net.note("liveness phase: faults stop, the core heals");
        net.heal_all(|host| core.contains(&host));
        net.clear_controls();
        // Disks stop failing too (their latency and capacity stay): a
        // fault-free core is what liveness is judged on.
        for &host in &core {
            let config = sim_fs::with_disk_on(host.0, |disk| disk.config().clone());
            let healed = sim_fs::DiskConfig {
                read_error_rate: 0.0,
                write_error_rate: 0.0,
                sync_error_rate: 0.0,
                corruption_rate: 0.0,
                ..config.clone()
            };
            if healed != config {
                sim_fs::set_disk_config(host.0, healed);
            }
        }
        for &host in &core {
            net.set_connect_policy(host, ConnectPolicy::Normal);
        }
        for &host in &core {
            if !net.is_alive(host) {
                crate::host::restart(net, host);
            }
        }
    });
    let start = now();
    let mut pending: Vec<Property> = properties;
    // Bounded: each turn waits at most POLL_EVERY and at least 1 ns, and a
    // property past its bound fails the run.
    loop {
        let elapsed = now() - start;
        let still = with_observations(|obs| {
            pending
                .drain(..)
                .filter(|p| elapsed > p.bound || !(p.holds)(obs))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
        pending = still;
        if pending.is_empty() {
            return;
        }
        if let Some(late) = pending.iter().find(|p| elapsed > p.bound) {
            let seed = sim_runtime::context::with_current(|core| core.config().seed).unwrap_or(0);
            let observed = observed(late, start);
            let down = hosts_down();
            let story =
                sim_runtime::context::with_current(|core| core.story_report()).unwrap_or_default();
            sim_runtime::sweep::set_failure_class(sim_runtime::sweep::FailureClass::Liveness);
            panic!(
                "sim: liveness: `{}` did not hold within {:?} of the liveness phase (it began \
                 at virtual time {start:?}, with faults stopped and the core healed; seed \
                 {seed:#x})\nWhat it read, by host (the last publication of each key):\n  \
                 {}{down}\n{}",
                late.name,
                late.bound,
                observed.join("\n  "),
                story.trim_end()
            );
        }
        // Look again at the next poll or just past the nearest bound.
        let next_bound = pending
            .iter()
            .map(|p| p.bound.saturating_sub(elapsed) + Duration::from_nanos(1))
            .min()
            .unwrap_or(POLL_EVERY);
        sleep(next_bound.min(POLL_EVERY)).await;
    }
}
