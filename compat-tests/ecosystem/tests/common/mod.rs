//! One scenario, two builds.
//!
//! In a plain build the hosts and the client run as tasks of one real
//! tokio runtime, on loopback. Under `cargo sim` each host is a simulated
//! host of `tokio::sim::Sim`, reached by name, and a scenario runs for
//! [`SEEDS`] seeds.

#![allow(dead_code)]

use std::future::Future;
use std::pin::Pin;

/// How many seeds a scenario runs for in a simulation build.
pub const SEEDS: u64 = 20;

type BoxFuture = Pin<Box<dyn Future<Output = ()>>>;
type Factory = Box<dyn Fn() -> BoxFuture>;

/// The hosts and the client of one scenario.
pub struct Cluster {
    hosts: Vec<(&'static str, Factory)>,
}

/// Where a client reaches `host`'s `port`: the host's name in a simulation
/// (resolved by the simulated network), loopback otherwise.
pub fn addr(host: &str, port: u16) -> String {
    if cfg!(simulation) {
        format!("{host}:{port}")
    } else {
        format!("127.0.0.1:{port}")
    }
}

/// The address a server binds.
pub fn bind_addr(port: u16) -> String {
    if cfg!(simulation) {
        format!("0.0.0.0:{port}")
    } else {
        format!("127.0.0.1:{port}")
    }
}

impl Cluster {
    pub fn new() -> Cluster {
        Cluster { hosts: Vec::new() }
    }

    /// Adds a host built by `factory`.
    pub fn host<F, Fut>(mut self, name: &'static str, factory: F) -> Cluster
    where
        F: Fn() -> Fut + 'static,
        Fut: Future<Output = ()> + 'static,
    {
        self.hosts
            .push((name, Box::new(move || Box::pin(factory()) as BoxFuture)));
        self
    }

    /// Runs `client` against the hosts: once on real tokio, or for every
    /// seed on the simulator. Returns the trace hashes (simulation only).
    pub fn run<C, Fut>(self, client: C) -> Vec<String>
    where
        C: Fn() -> Fut + 'static,
        Fut: Future<Output = ()> + 'static,
    {
        run_impl(self, client)
    }
}

#[cfg(not(simulation))]
fn run_impl<C, Fut>(cluster: Cluster, client: C) -> Vec<String>
where
    C: Fn() -> Fut + 'static,
    Fut: Future<Output = ()> + 'static,
{
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async move {
        for (_, factory) in &cluster.hosts {
            tokio::task::spawn_local(factory());
        }
        // Let every server bind before the client starts.
        for _ in 0..100 {
            tokio::task::yield_now().await;
        }
        client().await;
    });
    Vec::new()
}

#[cfg(simulation)]
fn run_impl<C, Fut>(cluster: Cluster, client: C) -> Vec<String>
where
    C: Fn() -> Fut + 'static,
    Fut: Future<Output = ()> + 'static,
{
    let hosts = std::rc::Rc::new(cluster.hosts);
    let seeds: Vec<u64> = match std::env::var("SIM_SEED") {
        // A given seed replays that one run.
        Ok(_) => vec![sim_runtime::SimConfig::from_env().seed],
        Err(_) => (0..SEEDS).collect(),
    };
    seeds
        .into_iter()
        .map(|seed| {
            let mut sim = sim_harness::Sim::with_config(sim_runtime::SimConfig::with_seed(seed));
            for index in 0..hosts.len() {
                let hosts = hosts.clone();
                let name = hosts[index].0;
                sim.host(name, move || (hosts[index].1)());
            }
            sim.client("client", client());
            sim.run().trace_hash
        })
        .collect()
}

/// Runs the test `name` of this binary in a child process twice with one
/// seed and `SIM_TRACE`, and checks the two trace files are identical.
#[cfg(simulation)]
pub fn assert_same_trace_in_two_processes(name: &str) {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let run = |label: &str| {
        let base = dir.join(format!("{name}-{label}.trace"));
        let output = std::process::Command::new(std::env::current_exe().unwrap())
            .args([name, "--exact", "--test-threads", "1"])
            .env("SIM_SEED", "0x5eed")
            .env("SIM_TRACE", &base)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{name} failed in a child process:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let file = dir.join(format!("{name}-{label}.trace.{name}"));
        std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
    };
    let a = run("a");
    let b = run("b");
    assert!(a.len() > 1000, "{name}: a real trace ({} bytes)", a.len());
    assert!(a == b, "{name}: one seed gave two different traces");
}
