//! The peer benchmark's workloads on tokio's API (`scripts/bench-peers.sh`):
//! real tokio's current-thread runtime with paused time in a plain build,
//! the simulator in a `cargo sim` build. Usage: `<binary> <workload>`.

use std::time::Duration;

const TASKS: u64 = 100_000;
const ROUND_TRIPS: u64 = 100_000;
/// The segmented echo: fewer round trips of a message larger than a
/// segment (an Ethernet MSS is 1460 bytes: 4 KiB crosses a link as 3).
const SEGMENTED_ROUND_TRIPS: u64 = 20_000;
const SEGMENTED_BYTES: usize = 4096;

/// A seeded linear congruential sequence: the same delays on every system.
fn delays() -> impl Iterator<Item = u64> {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    std::iter::repeat_with(move || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 33) % 1000
    })
}

async fn spawn_join() -> u64 {
    let handles: Vec<_> = (0..TASKS).map(|i| tokio::spawn(async move { i })).collect();
    let mut sum = 0;
    for h in handles {
        sum += h.await.unwrap();
    }
    sum
}

async fn sleeps() -> u64 {
    let handles: Vec<_> = delays()
        .take(TASKS as usize)
        .map(|ms| {
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                ms
            })
        })
        .collect();
    let mut sum = 0;
    for h in handles {
        sum += h.await.unwrap();
    }
    sum
}

/// Spawn + join on a `multi_thread` runtime of 4 workers (real threads
/// on real tokio, simulated workers on the simulator).
fn spawn_join_multi_thread() -> u64 {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap()
        .block_on(spawn_join())
}

/// The echo's shape: `size`-byte messages, `rounds` round trips.
#[derive(Clone, Copy)]
struct Echo {
    size: usize,
    rounds: u64,
}

impl Echo {
    fn from_workload(workload: &str) -> Echo {
        if workload == "echo-seg" {
            Echo {
                size: SEGMENTED_BYTES,
                rounds: SEGMENTED_ROUND_TRIPS,
            }
        } else {
            Echo {
                size: 8,
                rounds: ROUND_TRIPS,
            }
        }
    }
}

async fn echo_server(listener: tokio::net::TcpListener, echo: Echo) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (mut stream, _) = listener.accept().await.unwrap();
    stream.set_nodelay(true).unwrap();
    let mut buf = vec![0u8; echo.size];
    while stream.read_exact(&mut buf).await.is_ok() {
        stream.write_all(&buf).await.unwrap();
    }
}

async fn echo_client(addr: String, echo: Echo) -> u64 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.set_nodelay(true).unwrap();
    let mut message = vec![0u8; echo.size];
    let mut buf = vec![0u8; echo.size];
    let mut sum = 0;
    for i in 0..echo.rounds {
        message[..8].copy_from_slice(&i.to_le_bytes());
        stream.write_all(&message).await.unwrap();
        stream.read_exact(&mut buf).await.unwrap();
        sum += u64::from_le_bytes(buf[..8].try_into().unwrap());
    }
    sum
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap()
}

/// A simulation whose links take 0-1 ms, as the other systems' do (it is
/// also the simulator's default: said here so the benchmark states it).
#[cfg(simulation)]
fn linked_sim() -> tokio::sim::Sim {
    use tokio::sim::{LinkConfig, Sim};
    let mut sim = Sim::new();
    sim.default_link(LinkConfig {
        latency_min: Duration::ZERO,
        latency_max: Duration::from_millis(1),
        ..LinkConfig::default()
    });
    sim
}

/// TCP echo: on loopback for real tokio; between two simulated hosts over
/// 0-1 ms links in a simulation.
#[cfg(not(simulation))]
fn tcp_echo(echo: Echo) -> u64 {
    runtime().block_on(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        tokio::spawn(echo_server(listener, echo));
        echo_client(addr, echo).await
    })
}

#[cfg(simulation)]
fn tcp_echo(echo: Echo) -> u64 {
    let mut sim = linked_sim();
    sim.host("server", move || async move {
        let listener = tokio::net::TcpListener::bind("0.0.0.0:7").await.unwrap();
        echo_server(listener, echo).await;
    });
    let sum = std::rc::Rc::new(std::cell::Cell::new(0));
    let out = sum.clone();
    sim.client("client", async move {
        out.set(echo_client("server:7".into(), echo).await)
    });
    sim.run();
    sum.get()
}

/// The 5-host cluster: 4 clients send one request each every 10 ms to a
/// server, over TCP, for 10 simulated minutes (400 requests/s). Only a
/// simulator runs it (on real tokio it would take 10 real minutes).
#[cfg(simulation)]
fn cluster(minutes: u64) -> u64 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut sim = linked_sim();
    sim.host("server", || async {
        let listener = tokio::net::TcpListener::bind("0.0.0.0:7").await.unwrap();
        loop {
            let (mut stream, _) = listener.accept().await.unwrap();
            tokio::spawn(async move {
                let mut buf = [0u8; 8];
                while stream.read_exact(&mut buf).await.is_ok() {
                    if stream.write_all(&buf).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    let total = std::rc::Rc::new(std::cell::Cell::new(0));
    for c in 0..4 {
        let total = total.clone();
        sim.client(&format!("client{c}"), async move {
            let mut stream = tokio::net::TcpStream::connect("server:7").await.unwrap();
            let mut tick = tokio::time::interval(Duration::from_millis(10));
            let mut buf = [0u8; 8];
            for i in 0..minutes * CLUSTER_REQUESTS_PER_MINUTE {
                tick.tick().await;
                stream.write_all(&i.to_le_bytes()).await.unwrap();
                stream.read_exact(&mut buf).await.unwrap();
                total.set(total.get() + u64::from_le_bytes(buf));
            }
        });
    }
    sim.run();
    total.get()
}

/// The heartbeat workload: `hosts` hosts each send an 8-byte UDP
/// heartbeat to 3 peers (the next three hosts, in a ring) every 100 ms for
/// `seconds` simulated seconds; the answer is the number of heartbeats
/// received, counted a second after the last was sent.
#[cfg(simulation)]
fn heartbeat(hosts: usize, seconds: u64) -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    let mut sim = linked_sim();
    let received = Arc::new(AtomicU64::new(0));
    for h in 0..hosts {
        let received = received.clone();
        sim.host(&format!("h{h}"), move || {
            let received = received.clone();
            async move {
                let socket = Arc::new(tokio::net::UdpSocket::bind("0.0.0.0:9").await.unwrap());
                let mut peers = Vec::new();
                for p in 1..=HEARTBEAT_PEERS {
                    let name = format!("h{}:9", (h + p) % hosts);
                    peers.push(tokio::net::lookup_host(name).await.unwrap().next().unwrap());
                }
                let listener = socket.clone();
                tokio::spawn(async move {
                    let mut buf = [0u8; 8];
                    loop {
                        listener.recv_from(&mut buf).await.unwrap();
                        received.fetch_add(1, Ordering::Relaxed);
                    }
                });
                // Every host binds before the first heartbeat.
                tokio::time::sleep(Duration::from_millis(100)).await;
                let mut tick = tokio::time::interval(Duration::from_millis(100));
                for i in 0..seconds * 10 {
                    tick.tick().await;
                    for peer in &peers {
                        socket.send_to(&i.to_le_bytes(), peer).await.unwrap();
                    }
                }
                std::future::pending::<()>().await;
            }
        });
    }
    let out = Arc::new(AtomicU64::new(0));
    let result = out.clone();
    sim.client("observer", async move {
        tokio::time::sleep(Duration::from_secs(seconds + 1)).await;
        result.store(received.load(Ordering::Relaxed), Ordering::Relaxed);
    });
    sim.run();
    out.load(Ordering::Relaxed)
}

/// How many peers each host of the heartbeat workload sends to.
#[cfg_attr(not(simulation), allow(dead_code))]
const HEARTBEAT_PEERS: usize = 3;

/// One request per 10 ms.
#[cfg_attr(not(simulation), allow(dead_code))]
const CLUSTER_REQUESTS_PER_MINUTE: u64 = 6_000;

/// Memory per host: `hosts` hosts, each with a UDP socket bound, idle for a
/// simulated second. The answer is the number of hosts that bound.
#[cfg(simulation)]
fn idle_hosts(hosts: usize) -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    let mut sim = tokio::sim::Sim::new();
    let bound = Arc::new(AtomicU64::new(0));
    for h in 0..hosts {
        let bound = bound.clone();
        sim.host(&format!("h{h}"), move || {
            let bound = bound.clone();
            async move {
                let _socket = tokio::net::UdpSocket::bind("0.0.0.0:9").await.unwrap();
                bound.fetch_add(1, Ordering::Relaxed);
                std::future::pending::<()>().await;
            }
        });
    }
    let out = Arc::new(AtomicU64::new(0));
    let result = out.clone();
    sim.client("observer", async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        result.store(bound.load(Ordering::Relaxed), Ordering::Relaxed);
    });
    sim.run();
    out.load(Ordering::Relaxed)
}

/// Memory per connection: a client opens `conns` TCP connections to a
/// server and holds them open for a simulated second (each end has a task).
/// The answer is the number of connections the server accepted.
#[cfg(simulation)]
fn open_connections(conns: u64) -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    let mut sim = tokio::sim::Sim::new();
    let accepted = Arc::new(AtomicU64::new(0));
    let counter = accepted.clone();
    sim.host("server", move || {
        let accepted = counter.clone();
        async move {
            let listener = tokio::net::TcpListener::bind("0.0.0.0:7").await.unwrap();
            loop {
                let (stream, _) = listener.accept().await.unwrap();
                accepted.fetch_add(1, Ordering::Relaxed);
                tokio::spawn(async move {
                    let _stream = stream;
                    std::future::pending::<()>().await;
                });
            }
        }
    });
    let out = Arc::new(AtomicU64::new(0));
    let result = out.clone();
    sim.client("client", async move {
        let mut streams = Vec::new();
        for _ in 0..conns {
            streams.push(tokio::net::TcpStream::connect("server:7").await.unwrap());
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        result.store(accepted.load(Ordering::Relaxed), Ordering::Relaxed);
    });
    sim.run();
    out.load(Ordering::Relaxed)
}

fn main() {
    let workload = std::env::args().nth(1).unwrap_or_default();
    #[cfg_attr(not(simulation), allow(unused_variables))]
    let arg = |i: usize| std::env::args().nth(i).and_then(|a| a.parse::<u64>().ok());
    let result = match workload.as_str() {
        "spawn" => runtime().block_on(spawn_join()),
        "sleeps" => runtime().block_on(sleeps()),
        "spawn-mt" => spawn_join_multi_thread(),
        "echo" | "echo-seg" => tcp_echo(Echo::from_workload(&workload)),
        #[cfg(simulation)]
        "cluster" => cluster(arg(2).unwrap_or(10)),
        #[cfg(simulation)]
        "heartbeat" => heartbeat(arg(2).unwrap_or(1000) as usize, arg(3).unwrap_or(600)),
        #[cfg(simulation)]
        "hosts" => idle_hosts(arg(2).unwrap_or(10_000) as usize),
        #[cfg(simulation)]
        "conns" => open_connections(arg(2).unwrap_or(10_000)),
        other => panic!(
            "unknown workload {other:?}: spawn, spawn-mt, sleeps, echo, echo-seg, cluster [minutes], \
             heartbeat [hosts] [seconds], hosts [n] or conns [n]"
        ),
    };
    println!("{workload} {result}");
    // The process's own peak resident set (its post-exec memory only), for
    // the benchmark's memory table.
    if let Ok(status) = std::fs::read_to_string("/proc/self/status") {
        if let Some(line) = status.lines().find(|l| l.starts_with("VmHWM:")) {
            eprintln!("bench: peak {}", line.trim_start_matches("VmHWM:").trim());
        }
    }
}
