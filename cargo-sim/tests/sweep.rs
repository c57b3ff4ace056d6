//! `cargo sim test --seeds` on a crate outside this workspace with planted
//! bugs: each flaky test is reported with its first failing seed, class
//! and a replay line that reproduces it; every failure class is named; a
//! planted nondeterminism is caught by `--check-determinism`; JUnit output
//! parses; partitions split the seeds; signals never leave the lock changed.
//! Plain build only: these tests run cargo.
#![cfg(not(simulation))]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;

const MANIFEST: &str = r#"[package]
name = "planted"
version = "0.VERSION"
edition = "2021"

[dependencies]
tokio = { version = "1", features = ["full"] }

# As most users' tests have it; the fixture tests' crates all ask the same
# features of the facade, so it builds once for them all.
[dev-dependencies]
tokio = { version = "1", features = ["full", "test-util"] }

[[test]]
name = "bare"
harness = false

[workspace]
"#;

const BARE: &str = r#"
// Not libtest's: a main of its own, one simulation per run.
fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let n = rt.block_on(async {
        let counter = std::sync::Arc::new(std::sync::Mutex::new(0));
        let a = tokio::spawn(planted::add_one(counter.clone()));
        let b = tokio::spawn(planted::add_one(counter.clone()));
        a.await.unwrap();
        b.await.unwrap();
        let n = *counter.lock().unwrap();
        n
    });
    assert_eq!(n, 2, "an update was lost in a bare binary");
}
"#;

const LIB: &str = r#"
//! A counter with a lost-update race.
//!
//! ```
//! // Doc tests are simulation builds too.
//! assert!(cfg!(simulation));
//! ```
use std::sync::{Arc, Mutex};

/// Adds one, badly: read, pause, write back.
pub async fn add_one(counter: Arc<Mutex<u64>>) {
    let value = *counter.lock().unwrap();
    pause().await;
    *counter.lock().unwrap() = value + 1;
}

/// A point where another task may run first, or not: the task wakes
/// itself, and the seed picks what runs next (as real I/O would; a
/// `yield_now` lets every ready task go first).
pub async fn pause() {
    let mut paused = false;
    std::future::poll_fn(|cx| {
        if paused {
            return std::task::Poll::Ready(());
        }
        paused = true;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    })
    .await
}

/// A draw from the seed (std's hash keys come from it).
pub fn seeded_u64() -> u64 {
    use std::hash::BuildHasher;
    std::collections::hash_map::RandomState::new().hash_one(1u8)
}
"#;

const PLANTED: &str = r#"
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

async fn race() -> u64 {
    let counter = Arc::new(Mutex::new(0));
    let a = tokio::spawn(planted::add_one(counter.clone()));
    let b = tokio::spawn(planted::add_one(counter.clone()));
    a.await.unwrap();
    b.await.unwrap();
    let n = *counter.lock().unwrap();
    n
}

#[tokio::test]
async fn lost_update() {
    assert_eq!(race().await, 2, "an update was lost");
}

#[tokio::test]
async fn sees_cargo_env() {
    // As under cargo test, the variables cargo sets are there at run time.
    assert_eq!(std::env::var("CARGO_PKG_NAME").unwrap(), "planted");
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap();
    assert!(std::path::Path::new(&dir).join("Cargo.toml").is_file());
    assert_eq!(std::env::current_dir().unwrap(), std::path::Path::new(&dir));
}

#[tokio::test]
async fn is_simulated() {
    assert!(cfg!(simulation));
}

#[tokio::test]
async fn always_passes() {
    tokio::time::sleep(Duration::from_millis(1)).await;
}

#[test]
fn harness_style() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let n = rt.block_on(race());
    assert_eq!(n, 2, "an update was lost in a hand-built runtime");
}

#[tokio::test]
async fn realistic() {
    // Seeded hash order, timers, a channel, wall-clock reads: the same
    // trace in a sweep's process as in a fresh one.
    let map: std::collections::HashMap<u32, u32> = (0..20).map(|i| (i, i * 2)).collect();
    let (tx, mut rx) = tokio::sync::mpsc::channel(4);
    for (k, v) in map {
        let tx = tx.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(u64::from(v % 7))).await;
            tx.send(k).await.unwrap();
        });
    }
    drop(tx);
    let mut n = 0;
    while rx.recv().await.is_some() {
        n += 1;
    }
    assert_eq!(n, 20);
    assert!(std::time::SystemTime::now() > std::time::UNIX_EPOCH);
}

static RUNS: AtomicU64 = AtomicU64::new(0);

#[tokio::test]
async fn leaks_state() {
    // Process-wide state kept from an earlier seed changes the schedule.
    let n = RUNS.fetch_add(1, Ordering::SeqCst);
    for _ in 0..n % 3 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test]
async fn planted_deadlock() {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let _ = rx.await;
    drop(tx);
}

#[tokio::test]
async fn planted_escape() {
    std::process::Command::new("true").status().unwrap();
}

#[tokio::test]
async fn planted_busy_loop() {
    tokio::spawn(async {
        let mut x = 0u64;
        loop {
            x = std::hint::black_box(x.wrapping_add(1));
        }
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn planted_hang_after_a_datagram() {
    let socket = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let to = socket.local_addr().unwrap();
    socket.send_to(b"ping", to).await.unwrap();
    let mut buf = [0u8; 4];
    socket.recv_from(&mut buf).await.unwrap();
    let mut x = 0u64;
    loop {
        x = std::hint::black_box(x.wrapping_add(1));
    }
}

#[tokio::test]
async fn planted_thread_spin() {
    // A std thread polls by hand a future of its own (nothing of the
    // simulation's) until it is ready, which it never is.
    std::thread::spawn(|| {
        let mut never = std::pin::pin!(std::future::pending::<()>());
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        while std::future::Future::poll(never.as_mut(), &mut cx).is_pending() {}
    });
    std::thread::sleep(std::time::Duration::from_millis(100));
}

#[tokio::test]
async fn planted_spin() {
    loop {
        tokio::task::yield_now().await;
    }
}

#[tokio::test]
async fn planted_abort() {
    if planted::seeded_u64() % 2 == 0 {
        std::process::abort();
    }
}

#[test]
fn planted_handle_across_real_threads() {
    // A plain test with real threads asked for: its thread is real, and so
    // is the one it starts, whose runtime is a simulation of its own. Using
    // that runtime's handle here is refused, whichever thread gets there
    // first. (Without SIM_ALLOW_THREADS, the test's first thread starts one
    // simulation that both threads are in, and the handle works.)
    std::env::set_var("SIM_ALLOW_THREADS", "1");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let (wake, woken) = tokio::sync::oneshot::channel::<()>();
        tx.send((rt.handle().clone(), wake)).unwrap();
        rt.block_on(async {
            let _ = woken.await;
        });
    });
    let (handle, _wake) = rx.recv().unwrap();
    handle.spawn(async {});
}
"#;

const DEEP: &str = r#"
use std::sync::{Arc, Mutex};

#[tokio::test]
async fn four_tasks_in_reverse_order() {
    // The bug needs four tasks of 20 steps to run whole, one after the
    // other, in the reverse of their spawn order: three orderings in a
    // long run, which a uniform schedule never stumbles into.
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for id in 0..4u8 {
        let log = log.clone();
        tasks.push(tokio::spawn(async move {
            for _ in 0..20 {
                log.lock().unwrap().push(id);
                planted::pause().await;
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let mut reversed = Vec::new();
    for id in (0..4u8).rev() {
        reversed.extend(std::iter::repeat_n(id, 20));
    }
    assert!(*log.lock().unwrap() != reversed, "the planted deep bug");
}
"#;

const CLUSTER: &str = r#"
use std::time::Duration;
use tokio::sim::{Fault, Sim};

#[test]
fn a_cluster_that_fails_after_a_partition() {
    let mut sim = Sim::new();
    sim.host("server", || async {
        let socket = tokio::net::UdpSocket::bind("0.0.0.0:9").await.unwrap();
        let mut buf = [0u8; 16];
        loop {
            let (n, from) = socket.recv_from(&mut buf).await.unwrap();
            socket.send_to(&buf[..n], from).await.unwrap();
        }
    });
    sim.at(Duration::from_millis(300), Fault::partition("client", "server"));
    sim.at(Duration::from_millis(700), Fault::heal("client", "server"));
    sim.client("client", async {
        let socket = tokio::net::UdpSocket::bind("0.0.0.0:0").await.unwrap();
        let mut answered = 0;
        for i in 0..10u8 {
            socket.send_to(&[i], "server:9").await.unwrap();
            let mut buf = [0u8; 16];
            if tokio::time::timeout(Duration::from_millis(50), socket.recv(&mut buf)).await.is_ok() {
                answered += 1;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(answered, 10, "every ping answered");
    });
    sim.run();
}
"#;

const STORY: &str = r#"
//! The new user's service: a counter over TCP whose client asserts on an
//! answer. A partition at 100 ms holds its request; by the time the client
//! gives up, a monitor's pings have pushed the partition far out of the
//! last notes.
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sim::{Fault, Sim};

async fn serve_lines(port: u16) {
    let listener = tokio::net::TcpListener::bind(("0.0.0.0", port)).await.unwrap();
    loop {
        let (stream, _) = listener.accept().await.unwrap();
        tokio::spawn(async move {
            let (read, mut write) = stream.into_split();
            let mut lines = BufReader::new(read).lines();
            let mut total = 0u64;
            while let Some(line) = lines.next_line().await.unwrap() {
                total += line.trim_start_matches("ADD ").parse::<u64>().unwrap_or(0);
                write.write_all(format!("OK {total}\n").as_bytes()).await.unwrap();
            }
        });
    }
}

#[test]
fn the_counter_answers_every_add() {
    let mut sim = Sim::new();
    sim.host("store", || serve_lines(7));
    sim.host("peer", || serve_lines(8));
    sim.at(Duration::from_millis(100), Fault::partition("client", "store"));
    sim.client("monitor", async {
        let stream = tokio::net::TcpStream::connect("peer:8").await.unwrap();
        let (read, mut write) = stream.into_split();
        let mut lines = BufReader::new(read).lines();
        for _ in 0..100 {
            write.write_all(b"ADD 0\n").await.unwrap();
            lines.next_line().await.unwrap();
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    });
    sim.client("client", async {
        let stream = tokio::net::TcpStream::connect("store:7").await.unwrap();
        let (read, mut write) = stream.into_split();
        let mut lines = BufReader::new(read).lines();
        for i in 1..=40u64 {
            write.write_all(format!("ADD {i}\n").as_bytes()).await.unwrap();
            let answer = tokio::time::timeout(Duration::from_millis(300), lines.next_line()).await;
            assert!(answer.is_ok(), "the store answers ADD {i}");
            tokio::time::sleep(Duration::from_millis(3)).await;
        }
    });
    sim.run();
}
"#;

const SWARMED: &str = r#"
//! A 2-second harness test under the default swarm (disk faults off):
//! the store keeps its count in memory, so a crash early in the test
//! loses acknowledged writes; its twin appends each write to a synced log
//! (in a synced directory: without that, a crash may lose the new file).
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sim::swarm::{Dim, Swarm};
use tokio::sim::Sim;

async fn store(durable: bool) {
    let path = std::env::temp_dir().join("count.log");
    let mut log = None;
    let mut count = 0u32;
    if durable {
        count = tokio::fs::read(&path).await.map_or(0, |b| b.len() as u32);
        let mut options = tokio::fs::OpenOptions::new();
        options.create(true).append(true);
        log = Some(options.open(&path).await.unwrap());
        // A new file's name is durable once its directory is synced.
        let dir = tokio::fs::File::open(std::env::temp_dir()).await.unwrap();
        dir.sync_all().await.unwrap();
    }
    let listener = tokio::net::TcpListener::bind("0.0.0.0:9").await.unwrap();
    loop {
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut op = [0u8; 1];
        if stream.read_exact(&mut op).await.is_err() {
            continue;
        }
        if op[0] == 1 {
            if let Some(log) = &mut log {
                log.write_all(&[1]).await.unwrap();
                log.sync_all().await.unwrap();
            }
            count += 1;
        }
        let _ = stream.write_all(&count.to_be_bytes()).await;
    }
}

async fn request(op: u8) -> std::io::Result<u32> {
    let mut stream = tokio::net::TcpStream::connect("store:9").await?;
    stream.write_all(&[op]).await?;
    let mut count = [0u8; 4];
    stream.read_exact(&mut count).await?;
    Ok(u32::from_be_bytes(count))
}

fn run(durable: bool) {
    let mut sim = Sim::new();
    sim.swarm(
        Swarm::new(&["store"])
            .disk_error_rate(Dim::Off)
            .disk_full_every_s(Dim::Off)
            .disk_corruption_rate(Dim::Off),
    );
    sim.host("store", move || store(durable));
    sim.client("client", async {
        let mut acknowledged = 0;
        for _ in 0..20 {
            // Bounded: a fault lasts a fraction of this short test.
            for _ in 0..1_000 {
                match tokio::time::timeout(Duration::from_millis(200), request(1)).await {
                    Ok(Ok(_)) => {
                        acknowledged += 1;
                        break;
                    }
                    _ => tokio::time::sleep(Duration::from_millis(50)).await,
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        for _ in 0..1_000 {
            if let Ok(Ok(count)) = tokio::time::timeout(Duration::from_millis(200), request(0)).await {
                assert!(count >= acknowledged, "the planted crash bug: {acknowledged} acknowledged, {count} kept");
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the store never answered");
    });
    sim.run();
}

#[test]
fn counts_in_memory() {
    run(false);
}

#[test]
fn counts_in_a_synced_log() {
    run(true);
}

/// One request: a byte out, the same byte back.
async fn echo(stream: &mut tokio::net::TcpStream, byte: u8) -> std::io::Result<()> {
    stream.write_all(&[byte]).await?;
    let mut back = [0u8; 1];
    stream.read_exact(&mut back).await?;
    assert_eq!(back[0], byte);
    Ok(())
}

/// A client of a server the swarm crashes and restarts. The planted bug
/// keeps its first connection for good; the twin reconnects, and its
/// connect goes through the crash: its SYN is resent until the restarted
/// server answers.
fn requests(reconnect: bool) {
    let mut sim = Sim::new();
    sim.swarm(
        Swarm::new(&["server"])
            .disk_error_rate(Dim::Off)
            .disk_full_every_s(Dim::Off)
            .disk_corruption_rate(Dim::Off),
    );
    sim.host("server", || async {
        let listener = tokio::net::TcpListener::bind("0.0.0.0:7").await.unwrap();
        loop {
            let (mut stream, _) = listener.accept().await.unwrap();
            tokio::spawn(async move {
                let (mut r, mut w) = stream.split();
                let _ = tokio::io::copy(&mut r, &mut w).await;
            });
        }
    });
    sim.client("client", async move {
        let mut stream = tokio::net::TcpStream::connect("server:7").await.ok();
        for i in 0..20u8 {
            // Bounded: a crash lasts a fraction of this short test.
            for _ in 0..1_000 {
                if let Some(s) = stream.as_mut() {
                    if let Ok(Ok(())) = tokio::time::timeout(Duration::from_millis(300), echo(s, i)).await {
                        break;
                    }
                }
                assert!(reconnect, "the planted reconnect bug: request {i} failed and the client keeps its broken connection");
                let connect = tokio::net::TcpStream::connect("server:7");
                stream = tokio::time::timeout(Duration::from_secs(5), connect).await.ok().and_then(Result::ok);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    sim.run();
}

#[test]
fn keeps_one_connection() {
    requests(false);
}

#[test]
fn reconnects_through_a_restart() {
    requests(true);
}
"#;

const LOCKS: &str = r#"
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;

/// Two tasks take two locks in opposite orders.
#[tokio::test]
async fn lock_order() {
    let accounts = Arc::new(Mutex::new(0u64));
    let ledger = Arc::new(Mutex::new(0u64));
    let (a, l) = (accounts.clone(), ledger.clone());
    let transfer = tokio::spawn(async move {
        let _accounts = a.lock().await;
        tokio::time::sleep(Duration::from_millis(10)).await;
        let _ledger = l.lock().await; // transfer waits here
    });
    let audit = tokio::spawn(async move {
        let _ledger = ledger.lock().await;
        tokio::time::sleep(Duration::from_millis(10)).await;
        let _accounts = accounts.lock().await; // audit waits here
    });
    let _ = transfer.await;
    let _ = audit.await;
}
"#;

const STALE: &str = r#"
//! A replica that serves reads while the writes reach it over UDP: a read
//! that overtakes the write before it sees an older value (a stale read,
//! not linearizable). Each operation recorded in one line.
use tokio::net::UdpSocket;
use tokio::sim::history::{self, models, Linearizable, Op};
use tokio::sim::Sim;

#[test]
fn reads_from_the_replica_are_linearizable() {
    let mut sim = Sim::new();
    sim.check_history(Linearizable::new(models::Register::new()));
    sim.host("replica", || async {
        let socket = UdpSocket::bind("0.0.0.0:9").await.unwrap();
        let mut value = 0u8;
        let mut buf = [0u8; 1];
        loop {
            let (_, from) = socket.recv_from(&mut buf).await.unwrap();
            match buf[0] {
                0 => drop(socket.send_to(&[value], from).await),
                written => value = written,
            }
        }
    });
    sim.client("client", async {
        let socket = UdpSocket::bind("0.0.0.0:0").await.unwrap();
        for v in 1..=5u8 {
            // The primary acknowledges at once, and replicates after.
            history::op(Op::write("x", v), socket.send_to(&[v], "replica:9")).await.unwrap();
            let read = async {
                socket.send_to(&[0], "replica:9").await?;
                let mut buf = [0u8; 1];
                socket.recv_from(&mut buf).await?;
                Ok::<_, std::io::Error>(buf[0])
            };
            history::op(Op::read("x"), read).await.unwrap();
        }
    });
    sim.run();
}
"#;

const LATE: &str = r#"
//! A planted bug that needs a late datagram: an answer must come within
//! 40 ms, and a round trip over links of 1 to 30 ms each way can take 60.
use std::time::Duration;
use tokio::sim::{LinkConfig, Sim};

#[test]
fn answers_arrive_in_time() {
    let mut sim = Sim::new();
    sim.default_link(LinkConfig {
        latency_min: Duration::from_millis(1),
        latency_max: Duration::from_millis(30),
        ..LinkConfig::default()
    });
    sim.host("server", || async {
        let socket = tokio::net::UdpSocket::bind("0.0.0.0:9").await.unwrap();
        let mut buf = [0u8; 16];
        loop {
            let (n, from) = socket.recv_from(&mut buf).await.unwrap();
            socket.send_to(&buf[..n], from).await.unwrap();
        }
    });
    sim.client("client", async {
        let socket = tokio::net::UdpSocket::bind("0.0.0.0:0").await.unwrap();
        for i in 0..20u8 {
            socket.send_to(&[i], "server:9").await.unwrap();
            let mut buf = [0u8; 16];
            let answer = tokio::time::timeout(Duration::from_millis(40), socket.recv(&mut buf)).await;
            assert!(answer.is_ok(), "the planted late answer: ping {i}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    sim.run();
}
"#;

const SERVERS: &str = r#"
//! One host, three servers, and a test body that asks each once: every
//! event at t=0 (the timeline draws them in event order, a lane a server),
//! on a paused clock, where polls take no time.
use tokio::io::{AsyncReadExt, AsyncWriteExt};

async fn serve(listener: tokio::net::TcpListener) {
    let (mut stream, _) = listener.accept().await.unwrap();
    let mut byte = [0u8; 1];
    stream.read_exact(&mut byte).await.unwrap();
    stream.write_all(&byte).await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn three_servers_answer() {
    let mut addresses = Vec::new();
    let mut servers = Vec::new();
    for which in 0..3 {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        addresses.push(listener.local_addr().unwrap());
        // Three spawn sites: three servers, each its own task group.
        servers.push(match which {
            0 => tokio::spawn(serve(listener)),
            1 => tokio::spawn(serve(listener)),
            _ => tokio::spawn(serve(listener)),
        });
    }
    for (i, address) in addresses.iter().enumerate() {
        let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
        stream.write_all(&[i as u8]).await.unwrap();
        let mut byte = [0u8; 1];
        stream.read_exact(&mut byte).await.unwrap();
        assert_eq!(byte[0], i as u8);
    }
    for server in servers {
        server.await.unwrap();
    }
}
"#;

const SHRINKABLE: &str = r#"
use std::time::Duration;
use tokio::sim::{Fault, Nemesis, Sim};

#[test]
fn pings_time_out_under_a_partition() {
    let mut sim = Sim::new();
    sim.host("server", || async {
        let socket = tokio::net::UdpSocket::bind("0.0.0.0:9").await.unwrap();
        let mut buf = [0u8; 16];
        loop {
            let (n, from) = socket.recv_from(&mut buf).await.unwrap();
            socket.send_to(&buf[..n], from).await.unwrap();
        }
    });
    sim.host("bystander", || async {
        std::future::pending::<()>().await;
    });
    // The cause: a partition from 1 s to 2 s.
    sim.at(Duration::from_secs(1), Fault::partition("client", "server"));
    sim.at(Duration::from_secs(2), Fault::heal("client", "server"));
    // Noise: the bystander crashes and its clock jumps, all the time.
    let s = Duration::from_millis;
    sim.nemesis(
        Nemesis::new()
            .crash_restart(&["bystander"], s(100)..s(300), s(50)..s(100))
            .clock_jump(&["bystander"], s(100)..s(300), 1_000),
    );
    sim.client("client", async {
        let socket = tokio::net::UdpSocket::bind("0.0.0.0:0").await.unwrap();
        for i in 0..30u8 {
            socket.send_to(&[i], "server:9").await.unwrap();
            let mut buf = [0u8; 16];
            let answered = tokio::time::timeout(Duration::from_millis(50), socket.recv(&mut buf)).await;
            assert!(answered.is_ok(), "ping {i} timed out");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    sim.run();
}

/// Fails only when three workers finish in reverse order: never under a
/// FIFO schedule, once in six seeds under the random one.
#[tokio::test]
async fn workers_finish_in_reverse() {
    let order = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut handles = Vec::new();
    for i in 0..3 {
        let order = order.clone();
        handles.push(tokio::spawn(async move {
            for _ in 0..5 {
                planted::pause().await;
            }
            order.lock().unwrap().push(i);
        }));
    }
    for handle in handles {
        handle.await.unwrap();
    }
    assert_ne!(*order.lock().unwrap(), vec![2, 1, 0], "the workers finished in reverse");
}
"#;

const WORKERS: &str = r#"
// A transaction's `write` trusts that `begin`, with fewer awaits, ran
// first: true on one thread, where a yield waits behind every ready task,
// and false when `begin`'s worker falls behind (a long queue, a preempted
// thread). The fixed twin waits for `begin`.
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

async fn transaction(fixed: bool) -> bool {
    let stop = Arc::new(AtomicBool::new(false));
    let busy: Vec<_> = (0..24)
        .map(|_| {
            let stop = stop.clone();
            tokio::spawn(async move {
                for _ in 0..100_000 {
                    if stop.load(Relaxed) {
                        break;
                    }
                    tokio::task::yield_now().await;
                }
            })
        })
        .collect();
    let open = Arc::new(AtomicBool::new(false));
    let (opened, wait_open) = tokio::sync::oneshot::channel();
    let begin = {
        let open = open.clone();
        tokio::spawn(async move {
            for _ in 0..2 {
                tokio::task::yield_now().await;
            }
            open.store(true, Relaxed);
            let _ = opened.send(());
        })
    };
    let write = tokio::spawn(async move {
        for _ in 0..5 {
            tokio::task::yield_now().await;
        }
        if fixed {
            let _ = wait_open.await;
        }
        open.load(Relaxed)
    });
    begin.await.unwrap();
    let ok = write.await.unwrap();
    stop.store(true, Relaxed);
    for task in busy {
        task.await.unwrap();
    }
    ok
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn worker_race() {
    assert!(transaction(false).await, "the planted worker race: write ran before begin");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn worker_race_fixed() {
    assert!(transaction(true).await);
}
"#;

const FRAMES: &str = r#"
// A server reads length-prefixed frames in a `select!` beside a ticker.
// `read_frame` is not cancel-safe: when the tick wins while a frame is half
// read, the bytes it read are gone and the stream is out of step. On one
// host a frame arrives whole, so the bug never shows; under `--swarm`
// writes arrive in pieces, late. The fixed twin keeps its buffer across
// iterations and reads with `read`, which is cancel-safe.
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const FRAMES: usize = 20;
const FRAME_BYTES: usize = 2_000;

async fn read_frame(stream: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    let len = stream.read_u32().await? as usize;
    let mut frame = vec![0; len];
    stream.read_exact(&mut frame).await?;
    Ok(frame)
}

async fn serve(mut stream: TcpStream, fixed: bool) -> std::io::Result<Vec<Vec<u8>>> {
    let mut ticker = tokio::time::interval(Duration::from_micros(500));
    let mut frames = Vec::new();
    let mut buf: Vec<u8> = Vec::new();
    // Bounded: every turn reads, or ticks toward the test's end.
    for _ in 0..1_000_000 {
        if frames.len() == FRAMES {
            break;
        }
        if fixed {
            while buf.len() >= 4 {
                let len = u32::from_be_bytes(buf[..4].try_into().unwrap()) as usize;
                if buf.len() < 4 + len {
                    break;
                }
                frames.push(buf[4..4 + len].to_vec());
                buf.drain(..4 + len);
            }
            let mut chunk = [0u8; 4096];
            tokio::select! {
                n = stream.read(&mut chunk) => {
                    let n = n?;
                    if n == 0 {
                        break;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                }
                _ = ticker.tick() => {}
            }
        } else {
            tokio::select! {
                frame = read_frame(&mut stream) => frames.push(frame?),
                _ = ticker.tick() => {}
            }
        }
    }
    Ok(frames)
}

async fn exchange(fixed: bool) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let client = tokio::spawn(async move {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        for i in 0..FRAMES {
            let mut frame = (FRAME_BYTES as u32).to_be_bytes().to_vec();
            frame.extend(std::iter::repeat(i as u8).take(FRAME_BYTES));
            stream.write_all(&frame).await.unwrap();
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        stream.shutdown().await.unwrap();
    });
    let (stream, _) = listener.accept().await.unwrap();
    let frames = serve(stream, fixed).await;
    client.await.unwrap();
    let frames = frames.expect("the planted frame bug: the stream fell out of step");
    assert_eq!(frames.len(), FRAMES, "the planted frame bug: frames were lost");
    for (i, frame) in frames.iter().enumerate() {
        assert!(
            frame.len() == FRAME_BYTES && frame.iter().all(|&b| b == i as u8),
            "the planted frame bug: frame {i} is torn"
        );
    }
}

#[tokio::test]
async fn frames_buggy() {
    exchange(false).await;
}

#[tokio::test]
async fn frames_fixed() {
    exchange(true).await;
}
"#;

const OTHER: &str = r#"
#[tokio::test]
async fn lost_update() {
    // Same name as in planted.rs, and always passes.
}

/// Leans on the order tokio's current_thread runtime runs tasks in: the
/// task spawned first runs first.
#[tokio::test]
async fn first_spawned_runs_first() {
    let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let handles: Vec<_> = (0..3)
        .map(|i| {
            let log = log.clone();
            tokio::spawn(async move { log.lock().unwrap().push(i) })
        })
        .collect();
    for handle in handles {
        handle.await.unwrap();
    }
    assert_eq!(*log.lock().unwrap(), [0, 1, 2], "the tasks ran out of spawn order");
}

/// The planted race, marked as a slow test would be: it runs only when
/// asked for.
#[tokio::test]
#[ignore]
async fn ignored_race() {
    let counter = std::sync::Arc::new(std::sync::Mutex::new(0));
    let a = tokio::spawn(planted::add_one(counter.clone()));
    let b = tokio::spawn(planted::add_one(counter.clone()));
    a.await.unwrap();
    b.await.unwrap();
    assert_eq!(*counter.lock().unwrap(), 2, "an update was lost");
}
"#;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn tmp() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
}

/// Dependencies compiled once for every fixture.
fn shared_target() -> PathBuf {
    tmp().join("sweep-target")
}

/// The report of failing `test` in a sweep's stderr: from its `FAIL` line
/// to the next test's.
fn failure_section(stderr: &str, test: &str) -> String {
    let start = stderr
        .find(&format!("FAIL {test} "))
        .unwrap_or_else(|| panic!("{test} fails: {stderr}"));
    let rest = &stderr[start..];
    let end = rest[1..].find("\nFAIL ").map_or(rest.len(), |e| e + 1);
    rest[..end].to_string()
}

/// How a fixture crate builds in the shared target.
#[derive(Clone, Copy, PartialEq)]
enum Build {
    /// As every other shared fixture: the same package, sources and
    /// times (`common::settle_times`), so its targets compile once for all
    /// of them and each later copy finds them fresh. A test may add a
    /// target of a name no other test uses.
    Shared,
    /// A version of its own, so that it builds its own binaries: for a test
    /// that needs a build under way, or that reads its binary's paths (a
    /// backtrace names the files of the copy that built it).
    Own,
}

/// A fresh copy of the fixture crate that builds once for all the tests
/// that take it, with a lock that pins the real tokio.
fn fixture(name: &str) -> PathBuf {
    fixture_built(name, Build::Shared)
}

/// A fresh copy of the fixture crate with binaries of its own.
fn own_fixture(name: &str) -> PathBuf {
    fixture_built(name, Build::Own)
}

/// The fixture crate's files other than its manifest: (path, text).
const FILES: [(&str, &str); 15] = [
    ("src/lib.rs", LIB),
    ("tests/planted.rs", PLANTED),
    ("tests/other.rs", OTHER),
    ("tests/workers.rs", WORKERS),
    ("tests/frames.rs", FRAMES),
    ("tests/bare.rs", BARE),
    ("tests/deep.rs", DEEP),
    ("tests/cluster.rs", CLUSTER),
    ("tests/shrinkable.rs", SHRINKABLE),
    ("tests/swarmed.rs", SWARMED),
    ("tests/locks.rs", LOCKS),
    ("tests/late.rs", LATE),
    ("tests/stale.rs", STALE),
    ("tests/story.rs", STORY),
    ("tests/servers.rs", SERVERS),
];

fn fixture_built(name: &str, build: Build) -> PathBuf {
    let dir = tmp().join(format!("sweep-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    // Fixtures share one target directory, where cargo names a package's
    // artifacts by name and version: a version of its own keeps an own
    // fixture's binaries from replacing the shared ones.
    let version = match build {
        Build::Shared => format!("2.{}", common::content_hash(&FILES)),
        Build::Own => {
            let hash = name
                .bytes()
                .fold(0u32, |h, b| (h * 31 + u32::from(b)) % 10_000);
            format!("1.{hash}")
        }
    };
    write(
        &dir.join("Cargo.toml"),
        &MANIFEST.replace("VERSION", &version),
    );
    for (path, text) in FILES {
        write(&dir.join(path), text);
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args(["generate-lockfile", "--quiet"])
        .current_dir(&dir)
        .status()
        .unwrap();
    assert!(status.success());
    if build == Build::Shared {
        common::settle_times(&dir);
    }
    dir
}

fn sim_command(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cargo-sim"));
    command
        .arg("sim")
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", shared_target())
        // Line tables are all the reports read: full debug info would more
        // than double this target's size on CI's disk.
        .env("CARGO_PROFILE_DEV_DEBUG", "line-tables-only")
        .env_remove("SIM_SEED")
        .env_remove("SIM_TRACE");
    command
}

/// Runs `cargo sim` with `words` (split at spaces) as its arguments.
fn sim(dir: &Path, words: &str, env: &[(&str, &str)]) -> (Output, String, String) {
    let args: Vec<&str> = words.split_whitespace().collect();
    sim_args(dir, &args, env)
}

fn sim_args(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (Output, String, String) {
    let mut command = sim_command(dir, args);
    for (k, v) in env {
        command.env(k, v);
    }
    let output = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    (output, stdout, stderr)
}

/// The replay commands printed for `test`, in order.
fn replay_lines(stderr: &str, test: &str) -> Vec<String> {
    stderr
        .lines()
        .filter_map(|l| {
            // A sweep's report line, or a one-seed run's seed line.
            l.trim()
                .strip_prefix("replay: ")
                .or_else(|| l.split_once("; replay: ").map(|(_, line)| line))
        })
        .filter(|l| l.ends_with(&format!("-- {test} --exact")))
        .map(str::to_string)
        .collect()
}

/// Runs a printed replay line as a user pastes it (with this cargo-sim in
/// place of an installed `cargo sim`).
fn run_replay(dir: &Path, line: &str) -> (Output, String) {
    let line = line.replacen(
        "cargo sim ",
        &format!("{} sim ", env!("CARGO_BIN_EXE_cargo-sim")),
        1,
    );
    let output = Command::new("sh")
        .arg("-c")
        .arg(&line)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", shared_target())
        // Line tables are all the reports read: full debug info would more
        // than double this target's size on CI's disk.
        .env("CARGO_PROFILE_DEV_DEBUG", "line-tables-only")
        .env_remove("SIM_SEED")
        .output()
        .unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output, all)
}

#[test]
fn a_sweep_finds_each_flaky_test_and_its_replay_reproduces() {
    let dir = fixture("find");
    let lock_before = std::fs::read(dir.join("Cargo.lock")).unwrap();
    let (output, stdout, stderr) = sim(
        &dir,
        "test --seeds 1000 --test planted --test other -- lost_update harness_style always_passes",
        &[],
    );
    assert_eq!(output.status.code(), Some(101), "{stdout}\n{stderr}");
    assert!(stderr.contains("sim: identity: commit"), "{stderr}");
    assert!(
        stdout.contains("sim: 2 passed, 2 failed"),
        "{stdout}\n{stderr}"
    );
    for test in ["lost_update", "harness_style"] {
        assert!(
            stderr.contains(&format!(
                "FAIL {test} [cargo sim test -p planted --test planted]"
            )),
            "{stderr}"
        );
        let lines = replay_lines(&stderr, test);
        assert_eq!(
            lines.len(),
            1,
            "one first failing seed for {test}: {stderr}"
        );
        let seed = lines[0]
            .strip_prefix("SIM_SEED=")
            .and_then(|l| l.split(' ').next())
            .unwrap()
            .to_string();
        assert!(
            stderr.contains(&format!("seed {seed}: panic")),
            "{test}: the class is named: {stderr}"
        );
        assert!(lines[0].contains("--test planted"), "names its target");
        // Pasted as it is, the replay line fails the same way, at the same
        // seed, running that one test only (other.rs has a lost_update too).
        let (replay, text) = run_replay(&dir, &lines[0]);
        assert_eq!(replay.status.code(), Some(101), "{text}");
        assert!(text.contains("1 test in 1 binary × 1 seed"), "{text}");
        // One seed: one FAIL line after the test's whole output.
        assert!(
            text.contains(&format!("seed {seed} failed (panic)")),
            "{text}"
        );
        assert!(text.contains("an update was lost"), "{text}");
        // The report ends with what happened just before the failure.
        assert!(
            text.contains("The last events of the run before it:")
                || text.contains("The last events of the last run before it:"),
            "{text}"
        );
        // Its own replay line is the same line: it does not grow.
        assert_eq!(replay_lines(&text, test), lines, "{text}");
        // The seed is kept, and runs first next time.
        let saved = std::fs::read_to_string(dir.join("sim-regressions/test-planted.txt")).unwrap();
        assert!(saved.contains(&format!("{test} {seed} panic")), "{saved}");
    }
    // A sweep over other seeds still starts with the saved ones.
    let (output, _, stderr) = sim(
        &dir,
        "test --seeds 5000..5001 --test planted -- lost_update --exact",
        &[],
    );
    assert_eq!(output.status.code(), Some(101), "{stderr}");
    assert!(stderr.contains("FAIL lost_update"), "{stderr}");
    assert!(
        std::fs::read(dir.join("Cargo.lock")).unwrap() == lock_before,
        "the user's Cargo.lock is unchanged"
    );
}

/// A failure that needs an order of tasks tokio's `current_thread` runtime
/// never gives says so (its seed passes in FIFO order); a race that
/// happens in that order too (the lost update) does not.
#[test]
fn a_failure_that_needs_another_order_of_tasks_says_so() {
    let dir = fixture("order");
    let (output, stdout, stderr) = sim(
        &dir,
        "test --no-save --seeds 50 --test planted --test other -- first_spawned_runs_first lost_update",
        &[],
    );
    assert_eq!(output.status.code(), Some(101), "{stdout}\n{stderr}");
    let report = |test: &str| failure_section(&stderr, test);
    let note = "passes when ready tasks run in the order they became ready";
    let ordered = report("first_spawned_runs_first");
    assert!(ordered.contains(note), "{ordered}");
    assert!(ordered.contains("run it with SIM_POLICY=fifo"), "{ordered}");
    let lost = report("lost_update");
    assert!(
        !lost.contains(note),
        "the lost update happens in FIFO order too: {lost}"
    );
    // In FIFO order the first test passes every seed.
    let (output, _, stderr) = sim(
        &dir,
        "test --no-save --seeds 50 --test other -- first_spawned_runs_first",
        &[("SIM_POLICY", "fifo")],
    );
    assert_eq!(output.status.code(), Some(0), "{stderr}");
}

/// An `#[ignore]`d test swept when asked for (`--include-ignored`): the
/// runs after the sweep run it too, so its report says nothing they did
/// not see (the FIFO-order run of the race fails as well), its replay
/// line asks for it and fails again, and a filter naming it without the
/// flag says why it matched nothing.
#[test]
fn an_ignored_test_asked_for_is_reported_and_replayed_as_swept() {
    let dir = fixture("ignored");
    let (output, stdout, stderr) = sim(
        &dir,
        "test --no-save --seeds 50 --test other -- ignored_race --include-ignored",
        &[],
    );
    assert_eq!(output.status.code(), Some(101), "{stdout}\n{stderr}");
    let report = failure_section(&stderr, "ignored_race");
    assert!(
        !report.contains("passes when ready tasks run in the order they became ready"),
        "the race fails in FIFO order too, when that run runs it: {report}"
    );
    let replay = report
        .lines()
        .find_map(|l| l.trim().strip_prefix("replay: "))
        .unwrap_or_else(|| panic!("a replay line: {report}"));
    assert!(
        replay.ends_with("-- ignored_race --exact --include-ignored"),
        "{replay}"
    );
    let seed = replay
        .strip_prefix("SIM_SEED=")
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap();
    let (output, _, again) = sim(
        &dir,
        "test --no-save --test other -- ignored_race --exact --include-ignored",
        &[("SIM_SEED", seed)],
    );
    assert_eq!(output.status.code(), Some(101), "the replay fails: {again}");
    assert!(again.contains("an update was lost"), "{again}");
    let (output, _, unasked) = sim(
        &dir,
        "test --no-save --test other -- ignored_race --exact",
        &[],
    );
    assert_eq!(output.status.code(), Some(2), "{unasked}");
    assert!(
        unasked.contains("it matches 1 test marked #[ignore]")
            && unasked.contains("`ignored_race`")
            && unasked.contains("add --include-ignored"),
        "{unasked}"
    );
}

/// A client's `assert!` failing after a partition (the new user's kind of
/// service): the report alone names the partition, however far back, the
/// message the partition holds, with its data, and the tasks by their
/// spawn sites.
#[test]
fn a_panic_report_names_the_partition_and_the_message_it_holds() {
    let dir = fixture("story");
    let (output, stdout, stderr) = sim(&dir, "test --seeds 1 --no-save --test story", &[]);
    assert_eq!(output.status.code(), Some(101), "{stdout}\n{stderr}");
    for words in [
        "the store answers ADD ",
        "What happened before it:",
        // The partition, far before the last notes.
        "Earlier faults (the last ones, and those of client and its peers store):",
        "t=100ms partition client->store",
        // The request it holds, as text.
        "Held by a link, not delivered (1):",
        "held #",
        "client:49152>store:7 len=",
        // The tasks by spawn site, not 'task'.
        "[task tests/story.rs:",
    ] {
        assert!(
            stderr.contains(words),
            "the report names {words:?}: {stderr}"
        );
    }
    assert!(!stderr.contains("'task'"), "{stderr}");
}

#[test]
fn each_failure_class_is_named() {
    let dir = own_fixture("classes");
    let started = Instant::now();
    let (output, stdout, stderr) = sim(
        &dir,
        "test --seeds 4 --keep-going --no-save --test planted -- planted_",
        &[("SIM_HANG_POLL_S", "1")],
    );
    assert_eq!(output.status.code(), Some(101), "{stdout}\n{stderr}");
    let section = |test: &str| failure_section(&stderr, test);
    let deadlock = section("planted_deadlock");
    assert!(
        deadlock.contains("4 of 4 seeds failed (deadlock 4)"),
        "{deadlock}"
    );
    // It explains itself as a panic does: the last events, by task.
    assert!(
        deadlock.contains("The last events of the run before it:")
            && deadlock.contains("task 0 'root'"),
        "{deadlock}"
    );
    let escape = section("planted_escape");
    assert!(escape.contains("(escape 4)"), "{escape}");
    assert!(
        escape.contains("escape refused: a real process was started"),
        "the refusal's explanation is in the failure itself: {escape}"
    );
    // One outcome whatever the real threads' timing: the refused escape,
    // not the other thread's stalled run.
    let across = section("planted_handle_across_real_threads");
    assert!(
        across.contains("4 of 4 seeds failed (escape 4)"),
        "{across}"
    );
    assert!(
        across.contains("a runtime handle was used on a real thread"),
        "{across}"
    );
    let hang = section("planted_busy_loop");
    assert!(hang.contains("(hang 4)"), "{hang}");
    assert!(
        hang.contains("spawned at tests/planted.rs:"),
        "names the spawn site: {hang}"
    );
    // A hang's report tells the story so far, as a panic's does.
    let after_datagram = section("planted_hang_after_a_datagram");
    assert!(after_datagram.contains("(hang 4)"), "{after_datagram}");
    assert!(
        after_datagram.contains("What happened before it:") && after_datagram.contains("\"ping\""),
        "{after_datagram}"
    );
    // The thread that keeps the turn is named, not the test that gave it.
    let thread_spin = section("planted_thread_spin");
    assert!(thread_spin.contains("(hang 4)"), "{thread_spin}");
    assert!(
        thread_spin.contains("a std thread spawned at ./tests/planted.rs:")
            && thread_spin.contains("runs one thread at a time"),
        "{thread_spin}"
    );
    let spin = section("planted_spin");
    assert!(spin.contains("(livelock 4)"), "{spin}");
    // With the livelock limit out of reach, the same spin is a hang, and
    // its report says that virtual time never moved.
    let (output, _, stderr) = sim(
        &dir,
        "test --seeds 1 --no-save --test planted -- planted_spin",
        &[
            ("SIM_HANG_RUN_S", "1"),
            ("SIM_INSTANT_STEP_LIMIT", "100000000000"),
        ],
    );
    assert_eq!(output.status.code(), Some(101), "{stderr}");
    assert!(stderr.contains("failed (hang)"), "{stderr}");
    assert!(
        stderr.contains("virtual time stood still at 0.000000s the whole time"),
        "{stderr}"
    );
    let abort = section("planted_abort");
    assert!(abort.contains("of 4 seeds failed (crash"), "{abort}");
    assert!(abort.contains("SIGABRT"), "{abort}");
    // The process said where it aborted, and what its run did last.
    assert!(
        abort.contains("abort called at ./tests/planted.rs:"),
        "{abort}"
    );
    assert!(
        abort.contains("The last events of the run before it:"),
        "{abort}"
    );
    // Four hangs at a one-second budget, four livelocks: seconds, not minutes.
    assert!(
        started.elapsed() < Duration::from_secs(120),
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn check_determinism_names_the_first_divergent_event() {
    let dir = fixture("determinism");
    let (output, stdout, stderr) = sim(
        &dir,
        "test --seeds 50 --jobs 1 --check-determinism --no-save --test planted -- leaks_state always_passes realistic",
        &[],
    );
    assert_eq!(output.status.code(), Some(101), "{stdout}\n{stderr}");
    assert!(
        // Every seed of the others gives the trace of a fresh process.
        stdout.contains("sim: 2 passed, 1 failed"),
        "{stdout}\n{stderr}"
    );
    // One process runs seeds 0, 1, 2...: seed 0x1 yields once there, never
    // in a fresh process.
    assert!(
        stderr.lines().any(|l| {
            let l = l.trim();
            l.starts_with("seed 0x1") && l.ends_with(": nondeterminism")
        }),
        "{stderr}"
    );
    assert!(stderr.contains("first divergent event: #"), "{stderr}");
    assert!(
        stderr.contains("  A:    ") && stderr.contains("  B:    "),
        "{stderr}"
    );
    // The same comparison is a command.
    let trace = |name: &str| {
        stderr
            .split_whitespace()
            .map(|w| w.trim_end_matches(['.', ',']))
            .find(|w| w.ends_with(".trace") && w.contains(name))
            .map(str::to_string)
            .unwrap_or_else(|| panic!("no {name} trace named: {stderr}"))
    };
    let (a, b) = (trace("-a/"), trace("-b/"));
    let diff = Command::new(env!("CARGO_BIN_EXE_cargo-sim"))
        .args(["sim", "diff", &a, &b])
        .output()
        .unwrap();
    assert_eq!(diff.status.code(), Some(1));
    let text = String::from_utf8_lossy(&diff.stdout);
    assert!(text.contains("first divergent event: #"), "{text}");
    let same = Command::new(env!("CARGO_BIN_EXE_cargo-sim"))
        .args(["sim", "diff", &a, &a])
        .output()
        .unwrap();
    assert!(same.status.success());
    assert!(String::from_utf8_lossy(&same.stdout).starts_with("identical: "));
    // A reader that goes away (`cargo sim diff A B | head`) ends it
    // quietly: no panic of a print into a closed pipe.
    let mut cut = Command::new(env!("CARGO_BIN_EXE_cargo-sim"))
        .args(["sim", "diff", &a, &b])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(cut.stdout.take());
    let cut = cut.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&cut.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
}

#[test]
fn junit_and_partitions() {
    let dir = fixture("junit");
    let mut shares = Vec::new();
    for k in 1..=2 {
        let junit = dir.join(format!("share-{k}.xml"));
        let (output, stdout, stderr) = sim(
            &dir,
            &format!(
                "test --seeds 10 --partition {k}/2 --keep-going --no-save --junit {} \
                 --test planted -- planted_deadlock always_passes",
                junit.display()
            ),
            &[],
        );
        assert_eq!(output.status.code(), Some(101), "{stdout}\n{stderr}");
        assert!(stderr.contains("× 5 seeds (share "), "{stderr}");
        let xml = std::fs::read_to_string(&junit).unwrap();
        let doc = roxmltree::Document::parse(&xml).expect("JUnit output parses as XML");
        let cases: Vec<_> = doc
            .descendants()
            .filter(|n| n.has_tag_name("testcase"))
            .collect();
        assert_eq!(cases.len(), 2, "{xml}");
        let failing: Vec<_> = cases
            .iter()
            .filter(|c| c.children().any(|n| n.has_tag_name("failure")))
            .collect();
        assert_eq!(failing.len(), 1, "{xml}");
        assert_eq!(failing[0].attribute("name"), Some("planted_deadlock"));
        let text: String = failing[0]
            .descendants()
            .filter(|n| n.is_text())
            .map(|n| n.text().unwrap())
            .collect();
        assert!(text.contains("replay: SIM_SEED="), "{text}");
        let seeds: Vec<String> = text
            .lines()
            .filter_map(|l| l.trim().strip_prefix("seed "))
            // A seed the portfolio ran under PCT names its policy.
            .map(|l| l.split([':', ' ']).next().unwrap().to_string())
            .collect();
        assert_eq!(seeds.len(), 5, "{text}");
        shares.push(seeds);
    }
    assert_eq!(shares[0], ["0x0", "0x2", "0x4", "0x6", "0x8"]);
    assert_eq!(shares[1], ["0x1", "0x3", "0x5", "0x7", "0x9"]);
}

#[test]
fn quiet_doc_tests_and_a_target_dir_of_its_own() {
    let dir = fixture("quiet");
    let (output, stdout, stderr) = sim(
        &dir,
        "test --seeds 3 --test planted -- always_passes sees_cargo_env",
        &[],
    );
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("sim: 2 passed, 0 failed"), "{stdout}");
    // A passing test prints none of the simulator's lines.
    assert!(!stderr.contains("trace sha256"), "{stderr}");
    assert!(!stderr.contains("sim: always_passes"), "{stderr}");
    // Doc tests are built with --cfg simulation (the doc test asserts it).
    let (output, stdout, stderr) = sim(&dir, "test --doc", &[]);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("1 passed"), "{stdout}");
    // Under CARGO_TARGET_DIR, the simulation build keeps to <dir>/sim.
    assert!(shared_target().join("sim/debug").is_dir());
    assert!(!shared_target().join("debug/deps").exists());
}

/// Spawns cargo sim in a process group of its own, and waits until it has
/// swapped the simulation build's lock in.
fn start_and_wait_for_swap(dir: &Path, args: &[&str]) -> (std::process::Child, Vec<u8>) {
    use std::os::unix::process::CommandExt;
    let original = std::fs::read(dir.join("Cargo.lock")).unwrap();
    // A source change, so that a build (the window) is needed.
    write(&dir.join("src/extra.rs"), "");
    let child = sim_command(dir, args)
        .process_group(0)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while std::fs::read(dir.join("Cargo.lock")).unwrap_or_default() == original {
        assert!(Instant::now() < deadline, "the lock was never swapped in");
        std::thread::sleep(Duration::from_millis(5));
    }
    (child, original)
}

#[test]
fn sigint_sigterm_and_sighup_during_the_build_leave_the_lock_unchanged() {
    for (name, signal, code) in [
        ("sigint", libc::SIGINT, 130),
        ("sigterm", libc::SIGTERM, 143),
        ("sighup", libc::SIGHUP, 129),
    ] {
        let dir = own_fixture(name);
        let (mut child, original) = start_and_wait_for_swap(&dir, &["test", "--seeds", "2"]);
        // As Ctrl-C, a CI timeout or a closed terminal does: the whole group.
        kill(-(child.id() as i32), signal);
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(code), "{name}");
        assert!(
            std::fs::read(dir.join("Cargo.lock")).unwrap() == original,
            "{name} left Cargo.lock changed"
        );
    }
}

#[test]
fn kill_9_of_cargo_sim_is_repaired_by_the_next_run() {
    let dir = own_fixture("kill9");
    let (mut child, original) = start_and_wait_for_swap(&dir, &["test", "--seeds", "2"]);
    // cargo-sim alone, with no chance to clean up; its cargo carries on.
    kill(child.id() as i32, libc::SIGKILL);
    child.wait().unwrap();
    let (output, stdout, stderr) = sim(&dir, "test --seeds 1 --test planted -- always_passes", &[]);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("an earlier cargo sim was interrupted"),
        "the next run repairs first: {stderr}"
    );
    assert!(
        std::fs::read(dir.join("Cargo.lock")).unwrap() == original,
        "the next run put Cargo.lock back"
    );
    // Let the orphaned build finish before the directory is reused.
    kill(-(child.id() as i32), libc::SIGKILL);
}

/// Test processes running in `dir` whose command line mentions `needle`
/// (other tests run the same test names in fixtures of their own).
fn processes_with(dir: &Path, needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let cwd = std::fs::read_link(entry.path().join("cwd")).ok();
        if cmdline.contains(needle) && !cmdline.contains("cargo-sim") && cwd.as_deref() == Some(dir)
        {
            found.push(cmdline);
        }
    }
    found
}

#[test]
fn ctrl_c_stops_a_busy_looping_test_within_seconds() {
    use std::os::unix::process::CommandExt;
    let dir = fixture("ctrlc");
    let original = std::fs::read(dir.join("Cargo.lock")).unwrap();
    let mut child = sim_command(
        &dir,
        &[
            "test",
            "--seeds",
            "1",
            "--test",
            "planted",
            "--",
            "planted_busy_loop",
        ],
    )
    // No watchdog in the way: only Ctrl-C can end it.
    .env("SIM_HANG_POLL_S", "600")
    .process_group(0)
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let mut lines = stderr.lines();
    // The header comes just before the tests start.
    for line in lines.by_ref() {
        if line.unwrap().contains("1 test in 1 binary") {
            break;
        }
    }
    std::thread::sleep(Duration::from_secs(2));
    assert!(
        !processes_with(&dir, "planted_busy_loop").is_empty(),
        "the test is running"
    );
    // As a terminal does: the whole foreground group.
    let sent = Instant::now();
    kill(-(child.id() as i32), libc::SIGINT);
    let status = child.wait().unwrap();
    assert!(
        sent.elapsed() < Duration::from_secs(5),
        "took {:?}",
        sent.elapsed()
    );
    assert_eq!(status.code(), Some(130));
    assert!(processes_with(&dir, "planted_busy_loop").is_empty());
    assert!(std::fs::read(dir.join("Cargo.lock")).unwrap() == original);
}

/// Whether `actual` fits `expected`: `[..]` in a line stands for any text,
/// and a line `...` for any number of lines.
fn fits(expected: &[&str], actual: &[&str]) -> bool {
    fn line_fits(expected: &str, actual: &str) -> bool {
        let parts: Vec<&str> = expected.split("[..]").collect();
        let mut rest = match actual.strip_prefix(parts[0]) {
            Some(rest) => rest,
            None => return false,
        };
        for (i, part) in parts.iter().enumerate().skip(1) {
            if i == parts.len() - 1 {
                return rest.ends_with(part);
            }
            match rest.find(part) {
                Some(at) => rest = &rest[at + part.len()..],
                None => return false,
            }
        }
        rest.is_empty()
    }
    match expected.split_first() {
        None => actual.is_empty(),
        Some((&"...", more)) => (0..=actual.len()).any(|skip| fits(more, &actual[skip..])),
        Some((line, more)) => {
            !actual.is_empty() && line_fits(line, actual[0]) && fits(more, &actual[1..])
        }
    }
}

/// The command and output lines of a README block between two markers.
fn readme_block(marker: &str) -> (String, Vec<String>) {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    let start = readme
        .find(&format!("<!-- {marker}:start"))
        .expect("the README has the block");
    let end = readme[start..].find(&format!("<!-- {marker}:end")).unwrap() + start;
    let block = &readme[start..end];
    let mut lines = block
        .lines()
        .skip_while(|l| !l.starts_with("$ "))
        .take_while(|l| !l.starts_with("```"));
    let command = lines.next().unwrap().trim_start_matches("$ ").to_string();
    (command, lines.map(str::to_string).collect())
}

#[test]
fn the_readme_sweep_output_is_true() {
    let (command, expected) = readme_block("sweep-output");
    let args: Vec<&str> = command
        .strip_prefix("cargo sim ")
        .expect("a cargo sim command")
        .split_whitespace()
        .collect();
    let dir = fixture("readme");
    let (output, stdout, stderr) = sim_args(&dir, &args, &[]);
    assert_eq!(output.status.code(), Some(101));
    // cargo's own build lines are not shown.
    let cargo_words = [
        "Compiling",
        "Finished",
        "Blocking",
        "Locking",
        "Updating",
        "Downloaded",
        "Downloading",
        "Adding",
        "Removing",
        "Waiting",
    ];
    let text = format!("{stderr}{stdout}");
    let actual: Vec<&str> = text
        .lines()
        .filter(|l| !cargo_words.iter().any(|w| l.trim_start().starts_with(w)))
        .collect();
    let expected: Vec<&str> = expected.iter().map(String::as_str).collect();
    assert!(
        fits(&expected, &actual),
        "the README shows:\n{}\n\nbut the run printed:\n{}",
        expected.join("\n"),
        actual.join("\n")
    );
}

#[test]
fn a_binary_without_libtest_runs_whole_once_per_seed() {
    let dir = fixture("bare");
    let (output, stdout, stderr) = sim(&dir, "test --seeds 100 --test bare", &[]);
    assert_eq!(output.status.code(), Some(101), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("FAIL (test-bare, harness = false)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("an update was lost in a bare binary"),
        "{stderr}"
    );
    let line = stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("replay: "))
        .expect("a replay line")
        .to_string();
    assert!(
        line.ends_with("cargo sim test -p planted --test bare"),
        "{line}"
    );
    let (replay, text) = run_replay(&dir, &line);
    assert_eq!(replay.status.code(), Some(101), "{text}");
    assert!(
        text.contains("an update was lost in a bare binary"),
        "{text}"
    );
    // A filter no libtest test matches, while the binary without the
    // harness runs with it (a custom harness may pick by it): not an
    // error, but not silent either.
    let (_, _, stderr) = sim(
        &dir,
        "test --seeds 1 --no-save --test bare --test other -- no_such_test",
        &[],
    );
    assert!(
        stderr.contains(
            "sim: note: no test of the 1 test binary with libtest's harness matches \
             `no_such_test`; only 1 binary without it ran, the filter among its arguments: \
             (test-bare, harness = false)"
        ),
        "{stderr}"
    );
}

/// nextest, installed from crates.io the first time a machine needs it
/// (nothing is downloaded but its source).
fn ensure_nextest() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let installed = Command::new(&cargo)
        .args(["nextest", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !installed {
        let status = Command::new(&cargo)
            .args([
                "install",
                "cargo-nextest",
                "--locked",
                "--version",
                "0.9.151",
            ])
            .status()
            .unwrap();
        assert!(status.success(), "cargo install cargo-nextest failed");
    }
}

#[test]
fn nextest_runs_the_simulation_build() {
    ensure_nextest();
    let dir = fixture("nextest");
    let lock_before = std::fs::read(dir.join("Cargo.lock")).unwrap();
    let (output, stdout, stderr) = sim_args(
        &dir,
        &[
            "nextest",
            "run",
            "--no-fail-fast",
            "--test",
            "planted",
            "-E",
            "test(=is_simulated) | test(=lost_update)",
        ],
        &[("SIM_SEED", "0x0")],
    );
    let text = format!("{stdout}{stderr}");
    assert!(!output.status.success(), "{text}");
    assert!(text.contains("2 tests run: 1 passed, 1 failed"), "{text}");
    assert!(text.contains("FAIL"), "{text}");
    // The failing test says its seed, with a replay line for nextest.
    assert!(
        text.contains("sim: lost_update: seed 0x0; replay: SIM_SEED=0x0 cargo sim nextest run"),
        "{text}"
    );
    assert!(std::fs::read(dir.join("Cargo.lock")).unwrap() == lock_before);
}

#[test]
fn pct_finds_a_deep_bug_uniform_misses_and_its_replay_line_carries_the_policy() {
    let dir = fixture("pct");
    let (output, _, stderr) = sim(
        &dir,
        "test --test deep --seeds 300 --no-save",
        &[("SIM_POLICY", "random")],
    );
    assert!(output.status.success(), "uniform: {stderr}");
    // The default sweep spreads its seeds over the portfolio, whose PCT
    // seeds find it; the failing seed's lines name its policy.
    let (output, _, stderr) = sim(&dir, "test --test deep --seeds 300 --no-save", &[]);
    assert!(!output.status.success(), "the portfolio finds it: {stderr}");
    assert!(stderr.contains("the planted deep bug"), "{stderr}");
    let lines = replay_lines(&stderr, "four_tasks_in_reverse_order");
    assert!(
        lines[0].starts_with("SIM_POLICY=pct SIM_PCT_DEPTH="),
        "{lines:?}"
    );
    let (replayed, text) = run_replay(&dir, &lines[0]);
    assert!(!replayed.status.success(), "{text}");
    assert!(text.contains("the planted deep bug"), "{text}");
    let (output, _, stderr) = sim(
        &dir,
        "test --test deep --seeds 1000 --no-save",
        &[("SIM_POLICY", "pct")],
    );
    assert!(!output.status.success(), "pct finds it: {stderr}");
    assert!(stderr.contains("the planted deep bug"), "{stderr}");
    assert!(
        stderr.contains("SIM_POLICY=pct"),
        "the identity names it: {stderr}"
    );
    let lines = replay_lines(&stderr, "four_tasks_in_reverse_order");
    assert!(
        lines[0].starts_with("SIM_POLICY=pct SIM_SEED="),
        "{lines:?}"
    );
    assert_eq!(
        lines[0].matches("SIM_POLICY=").count(),
        1,
        "the setting is said once: {lines:?}"
    );
    // The seed replays alone: its replay measures the same horizon.
    let (replayed, text) = run_replay(&dir, &lines[0]);
    assert!(!replayed.status.success(), "{text}");
    assert!(text.contains("the planted deep bug"), "{text}");
    assert!(
        text.contains("policy pct (depth 3, horizon "),
        "the run names its policy: {text}"
    );
}

#[test]
fn a_worker_starvation_race_is_found_on_simulated_workers_and_its_twin_passes() {
    let dir = fixture("workers");
    let (output, _, stderr) = sim(&dir, "test --test workers --seeds 100 --no-save", &[]);
    assert!(!output.status.success(), "the race is found: {stderr}");
    assert!(stderr.contains("FAIL worker_race "), "{stderr}");
    assert!(
        stderr.contains("the planted worker race: write ran before begin"),
        "{stderr}"
    );
    assert!(!stderr.contains("FAIL worker_race_fixed"), "{stderr}");
    // The seed replays alone, with the same outcome.
    let lines = replay_lines(&stderr, "worker_race");
    let (replayed, text) = run_replay(&dir, &lines[0]);
    assert!(!replayed.status.success(), "{text}");
    assert!(text.contains("the planted worker race"), "{text}");
}

#[test]
fn a_one_host_cancel_safety_bug_is_found_under_swarm_and_its_twin_passes() {
    let dir = fixture("frames");
    // On one host, without the swarm, a frame always arrives whole.
    let (output, _, stderr) = sim(&dir, "test --test frames --seeds 100 --no-save", &[]);
    assert!(output.status.success(), "one host is gentle: {stderr}");
    let (output, _, stderr) = sim(
        &dir,
        "test --test frames --seeds 100 --no-save --swarm",
        &[],
    );
    assert!(!output.status.success(), "the swarm finds it: {stderr}");
    assert!(stderr.contains("FAIL frames_buggy "), "{stderr}");
    assert!(stderr.contains("the planted frame bug"), "{stderr}");
    assert!(!stderr.contains("FAIL frames_fixed"), "{stderr}");
    assert!(
        stderr.contains("settings: SIM_SWARM=1"),
        "the identity names it: {stderr}"
    );
    let lines = replay_lines(&stderr, "frames_buggy");
    assert!(lines[0].starts_with("SIM_SWARM=1 SIM_SEED="), "{lines:?}");
    let (replayed, text) = run_replay(&dir, &lines[0]);
    assert!(!replayed.status.success(), "{text}");
    assert!(text.contains("the planted frame bug"), "{text}");
}

#[test]
fn short_harness_tests_whose_bugs_need_an_early_crash_are_found_by_the_swarm() {
    let dir = fixture("swarmed");
    let (output, _, stderr) = sim(&dir, "test --test swarmed --seeds 100 --no-save", &[]);
    assert!(!output.status.success(), "the crash bug is found: {stderr}");
    assert!(stderr.contains("FAIL counts_in_memory "), "{stderr}");
    assert!(stderr.contains("the planted crash bug"), "{stderr}");
    assert!(!stderr.contains("FAIL counts_in_a_synced_log"), "{stderr}");
    // The failing seed's plan says what the faults were paced for.
    assert!(stderr.contains("(its measured length)"), "{stderr}");
    let lines = replay_lines(&stderr, "counts_in_memory");
    let (replayed, text) = run_replay(&dir, &lines[0]);
    assert!(!replayed.status.success(), "{text}");
    assert!(text.contains("the planted crash bug"), "{text}");
    // The report gives the failing run's trace hash; the replay's run has
    // the same one.
    let hash = stderr
        .split("FAIL counts_in_memory ")
        .nth(1)
        .and_then(|report| report.split(", trace sha256 ").nth(1))
        .map(|rest| rest[..64].to_string())
        .unwrap_or_else(|| panic!("the report gives the failing run's hash: {stderr}"));
    assert!(
        text.contains(&format!("trace sha256 {hash}")),
        "{hash}: {text}"
    );
    // A client that never reconnects fails; its twin's connect rides out
    // the crash (SYN retransmission) and reaches the restarted server.
    assert!(stderr.contains("FAIL keeps_one_connection "), "{stderr}");
    assert!(stderr.contains("the planted reconnect bug"), "{stderr}");
    assert!(
        !stderr.contains("FAIL reconnects_through_a_restart"),
        "{stderr}"
    );
}

/// A lock cycle's report names the user's line where each of its tasks
/// waits. (A release build gets the line tables this needs from `cargo
/// sim`'s config, checked by its unit test: a release build of the
/// simulator here cost the README's test command a minute.)
#[test]
fn a_lock_cycle_report_names_the_lines_where_its_tasks_wait() {
    let dir = own_fixture("locks");
    let (output, _, stderr) = sim(&dir, "test --test locks --seeds 1 --no-save", &[]);
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains("FAIL lock_order "), "{stderr}");
    assert!(
        stderr.contains("sim: deadlock: tasks wait for each other's locks"),
        "{stderr}"
    );
    for marker in ["// transfer waits here", "// audit waits here"] {
        let line = LOCKS
            .lines()
            .position(|l| l.contains(marker))
            .expect("the marker is in the fixture")
            + 1;
        let at = format!("tests/locks.rs:{line}:");
        assert!(stderr.contains(&at), "{at}: {stderr}");
    }
    assert!(!stderr.contains("pthread_create"), "{stderr}");
}

/// `SIM_TRACE` works under `cargo sim test` for one seed (a replay line, as
/// the README's loop says), and `--trace DIR` writes a sweep's traces by
/// test and seed; `--trace-failing` only the failing seeds'.
#[test]
fn traces_from_a_replay_and_from_a_sweep() {
    let dir = fixture("traces");
    // A replay line with SIM_TRACE added writes the README's file name:
    // `<path>.<test name>`.
    let trace = dir.join("replay.trace");
    let (output, _, stderr) = sim(
        &dir,
        "test --test planted --no-save -- lost_update --exact",
        &[("SIM_SEED", "0x0"), ("SIM_TRACE", "replay.trace")],
    );
    assert!(!output.status.success(), "seed 0 fails: {stderr}");
    let written = dir.join("replay.trace.lost_update");
    let text = std::fs::read_to_string(&written)
        .unwrap_or_else(|e| panic!("{}: {e}\n{stderr}", written.display()));
    assert!(text.contains(" start "), "{text}");
    assert!(!trace.exists());
    // The replay's output is short: its seed and replay line once.
    assert_eq!(
        stderr.matches("replay: SIM_SEED=0x0").count(),
        1,
        "{stderr}"
    );
    assert!(!stderr.contains("more seeds not run"), "{stderr}");
    // A sweep's traces: one per test and seed.
    let traces = dir.join("traces");
    let (output, _, stderr) = sim(
        &dir,
        "test --test planted --seeds 3 --no-save --keep-going --trace traces -- lost_update always_passes",
        &[],
    );
    assert!(!output.status.success(), "{stderr}");
    for test in ["lost_update", "always_passes"] {
        for seed in ["0x0", "0x1", "0x2"] {
            let file = traces.join(format!("{test}-{seed}.trace"));
            assert!(file.is_file(), "{}: {stderr}", file.display());
        }
    }
    // Only the failing seeds'.
    let failing = dir.join("failing");
    let (_, _, stderr) = sim(
        &dir,
        "test --test planted --seeds 3 --no-save --keep-going --trace failing --trace-failing -- lost_update always_passes",
        &[],
    );
    let written: Vec<String> = std::fs::read_dir(&failing)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!written.is_empty(), "{stderr}");
    assert!(
        written.iter().all(|f| f.starts_with("lost_update-")),
        "{written:?}"
    );
    assert!(stderr.contains("trace of seed 0x0: "), "{stderr}");
}

/// A count is decimal; `--seed` runs one seed; a count in hex is refused
/// with the way to what was meant.
#[test]
fn seed_arguments_are_unambiguous() {
    let dir = fixture("seedargs");
    let (output, _, stderr) = sim(
        &dir,
        "test --test planted --seeds 0x15 -- always_passes",
        &[],
    );
    assert!(!output.status.success());
    assert!(stderr.contains("a count is decimal"), "{stderr}");
    assert!(stderr.contains("use --seed 0x15"), "{stderr}");
    let (output, _, stderr) = sim(
        &dir,
        "test --test planted --seed 0x15 -- always_passes",
        &[],
    );
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("× 1 seed,"), "{stderr}");
}

/// One test target that does not compile is reported as such, with its
/// first error, and the other targets still run.
#[test]
fn a_broken_target_is_reported_and_the_others_run() {
    let dir = fixture("broken");
    write(
        &dir.join("tests/broken.rs"),
        "#[tokio::test]\nasync fn never_builds() {\n    let n: u32 = \"not a number\";\n}\n",
    );
    let (output, stdout, stderr) = sim(&dir, "test --seeds 2 --no-save -- always_passes", &[]);
    assert!(!output.status.success(), "{stderr}");
    assert!(
        stderr.contains("FAIL planted test broken (build)"),
        "{stderr}"
    );
    assert!(stderr.contains("mismatched types"), "{stderr}");
    // The working targets ran.
    assert!(stderr.contains("× 2 seeds"), "{stderr}");
    assert!(
        stdout.contains("(1 target does not compile)"),
        "{stdout}\n{stderr}"
    );
    assert!(!stderr.contains("FAIL always_passes"), "{stderr}");
}

/// Four shards of one sweep, as four machines run them, merged into one
/// report: the seeds and failures sum to the unsharded sweep's, the merged
/// JUnit file parses, and the shards' saved seeds land in this workspace's
/// regression file.
#[test]
fn four_shards_merge_into_one_report() {
    let dir = fixture("shards");
    let args = "--test planted --seeds 40 --keep-going -- lost_update always_passes";
    let (_, _, whole) = sim(&dir, &format!("test --no-save {args}"), &[]);
    let failing = whole
        .split("FAIL lost_update [")
        .nth(1)
        .and_then(|r| r.split("]: ").nth(1))
        .and_then(|r| r.split(" of 40 seeds failed").next())
        .unwrap_or_else(|| panic!("the whole sweep finds the bug: {whole}"))
        .to_string();
    let saved = dir.join("sim-regressions/test-planted.txt");
    for k in 1..=4 {
        let shard = dir.join(format!("shard-{k}"));
        let (_, _, stderr) = sim(
            &dir,
            &format!(
                "test --partition {k}/4 --junit {} {args}",
                shard.join("junit.xml").display()
            ),
            &[],
        );
        assert!(shard.join("junit.xml").is_file(), "{stderr}");
        // Each machine saved to its own checkout: move the file aside.
        if saved.is_file() {
            let to = shard.join("sim-regressions/test-planted.txt");
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::rename(&saved, &to).unwrap();
        }
    }
    let merged = dir.join("merged.xml");
    let output = Command::new(env!("CARGO_BIN_EXE_cargo-sim"))
        .args(["sim", "merge", "--junit"])
        .arg(&merged)
        .args((1..=4).map(|k| format!("shard-{k}")))
        .current_dir(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(!output.status.success(), "the merged sweep fails: {stderr}");
    assert!(
        stderr.contains("sim: merged 4 JUnit files: 2 tests, 80 seeds run"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "FAIL lost_update [cargo sim test -p planted --test planted]: {failing} of 40 seeds \
             failed (panic {failing}) over 4 shards"
        )),
        "{failing}: {stderr}"
    );
    assert!(stdout.contains("sim: 1 passed, 1 failed"), "{stdout}");
    let xml = std::fs::read_to_string(&merged).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    assert_eq!(
        doc.descendants()
            .filter(|n| n.has_tag_name("testcase"))
            .count(),
        2
    );
    assert!(stderr.contains("seeds added from"), "{stderr}");
    let kept = std::fs::read_to_string(&saved).unwrap();
    assert!(
        kept.lines()
            .filter(|l| l.starts_with("lost_update "))
            .count()
            >= 2,
        "{kept}"
    );
}

/// A seed that fails only after other seeds ran in the same process (a
/// static counter) is run alone before it is reported: it passes there, so
/// the test carries state between seeds, and its seeds run again, one
/// process each. What is reported (and saved) is those runs' outcome.
#[test]
fn a_test_that_carries_state_between_seeds_runs_one_process_per_seed() {
    let dir = fixture("carried");
    write(
        &dir.join("tests/carried.rs"),
        r#"
use std::sync::atomic::{AtomicU64, Ordering};
static RUNS: AtomicU64 = AtomicU64::new(0);

#[tokio::test]
async fn counts_its_runs() {
    let n = RUNS.fetch_add(1, Ordering::SeqCst);
    tokio::task::yield_now().await;
    assert!(n < 2, "the third run in this process");
}

#[tokio::test]
async fn counts_and_fails_on_an_odd_seed() {
    let n = RUNS.fetch_add(1, Ordering::SeqCst);
    tokio::task::yield_now().await;
    assert!(n < 2, "the third run in this process");
    let seed: u64 = std::env::var("SIM_SEED").unwrap().trim_start_matches("0x").parse().unwrap();
    assert!(seed % 2 == 0 || seed < 3, "the planted odd-seed bug");
}
"#,
    );
    let (output, _, stderr) = sim(&dir, "test --test carried --seeds 6 --jobs 1", &[]);
    assert!(!output.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "counts_its_runs carries state from one seed to the next (a static, a process-wide \
             counter, a cache): seed 0x2 failed after other seeds ran in its process and passes \
             alone. Its 6 seeds ran again, one process each"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("FAIL counts_its_runs "), "{stderr}");
    // Its twin's own bug is found, and the seed saved replays it.
    assert!(
        stderr.contains("FAIL counts_and_fails_on_an_odd_seed ")
            && stderr.contains("seed 0x3 failed (panic)")
            && stderr.contains("the planted odd-seed bug"),
        "{stderr}"
    );
    let saved = std::fs::read_to_string(dir.join("sim-regressions/test-carried.txt")).unwrap();
    assert!(
        saved.contains("counts_and_fails_on_an_odd_seed 0x3 panic")
            && !saved.contains("counts_its_runs"),
        "{saved}"
    );
}

/// A test that blocks outside any simulation run (a std thread's loop) is
/// stopped by the runner after a run's hang budget with no sign of life,
/// and reported as a hang, not waited on forever.
#[test]
fn a_test_that_blocks_outside_any_run_is_a_hang() {
    let dir = fixture("blocked");
    write(
        &dir.join("tests/blocked.rs"),
        r#"
#[test]
fn waits_for_a_thread_that_never_finishes() {
    let worker = std::thread::spawn(|| loop {
        std::thread::sleep(std::time::Duration::from_millis(50));
    });
    worker.join().unwrap();
}
"#,
    );
    let started = Instant::now();
    let (output, _, stderr) = sim(
        &dir,
        "test --test blocked --seeds 2 --no-save",
        &[("SIM_HANG_RUN_S", "1")],
    );
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains("failed (hang)"), "{stderr}");
    assert!(stderr.contains("outside any simulation run"), "{stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
}

/// The peak resident memory of process `pid` so far, in KiB (Linux).
fn peak_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// A sweep of 10^8 seeds plans at once and in little memory: its first
/// seed (a failing one) is reported within seconds, and a running sweep of
/// that size holds tens of megabytes and stops on Ctrl-C at once.
#[test]
fn a_sweep_of_a_hundred_million_seeds_starts_at_once_and_stops_on_ctrl_c() {
    use std::os::unix::process::CommandExt;
    let dir = fixture("huge");
    // Built first, so that what is timed is the sweep.
    let (_, _, stderr) = sim(
        &dir,
        "test --test planted --seeds 1 --no-save -- always_passes",
        &[],
    );
    assert!(
        stderr.contains("1 passed") || stderr.contains("× 1 seed"),
        "{stderr}"
    );
    let started = Instant::now();
    let (output, _, stderr) = sim(
        &dir,
        "test --test planted --seeds 100000000 --no-save -- lost_update",
        &[],
    );
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains("seed 0x0 failed (panic)"), "{stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    let child = sim_command(
        &dir,
        &[
            "test",
            "--test",
            "planted",
            "--seeds",
            "100000000",
            "--no-save",
            "--",
            "always_passes",
        ],
    )
    .process_group(0)
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    std::thread::sleep(Duration::from_secs(4));
    let peak = peak_kib(child.id());
    let sent = Instant::now();
    kill(-(child.id() as i32), libc::SIGINT);
    let output = child.wait_with_output().unwrap();
    assert!(
        sent.elapsed() < Duration::from_secs(5),
        "{:?}",
        sent.elapsed()
    );
    assert_eq!(output.status.code(), Some(130));
    // Ctrl-C ends with the report of what ran.
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("interrupted by signal 2; the report of what ran follows"),
        "{stderr}"
    );
    assert!(stderr.contains(" seeds in "), "{stderr}");
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("sim: 1 passed, 0 failed"),
        "{stderr}"
    );
    assert!(
        peak > 0 && peak < 200 * 1024,
        "the runner's peak memory at 10^8 seeds: {peak} KiB"
    );
}

/// A soak run (`--for`) sweeps fresh seeds until its time is up, then
/// prints the summary, keeps every failing seed and exits non-zero.
#[test]
fn a_soak_run_sweeps_fresh_seeds_for_its_time_and_keeps_every_failure() {
    let dir = fixture("soak");
    // Built first, so that what is timed is the soak.
    sim(
        &dir,
        "test --test planted --seeds 1 --no-save -- always_passes",
        &[],
    );
    let started = Instant::now();
    let (output, stdout, stderr) = sim(
        &dir,
        "test --test planted --for 3s -- lost_update always_passes",
        &[],
    );
    let took = started.elapsed();
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains("× fresh seeds for 3s"), "{stderr}");
    assert!(
        took >= Duration::from_secs(3) && took < Duration::from_secs(30),
        "{took:?}"
    );
    assert!(stderr.contains("FAIL lost_update "), "{stderr}");
    assert!(stdout.contains("sim: 1 passed, 1 failed"), "{stdout}");
    let saved = std::fs::read_to_string(dir.join("sim-regressions/test-planted.txt")).unwrap();
    let kept = saved
        .lines()
        .filter(|l| l.starts_with("lost_update "))
        .count();
    assert!(kept > 1, "every failing seed kept (up to 8): {saved}");
}

/// A failure that needs no fault but one late message shrinks to that
/// message: every other link draw goes to its mildest, and the report
/// names the draws that stay.
#[test]
fn shrinking_pushes_link_draws_to_their_mildest_and_names_the_ones_kept() {
    let dir = fixture("late");
    let out = tmp().join("shrunk-late");
    let _ = std::fs::remove_dir_all(&out);
    let shrink_arg = format!("--shrink={}", out.display());
    let (output, _, stderr) = sim_args(
        &dir,
        &[
            "test",
            "--test",
            "late",
            "--seeds",
            "30",
            "--no-save",
            &shrink_arg,
        ],
        &[],
    );
    assert!(
        !output.status.success(),
        "the late answer is found: {stderr}"
    );
    let report = stderr
        .lines()
        .find(|l| l.trim_start().starts_with("shrunk answers_arrive_in_time"))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(report.contains("draws kept: net latency "), "{report}");
    let kept: usize = report
        .split("draws kept: net latency ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{report}"));
    assert!((1..=3).contains(&kept), "one late round trip: {report}");
    // Each kept draw named by its message, and how late it was.
    assert!(report.contains("(datagram #"), "{report}");
    assert!(
        report.contains("ms late (over the link's least)"),
        "{report}"
    );
    // The scenario names the draws in words, one per line, and says no
    // more that the failure needs no injected fault.
    let scenario = stderr.split(report).nth(1).unwrap_or_default();
    assert!(!scenario.contains("needs no injected fault"), "{stderr}");
    assert!(
        scenario.contains("no Sim::at fault; the failure needs these draws"),
        "{stderr}"
    );
    // Each kept lateness is pushed toward the least: a round trip fails
    // when it takes over 40 ms, 2 of them the links' least, so the kept
    // draws add up to just over 38 ms, not to what the seed drew.
    let late_ms: f64 = scenario
        .lines()
        .filter(|l| l.trim_start().starts_with("//   "))
        .filter_map(|l| {
            l.split(" ms late")
                .next()?
                .rsplit(' ')
                .next()?
                .parse::<f64>()
                .ok()
        })
        .sum();
    assert!(
        (37.9..38.6).contains(&late_ms),
        "kept lateness {late_ms} ms: {stderr}"
    );
}

#[test]
fn a_failing_seeds_timeline_renders_in_headless_chromium() {
    let dir = fixture("timeline");
    let pages = tmp().join("timelines");
    let _ = std::fs::remove_dir_all(&pages);
    let timeline_arg = format!("--timeline={}", pages.display());
    let (output, _, stderr) = sim_args(
        &dir,
        &[
            "test",
            "--test",
            "cluster",
            "--seeds",
            "1",
            "--no-save",
            &timeline_arg,
        ],
        &[],
    );
    assert!(!output.status.success(), "the cluster test fails: {stderr}");
    let page = pages.join("a_cluster_that_fails_after_a_partition-0x0.html");
    assert!(page.exists(), "{stderr}");
    let summary = stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("timeline: "))
        .unwrap_or_else(|| panic!("no timeline line: {stderr}"));
    // What the trace says: its messages delivered and lost.
    let trace = std::fs::read_to_string(page.with_extension("trace")).unwrap();
    let notes: Vec<&str> = trace.lines().filter(|l| l.contains(" note ")).collect();
    let delivered: std::collections::BTreeSet<&str> = notes
        .iter()
        .filter_map(|l| l.split(" deliver udp #").nth(1))
        .collect();
    let lost = notes.iter().filter(|l| l.contains(" lost udp #")).count();
    assert!(lost > 0, "the partition lost pings: {trace}");
    let body = sim_test_support::rendered_body(&page, &tmp().join("chromium-profile"));
    assert_eq!(
        body.get("data-errors").map(String::as_str),
        Some("0"),
        "{body:?}"
    );
    assert_eq!(
        body.get("data-drawn").map(String::as_str),
        Some("1"),
        "{body:?}"
    );
    assert_eq!(
        body["data-lanes"], "3",
        "the simulation, client and server: {body:?}"
    );
    assert_eq!(body["data-arrows"], delivered.len().to_string(), "{body:?}");
    assert_eq!(body["data-stubs"], lost.to_string(), "{body:?}");
    assert_eq!(
        body["data-marks"],
        trace.lines().count().to_string(),
        "{body:?}"
    );
    // Two bands: the partition's two directions.
    assert_eq!(body["data-bands"], "2", "{body:?}");
    assert!(
        summary.contains(&format!("{} arrows", delivered.len())),
        "{summary}"
    );
    // Time moves in the cluster: a time axis.
    assert_eq!(body["data-axis"], "time", "{body:?}");
    one_hosts_timeline_is_drawn_in_event_order(&dir);
}

/// A one-host test whose virtual time never moves: its timeline chooses
/// an event-order axis by itself, and gives each of the three servers the
/// test body spawned a lane of its own.
fn one_hosts_timeline_is_drawn_in_event_order(dir: &Path) {
    let (output, _, stderr) = sim_args(
        dir,
        &["test", "--test", "servers", "--no-save"],
        &[("SIM_SEED", "0x0"), ("SIM_TRACE", "servers.trace")],
    );
    assert!(output.status.success(), "{stderr}");
    let trace = dir.join("servers.trace.three_servers_answer");
    let page = dir.join("servers.html");
    let (output, stdout, stderr) = sim_args(
        dir,
        &[
            "timeline",
            &trace.display().to_string(),
            "-o",
            &page.display().to_string(),
        ],
        &[],
    );
    assert!(output.status.success(), "{stderr}");
    let text = std::fs::read_to_string(&trace).unwrap();
    assert!(
        text.lines().all(|l| l.split(' ').nth(1) == Some("0")),
        "{text}"
    );
    let body = sim_test_support::rendered_body(&page, &tmp().join("chromium-profile"));
    assert_eq!(
        body.get("data-errors").map(String::as_str),
        Some("0"),
        "{body:?}"
    );
    assert_eq!(body["data-axis"], "order", "{body:?}");
    // The simulation (the test body), and the three servers.
    assert_eq!(body["data-lanes"], "4", "{stdout} {body:?}");
    let html = std::fs::read_to_string(&page).unwrap();
    // Each lane by the spawn site of its server (the three arms of the
    // test body's match).
    let lanes = html.split("\"lanes\":[").nth(1).unwrap_or_default();
    let lanes = lanes.split(']').next().unwrap_or_default();
    assert_eq!(
        lanes.matches("\"main task@servers.rs:").count(),
        3,
        "{lanes}"
    );
    assert!(html.contains("x: event order (virtual time stands still at t=0)"));
}

#[test]
fn shrinking_leaves_out_the_faults_a_failure_does_not_need() {
    let dir = fixture("shrink");
    let out = tmp().join("shrunk");
    let _ = std::fs::remove_dir_all(&out);
    let shrink_arg = format!("--shrink={}", out.display());
    let (output, _, stderr) = sim_args(
        &dir,
        &[
            "test",
            "--test",
            "shrinkable",
            "--seeds",
            "1",
            "--no-save",
            &shrink_arg,
            "--",
            "pings_time_out_under_a_partition",
        ],
        &[],
    );
    assert!(!output.status.success(), "{stderr}");
    let report: Vec<&str> = stderr
        .lines()
        .skip_while(|l| {
            !l.trim_start()
                .starts_with("shrunk pings_time_out_under_a_partition")
        })
        .collect();
    assert!(!report.is_empty(), "{stderr}");
    // Only the partition remains (the failure comes before its heal); the
    // bystander's noise goes.
    let scenario: Vec<&str> = report
        .iter()
        .filter(|l| l.trim_start().starts_with("sim.at("))
        .copied()
        .collect();
    assert_eq!(scenario.len(), 1, "{stderr}");
    assert!(
        scenario[0].ends_with("), Fault::Partition(\"client\".into(), \"server\".into()));"),
        "{stderr}"
    );
    // It moved as late as the failure allows: past its 1 s, before the
    // ping that times out ends (pings every 100 ms, each waits 50 ms).
    let at_ns: u64 = scenario[0]
        .split("from_nanos(")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(
        (1_000_000_000..1_100_000_000).contains(&at_ns),
        "{}",
        scenario[0]
    );
    assert!(report[0].contains("moved later: unit "), "{}", report[0]);
    assert!(report[0].contains("-> 1 faults (1 units"), "{}", report[0]);
    // The replay line runs the small run, and it fails the same way.
    let replay = report
        .iter()
        .find_map(|l| l.trim().strip_prefix("replay: "))
        .unwrap();
    let (replayed, text) = run_replay(&dir, replay);
    assert!(!replayed.status.success(), "{text}");
    assert!(text.contains("timed out"), "{text}");
    let file = out.join("pings_time_out_under_a_partition-0x0.shrink");
    let saved = std::fs::read_to_string(&file).unwrap();
    assert!(saved.contains("SIM_SHRINK_SKIP="), "{saved}");
    // The failure needs no particular schedule: every pick goes FIFO, and
    // the decision file (what the replay line names) carries the settings.
    assert!(report[0].contains("every pick FIFO"), "{}", report[0]);
    assert!(replay.starts_with("SIM_REPLAY="), "{replay}");
    let decisions = out.join("pings_time_out_under_a_partition-0x0.decisions");
    let saved = std::fs::read_to_string(&decisions).unwrap();
    assert!(saved.contains("\nset SIM_SHRINK_SKIP="), "{saved}");
    assert!(
        saved.contains("\nstream\tschedule\trest=min\t\n"),
        "{saved}"
    );
}

#[test]
fn shrinking_a_race_keeps_the_picks_it_needs_and_makes_the_rest_fifo() {
    // A directory of its own: the tests run at once.
    let dir = fixture("shrink-race");
    let out = tmp().join("shrunk-race");
    let _ = std::fs::remove_dir_all(&out);
    let shrink_arg = format!("--shrink={}", out.display());
    let (output, _, stderr) = sim_args(
        &dir,
        &[
            "test",
            "--test",
            "shrinkable",
            "--seeds",
            "100",
            "--no-save",
            &shrink_arg,
            "--",
            "workers_finish_in_reverse",
        ],
        &[],
    );
    assert!(!output.status.success(), "{stderr}");
    let report: Vec<&str> = stderr
        .lines()
        .skip_while(|l| {
            !l.trim_start()
                .starts_with("shrunk workers_finish_in_reverse")
        })
        .collect();
    assert!(!report.is_empty(), "{stderr}");
    // FIFO alone passes, so a prefix of the schedule stays.
    let picks: Vec<u64> = report[0]
        .split("schedule ")
        .nth(1)
        .map(|rest| {
            rest.split(|c: char| !c.is_ascii_digit())
                .filter(|w| !w.is_empty())
                .take(2)
                .map(|n| n.parse().unwrap())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(picks.len(), 2, "{}", report[0]);
    assert!(picks[1] < picks[0] && picks[1] > 0, "{}", report[0]);
    assert!(report[0].contains(" not FIFO"), "{}", report[0]);
    let replay = report
        .iter()
        .find_map(|l| l.trim().strip_prefix("replay: "))
        .unwrap();
    assert!(replay.starts_with("SIM_REPLAY="), "{replay}");
    let (replayed, text) = run_replay(&dir, replay);
    assert!(!replayed.status.success(), "{text}");
    assert!(text.contains("the workers finished in reverse"), "{text}");
}

/// Sends `signal` to `pid` (a negative pid: that process group), as a
/// terminal or a CI runner would. A group already gone is no error: some
/// calls only make sure nothing is left.
fn kill(pid: i32, signal: i32) {
    // SAFETY: `kill` takes plain integers and touches no memory of ours;
    // the pids are this test's own children (or their groups).
    unsafe { libc::kill(pid, signal) };
}

const ALWAYS: &str = r#"
#[tokio::test]
async fn fails_after_a_race() {
    let mut handles = Vec::new();
    for i in 0..4u32 {
        handles.push(tokio::spawn(async move {
            for _ in 0..3 {
                tokio::task::yield_now().await;
            }
            i
        }));
    }
    for handle in handles {
        handle.await.unwrap();
    }
    panic!("fails on every seed, after a race whose order the policy picks");
}
"#;

/// The trace hash a report gives seed `seed`.
fn failing_hash(stderr: &str, seed: u64) -> String {
    let at = format!("seed {seed:#x}");
    stderr
        .lines()
        .filter(|l| l.contains(&at))
        .find_map(|l| l.split("trace sha256 ").nth(1))
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|| panic!("no hash for {at}: {stderr}"))
}

/// A saved seed replays the run that was saved: a seed found by a one-seed
/// run (the uniform policy) runs first in a later sweep, whose portfolio
/// would give it PCT, with the settings its line records, to the same
/// trace hash. Unpinned, the sweep runs that seed to another hash.
#[test]
fn a_seed_saved_by_a_one_seed_run_replays_its_run_under_a_later_sweep() {
    let dir = fixture("pinned");
    write(&dir.join("tests/always.rs"), ALWAYS);
    let seed = (1u64..)
        .find(|&s| sim_runtime::sweep::portfolio::pct(s).is_some())
        .unwrap();
    let words = format!("test --test always --seeds {seed}..{}", seed + 1);
    let (output, _, found) = sim(&dir, &words, &[]);
    assert_eq!(output.status.code(), Some(101), "{found}");
    let saved = std::fs::read_to_string(dir.join("sim-regressions/test-always.txt")).unwrap();
    assert!(
        saved.contains(&format!(
            "fails_after_a_race {seed:#x} panic SIM_POLICY=random"
        )),
        "{saved}"
    );
    let hash = failing_hash(&found, seed);
    // A later sweep runs it first, as it was saved.
    let (output, _, later) = sim(&dir, "test --test always --seeds 100..120", &[]);
    assert_eq!(output.status.code(), Some(101), "{later}");
    assert!(
        later.contains(&format!(
            "seed {seed:#x} (SIM_POLICY=random (as saved)): panic"
        )),
        "{later}"
    );
    assert_eq!(failing_hash(&later, seed), hash, "{later}");
    // The saved line was not added again.
    let again = std::fs::read_to_string(dir.join("sim-regressions/test-always.txt")).unwrap();
    assert_eq!(again, saved);
    // A replay adds nothing either.
    let line = replay_lines(&later, "fails_after_a_race")[0].clone();
    assert!(line.starts_with("SIM_POLICY=random SIM_SEED="), "{line}");
    let (replay, text) = run_replay(&dir, &line);
    assert_eq!(replay.status.code(), Some(101), "{text}");
    assert_eq!(failing_hash(&text, seed), hash, "{text}");
    let after = std::fs::read_to_string(dir.join("sim-regressions/test-always.txt")).unwrap();
    assert_eq!(after, saved, "a replay saves nothing");
    // The same seed in a sweep of its own runs under PCT: another run.
    std::fs::remove_dir_all(dir.join("sim-regressions")).unwrap();
    let words = format!(
        "test --test always --seeds {seed}..{} --no-save --keep-going",
        seed + 2
    );
    let (_, _, swept) = sim(&dir, &words, &[]);
    assert_ne!(failing_hash(&swept, seed), hash, "{swept}");
    assert!(!dir.join("sim-regressions").exists());
}

/// A stale read, as a user meets it: a sweep fails the test with class
/// `consistency` and the window of operations no order explains; the
/// timeline draws the operations, the ones at fault marked; the shrunk
/// run still breaks the same history; and `cargo sim history` reads the
/// history out of the trace and checks it again.
#[test]
fn a_stale_read_is_a_consistency_failure_drawn_shrunk_and_read_back() {
    let dir = fixture("stale");
    let (pages, shrunk) = (tmp().join("stale-pages"), tmp().join("stale-shrunk"));
    let _ = std::fs::remove_dir_all(&pages);
    let _ = std::fs::remove_dir_all(&shrunk);
    let (timeline_arg, shrink_arg) = (
        format!("--timeline={}", pages.display()),
        format!("--shrink={}", shrunk.display()),
    );
    let (output, _, stderr) = sim_args(
        &dir,
        &[
            "test",
            "--test",
            "stale",
            "--seeds",
            "100",
            "--no-save",
            &timeline_arg,
            &shrink_arg,
        ],
        &[],
    );
    assert!(!output.status.success(), "a stale read is found: {stderr}");
    assert!(stderr.contains("failed (consistency)"), "{stderr}");
    assert!(
        stderr.contains("sim: consistency: history `ops` is not linearizable (register), checked at the end of the run"),
        "{stderr}"
    );
    assert!(
        stderr.contains("invoked     returned    client"),
        "{stderr}"
    );
    assert!(stderr.contains("read \"x\" -> "), "{stderr}");
    // The shrunk run (which must break the same history the same way) is
    // down to the draws the stale read needs.
    let shrunk_line = stderr
        .lines()
        .find(|l| {
            l.trim_start()
                .starts_with("shrunk reads_from_the_replica_are_linearizable")
        })
        .unwrap_or_else(|| panic!("no shrink line: {stderr}"));
    assert!(
        shrunk_line.contains("draws kept: net latency"),
        "{shrunk_line}"
    );
    // The timeline: a bar per operation, the window's outlined.
    let page = std::fs::read_dir(&pages)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "html"))
        .unwrap_or_else(|| panic!("no page: {stderr}"));
    let trace = page.with_extension("trace");
    let text = std::fs::read_to_string(&trace).unwrap();
    let invoked = text
        .lines()
        .filter(|l| l.contains(" history ops invoke #"))
        .count();
    let marked = text
        .lines()
        .find(|l| l.contains(" history ops illegal "))
        .map_or(0, |l| l.matches(" #").count());
    assert!(
        invoked >= 2 && marked >= 2,
        "{invoked} operations, {marked} at fault"
    );
    let body = sim_test_support::rendered_body(&page, &tmp().join("chromium-profile-stale"));
    assert_eq!(
        body.get("data-errors").map(String::as_str),
        Some("0"),
        "{body:?}"
    );
    assert_eq!(body["data-ops"], invoked.to_string(), "{body:?}");
    assert_eq!(body["data-marked-ops"], marked.to_string(), "{body:?}");
    history_reads_back(&dir, &trace, invoked);
}

/// `cargo sim history` on a failing run's trace: its history as JSON
/// lines, checked again, and a history it does not hold named.
fn history_reads_back(dir: &Path, trace: &Path, invoked: usize) {
    // cargo sim history: the trace's history as JSON lines, and checked.
    let history = sim_command(dir, &["history", trace.to_str().unwrap()])
        .output()
        .unwrap();
    let lines = String::from_utf8_lossy(&history.stdout);
    assert!(
        history.status.success(),
        "{}",
        String::from_utf8_lossy(&history.stderr)
    );
    assert_eq!(
        lines
            .lines()
            .filter(|l| l.contains("\"type\":\"invoke\""))
            .count(),
        invoked,
        "{lines}"
    );
    let checked = sim_command(
        dir,
        &["history", trace.to_str().unwrap(), "--check", "register"],
    )
    .output()
    .unwrap();
    let said = String::from_utf8_lossy(&checked.stdout);
    assert_eq!(checked.status.code(), Some(1), "{said}");
    assert!(said.starts_with("not linearizable (register)"), "{said}");
    let wrong_name = sim_command(dir, &["history", trace.to_str().unwrap(), "--name", "bank"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&wrong_name.stderr);
    assert_eq!(wrong_name.status.code(), Some(2), "{said}");
    assert!(
        said.contains("holds no history named 'bank'; it holds: ops"),
        "{said}"
    );
}
