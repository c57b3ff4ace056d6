//! The peer benchmark's workloads on madsim (`scripts/bench-peers.sh`;
//! built with `--cfg madsim`). Usage: `<binary> <workload>`.

use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const TASKS: u64 = 100_000;
const ROUND_TRIPS: u64 = 100_000;
/// The segmented echo (see the tokio-api crate): 4 KiB messages.
const SEGMENTED_ROUND_TRIPS: u64 = 20_000;
const SEGMENTED_BYTES: usize = 4096;

fn delays() -> impl Iterator<Item = u64> {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    std::iter::repeat_with(move || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 33) % 1000
    })
}

/// A runtime whose links take 0-1 ms, as the other systems'; with
/// `BENCH_LINKS=default`, madsim's own default (1-10 ms).
fn runtime() -> madsim::runtime::Runtime {
    let mut config = madsim::Config::default();
    if std::env::var("BENCH_LINKS").as_deref() != Ok("default") {
        config.net.send_latency = Duration::ZERO..Duration::from_millis(1);
    }
    madsim::runtime::Runtime::with_seed_and_config(1, config)
}

fn main() {
    let workload = std::env::args().nth(1).unwrap_or_default();
    let result = runtime().block_on(async move {
        match workload.as_str() {
            "spawn" => {
                let handles: Vec<_> = (0..TASKS).map(|i| tokio::spawn(async move { i })).collect();
                let mut sum = 0;
                for h in handles {
                    sum += h.await.unwrap();
                }
                sum
            }
            "sleeps" => {
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
            "echo" | "echo-seg" => {
                let (size, rounds) = if workload == "echo-seg" {
                    (SEGMENTED_BYTES, SEGMENTED_ROUND_TRIPS)
                } else {
                    (8, ROUND_TRIPS)
                };
                let handle = madsim::runtime::Handle::current();
                let server = handle.create_node().ip("10.0.0.1".parse().unwrap()).build();
                let client = handle.create_node().ip("10.0.0.2".parse().unwrap()).build();
                server.spawn(async move {
                    let listener = tokio::net::TcpListener::bind("10.0.0.1:7").await.unwrap();
                    let (mut stream, _) = listener.accept().await.unwrap();
                    let mut buf = vec![0u8; size];
                    while stream.read_exact(&mut buf).await.is_ok() {
                        stream.write_all(&buf).await.unwrap();
                        stream.flush().await.unwrap();
                    }
                });
                client
                    .spawn(async move {
                        tokio::time::sleep(Duration::from_millis(1)).await;
                        let mut stream =
                            tokio::net::TcpStream::connect("10.0.0.1:7").await.unwrap();
                        let mut message = vec![0u8; size];
                        let mut buf = vec![0u8; size];
                        let mut sum = 0;
                        for i in 0..rounds {
                            message[..8].copy_from_slice(&i.to_le_bytes());
                            stream.write_all(&message).await.unwrap();
                            stream.flush().await.unwrap();
                            stream.read_exact(&mut buf).await.unwrap();
                            sum += u64::from_le_bytes(buf[..8].try_into().unwrap());
                        }
                        sum
                    })
                    .await
                    .unwrap()
            }
            "cluster" => {
                let handle = madsim::runtime::Handle::current();
                let server = handle.create_node().ip("10.0.0.1".parse().unwrap()).build();
                server.spawn(async {
                    let listener = tokio::net::TcpListener::bind("10.0.0.1:7").await.unwrap();
                    loop {
                        let (mut stream, _) = listener.accept().await.unwrap();
                        tokio::spawn(async move {
                            let mut buf = [0u8; 8];
                            while stream.read_exact(&mut buf).await.is_ok() {
                                if stream.write_all(&buf).await.is_err() {
                                    break;
                                }
                                let _ = stream.flush().await;
                            }
                        });
                    }
                });
                let clients: Vec<_> = (0..4u8)
                    .map(|c| {
                        let node = handle
                            .create_node()
                            .ip(format!("10.0.0.{}", c + 2).parse().unwrap())
                            .build();
                        node.spawn(async {
                            tokio::time::sleep(Duration::from_millis(1)).await;
                            let mut stream =
                                tokio::net::TcpStream::connect("10.0.0.1:7").await.unwrap();
                            let mut tick = tokio::time::interval(Duration::from_millis(10));
                            let mut buf = [0u8; 8];
                            let mut sum = 0;
                            for i in 0..60_000u64 {
                                tick.tick().await;
                                stream.write_all(&i.to_le_bytes()).await.unwrap();
                                stream.flush().await.unwrap();
                                stream.read_exact(&mut buf).await.unwrap();
                                sum += u64::from_le_bytes(buf);
                            }
                            sum
                        })
                    })
                    .collect();
                let mut sum = 0;
                for c in clients {
                    sum += c.await.unwrap();
                }
                sum
            }
            "heartbeat" => {
                // `hosts` nodes send an 8-byte heartbeat to the next 3 in a
                // ring every 100 ms for `seconds`; the answer is the number
                // received, a second after the last was sent.
                use std::sync::atomic::{AtomicU64, Ordering};
                use std::sync::Arc;
                let arg = |i: usize| std::env::args().nth(i).and_then(|a| a.parse::<u64>().ok());
                let hosts = arg(2).unwrap_or(1000) as u32;
                let seconds = arg(3).unwrap_or(600);
                let ip = |h: u32| std::net::Ipv4Addr::from(u32::from_be_bytes([10, 0, 0, 1]) + h);
                let received = Arc::new(AtomicU64::new(0));
                let handle = madsim::runtime::Handle::current();
                for h in 0..hosts {
                    let node = handle.create_node().ip(ip(h).into()).build();
                    let received = received.clone();
                    node.spawn(async move {
                        let socket =
                            Arc::new(tokio::net::UdpSocket::bind((ip(h), 9)).await.unwrap());
                        let peers: Vec<std::net::SocketAddr> =
                            (1..=3).map(|p| (ip((h + p) % hosts), 9).into()).collect();
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
                                // madsim's send_to takes the address first.
                                socket.send_to(peer, &i.to_le_bytes()).await.unwrap();
                            }
                        }
                        std::future::pending::<()>().await;
                    });
                }
                tokio::time::sleep(Duration::from_secs(seconds + 1)).await;
                received.load(Ordering::Relaxed)
            }
            other => panic!(
                "unknown workload {other:?}: spawn, sleeps, echo, echo-seg, cluster or heartbeat"
            ),
        }
    });
    println!("{} {result}", std::env::args().nth(1).unwrap_or_default());
}
