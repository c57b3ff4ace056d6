//! Scripted controls, each seen from the service it breaks: hold after N
//! bytes, resets by predicate, a silent port, a throttled reader, a DNS
//! delay, routes and a rollout. Simulation build only.
#![cfg(simulation)]

use sim_test_support::panic_text;

use sim_runtime::SimConfig;
use std::cell::RefCell;
use std::io::ErrorKind;
use std::rc::Rc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sim::control::Conns;
use tokio::sim::rollout::{Ready, Rollout};
use tokio::sim::{Fault, Sim};

const S: fn(u64) -> Duration = Duration::from_secs;
const MS: fn(u64) -> Duration = Duration::from_millis;

/// A server on `port` that greets with `hello`, then answers each line
/// with `ok <n>`, counting the requests it processed in `served`.
async fn greeter(port: u16, served: Arc<AtomicU32>) {
    let listener = TcpListener::bind(("0.0.0.0", port)).await.unwrap();
    loop {
        let (mut stream, _) = listener.accept().await.unwrap();
        let served = served.clone();
        tokio::spawn(async move {
            if stream.write_all(b"hello").await.is_err() {
                return;
            }
            let mut buf = [0u8; 64];
            loop {
                let n = match stream.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                served.fetch_add(1, Ordering::Relaxed);
                let reply = format!("ok {}", &buf[..n].len());
                if stream.write_all(reply.as_bytes()).await.is_err() {
                    return;
                }
            }
        });
    }
}

fn server(sim: &mut Sim, name: &str, port: u16) -> Arc<AtomicU32> {
    let served = Arc::new(AtomicU32::new(0));
    let count = served.clone();
    sim.host(name, move || greeter(port, count.clone()));
    served
}

/// Reads what arrives within `within`.
async fn read_within(stream: &mut TcpStream, within: Duration) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![0u8; 64];
    match tokio::time::timeout(within, stream.read(&mut buf)).await {
        Ok(Ok(n)) => Ok(buf[..n].to_vec()),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(ErrorKind::TimedOut.into()),
    }
}

#[test]
fn hold_after_bytes_lets_the_request_through_and_loses_the_response() {
    let mut sim = Sim::with_config(SimConfig::with_seed(1));
    let served = server(&mut sim, "server", 80);
    // The greeting (5 bytes) passes; what the server sends after waits.
    sim.at(
        Duration::ZERO,
        Fault::hold_after_bytes("server", "client", 5),
    );
    sim.at(S(10), Fault::release("server", "client"));
    let seen = Rc::new(RefCell::new(Vec::new()));
    let out = seen.clone();
    sim.client("client", async move {
        let mut stream = TcpStream::connect("server:80").await.unwrap();
        let greeting = read_within(&mut stream, S(1)).await.unwrap();
        stream.write_all(b"GET").await.unwrap();
        let first = read_within(&mut stream, S(2)).await;
        out.borrow_mut()
            .push((greeting, first.map_err(|e| e.kind())));
        // After the release at 10 s, the held answer arrives intact.
        let late = read_within(&mut stream, S(20)).await.unwrap();
        out.borrow_mut().push((late, Ok(vec![])));
    });
    sim.run();
    let seen = seen.borrow();
    assert_eq!(seen[0].0, b"hello");
    assert_eq!(seen[0].1, Err(ErrorKind::TimedOut), "the response was held");
    assert_eq!(
        served.load(Ordering::Relaxed),
        1,
        "the request was processed"
    );
    assert_eq!(seen[1].0, b"ok 3", "released intact");
}

#[test]
fn reset_now_takes_only_the_matching_connections() {
    let mut sim = Sim::with_config(SimConfig::with_seed(2));
    server(&mut sim, "a", 80);
    server(&mut sim, "b", 81);
    sim.at(S(1), Fault::Reset(Conns::between("client", "a")));
    let results = Rc::new(RefCell::new(Vec::new()));
    let out = results.clone();
    sim.client("client", async move {
        let mut to_a = TcpStream::connect("a:80").await.unwrap();
        let mut to_b = TcpStream::connect("b:81").await.unwrap();
        read_within(&mut to_a, S(1)).await.unwrap();
        read_within(&mut to_b, S(1)).await.unwrap();
        tokio::time::sleep(S(2)).await;
        for stream in [&mut to_a, &mut to_b] {
            let sent = stream.write_all(b"x").await;
            let got = read_within(stream, S(1)).await;
            out.borrow_mut()
                .push((sent.map_err(|e| e.kind()), got.map_err(|e| e.kind())));
        }
    });
    sim.run();
    let results = results.borrow();
    // The reset's error goes to the first call after it, the write; the
    // read then finds the end of the stream (Linux's one pending error).
    assert_eq!(
        results[0],
        (Err(ErrorKind::ConnectionReset), Ok(Vec::new())),
        "{results:?}"
    );
    assert_eq!(results[1], (Ok(()), Ok(b"ok 1".to_vec())), "{results:?}");
}

#[test]
fn reset_when_a_send_contains_the_bytes() {
    let mut sim = Sim::with_config(SimConfig::with_seed(3));
    let served = server(&mut sim, "server", 80);
    sim.at(
        Duration::ZERO,
        Fault::ResetWhen(Conns::port(80).containing(b"DELETE")),
    );
    let results = Rc::new(RefCell::new(Vec::new()));
    let out = results.clone();
    sim.client("client", async move {
        let mut stream = TcpStream::connect("server:80").await.unwrap();
        read_within(&mut stream, S(1)).await.unwrap();
        for request in [&b"GET /a"[..], b"DELETE /a"] {
            stream.write_all(request).await.unwrap();
            let got = read_within(&mut stream, S(1)).await;
            out.borrow_mut().push(got.map_err(|e| e.kind()));
        }
    });
    sim.run();
    let results = results.borrow();
    assert_eq!(results[0], Ok(b"ok 6".to_vec()));
    assert_eq!(results[1], Err(ErrorKind::ConnectionReset));
    assert_eq!(
        served.load(Ordering::Relaxed),
        1,
        "the DELETE never reached the server"
    );
}

#[test]
fn a_silent_port_accepts_and_never_answers() {
    let mut sim = Sim::with_config(SimConfig::with_seed(4));
    let served = server(&mut sim, "server", 80);
    sim.at(Duration::ZERO, Fault::silence_port("server", 80));
    sim.at(S(5), Fault::UnsilencePort("server".into(), 80));
    let results = Rc::new(RefCell::new(Vec::new()));
    let out = results.clone();
    sim.client("client", async move {
        let mut silent = TcpStream::connect("server:80").await.unwrap();
        silent.write_all(b"GET").await.unwrap();
        let got = read_within(&mut silent, S(2)).await;
        out.borrow_mut().push(got.map_err(|e| e.kind()));
        tokio::time::sleep(S(5)).await;
        let mut fresh = TcpStream::connect("server:80").await.unwrap();
        let got = read_within(&mut fresh, S(2)).await;
        out.borrow_mut().push(got.map_err(|e| e.kind()));
    });
    sim.run();
    let results = results.borrow();
    assert_eq!(
        results[0],
        Err(ErrorKind::TimedOut),
        "connected, never answered"
    );
    assert_eq!(results[1], Ok(b"hello".to_vec()), "answers again");
    assert_eq!(served.load(Ordering::Relaxed), 0);
}

/// When the writer finished writing 1 MiB, and when the reader had it all.
fn throttled_transfer(rate: Option<u64>) -> (Duration, Duration) {
    let mut sim = Sim::with_config(SimConfig::with_seed(5));
    let read_done = Rc::new(RefCell::new(Duration::ZERO));
    let out = read_done.clone();
    sim.host("sink", move || {
        let out = out.clone();
        async move {
            let listener = TcpListener::bind("0.0.0.0:9").await.unwrap();
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut all = Vec::new();
            stream.read_to_end(&mut all).await.unwrap();
            assert_eq!(all.len(), 1 << 20);
            *out.borrow_mut() = tokio::sim::now();
        }
    });
    if let Some(rate) = rate {
        sim.at(Duration::ZERO, Fault::throttle_reader("sink", rate));
    }
    let write_done = Rc::new(RefCell::new(Duration::ZERO));
    let out = write_done.clone();
    sim.client("source", async move {
        let mut stream = TcpStream::connect("sink:9").await.unwrap();
        stream.write_all(&vec![1u8; 1 << 20]).await.unwrap();
        *out.borrow_mut() = tokio::sim::now();
        drop(stream);
        tokio::time::sleep(S(30)).await;
    });
    sim.run();
    let times = (*write_done.borrow(), *read_done.borrow());
    times
}

#[test]
fn a_throttled_reader_pushes_back_on_the_writer() {
    let (write_fast, read_fast) = throttled_transfer(None);
    assert!(read_fast < S(1), "{read_fast:?}");
    // 1 MiB at 100 KB/s: about 10.5 s to read; the writer waits for the
    // window, so it finishes only one window (64 KiB) ahead of the reader.
    let (write_slow, read_slow) = throttled_transfer(Some(100_000));
    assert!(
        read_slow >= MS(10_400) && read_slow <= MS(10_600),
        "{read_slow:?}"
    );
    assert!(
        write_slow >= S(9) && write_slow <= read_slow,
        "{write_slow:?}"
    );
    assert!(write_fast < S(1), "{write_fast:?}");
}

#[test]
fn a_dns_delay_slows_one_name_only() {
    let mut sim = Sim::with_config(SimConfig::with_seed(6));
    server(&mut sim, "slow", 80);
    server(&mut sim, "fast", 80);
    sim.at(Duration::ZERO, Fault::dns_delay("slow", S(2)));
    let times = Rc::new(RefCell::new(Vec::new()));
    let out = times.clone();
    sim.client("client", async move {
        for name in ["slow:80", "fast:80"] {
            let start = tokio::sim::now();
            tokio::net::lookup_host(name).await.unwrap().next().unwrap();
            TcpStream::connect(name).await.unwrap();
            out.borrow_mut().push(tokio::sim::now() - start);
        }
    });
    sim.run();
    let times = times.borrow();
    // Two resolutions of the slow name (lookup and connect), 2 s each.
    assert!(times[0] >= S(4) && times[0] < MS(4_010), "{times:?}");
    assert!(times[1] < MS(10), "{times:?}");
}

/// A replica that answers each connection with its name and version, and
/// exits gracefully on SIGTERM.
async fn replica(name: String, version: &'static str) {
    use tokio::signal::unix::{signal, SignalKind};
    let listener = TcpListener::bind("0.0.0.0:80").await.unwrap();
    let mut term = signal(SignalKind::terminate()).unwrap();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (mut stream, _) = accepted.unwrap();
                let _ = stream.write_all(format!("{name} {version}").as_bytes()).await;
            }
            _ = term.recv() => return,
        }
    }
}

/// Versions a client saw, one connection to `api` every 100 ms for 20 s,
/// under a rollout to v2 at 1 s; and the connects that failed.
fn rollout_run(v2_listens: bool) -> (Vec<String>, u32) {
    let mut sim = Sim::with_config(SimConfig::with_seed(8));
    const NAMES: [&str; 3] = ["r1", "r2", "r3"];
    for name in NAMES {
        sim.host(name, move || replica(name.to_string(), "v1"));
    }
    sim.at(Duration::ZERO, Fault::route("api", &NAMES));
    // v2 starts on each replica's host in turn; a broken v2 never listens.
    let rollout = Rollout::new("api", move || async move {
        if v2_listens {
            replica(tokio::sim::host_name(), "v2").await
        } else {
            std::future::pending::<()>().await
        }
    })
    .grace(MS(500))
    .ready(Ready::Listening(80))
    .ready_within(S(3));
    sim.at(S(1), Fault::Rollout(rollout));
    let seen = Rc::new(RefCell::new((Vec::new(), 0)));
    let out = seen.clone();
    sim.client("client", async move {
        for _ in 0..200 {
            match TcpStream::connect("api:80").await {
                Ok(mut stream) => {
                    let mut text = String::new();
                    let _ = stream.read_to_string(&mut text).await;
                    out.borrow_mut().0.push(text);
                }
                Err(_) => out.borrow_mut().1 += 1,
            }
            tokio::time::sleep(MS(100)).await;
        }
    });
    sim.eventually("the rollout finishes", S(10), |obs| {
        obs.get("rollout", "api") == Some("done")
    });
    sim.run();
    Rc::try_unwrap(seen).unwrap().into_inner()
}

#[test]
fn a_route_spreads_connections_and_can_change() {
    let mut sim = Sim::with_config(SimConfig::with_seed(7));
    for name in ["r1", "r2", "r3"] {
        sim.host(name, move || async move {
            let listener = TcpListener::bind("0.0.0.0:80").await.unwrap();
            loop {
                let (mut stream, _) = listener.accept().await.unwrap();
                let _ = stream.write_all(name.as_bytes()).await;
            }
        });
    }
    sim.at(Duration::ZERO, Fault::route("api", &["r1", "r2", "r3"]));
    sim.at(S(1), Fault::route("api", &["r3"]));
    let seen = Rc::new(RefCell::new(Vec::new()));
    let out = seen.clone();
    sim.client("client", async move {
        for _ in 0..2 {
            for _ in 0..6 {
                let mut stream = TcpStream::connect("api:80").await.unwrap();
                let mut name = String::new();
                stream.read_to_string(&mut name).await.ok();
                out.borrow_mut().push(name);
            }
            tokio::time::sleep(S(2)).await;
        }
    });
    sim.run();
    let seen = seen.borrow();
    assert_eq!(seen[..6], ["r1", "r2", "r3", "r1", "r2", "r3"], "{seen:?}");
    assert!(seen[6..].iter().all(|n| n == "r3"), "{seen:?}");
}

#[test]
fn a_rollout_replaces_each_replica_in_turn_without_failing_a_connect() {
    let (seen, failed) = rollout_run(true);
    assert_eq!(failed, 0, "a replica leaves the route before its SIGTERM");
    let version = |s: &String| s.split(' ').nth(1).unwrap_or("").to_string();
    let first_v2 = seen.iter().position(|s| version(s) == "v2").unwrap();
    // Before the rollout, only v1; at the end, only v2 (on all three).
    assert!(
        seen[..first_v2].iter().all(|s| version(s) == "v1"),
        "{seen:?}"
    );
    let tail = &seen[seen.len() - 30..];
    assert!(tail.iter().all(|s| version(s) == "v2"), "{seen:?}");
    for name in ["r1", "r2", "r3"] {
        assert!(tail.iter().any(|s| s.starts_with(name)), "{name}: {seen:?}");
    }
    // Between, both versions answered: version skew.
    let mixed = &seen[first_v2..seen.len() - 30];
    assert!(mixed.iter().any(|s| version(s) == "v1"), "{seen:?}");
}

#[test]
fn a_rollout_whose_new_version_never_gets_ready_fails_with_liveness() {
    let text = panic_text(std::panic::catch_unwind(|| rollout_run(false)).unwrap_err());
    assert!(
        text.contains("the rollout of \"api\" stalled: r1 was not ready (Listening(80)) within 3s"),
        "{text}"
    );
}
