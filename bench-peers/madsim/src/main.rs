//! The peer benchmark's workloads on madsim (`scripts/bench-peers.sh`;
//! built with `--cfg madsim`). Usage: `<binary> <workload>`.

use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const TASKS: u64 = 100_000;
const ROUND_TRIPS: u64 = 100_000;

fn delays() -> impl Iterator<Item = u64> {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    std::iter::repeat_with(move || {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (x >> 33) % 1000
    })
}

/// A runtime whose links take 0-1 ms, as the other systems'.
fn runtime() -> madsim::runtime::Runtime {
    let mut config = madsim::Config::default();
    config.net.send_latency = Duration::ZERO..Duration::from_millis(1);
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
            "echo" => {
                let handle = madsim::runtime::Handle::current();
                let server = handle.create_node().ip("10.0.0.1".parse().unwrap()).build();
                let client = handle.create_node().ip("10.0.0.2".parse().unwrap()).build();
                server.spawn(async {
                    let listener = tokio::net::TcpListener::bind("10.0.0.1:7").await.unwrap();
                    let (mut stream, _) = listener.accept().await.unwrap();
                    let mut buf = [0u8; 8];
                    while stream.read_exact(&mut buf).await.is_ok() {
                        stream.write_all(&buf).await.unwrap();
                        stream.flush().await.unwrap();
                    }
                });
                client
                    .spawn(async {
                        tokio::time::sleep(Duration::from_millis(1)).await;
                        let mut stream = tokio::net::TcpStream::connect("10.0.0.1:7").await.unwrap();
                        let mut buf = [0u8; 8];
                        let mut sum = 0;
                        for i in 0..ROUND_TRIPS {
                            stream.write_all(&i.to_le_bytes()).await.unwrap();
                            stream.flush().await.unwrap();
                            stream.read_exact(&mut buf).await.unwrap();
                            sum += u64::from_le_bytes(buf);
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
            other => panic!("unknown workload {other:?}: spawn, sleeps, echo or cluster"),
        }
    });
    println!("{} {result}", std::env::args().nth(1).unwrap_or_default());
}
