//! Which lane each event is drawn on.
//!
//! A lane per host, and one for the simulation itself (the root future
//! and the network's and disks' callbacks). A host that runs two or more
//! task groups gets a lane per group: a group is a task its first task
//! spawned (a server, say, spawned by a `#[tokio::test]` body) with every
//! task spawned under it, and groups spawned at the same site share one
//! lane (`main server@src/lib.rs:40`). A message's receiving lane is the
//! lane of the task that first sent from (or listened on) its address.
//!
//! Who spawned a task is read from the trace itself: a task is spawned
//! while its parent is being polled, so a `spawn` line's parent is the
//! task of the last `poll` line before it.

use super::event::{endpoints, host_of, Event};
use std::collections::{BTreeMap, BTreeSet};

/// The simulation's own lane: the root future and the callbacks.
pub const SIM_LANE: &str = "(simulation)";
/// The most group lanes a host gets; later groups go on the host's lane.
const GROUP_LANES_PER_HOST_MAX: usize = 8;

/// What the whole trace says about tasks and addresses, and the lanes
/// made so far (in the order a lane is first needed).
#[derive(Default)]
pub struct Lanes {
    /// Task number -> (its host, its parent, its spawn label).
    tasks: BTreeMap<u64, TaskSeen>,
    /// Every host a line was on.
    hosts: BTreeSet<String>,
    /// The task of the last `poll` line.
    polled: Option<u64>,
    /// An address -> the task that first sent from it (true) or listened
    /// on it (false).
    owners: BTreeMap<String, (u64, bool)>,
    /// Host -> the spawn sites of its groups with a lane of their own
    /// (set by `split_hosts`; absent: the host has one lane).
    split: BTreeMap<String, Vec<String>>,
    /// The lanes: (name, host), and the index of each name.
    pub(super) names: Vec<(String, String)>,
    by_name: BTreeMap<String, usize>,
}

#[derive(Default)]
struct TaskSeen {
    host: String,
    parent: Option<u64>,
    site: String,
}

impl Lanes {
    /// Learns from one line of the whole trace (the drawn window or not).
    pub fn learn(&mut self, event: &Event) {
        let Some(id) = event.task_id() else {
            return;
        };
        if !self.hosts.contains(&event.host) {
            self.hosts.insert(event.host.clone());
        }
        let polled = self.polled;
        let seen = self.tasks.entry(id).or_default();
        if seen.host.is_empty() {
            seen.host = event.host.clone();
        }
        match event.kind.as_str() {
            "poll" => self.polled = Some(id),
            "spawn" => {
                seen.parent = polled.filter(|&p| p != id);
                seen.site = short_site(&event.label);
            }
            "note" => self.claim(id, event),
            _ => {}
        }
    }

    /// A send's source address is its task's; a listener's address is its
    /// task's until a task sends from it (the accepting task answers from
    /// the listener's port). The first send claim stays: a callback's
    /// later send from it is no claim.
    fn claim(&mut self, id: u64, event: &Event) {
        let (address, sends) = match event.verb() {
            "send" => (endpoints(&event.label).map(|(from, _)| from), true),
            "tcp-listen" | "unix-listen" => (event.label.split_whitespace().nth(1), false),
            _ => (None, false),
        };
        let Some(address) = address else {
            return;
        };
        match self.owners.get(address) {
            Some((_, true)) => {}
            Some((_, false)) if !sends => {}
            _ => {
                self.owners.insert(address.to_string(), (id, sends));
            }
        }
    }

    /// After `learn` has seen every line: which hosts run two or more
    /// groups (by spawn site), and so get a lane per group.
    pub fn split_hosts(&mut self) {
        let mut sites: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let ids: Vec<u64> = self.tasks.keys().copied().collect();
        for id in ids {
            if let Some(group) = self.group(id) {
                let seen = &self.tasks[&group];
                let host_sites = sites.entry(seen.host.clone()).or_default();
                if !host_sites.contains(&seen.site) {
                    host_sites.push(seen.site.clone());
                }
            }
        }
        for host_sites in sites.values_mut() {
            host_sites.truncate(GROUP_LANES_PER_HOST_MAX);
        }
        sites.retain(|_, host_sites| host_sites.len() >= 2);
        self.split = sites;
    }

    /// The group task of task `id`: its ancestor that its host's first
    /// task spawned. `None` for that first task itself, or an unknown one.
    fn group(&self, id: u64) -> Option<u64> {
        let host = &self.tasks.get(&id)?.host;
        let mut chain = vec![id];
        // A bound: a parent chain is never longer than the tasks seen.
        for _ in 0..self.tasks.len() {
            let last = *chain.last()?;
            match self.tasks.get(&last).and_then(|t| t.parent) {
                Some(parent) if self.tasks.get(&parent).is_some_and(|p| &p.host == host) => {
                    chain.push(parent)
                }
                _ => break,
            }
        }
        (chain.len() >= 2).then(|| chain[chain.len() - 2])
    }

    /// The lane named `name`, of `host`, made when first needed.
    pub fn lane(&mut self, name: &str, host: &str) -> usize {
        if let Some(&lane) = self.by_name.get(name) {
            return lane;
        }
        self.names.push((name.to_string(), host.to_string()));
        self.by_name.insert(name.to_string(), self.names.len() - 1);
        self.names.len() - 1
    }

    /// The lane of an event.
    pub fn of_event(&mut self, event: &Event) -> usize {
        match event.task_id() {
            Some(id) => self.of_task(id, &event.host),
            None => self.lane(&event.host, &event.host),
        }
    }

    /// The lane of task `id` on `host`.
    fn of_task(&mut self, id: u64, host: &str) -> usize {
        if host == "main" && id == 0 {
            return self.lane(SIM_LANE, SIM_LANE);
        }
        let site = self
            .group(id)
            .map(|group| self.tasks[&group].site.clone())
            .filter(|site| self.split.get(host).is_some_and(|s| s.contains(site)));
        match site {
            Some(site) => self.lane(&format!("{host} {site}"), host),
            None => self.lane(host, host),
        }
    }

    /// The lane a message to `address` arrives on: its owner task's; else
    /// its host's; else, for an address that names no host (a loopback
    /// one), the lane of the sender's host.
    pub fn of_address(&mut self, address: &str, sender_host: &str) -> usize {
        if let Some(lane) = self.of_owner(address) {
            return lane;
        }
        let host = host_of(address);
        if self.hosts.contains(host) {
            self.lane(host, host)
        } else {
            self.lane(sender_host, sender_host)
        }
    }

    /// The lane of the task that owns `address`, if one does.
    pub fn of_owner(&mut self, address: &str) -> Option<usize> {
        let id = self.owners.get(address)?.0;
        let host = self.tasks.get(&id)?.host.clone();
        Some(self.of_task(id, &host))
    }

    /// The lanes of `host` made so far.
    pub fn of_host(&self, host: &str) -> Vec<usize> {
        (0..self.names.len())
            .filter(|&lane| self.names[lane].1 == host)
            .collect()
    }

    /// The lanes in drawing order: each host's lanes together, hosts in
    /// the order first seen. `order[new] = old`.
    pub fn order(&self) -> Vec<usize> {
        let mut hosts: Vec<&str> = Vec::new();
        for (_, host) in &self.names {
            if !hosts.contains(&host.as_str()) {
                hosts.push(host);
            }
        }
        let mut order: Vec<usize> = (0..self.names.len()).collect();
        order.sort_by_key(|&lane| hosts.iter().position(|h| *h == self.names[lane].1));
        order
    }
}

/// A spawn label as a lane shows it: `server@tests/cluster.rs:8:9` as
/// `server@cluster.rs:8` (the file's name and the line).
fn short_site(label: &str) -> String {
    let Some((name, site)) = label.split_once('@') else {
        return label.to_string();
    };
    let file = site.rsplit('/').next().unwrap_or(site);
    let mut parts = file.split(':');
    match (parts.next(), parts.next()) {
        (Some(file), Some(line)) => format!("{name}@{file}:{line}"),
        _ => format!("{name}@{file}"),
    }
}
