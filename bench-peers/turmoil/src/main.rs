//! The peer benchmark's workloads on turmoil (`scripts/bench-peers.sh`).
//! Usage: `<binary> <workload>`.

use std::cell::Cell;
use std::rc::Rc;
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

/// A simulation whose links take 0-1 ms, as the other systems'; with
/// `BENCH_LINKS=default`, turmoil's own default (0-100 ms).
fn sim<'a>() -> turmoil::Sim<'a> {
    let mut builder = turmoil::Builder::new();
    builder.simulation_duration(Duration::from_secs(24 * 3600));
    if std::env::var("BENCH_LINKS").as_deref() != Ok("default") {
        builder
            .min_message_latency(Duration::ZERO)
            .max_message_latency(Duration::from_millis(1));
    }
    builder.build()
}

fn main() {
    let workload = std::env::args().nth(1).unwrap_or_default();
    let result = Rc::new(Cell::new(0u64));
    let out = result.clone();
    let mut sim = sim();
    match workload.as_str() {
        "spawn" => sim.client("client", async move {
            let handles: Vec<_> = (0..TASKS).map(|i| tokio::spawn(async move { i })).collect();
            let mut sum = 0;
            for h in handles {
                sum += h.await.unwrap();
            }
            out.set(sum);
            Ok(())
        }),
        "sleeps" => sim.client("client", async move {
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
            out.set(sum);
            Ok(())
        }),
        "echo" | "echo-seg" => {
            let (size, rounds) = if workload == "echo-seg" {
                (SEGMENTED_BYTES, SEGMENTED_ROUND_TRIPS)
            } else {
                (8, ROUND_TRIPS)
            };
            sim.host("server", move || async move {
                let listener = turmoil::net::TcpListener::bind("0.0.0.0:7").await?;
                let (mut stream, _) = listener.accept().await?;
                let mut buf = vec![0u8; size];
                while stream.read_exact(&mut buf).await.is_ok() {
                    stream.write_all(&buf).await?;
                }
                Ok(())
            });
            sim.client("client", async move {
                let mut stream = turmoil::net::TcpStream::connect("server:7").await?;
                let mut message = vec![0u8; size];
                let mut buf = vec![0u8; size];
                let mut sum = 0;
                for i in 0..rounds {
                    message[..8].copy_from_slice(&i.to_le_bytes());
                    stream.write_all(&message).await?;
                    stream.read_exact(&mut buf).await?;
                    sum += u64::from_le_bytes(buf[..8].try_into().unwrap());
                }
                out.set(sum);
                Ok(())
            })
        }
        "cluster" => {
            sim.host("server", || async {
                let listener = turmoil::net::TcpListener::bind("0.0.0.0:7").await?;
                loop {
                    let (mut stream, _) = listener.accept().await?;
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
            for c in 0..4 {
                let out = out.clone();
                sim.client(format!("client{c}"), async move {
                    let mut stream = turmoil::net::TcpStream::connect("server:7").await?;
                    let mut tick = tokio::time::interval(Duration::from_millis(10));
                    let mut buf = [0u8; 8];
                    for i in 0..60_000u64 {
                        tick.tick().await;
                        stream.write_all(&i.to_le_bytes()).await?;
                        stream.read_exact(&mut buf).await?;
                        out.set(out.get() + u64::from_le_bytes(buf));
                    }
                    Ok(())
                });
            }
        }
        "heartbeat" => {
            // `hosts` hosts send an 8-byte heartbeat to the next 3 in a
            // ring every 100 ms for `seconds`; the answer is the number
            // received, a second after the last was sent.
            let arg = |i: usize| std::env::args().nth(i).and_then(|a| a.parse::<u64>().ok());
            let hosts = arg(2).unwrap_or(1000) as usize;
            let seconds = arg(3).unwrap_or(600);
            let received = Rc::new(Cell::new(0u64));
            for h in 0..hosts {
                let received = received.clone();
                sim.host(format!("h{h}"), move || {
                    let received = received.clone();
                    async move {
                        let socket = Rc::new(turmoil::net::UdpSocket::bind("0.0.0.0:9").await?);
                        let peers: Vec<std::net::SocketAddr> = (1..=3)
                            .map(|p| (turmoil::lookup(format!("h{}", (h + p) % hosts)), 9).into())
                            .collect();
                        let listener = socket.clone();
                        tokio::task::spawn_local(async move {
                            let mut buf = [0u8; 8];
                            loop {
                                listener.recv_from(&mut buf).await.unwrap();
                                received.set(received.get() + 1);
                            }
                        });
                        // Every host binds before the first heartbeat.
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        let mut tick = tokio::time::interval(Duration::from_millis(100));
                        for i in 0..seconds * 10 {
                            tick.tick().await;
                            for peer in &peers {
                                socket.send_to(&i.to_le_bytes(), peer).await?;
                            }
                        }
                        std::future::pending::<()>().await;
                        Ok(())
                    }
                });
            }
            sim.client("observer", async move {
                tokio::time::sleep(Duration::from_secs(seconds + 1)).await;
                out.set(received.get());
                Ok(())
            })
        }
        other => panic!(
            "unknown workload {other:?}: spawn, sleeps, echo, echo-seg, cluster or heartbeat"
        ),
    }
    sim.run().unwrap();
    println!("{workload} {}", result.get());
}
