//! `cargo run --release -p sim-bench`: each workload on real tokio's
//! current-thread runtime and on the simulator, in this one process, best of
//! several rounds, with the ratio sim / real (below 1: the simulator is
//! faster). The simulator always keeps its trace hash; the "traced" column
//! also writes the trace file (`SIM_TRACE`).
//!
//! Real tokio's timer workload runs on the real clock, as a service would;
//! the simulator's runs on virtual time.

use std::time::{Duration, Instant};

const ROUNDS: usize = 5;

/// A tiny deterministic generator for the workloads' own random numbers.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Writes one workload against a tokio crate path (`real` or `sim`), so both
/// runtimes run the very same code.
macro_rules! workloads {
    ($module:ident, $tokio:ident) => {
        pub mod $module {
            use super::XorShift;
            use std::time::Duration;

            pub fn runtime() -> ::$tokio::runtime::Runtime {
                ::$tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a runtime")
            }

            /// A `multi_thread` runtime of 4 workers (simulated, in the
            /// facade).
            pub fn multi_thread_runtime() -> ::$tokio::runtime::Runtime {
                ::$tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(4)
                    .enable_all()
                    .build()
                    .expect("a runtime")
            }

            pub async fn spawn_join(n: u64) -> u64 {
                let mut handles = Vec::with_capacity(n as usize);
                for i in 0..n {
                    handles.push(::$tokio::spawn(async move { i }));
                }
                let mut sum = 0;
                for h in handles {
                    sum += h.await.unwrap();
                }
                sum
            }

            pub async fn yield_ping_pong(n: u64) -> u64 {
                let a = ::$tokio::spawn(async move {
                    for _ in 0..n / 2 {
                        ::$tokio::task::yield_now().await;
                    }
                    n / 2
                });
                let b = ::$tokio::spawn(async move {
                    for _ in 0..n / 2 {
                        ::$tokio::task::yield_now().await;
                    }
                    n / 2
                });
                a.await.unwrap() + b.await.unwrap()
            }

            pub async fn oneshot_round_trips(n: u64) -> u64 {
                let (tx, mut rx) = ::$tokio::sync::mpsc::unbounded_channel::<(
                    u64,
                    ::$tokio::sync::oneshot::Sender<u64>,
                )>();
                let echo = ::$tokio::spawn(async move {
                    while let Some((v, reply)) = rx.recv().await {
                        let _ = reply.send(v + 1);
                    }
                });
                let mut sum = 0;
                for i in 0..n {
                    let (reply_tx, reply_rx) = ::$tokio::sync::oneshot::channel();
                    tx.send((i, reply_tx)).unwrap();
                    sum += reply_rx.await.unwrap();
                }
                drop(tx);
                echo.await.unwrap();
                sum
            }

            pub async fn mpsc_throughput(n: u64) -> u64 {
                let (tx, mut rx) = ::$tokio::sync::mpsc::channel::<u64>(1024);
                let producer = ::$tokio::spawn(async move {
                    for i in 0..n {
                        tx.send(i).await.unwrap();
                    }
                });
                let mut sum = 0;
                while let Some(v) = rx.recv().await {
                    sum += v;
                }
                producer.await.unwrap();
                sum
            }

            pub async fn mutex_uncontended(n: u64) -> u64 {
                let m = ::$tokio::sync::Mutex::new(0u64);
                for _ in 0..n {
                    *m.lock().await += 1;
                }
                m.into_inner()
            }

            pub async fn mutex_ping_pong(n: u64) -> u64 {
                let m = std::sync::Arc::new(::$tokio::sync::Mutex::new(0u64));
                let tasks: Vec<_> = (0..2)
                    .map(|_| {
                        let m = m.clone();
                        ::$tokio::spawn(async move {
                            for _ in 0..n / 2 {
                                *m.lock().await += 1;
                                ::$tokio::task::yield_now().await;
                            }
                        })
                    })
                    .collect();
                for t in tasks {
                    t.await.unwrap();
                }
                let v = *m.lock().await;
                v
            }

            pub async fn broadcast_fan_out(receivers: u64, messages: u64) -> u64 {
                // Room for every message: no receiver ever lags.
                let (tx, _) = ::$tokio::sync::broadcast::channel::<u64>(messages as usize);
                let handles: Vec<_> = (0..receivers)
                    .map(|_| {
                        let mut rx = tx.subscribe();
                        ::$tokio::spawn(async move {
                            let mut sum = 0;
                            while let Ok(v) = rx.recv().await {
                                sum += v;
                            }
                            sum
                        })
                    })
                    .collect();
                for i in 0..messages {
                    tx.send(i).unwrap();
                }
                drop(tx);
                let mut sum = 0;
                for h in handles {
                    sum += h.await.unwrap();
                }
                sum
            }

            pub async fn random_sleeps(n: u64, max_ms: u64) -> u64 {
                let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
                let mut handles = Vec::with_capacity(n as usize);
                for _ in 0..n {
                    let ms = rng.next() % max_ms;
                    handles.push(::$tokio::spawn(async move {
                        ::$tokio::time::sleep(Duration::from_millis(ms)).await;
                        ms
                    }));
                }
                let mut sum = 0;
                for h in handles {
                    sum += h.await.unwrap();
                }
                sum
            }
        }
    };
}

workloads!(on_real, real);
workloads!(on_sim, sim);

fn best_of<F: FnMut() -> u64>(mut f: F) -> (Duration, u64) {
    let mut best = Duration::MAX;
    let mut out = 0;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        out = f();
        best = best.min(start.elapsed());
    }
    (best, out)
}

/// 100k request/response round trips over one TCP connection, with the
/// same code on real tokio (loopback) and on the facade (two simulated
/// hosts, through the harness).
mod tcp_echo {
    pub const ROUND_TRIPS: u64 = 100_000;

    macro_rules! echo_pair {
        ($tokio:ident) => {
            pub async fn server(listener: ::$tokio::net::TcpListener) {
                use ::$tokio::io::{AsyncReadExt, AsyncWriteExt};
                let (mut s, _) = listener.accept().await.unwrap();
                let mut buf = [0u8; 8];
                loop {
                    if s.read_exact(&mut buf).await.is_err() {
                        return;
                    }
                    s.write_all(&buf).await.unwrap();
                }
            }

            pub async fn client(addr: std::net::SocketAddr) -> u64 {
                use ::$tokio::io::{AsyncReadExt, AsyncWriteExt};
                let mut s = ::$tokio::net::TcpStream::connect(addr).await.unwrap();
                s.set_nodelay(true).unwrap();
                let mut buf = [0u8; 8];
                let mut sum = 0;
                for i in 0..ROUND_TRIPS {
                    s.write_all(&i.to_le_bytes()).await.unwrap();
                    s.read_exact(&mut buf).await.unwrap();
                    sum += u64::from_le_bytes(buf);
                }
                sum
            }
        };
    }

    pub mod on_real {
        use super::ROUND_TRIPS;
        echo_pair!(real);
    }

    pub mod on_sim {
        use super::ROUND_TRIPS;
        echo_pair!(sim);
    }

    pub fn real_run() -> u64 {
        let rt = real::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let listener = real::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            real::spawn(on_real::server(listener));
            on_real::client(addr).await
        })
    }

    pub fn sim_run() -> u64 {
        let out = std::rc::Rc::new(std::cell::Cell::new(0));
        let result = out.clone();
        let mut harness = sim_harness::Sim::with_config(sim_runtime::SimConfig::with_seed(1));
        harness.host("server", || async {
            let listener = sim::net::TcpListener::bind("0.0.0.0:7").await.unwrap();
            on_sim::server(listener).await;
        });
        harness.client("client", async move {
            result.set(on_sim::client("10.0.0.2:7".parse().unwrap()).await);
        });
        harness.run();
        out.get()
    }
}

/// A log on disk: 10k appends of 4 KiB with `sync_data` every 100, then
/// the file read back, with the same code on real tokio (the real disk,
/// under the temporary directory) and on the facade (the simulated disk).
mod fs_log {
    pub const APPENDS: u64 = 10_000;
    pub const SYNC_EVERY: u64 = 100;
    const RECORD_BYTES: usize = 4096;

    macro_rules! log_workload {
        ($tokio:ident) => {
            pub async fn run(path: std::path::PathBuf) -> u64 {
                use ::$tokio::io::AsyncWriteExt;
                let mut file = ::$tokio::fs::OpenOptions::new()
                    .create(true)
                    .truncate(true)
                    .write(true)
                    .open(&path)
                    .await
                    .unwrap();
                let mut record = vec![0u8; RECORD_BYTES];
                for i in 0..APPENDS {
                    record[..8].copy_from_slice(&i.to_le_bytes());
                    file.write_all(&record).await.unwrap();
                    if (i + 1) % SYNC_EVERY == 0 {
                        file.sync_data().await.unwrap();
                    }
                }
                drop(file);
                let back = ::$tokio::fs::read(&path).await.unwrap();
                ::$tokio::fs::remove_file(&path).await.unwrap();
                back.chunks(RECORD_BYTES)
                    .map(|r| u64::from_le_bytes(r[..8].try_into().unwrap()))
                    .sum()
            }
        };
    }

    pub mod on_real {
        use super::{APPENDS, RECORD_BYTES, SYNC_EVERY};
        log_workload!(real);
    }

    pub mod on_sim {
        use super::{APPENDS, RECORD_BYTES, SYNC_EVERY};
        log_workload!(sim);
    }

    fn path() -> std::path::PathBuf {
        std::env::temp_dir().join(format!("sim-bench-log-{}", std::process::id()))
    }

    pub fn real_run() -> u64 {
        super::on_real::runtime().block_on(on_real::run(path()))
    }

    pub fn sim_run() -> u64 {
        super::on_sim::runtime().block_on(on_sim::run(path()))
    }
}

/// 1,000 hosts, each sending a UDP heartbeat to 3 peers every 100 ms, for
/// 10 simulated minutes. Returns (wall time, trace events, datagrams
/// received).
fn heartbeats() -> (Duration, u64, u64) {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    const HOSTS: usize = 1000;
    let received = Arc::new(AtomicU64::new(0));
    let mut harness = sim_harness::Sim::with_config(sim_runtime::SimConfig::with_seed(1));
    for i in 0..HOSTS {
        let received = received.clone();
        harness.host(&format!("h{i}"), move || {
            let received = received.clone();
            async move {
                let socket = Arc::new(sim::net::UdpSocket::bind("0.0.0.0:9").await.unwrap());
                let rx = socket.clone();
                sim::spawn(async move {
                    let mut buf = [0u8; 16];
                    loop {
                        rx.recv_from(&mut buf).await.unwrap();
                        received.fetch_add(1, Ordering::Relaxed);
                    }
                });
                let mut peers = Vec::new();
                for d in 1..=3 {
                    let name = format!("h{}:9", (i + d) % HOSTS);
                    peers.extend(sim::net::lookup_host(name).await.unwrap());
                }
                let mut tick = sim::time::interval(Duration::from_millis(100));
                loop {
                    tick.tick().await;
                    for peer in &peers {
                        socket.send_to(b"alive", peer).await.unwrap();
                    }
                }
            }
        });
    }
    harness.client("clock", async {
        sim::time::sleep(Duration::from_secs(600)).await;
    });
    let start = Instant::now();
    let report = harness.run();
    (
        start.elapsed(),
        report.events,
        received.load(Ordering::Relaxed),
    )
}

/// A workload of the first table: its name, and it on each runtime.
type Case = (
    &'static str,
    fn(&real::runtime::Runtime) -> u64,
    fn(&sim::runtime::Runtime) -> u64,
);

/// The workloads timed on real tokio, the simulator, and the simulator
/// tracing.
fn cases() -> [Case; 8] {
    [
        (
            "spawn + join 100k tasks",
            |rt| rt.block_on(on_real::spawn_join(100_000)),
            |rt| rt.block_on(on_sim::spawn_join(100_000)),
        ),
        (
            "1M yield_now, two tasks",
            |rt| rt.block_on(on_real::yield_ping_pong(1_000_000)),
            |rt| rt.block_on(on_sim::yield_ping_pong(1_000_000)),
        ),
        (
            "100k oneshot round trips",
            |rt| rt.block_on(on_real::oneshot_round_trips(100_000)),
            |rt| rt.block_on(on_sim::oneshot_round_trips(100_000)),
        ),
        (
            "1M mpsc sends, bounded(1024)",
            |rt| rt.block_on(on_real::mpsc_throughput(1_000_000)),
            |rt| rt.block_on(on_sim::mpsc_throughput(1_000_000)),
        ),
        (
            "1M uncontended Mutex locks",
            |rt| rt.block_on(on_real::mutex_uncontended(1_000_000)),
            |rt| rt.block_on(on_sim::mutex_uncontended(1_000_000)),
        ),
        (
            "200k Mutex ping-pong, two tasks",
            |rt| rt.block_on(on_real::mutex_ping_pong(200_000)),
            |rt| rt.block_on(on_sim::mutex_ping_pong(200_000)),
        ),
        (
            "broadcast 10k msgs to 100 receivers",
            |rt| rt.block_on(on_real::broadcast_fan_out(100, 10_000)),
            |rt| rt.block_on(on_sim::broadcast_fan_out(100, 10_000)),
        ),
        (
            "100k sleeps, random 0-1000 ms",
            |rt| rt.block_on(on_real::random_sleeps(100_000, 1000)),
            |rt| rt.block_on(on_sim::random_sleeps(100_000, 1000)),
        ),
    ]
}

/// One row of the table without a traced column: a workload on real tokio
/// and on the simulator (seed 1, no trace), which must compute the same.
fn compare_row(name: &str, real: impl FnMut() -> u64, sim: impl FnMut() -> u64) {
    let (real_time, real_out) = best_of(real);
    std::env::set_var("SIM_SEED", "1");
    std::env::remove_var("SIM_TRACE");
    let (sim_time, sim_out) = best_of(sim);
    assert_eq!(
        real_out, sim_out,
        "{name}: the simulator computed something else"
    );
    println!(
        "{:<34} {:>12} {:>12} {:>7.2}x",
        name,
        format!("{:.1?}", real_time),
        format!("{:.1?}", sim_time),
        sim_time.as_secs_f64() / real_time.as_secs_f64(),
    );
}

fn main() {
    let trace_path = std::env::temp_dir().join("sim-bench.trace");
    println!(
        "{:<34} {:>12} {:>12} {:>8} {:>12} {:>8}",
        "workload", "real tokio", "sim", "ratio", "sim traced", "ratio"
    );
    for (name, run_real, run_sim) in cases() {
        let (real_time, real_out) = best_of(|| run_real(&on_real::runtime()));
        // The seed is fixed so the rounds are comparable; the simulator's
        // output must equal real tokio's.
        std::env::set_var("SIM_SEED", "1");
        std::env::remove_var("SIM_TRACE");
        let (sim_time, sim_out) = best_of(|| run_sim(&on_sim::runtime()));
        std::env::set_var("SIM_TRACE", &trace_path);
        let (traced_time, traced_out) = best_of(|| run_sim(&on_sim::runtime()));
        std::env::remove_var("SIM_TRACE");
        assert_eq!(
            real_out, sim_out,
            "{name}: the simulator computed something else"
        );
        assert_eq!(
            real_out, traced_out,
            "{name}: the traced run computed something else"
        );
        println!(
            "{:<34} {:>12} {:>12} {:>7.2}x {:>12} {:>7.2}x",
            name,
            format!("{:.1?}", real_time),
            format!("{:.1?}", sim_time),
            sim_time.as_secs_f64() / real_time.as_secs_f64(),
            format!("{:.1?}", traced_time),
            traced_time.as_secs_f64() / real_time.as_secs_f64(),
        );
    }
    let _ = std::fs::remove_file(&trace_path);

    // The same spawn + join on a `multi_thread` runtime of 4 workers: real
    // threads in real tokio, simulated workers on the simulator.
    compare_row(
        "spawn + join 100k, 4 workers",
        || on_real::multi_thread_runtime().block_on(on_real::spawn_join(100_000)),
        || on_sim::multi_thread_runtime().block_on(on_sim::spawn_join(100_000)),
    );
    // The network: the same echo code on real loopback and between two
    // simulated hosts (default links: 0-1 ms each way).
    compare_row(
        "100k TCP echo round trips",
        tcp_echo::real_run,
        tcp_echo::sim_run,
    );
    // The disk: real tokio on the real disk (its fsyncs are real), the
    // facade on the simulated one (latency in virtual time).
    compare_row(
        "10k 4-KiB appends, 100 fsyncs, read",
        fs_log::real_run,
        fs_log::sim_run,
    );

    let (wall, events, datagrams) = heartbeats();
    println!(
        "1000 hosts x 3 peers, 100 ms heartbeats, 10 simulated minutes: {:.1?} wall, \
         {datagrams} datagrams, {events} trace events, {:.2} M events/s",
        wall,
        events as f64 / wall.as_secs_f64() / 1e6
    );
}
