//! The simulated network: hosts, names, faults, determinism. Simulation
//! build only (these are the simulator's own features).
#![cfg(simulation)]

use sim_runtime::SimConfig;
use std::cell::RefCell;
use std::io::ErrorKind;
use std::rc::Rc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream, UdpSocket};
use tokio::sim::{Fault, LinkConfig, Sim};
use tokio::time::{sleep, timeout, Instant};

async fn echo_server() {
    let listener = TcpListener::bind("0.0.0.0:7").await.unwrap();
    loop {
        let (mut stream, _) = listener.accept().await.unwrap();
        tokio::spawn(async move {
            let (mut r, mut w) = stream.split();
            let _ = tokio::io::copy(&mut r, &mut w).await;
        });
    }
}

async fn echo_once(addr: &str, message: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut stream = TcpStream::connect(addr).await?;
    stream.write_all(message).await?;
    let mut back = vec![0u8; message.len()];
    stream.read_exact(&mut back).await?;
    Ok(back)
}

fn sim(seed: u64) -> Sim {
    Sim::with_config(SimConfig::with_seed(seed))
}

#[test]
fn an_echo_server_and_client_on_two_hosts() {
    let mut sim = sim(1);
    sim.host("server", echo_server);
    sim.client("client", async {
        let back = echo_once("server:7", b"hello over the network")
            .await
            .unwrap();
        assert_eq!(back, b"hello over the network");
        let addrs: Vec<_> = tokio::net::lookup_host("server:7").await.unwrap().collect();
        assert_eq!(addrs, vec!["10.0.0.2:7".parse().unwrap()]);
    });
    let report = sim.run();
    assert!(report.events > 20);
}

fn echo_run(seed: u64) -> String {
    let mut sim = sim(seed);
    sim.default_link(LinkConfig {
        latency_min: Duration::from_millis(1),
        latency_max: Duration::from_millis(20),
        ..LinkConfig::default()
    });
    sim.host("server", echo_server);
    for c in 0..3 {
        sim.client(&format!("client{c}"), async move {
            for i in 0..5u8 {
                let back = echo_once("server:7", &[c, i]).await.unwrap();
                assert_eq!(back, [c, i]);
            }
        });
    }
    sim.run().trace_hash
}

#[test]
fn one_seed_one_trace_and_seeds_differ() {
    assert_eq!(echo_run(7), echo_run(7));
    assert_ne!(echo_run(7), echo_run(8));
}

#[test]
fn a_partition_times_the_client_out_and_it_succeeds_after_heal() {
    let mut sim = sim(2);
    sim.host("server", echo_server);
    sim.client("client", async {
        Fault::Partition("client".into(), "server".into()).apply();
        let start = Instant::now();
        let attempt = timeout(Duration::from_secs(5), echo_once("server:7", b"x")).await;
        assert!(attempt.is_err(), "no answer through a partition");
        assert_eq!(
            start.elapsed(),
            Duration::from_secs(5),
            "the timeout fired in virtual time"
        );
        Fault::Heal("client".into(), "server".into()).apply();
        let back = timeout(Duration::from_secs(5), echo_once("server:7", b"y"))
            .await
            .expect("answered after the heal")
            .unwrap();
        assert_eq!(back, b"y");
    });
    sim.run();
}

#[test]
fn held_bytes_resume_intact_on_release() {
    let mut sim = sim(3);
    sim.host("server", echo_server);
    sim.client("client", async {
        let mut stream = TcpStream::connect("server:7").await.unwrap();
        Fault::Hold("client".into(), "server".into()).apply();
        stream.write_all(b"held message").await.unwrap();
        let mut buf = [0u8; 12];
        let early = timeout(Duration::from_secs(1), stream.read_exact(&mut buf)).await;
        assert!(early.is_err(), "nothing arrives while held");
        Fault::Release("client".into(), "server".into()).apply();
        stream.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"held message");
    });
    sim.run();
}

#[test]
fn a_crashed_host_sends_no_fin_and_its_peer_times_out() {
    let mut sim = sim(4);
    sim.host("server", echo_server);
    sim.client("client", async {
        let mut stream = TcpStream::connect("server:7").await.unwrap();
        stream.write_all(b"a").await.unwrap();
        let mut one = [0u8; 1];
        stream.read_exact(&mut one).await.unwrap();
        Fault::Crash("server".into()).apply();
        // No FIN, no RST: a read just waits.
        let read = timeout(Duration::from_secs(30), stream.read(&mut one)).await;
        assert!(read.is_err(), "a crashed peer sends nothing");
        // A new connection to the crashed host gets no answer either.
        let connect = timeout(Duration::from_secs(3), TcpStream::connect("server:7")).await;
        assert!(connect.is_err());
    });
    sim.run();
}

#[test]
fn a_restarted_host_resets_old_connections_and_serves_new_ones() {
    let starts = Rc::new(RefCell::new(0));
    let counter = starts.clone();
    let mut sim = sim(5);
    sim.host("server", move || {
        *counter.borrow_mut() += 1;
        echo_server()
    });
    sim.at(Duration::from_secs(10), Fault::Crash("server".into()));
    sim.at(Duration::from_secs(20), Fault::Restart("server".into()));
    sim.client("client", async {
        let mut old = TcpStream::connect("server:7").await.unwrap();
        sleep(Duration::from_secs(25)).await;
        // The restarted host has no such connection: our data draws an RST.
        old.write_all(b"stale").await.unwrap();
        let mut buf = [0u8; 5];
        let err = old.read_exact(&mut buf).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ConnectionReset);
        let back = echo_once("server:7", b"fresh").await.unwrap();
        assert_eq!(back, b"fresh");
    });
    sim.run();
    assert_eq!(*starts.borrow(), 2, "the factory ran again on restart");
}

#[test]
fn a_connect_to_a_crashed_host_resends_its_syn_and_completes_after_the_restart() {
    let mut sim = sim(8);
    sim.host("server", echo_server);
    sim.at(Duration::from_secs(1), Fault::Crash("server".into()));
    sim.at(Duration::from_secs(10), Fault::Restart("server".into()));
    sim.client("client", async {
        sleep(Duration::from_secs(2)).await;
        let started = Instant::now();
        // SYNs at 0, 1, 3, 7 and 15 s: the one at 15 s reaches the restarted
        // host (up at 8 s from here).
        let back = echo_once("server:7", b"after").await.unwrap();
        assert_eq!(back, b"after");
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_secs(15) && waited < Duration::from_secs(17),
            "connected at the SYN after the restart: {waited:?}"
        );
    });
    sim.run();
}

#[test]
fn a_connect_to_a_host_that_stays_down_times_out_as_linux_does() {
    let mut sim = sim(9);
    sim.host("server", echo_server);
    sim.at(Duration::from_secs(1), Fault::Crash("server".into()));
    sim.client("client", async {
        sleep(Duration::from_secs(2)).await;
        let started = Instant::now();
        let err = TcpStream::connect("server:7").await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TimedOut);
        assert_eq!(err.raw_os_error(), Some(110), "ETIMEDOUT: {err}");
        let waited = started.elapsed();
        // Seven SYNs (the first and six retransmissions), then 64 s more.
        assert!(
            waited >= Duration::from_secs(127) && waited < Duration::from_secs(129),
            "{waited:?}"
        );
    });
    sim.run();
}

#[test]
fn refusing_and_black_holing_connects() {
    let mut sim = sim(6);
    sim.host("server", echo_server);
    sim.client("client", async {
        Fault::Refuse("server".into()).apply();
        let err = TcpStream::connect("server:7").await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ConnectionRefused);
        Fault::BlackHole("server".into()).apply();
        let attempt = timeout(Duration::from_secs(2), TcpStream::connect("server:7")).await;
        assert!(attempt.is_err(), "a black hole never answers");
        Fault::Accept("server".into()).apply();
        assert!(echo_once("server:7", b"ok").await.is_ok());
    });
    sim.run();
}

#[test]
fn one_way_partitions_cut_one_direction() {
    let mut sim = sim(7);
    sim.host("server", || async {
        let socket = UdpSocket::bind("0.0.0.0:9").await.unwrap();
        let mut buf = [0u8; 16];
        loop {
            let (n, from) = socket.recv_from(&mut buf).await.unwrap();
            socket.send_to(&buf[..n], from).await.unwrap();
        }
    });
    sim.client("client", async {
        let socket = UdpSocket::bind("0.0.0.0:0").await.unwrap();
        let mut buf = [0u8; 16];
        // Replies are cut: requests arrive, answers do not.
        Fault::PartitionOneWay("server".into(), "client".into()).apply();
        socket.send_to(b"ping", "server:9").await.unwrap();
        let lost = timeout(Duration::from_secs(1), socket.recv_from(&mut buf)).await;
        assert!(lost.is_err());
        Fault::HealOneWay("server".into(), "client".into()).apply();
        socket.send_to(b"ping", "server:9").await.unwrap();
        let (n, _) = timeout(Duration::from_secs(1), socket.recv_from(&mut buf))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(&buf[..n], b"ping");
    });
    sim.run();
}

#[test]
fn udp_links_drop_and_duplicate_at_their_rates() {
    let received = Rc::new(RefCell::new(0usize));
    let count = received.clone();
    let mut sim = sim(8);
    sim.host("sink", move || {
        let count = count.clone();
        async move {
            let socket = UdpSocket::bind("0.0.0.0:9").await.unwrap();
            let mut buf = [0u8; 8];
            loop {
                socket.recv_from(&mut buf).await.unwrap();
                *count.borrow_mut() += 1;
            }
        }
    });
    sim.link(
        "client",
        "sink",
        LinkConfig {
            udp_drop_rate: 0.3,
            udp_dup_rate: 0.2,
            ..LinkConfig::default()
        },
    );
    sim.client("client", async {
        let socket = UdpSocket::bind("0.0.0.0:0").await.unwrap();
        for i in 0..1000u32 {
            socket.send_to(&i.to_le_bytes(), "sink:9").await.unwrap();
        }
        sleep(Duration::from_secs(1)).await;
    });
    sim.run();
    let got = *received.borrow();
    // About 700 survive the drops, and about a fifth of those come twice.
    assert!((700..950).contains(&got), "received {got}");
}

#[test]
fn ephemeral_ports_are_deterministic() {
    let mut sim = sim(9);
    sim.host("server", echo_server);
    sim.client("client", async {
        let a = TcpStream::connect("server:7").await.unwrap();
        let b = TcpStream::connect("server:7").await.unwrap();
        assert_eq!(a.local_addr().unwrap(), "10.0.0.3:49152".parse().unwrap());
        assert_eq!(b.local_addr().unwrap(), "10.0.0.3:49153".parse().unwrap());
    });
    sim.run();
}

#[test]
fn an_unknown_host_name_fails_to_resolve() {
    let mut sim = sim(10);
    sim.client("client", async {
        let err = TcpStream::connect("nowhere:80").await.unwrap_err();
        assert!(err.to_string().contains("nowhere"), "{err}");
    });
    sim.run();
}

#[test]
fn sigterm_reaches_a_host_that_handles_it_and_crashes_one_that_does_not() {
    let graceful = Rc::new(RefCell::new(false));
    let flag = graceful.clone();
    let mut sim = sim(11);
    sim.host("graceful", move || {
        let flag = flag.clone();
        async move {
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).unwrap();
            term.recv().await;
            *flag.borrow_mut() = true;
        }
    });
    sim.host("abrupt", echo_server);
    sim.at(Duration::from_secs(1), Fault::Signal("graceful".into(), 15));
    sim.at(Duration::from_secs(1), Fault::Signal("abrupt".into(), 15));
    sim.client("client", async {
        sleep(Duration::from_secs(2)).await;
        // The host without a handler is gone: connects go unanswered.
        let attempt = timeout(Duration::from_secs(1), TcpStream::connect("abrupt:7")).await;
        assert!(
            attempt.is_err(),
            "SIGTERM without a handler crashed the host"
        );
    });
    sim.run();
    assert!(*graceful.borrow(), "the handler saw SIGTERM");
}

#[test]
fn ctrl_c_waits_for_sigint() {
    let mut sim = sim(12);
    sim.at(Duration::from_secs(3), Fault::Signal("client".into(), 2));
    sim.client("client", async {
        let start = Instant::now();
        tokio::signal::ctrl_c().await.unwrap();
        assert_eq!(start.elapsed(), Duration::from_secs(3));
    });
    sim.run();
}

#[test]
fn forbidden_signals_are_refused() {
    let mut sim = sim(13);
    sim.client("client", async {
        let err =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::from_raw(9)).unwrap_err();
        assert!(err.to_string().contains("Refusing to register signal 9"));
    });
    sim.run();
}

#[test]
fn the_std_resolver_sees_simulated_hosts() {
    use std::net::ToSocketAddrs;
    let mut sim = sim(14);
    sim.host("server", echo_server);
    sim.client("client", async {
        // What hyper-util's GaiResolver does: std's resolver in a blocking
        // task.
        let addrs = tokio::task::spawn_blocking(|| {
            ("server", 7)
                .to_socket_addrs()
                .map(|a| a.collect::<Vec<_>>())
        })
        .await
        .unwrap()
        .unwrap();
        assert_eq!(addrs, vec!["10.0.0.2:7".parse().unwrap()]);
        let mut stream = TcpStream::connect(addrs[0]).await.unwrap();
        stream.write_all(b"via std").await.unwrap();
        let local = ("localhost", 80).to_socket_addrs().unwrap().next().unwrap();
        assert!(local.ip().is_loopback());
        let unknown = ("no-such-host", 80).to_socket_addrs();
        assert!(
            unknown.is_err(),
            "an unknown name fails as a real resolver's does"
        );
    });
    sim.run();
}

/// Runs in a child process (see the test below): a two-host echo whose
/// trace goes to `SIM_TRACE`.
#[test]
fn echo_cluster_child() {
    let mut sim = Sim::new();
    sim.host("server", echo_server);
    sim.client("client", async {
        for i in 0..10u8 {
            assert_eq!(echo_once("server:7", &[i; 3]).await.unwrap(), [i; 3]);
        }
    });
    sim.run();
}

#[test]
fn a_two_host_echo_writes_the_same_trace_in_two_processes() {
    let a = sim_test_support::child_trace(
        env!("CARGO_TARGET_TMPDIR"),
        "echo_cluster_child",
        "0x77",
        "cluster-a.trace",
    );
    let b = sim_test_support::child_trace(
        env!("CARGO_TARGET_TMPDIR"),
        "echo_cluster_child",
        "0x77",
        "cluster-b.trace",
    );
    assert!(a.len() > 1000, "a real trace: {} bytes", a.len());
    let text = String::from_utf8_lossy(&a);
    for word in [
        "tcp-listen",
        "tcp-connect",
        "tcp-accept",
        "send ",
        "deliver #",
    ] {
        assert!(text.contains(word), "the trace records {word}");
    }
    assert!(a == b, "one seed, two processes, two different traces");
}

#[test]
fn socket2_setters_work_on_simulated_sockets() {
    let mut sim = sim(15);
    sim.host("server", echo_server);
    sim.client("client", async {
        // What hyper-util's connector does: a real, unconnected socket,
        // options set through socket2, then connect in the simulation.
        let socket =
            socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        socket.set_nonblocking(true).unwrap();
        let std_stream: std::net::TcpStream = socket.into();
        let tcp = tokio::net::TcpSocket::from_std_stream(std_stream);
        tcp.set_nodelay(true).unwrap();
        let stream = tcp.connect("10.0.0.2:7".parse().unwrap()).await.unwrap();
        let sock_ref = socket2::SockRef::from(&stream);
        sock_ref.set_keepalive(true).unwrap();
        assert!(sock_ref.keepalive().unwrap());
        sock_ref.set_recv_buffer_size(1 << 16).unwrap();
        assert!(stream.nodelay().unwrap());
    });
    sim.run();
}

/// A `try_io` whose closure says `WouldBlock` clears the readiness, as
/// tokio documents: `readable()` then waits for the next arrival, even
/// with a byte still buffered (real sockets may wake early; the simulator
/// never does). The same holds for UDP.
#[tokio::test]
async fn a_cleared_readiness_waits_for_the_next_arrival() {
    use tokio::io::Interest;
    let would_block = || Err::<(), _>(std::io::Error::from(ErrorKind::WouldBlock));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let mut client = TcpStream::connect(listener.local_addr().unwrap())
        .await
        .unwrap();
    let (server, _) = listener.accept().await.unwrap();
    client.write_all(b"a").await.unwrap();
    server.readable().await.unwrap();
    let _ = server.try_io(Interest::READABLE, would_block);
    let waited = timeout(Duration::from_millis(100), server.readable()).await;
    assert!(
        waited.is_err(),
        "readable() answered from the cleared readiness"
    );
    client.write_all(b"b").await.unwrap();
    server.readable().await.unwrap();

    let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let b = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    a.send_to(b"one", b.local_addr().unwrap()).await.unwrap();
    b.readable().await.unwrap();
    let _ = b.try_io(Interest::READABLE, would_block);
    assert!(timeout(Duration::from_millis(100), b.readable())
        .await
        .is_err());
    a.send_to(b"two", b.local_addr().unwrap()).await.unwrap();
    b.readable().await.unwrap();
    let mut buf = [0u8; 3];
    assert_eq!(b.try_recv(&mut buf).unwrap(), 3);
    assert_eq!(&buf, b"one");
}

/// The reads a server on another host needs to take in one 10,000-byte
/// write, and whether the bytes came intact.
fn reads_of_one_write(seed: u64) -> (usize, bool) {
    let result = Rc::new(RefCell::new((0, false)));
    let out = result.clone();
    let mut sim = sim(seed);
    sim.host("server", move || {
        let out = out.clone();
        async move {
            let listener = TcpListener::bind("0.0.0.0:9").await.unwrap();
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut got = Vec::new();
            let mut reads = 0;
            let mut buf = [0u8; 65_536];
            while got.len() < 10_000 {
                let n = stream.read(&mut buf).await.unwrap();
                assert!(n > 0, "the whole write arrives");
                reads += 1;
                got.extend_from_slice(&buf[..n]);
            }
            let intact = got.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8);
            *out.borrow_mut() = (reads, intact);
        }
    });
    sim.client("client", async move {
        let data: Vec<u8> = (0..10_000).map(|i| (i % 251) as u8).collect();
        let mut stream = TcpStream::connect("server:9").await.unwrap();
        stream.write_all(&data).await.unwrap();
        sleep(Duration::from_secs(1)).await;
    });
    sim.run();
    let result = *result.borrow();
    result
}

#[test]
fn a_large_write_across_a_link_arrives_in_segments_in_order() {
    let remote: Vec<(usize, bool)> = (0..10).map(reads_of_one_write).collect();
    assert!(remote.iter().all(|(_, intact)| *intact), "{remote:?}");
    assert!(
        remote.iter().any(|(reads, _)| *reads > 1),
        "segments of 1,460 bytes arrive apart: {remote:?}"
    );
}

/// Answers each 8-byte request on port 9 with one byte.
async fn request_server() {
    let listener = TcpListener::bind("0.0.0.0:9").await.unwrap();
    let (mut stream, _) = listener.accept().await.unwrap();
    let mut request = [0u8; 8];
    while stream.read_exact(&mut request).await.is_ok() {
        stream.write_all(b"k").await.unwrap();
    }
}

/// Sends 10 requests, each in two small writes (a header, then a body),
/// over a 1 ms link, and returns how long each took to be answered.
fn two_write_requests(nodelay: bool) -> Vec<Duration> {
    let mut sim = sim(21);
    sim.default_link(LinkConfig {
        latency_min: Duration::from_millis(1),
        latency_max: Duration::from_millis(1),
        ..LinkConfig::default()
    });
    sim.host("server", request_server);
    let took = Rc::new(RefCell::new(Vec::new()));
    let out = took.clone();
    sim.client("client", async move {
        let mut stream = TcpStream::connect("server:9").await.unwrap();
        stream.set_nodelay(nodelay).unwrap();
        for _ in 0..10 {
            let started = Instant::now();
            stream.write_all(b"head").await.unwrap();
            stream.write_all(b"body").await.unwrap();
            let mut answer = [0u8; 1];
            stream.read_exact(&mut answer).await.unwrap();
            out.borrow_mut().push(started.elapsed());
        }
    });
    sim.run();
    took.take()
}

/// Linux's classic stall: with Nagle on (the default), the body waits for
/// the ACK of the header, and a server that answered a request before
/// delays that ACK by 40 ms, hoping to carry it on a reply. `TCP_NODELAY`
/// sends the body at once.
#[test]
fn nagle_and_delayed_acks_stall_a_two_write_request_until_nodelay() {
    let nagle = two_write_requests(false);
    let nodelay = two_write_requests(true);
    let ms = Duration::from_millis;
    // The first request meets a fresh connection: its header is
    // acknowledged at once (Linux's quick ACKs), so only round trips.
    assert!(nagle[0] < ms(10), "{nagle:?}");
    for took in &nagle[1..] {
        assert!(*took >= ms(40) && *took < ms(50), "{nagle:?}");
    }
    for took in &nodelay {
        assert!(*took < ms(10), "{nodelay:?}");
    }
}

/// Setting `TCP_NODELAY` sends what Nagle held at once, as on Linux.
#[test]
fn setting_nodelay_sends_what_nagle_holds() {
    let mut sim = sim(22);
    sim.default_link(LinkConfig {
        latency_min: Duration::from_millis(1),
        latency_max: Duration::from_millis(1),
        ..LinkConfig::default()
    });
    sim.host("server", request_server);
    sim.client("client", async {
        let mut stream = TcpStream::connect("server:9").await.unwrap();
        let mut answer = [0u8; 1];
        // A first request makes the server answer data with data.
        stream.write_all(b"12345678").await.unwrap();
        stream.read_exact(&mut answer).await.unwrap();
        let started = Instant::now();
        stream.write_all(b"head").await.unwrap();
        stream.write_all(b"body").await.unwrap();
        // The body is held behind the header's ACK, due in 40 ms.
        sleep(Duration::from_millis(5)).await;
        stream.set_nodelay(true).unwrap();
        stream.read_exact(&mut answer).await.unwrap();
        let took = started.elapsed();
        assert!(
            took >= Duration::from_millis(5) && took < Duration::from_millis(10),
            "{took:?}"
        );
    });
    sim.run();
}

/// The delayed ACK's event is lazy: an ACK that rode on a reply leaves it
/// pending, and an ACK owed later is still delayed its full 40 ms, not
/// sent when the earlier event comes due.
#[test]
fn an_ack_owed_after_one_that_rode_on_a_reply_still_waits_its_40_ms() {
    let mut sim = sim(24);
    sim.default_link(LinkConfig {
        latency_min: Duration::from_millis(1),
        latency_max: Duration::from_millis(1),
        ..LinkConfig::default()
    });
    sim.host("server", request_server);
    sim.client("client", async {
        let mut stream = TcpStream::connect("server:9").await.unwrap();
        let mut answer = [0u8; 1];
        // The first answer puts the server in ping-pong mode (its ACKs
        // wait to ride on replies); the second request's ACK is delayed,
        // its event armed for 40 ms, and rides on the answer, leaving the
        // event pending.
        for _ in 0..2 {
            stream.write_all(b"12345678").await.unwrap();
            stream.read_exact(&mut answer).await.unwrap();
        }
        // Well before that event, a header alone: its ACK is owed from now,
        // and Nagle holds the body until it comes.
        sleep(Duration::from_millis(10)).await;
        let started = Instant::now();
        stream.write_all(b"head").await.unwrap();
        stream.write_all(b"body").await.unwrap();
        stream.read_exact(&mut answer).await.unwrap();
        let took = started.elapsed();
        assert!(
            took >= Duration::from_millis(40) && took < Duration::from_millis(50),
            "the header's ACK waited {took:?}, not its own 40 ms"
        );
    });
    sim.run();
}

/// A quick ACK asked for with `TCP_QUICKACK` releases the peer's held
/// bytes without the 40 ms wait.
#[test]
fn quickack_on_the_server_releases_the_held_body() {
    let mut sim = sim(23);
    sim.default_link(LinkConfig {
        latency_min: Duration::from_millis(1),
        latency_max: Duration::from_millis(1),
        ..LinkConfig::default()
    });
    sim.host("server", || async {
        let listener = TcpListener::bind("0.0.0.0:9").await.unwrap();
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut request = [0u8; 8];
        while stream.read_exact(&mut request[..4]).await.is_ok() {
            // Between the two halves: acknowledge the header now.
            stream.set_quickack(true).unwrap();
            stream.read_exact(&mut request[4..]).await.unwrap();
            stream.write_all(b"k").await.unwrap();
            assert!(!stream.quickack().unwrap(), "answering data: ping-pong");
        }
    });
    sim.client("client", async {
        let mut stream = TcpStream::connect("server:9").await.unwrap();
        let mut answer = [0u8; 1];
        for _ in 0..5 {
            let started = Instant::now();
            stream.write_all(b"head").await.unwrap();
            stream.write_all(b"body").await.unwrap();
            stream.read_exact(&mut answer).await.unwrap();
            let took = started.elapsed();
            assert!(took < Duration::from_millis(10), "{took:?}");
        }
    });
    sim.run();
}

/// A real listener made before the runtime (a `std::net::TcpListener` of a
/// plain test) joins the simulation when the simulation connects to it: the
/// connect reaches it, and its blocking accept and reads are simulated.
#[test]
fn a_real_listener_made_before_the_runtime_joins_the_simulation() {
    use std::io::Read;
    let real = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = real.local_addr().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build_with(SimConfig::with_seed(5));
    runtime.block_on(async move {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(b"hi").await.unwrap();
        let (mut accepted, peer) = real.accept().unwrap();
        assert_eq!(peer, stream.local_addr().unwrap());
        let mut buf = [0u8; 2];
        accepted.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"hi");
        // The listener still answers the address the program saw.
        assert_eq!(real.local_addr().unwrap(), addr);
    });
    // A port no real socket holds keeps the plain refusal.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build_with(SimConfig::with_seed(5));
    let err = runtime
        .block_on(async { TcpStream::connect("127.0.0.1:1").await })
        .expect_err("nothing listens");
    assert_eq!(
        err.to_string(),
        "Connection refused: nothing listens on 127.0.0.1:1"
    );
}
