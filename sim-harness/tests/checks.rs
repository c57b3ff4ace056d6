//! The harness's checkers, liveness phase and nemesis, on small services.
//! Simulation build only: `tokio::sim` is the facade's.
#![cfg(simulation)]

use sim_test_support::panic_text;

use sim_runtime::SimConfig;
use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;
use tokio::sim::{Fault, Nemesis, Sim};

/// A counter host that publishes its count every 100 ms; with `bug`, it
/// goes back by one at 3 s.
fn counter_sim(seed: u64, bug: bool) -> Sim {
    let mut sim = Sim::with_config(SimConfig::with_seed(seed));
    sim.host("counter", move || async move {
        let mut count: u64 = 0;
        loop {
            tokio::time::sleep(Duration::from_millis(100)).await;
            count += 1;
            if bug && tokio::sim::now() >= Duration::from_secs(3) && count % 50 == 31 {
                count -= 2;
            }
            tokio::sim::publish("count", count);
        }
    });
    let last = Rc::new(Cell::new(0u64));
    sim.check("the count never goes back", move |obs| {
        let Some(count) = obs.get("counter", "count") else {
            return Ok(());
        };
        let count: u64 = count.parse().unwrap();
        if count < last.get() {
            return Err(format!("it went from {} to {count}", last.get()));
        }
        last.set(count);
        Ok(())
    });
    sim.client("observer", async {
        tokio::time::sleep(Duration::from_secs(5)).await;
    });
    sim
}

#[test]
fn a_checker_fails_the_run_at_the_violation_with_its_name_and_the_events() {
    counter_sim(1, false).run();
    let payload = std::panic::catch_unwind(|| counter_sim(1, true).run()).unwrap_err();
    let text = panic_text(payload);
    assert!(
        text.starts_with("sim: correctness: checker `the count never goes back` failed"),
        "{text}"
    );
    assert!(text.contains("it went from 30 to 29"), "{text}");
    assert!(
        text.contains("virtual time 3.1"),
        "at the violation, not the end: {text}"
    );
    assert!(
        text.contains("publish counter count=29"),
        "the last events: {text}"
    );
}

/// A server that answers only after a partition heals; the liveness phase
/// heals it.
fn liveness_sim(bound: Duration, needs_heal: bool) -> Sim {
    let mut sim = Sim::with_config(SimConfig::with_seed(2));
    sim.host("server", || async {
        let listener = tokio::net::TcpListener::bind("0.0.0.0:80").await.unwrap();
        loop {
            let (_stream, _) = listener.accept().await.unwrap();
        }
    });
    sim.host("prober", || async {
        loop {
            let connect = tokio::net::TcpStream::connect("server:80");
            let ok = tokio::time::timeout(Duration::from_millis(200), connect)
                .await
                .is_ok_and(|r| r.is_ok());
            tokio::sim::publish("reaches server", ok);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    if needs_heal {
        sim.at(
            Duration::from_secs(1),
            Fault::Partition("prober".into(), "server".into()),
        );
    }
    sim.client("workload", async {
        tokio::time::sleep(Duration::from_secs(2)).await;
    });
    sim.eventually("the prober reaches the server", bound, |obs| {
        obs.get("prober", "reaches server") == Some("true")
    });
    sim
}

#[test]
fn the_liveness_phase_heals_the_core_and_checks_its_properties() {
    // The workload ends with the partition in place: the phase's heal is
    // what lets the property hold.
    liveness_sim(Duration::from_secs(2), true).run();
    // With the server outside the core, nothing heals: the run fails,
    // naming the property.
    let mut sim = liveness_sim(Duration::from_secs(2), true);
    sim.liveness_core(&["prober"]);
    let text = panic_text(
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sim.run())).unwrap_err(),
    );
    assert!(
        text.starts_with("sim: liveness: `the prober reaches the server` did not hold within 2s"),
        "{text}"
    );
    // A bound of zero needs the property at once: it is not.
    let text = panic_text(
        std::panic::catch_unwind(|| liveness_sim(Duration::ZERO, true).run()).unwrap_err(),
    );
    assert!(text.contains("did not hold within 0ns"), "{text}");
    // Without the partition it holds at once, even with a bound of zero.
    liveness_sim(Duration::ZERO, false).run();
}

/// A liveness failure says what the property read, host by host, and
/// names the host that never came back.
#[test]
fn a_liveness_failure_shows_what_it_read_and_who_never_came_back() {
    let mut sim = Sim::with_config(SimConfig::with_seed(4));
    for (name, fenced) in [("w1", false), ("w2", true)] {
        sim.host(name, move || async move {
            // The fenced worker stops heartbeating at 1 s, for good.
            let mut beat = 0u64;
            loop {
                if fenced && tokio::sim::now() >= Duration::from_secs(1) {
                    std::future::pending::<()>().await;
                }
                beat += 1;
                tokio::sim::publish("heartbeat", beat);
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        });
    }
    sim.client("workload", async {
        tokio::time::sleep(Duration::from_secs(2)).await;
    });
    sim.eventually("every worker heartbeats", Duration::from_secs(1), |obs| {
        let now = obs.now();
        ["w1", "w2"].iter().all(|w| {
            obs.history("heartbeat")
                .iter()
                .any(|p| p.host == *w && now - p.time < Duration::from_millis(500))
        })
    });
    let text = panic_text(
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sim.run())).unwrap_err(),
    );
    assert!(
        text.starts_with("sim: liveness: `every worker heartbeats` did not hold"),
        "{text}"
    );
    assert!(
        text.contains("heartbeat on w2: 10 at 900ms: nothing since, so it never came back"),
        "{text}"
    );
    assert!(text.contains("heartbeat on w1: "), "{text}");
    assert!(
        !text.contains("heartbeat on w1: 1 "),
        "the last value: {text}"
    );
    assert!(text.contains("What happened before it:"), "{text}");
    assert!(text.contains("w1: publish w1 heartbeat="), "{text}");
}

/// A checker's report tells what happened before the violation by name:
/// the fault (which hosts), and each message with its ends, its first
/// bytes and how long it took, not a bare callback label.
#[test]
fn a_checker_report_names_the_fault_and_the_late_message() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut sim = Sim::with_config(SimConfig::with_seed(5));
    sim.host("store", || async {
        let listener = tokio::net::TcpListener::bind("0.0.0.0:9").await.unwrap();
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut buf = [0u8; 13];
        stream.read_exact(&mut buf).await.unwrap();
        tokio::sim::publish("applied", String::from_utf8_lossy(&buf));
    });
    sim.at(
        Duration::from_millis(10),
        Fault::Partition("client".into(), "store".into()),
    );
    sim.at(
        Duration::from_millis(500),
        Fault::Heal("client".into(), "store".into()),
    );
    sim.check("nothing is applied late", |obs| {
        match obs.get("store", "applied") {
            Some(op) if obs.now() > Duration::from_millis(100) => Err(format!("{op} applied late")),
            _ => Ok(()),
        }
    });
    sim.client("client", async {
        let mut stream = tokio::net::TcpStream::connect("store:9").await.unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
        stream.write_all(b"ADD client0 2").await.unwrap();
        tokio::time::sleep(Duration::from_secs(1)).await;
    });
    let text = panic_text(
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sim.run())).unwrap_err(),
    );
    assert!(text.contains("ADD client0 2 applied late"), "{text}");
    for words in [
        "partition client->store",
        "client: hold tcp-data",
        "heal client->store",
        "deliver #1 client:49152>store:9 len=13 data=\"ADD client0 2\" after 479.136014ms, held \
         from 21ms",
        "store: publish store applied=ADD client0 2",
    ] {
        assert!(text.contains(words), "the report names {words:?}: {text}");
    }
    assert!(
        !text.contains(" tcp-deliver"),
        "no bare callback labels: {text}"
    );
}

/// `Observations::history` gives every publication of a key in order, with
/// its host, time and value: two equal values are two entries.
#[test]
fn history_gives_every_publication_in_order() {
    let mut sim = Sim::with_config(SimConfig::with_seed(6));
    sim.host("a", || async {
        for term in [1, 1, 2] {
            tokio::sim::publish("term", term);
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        std::future::pending::<()>().await;
    });
    sim.host("b", || async {
        tokio::time::sleep(Duration::from_millis(15)).await;
        tokio::sim::publish("term", 3);
        tokio::sim::publish("term", 1);
        std::future::pending::<()>().await;
    });
    sim.client("workload", async {
        tokio::time::sleep(Duration::from_millis(100)).await;
    });
    sim.check("a host's term never goes back", |obs| {
        let mut last = std::collections::BTreeMap::new();
        for p in obs.history("term") {
            let term: u64 = p.value.parse().unwrap();
            let before = last.insert(p.host.as_str(), term).unwrap_or(0);
            if term < before {
                let seen: Vec<String> = obs
                    .history("term")
                    .iter()
                    .map(|p| format!("{}:{}@{:?}", p.host, p.value, p.time))
                    .collect();
                return Err(format!(
                    "{} went back to {term}: {}",
                    p.host,
                    seen.join(" ")
                ));
            }
        }
        Ok(())
    });
    let text = panic_text(
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sim.run())).unwrap_err(),
    );
    assert!(
        text.contains("b went back to 1: a:1@0ns a:1@10ms a:2@20ms b:3@15ms b:1@15ms")
            || text.contains("b went back to 1: a:1@0ns a:1@10ms b:3@15ms b:1@15ms"),
        "{text}"
    );
}

fn nemesis_sim(seed: u64) -> (Sim, Rc<Cell<u32>>) {
    let boots = Rc::new(Cell::new(0u32));
    let mut sim = Sim::with_config(SimConfig::with_seed(seed));
    for name in ["a", "b", "c"] {
        let boots = boots.clone();
        sim.host(name, move || {
            boots.set(boots.get() + 1);
            async {
                std::future::pending::<()>().await;
            }
        });
    }
    let s = Duration::from_secs;
    sim.nemesis(
        Nemesis::new()
            .crash_restart(&["a", "b", "c"], s(2)..s(6), s(1)..s(2))
            .isolate(&["a", "b", "c"], s(3)..s(8), s(1)..s(3)),
    );
    sim.client("workload", async {
        tokio::time::sleep(Duration::from_secs(60)).await;
    });
    (sim, boots)
}

#[test]
fn the_nemesis_crashes_and_restarts_at_seeded_times() {
    let (sim, boots) = nemesis_sim(3);
    let first = sim.run();
    // Three first boots, and about one restart every 4 s for a minute.
    assert!(boots.get() > 3 + 8, "{}", boots.get());
    let (sim, again) = nemesis_sim(3);
    let second = sim.run();
    assert_eq!(boots.get(), again.get());
    assert_eq!(
        first.trace_hash, second.trace_hash,
        "the same seed, the same faults"
    );
    let (sim, _) = nemesis_sim(4);
    assert_ne!(sim.run().trace_hash, first.trace_hash);
}

/// The README's checks, as it shows them (see the test below).
fn readme_checks(sim: &mut Sim) {
    // readme-checks:start
    let s = Duration::from_secs;
    sim.check("at most one leader per term", |obs| {
        let mut terms: Vec<&str> = obs.all("leader").iter().map(|(_, term)| *term).collect();
        let n = terms.len();
        terms.sort_unstable();
        terms.dedup();
        if terms.len() == n {
            Ok(())
        } else {
            Err(format!("leaders: {:?}", obs.all("leader")))
        }
    });
    sim.eventually("a leader is elected", s(10), |obs| {
        !obs.all("leader").is_empty()
    });
    sim.nemesis(
        Nemesis::new()
            .crash_restart(&["a", "b", "c"], s(5)..s(20), s(1)..s(4))
            .kill_after_grace(&["a", "b", "c"], s(10)..s(40), s(2), s(1)..s(3))
            .isolate(&["a", "b", "c"], s(10)..s(30), s(2)..s(6)),
    );
    // readme-checks:end
}

#[test]
fn the_readme_checks_are_this_code_and_run() {
    let source =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/checks.rs")).unwrap();
    let readme = sim_test_support::docs();
    let start = source.find("// readme-checks:start\n").unwrap() + 23;
    let end = source.find("    // readme-checks:end").unwrap();
    for line in source[start..end].lines() {
        let line = line.strip_prefix("    ").unwrap_or(line);
        assert!(readme.contains(line), "the README lacks: {line}");
    }
    // A service where each host leads its own term, one after another.
    let mut sim = Sim::with_config(SimConfig::with_seed(5));
    for (i, name) in ["a", "b", "c"].into_iter().enumerate() {
        sim.host(name, move || async move {
            tokio::time::sleep(Duration::from_secs(1 + i as u64)).await;
            tokio::sim::publish("leader", i + 1);
            std::future::pending::<()>().await;
        });
    }
    readme_checks(&mut sim);
    sim.client("workload", async {
        tokio::time::sleep(Duration::from_secs(30)).await;
    });
    sim.run();
}

#[test]
fn isolate_split_and_heal_all_take_host_names_as_str() {
    let mut sim = Sim::with_config(SimConfig::with_seed(6));
    for name in ["a", "b"] {
        sim.host(name, || async {
            let listener = tokio::net::TcpListener::bind("0.0.0.0:80").await.unwrap();
            loop {
                let _ = listener.accept().await.unwrap();
            }
        });
    }
    let s = Duration::from_millis;
    sim.at(s(1000), Fault::isolate("a"));
    sim.at(s(2000), Fault::HealAll);
    sim.at(s(3000), Fault::split(&["probe"], &["b"]));
    let seen = Rc::new(std::cell::RefCell::new(Vec::new()));
    let out = seen.clone();
    sim.client("probe", async move {
        for at in [500, 1500, 2500, 3500] {
            tokio::time::sleep_until(tokio::time::Instant::now() + s(at) - tokio::sim::now()).await;
            let mut row = Vec::new();
            for target in ["a:80", "b:80"] {
                let connect = tokio::net::TcpStream::connect(target);
                let ok = tokio::time::timeout(s(200), connect)
                    .await
                    .is_ok_and(|r| r.is_ok());
                row.push(ok);
            }
            out.borrow_mut().push(row);
        }
    });
    sim.run();
    assert_eq!(
        *seen.borrow(),
        [
            vec![true, true],  // all up
            vec![false, true], // a cut off from everyone
            vec![true, true],  // healed
            vec![true, false], // probe and b on two sides
        ]
    );
}

#[test]
fn a_paused_listener_completes_connects_but_accepts_only_when_resumed() {
    let mut sim = Sim::with_config(SimConfig::with_seed(8));
    sim.host("server", || async {
        let listener = tokio::net::TcpListener::bind("0.0.0.0:80").await.unwrap();
        loop {
            let (mut stream, _) = listener.accept().await.unwrap();
            tokio::spawn(async move {
                let (mut r, mut w) = stream.split();
                let _ = tokio::io::copy(&mut r, &mut w).await;
            });
        }
    });
    let s = Duration::from_secs;
    sim.at(s(1), Fault::pause_listener("server", 80));
    sim.at(s(3), Fault::resume_listener("server", 80));
    let times = Rc::new(std::cell::RefCell::new(Vec::new()));
    let out = times.clone();
    sim.client("client", async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        tokio::time::sleep(s(2)).await;
        let mut stream = tokio::net::TcpStream::connect("server:80").await.unwrap();
        out.borrow_mut().push(tokio::sim::now());
        stream.write_all(b"hi").await.unwrap();
        let mut echo = [0u8; 2];
        stream.read_exact(&mut echo).await.unwrap();
        out.borrow_mut().push(tokio::sim::now());
    });
    sim.run();
    let times = times.borrow();
    assert!(
        times[0] < Duration::from_millis(2100),
        "the connect completes: {times:?}"
    );
    assert!(times[1] >= s(3), "the echo waits for the resume: {times:?}");
    assert!(times[1] < Duration::from_millis(3100), "{times:?}");
}

#[test]
fn a_failing_name_fails_every_resolver_until_restored() {
    let mut sim = Sim::with_config(SimConfig::with_seed(9));
    sim.host("db", || async {
        let listener = tokio::net::TcpListener::bind("0.0.0.0:5432").await.unwrap();
        loop {
            let _ = listener.accept().await.unwrap();
        }
    });
    let s = Duration::from_secs;
    sim.at(s(1), Fault::DnsFail("db".into()));
    sim.at(s(2), Fault::DnsRestore("db".into()));
    sim.client("app", async move {
        let resolves = || async {
            let tokio_ok = tokio::net::lookup_host("db:5432").await.is_ok();
            let std_ok = std::net::ToSocketAddrs::to_socket_addrs(&("db", 5432)).is_ok();
            assert_eq!(tokio_ok, std_ok, "every resolver agrees");
            tokio_ok
        };
        assert!(resolves().await);
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert!(!resolves().await, "the name fails");
        let err = tokio::net::TcpStream::connect("db:5432").await.unwrap_err();
        assert!(err.to_string().contains("name resolution"), "{err}");
        tokio::time::sleep(s(1)).await;
        assert!(resolves().await, "restored");
    });
    sim.run();
}

/// Three hosts probing each other under a splitting nemesis; whether any
/// probe failed, and the run's trace hash.
fn split_sim(seed: u64) -> (bool, String) {
    let cut_seen = Rc::new(Cell::new(false));
    let mut sim = Sim::with_config(SimConfig::with_seed(seed));
    let names = ["a", "b", "c"];
    for name in names {
        let cut_seen = cut_seen.clone();
        sim.host(name, move || {
            let cut_seen = cut_seen.clone();
            async move {
                let listener = tokio::net::TcpListener::bind("0.0.0.0:80").await.unwrap();
                tokio::spawn(async move {
                    loop {
                        let _ = listener.accept().await;
                    }
                });
                loop {
                    let mut all = true;
                    for peer in ["a", "b", "c"].into_iter().filter(|p| *p != name) {
                        let connect = tokio::net::TcpStream::connect((peer, 80));
                        let ok = tokio::time::timeout(Duration::from_millis(200), connect)
                            .await
                            .is_ok_and(|r| r.is_ok());
                        all &= ok;
                    }
                    if !all {
                        cut_seen.set(true);
                    }
                    tokio::sim::publish("reaches all", all);
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        });
    }
    let s = Duration::from_secs;
    sim.nemesis(Nemesis::new().split(&names, s(2)..s(4), s(1)..s(2)));
    sim.client("workload", async {
        tokio::time::sleep(Duration::from_secs(20)).await;
    });
    sim.eventually("every host reaches every other", s(3), |obs| {
        obs.all("reaches all").len() == 3
            && obs.all("reaches all").iter().all(|(_, v)| *v == "true")
    });
    let report = sim.run();
    (cut_seen.get(), report.trace_hash)
}

#[test]
fn the_nemesis_splits_the_cluster_and_the_liveness_phase_heals_it() {
    let (cut, hash) = split_sim(21);
    assert!(cut, "some split cut a probe off");
    assert_eq!(split_sim(21).1, hash, "the same seed, the same splits");
}

#[test]
fn a_skewed_host_reads_shifted_clocks_but_sleeps_last_the_same() {
    let mut sim = Sim::with_config(SimConfig::with_seed(10));
    let s = Duration::from_secs;
    // Skewed before anything runs; b's wall clock jumps back at 2 s.
    sim.at(Duration::ZERO, Fault::ClockSkew("a".into(), s(10)));
    sim.at(s(2), Fault::WallClockJump("b".into(), -5_000));
    let readings = Rc::new(std::cell::RefCell::new(Vec::new()));
    for name in ["a", "b"] {
        let out = readings.clone();
        sim.host(name, move || {
            let out = out.clone();
            async move {
                tokio::time::sleep(s(1)).await;
                let wall = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap();
                let before = (tokio::sim::now(), tokio::time::Instant::now());
                tokio::time::sleep(s(2)).await;
                let after = (tokio::sim::now(), tokio::time::Instant::now());
                let wall_after = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap();
                out.borrow_mut().push((
                    name,
                    wall,
                    wall_after,
                    after.0 - before.0,
                    after.1 - before.1,
                ));
            }
        });
    }
    sim.client("workload", async move {
        tokio::time::sleep(s(5)).await;
    });
    sim.run();
    let readings = readings.borrow();
    let find = |n| readings.iter().find(|r| r.0 == n).unwrap();
    let (a, b) = (find("a"), find("b"));
    // At the same true moment, a's wall clock is 10 s ahead of b's.
    assert_eq!(a.1 - b.1, s(10), "{readings:?}");
    // Sleeps last 2 s of true time and of each host's Instant, skew or not.
    for r in [a, b] {
        assert_eq!(r.3, s(2), "{readings:?}");
        assert_eq!(r.4, s(2), "{readings:?}");
    }
    // b's wall clock went back 5 s during its sleep; its Instant did not.
    assert_eq!(b.2 + s(5), b.1 + s(2), "{readings:?}");
}

#[test]
fn a_drifting_host_reads_clocks_that_run_fast_or_slow() {
    let mut sim = Sim::with_config(SimConfig::with_seed(11));
    let s = Duration::from_secs;
    // a gains 1 ms per second (1000 ppm); b loses 2 ms per second.
    sim.at(Duration::ZERO, Fault::ClockDrift("a".into(), 1_000));
    sim.at(Duration::ZERO, Fault::ClockDrift("b".into(), -2_000));
    let readings = Rc::new(std::cell::RefCell::new(Vec::new()));
    for name in ["a", "b"] {
        let out = readings.clone();
        sim.host(name, move || {
            let out = out.clone();
            async move {
                let wall = || {
                    std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .unwrap()
                };
                let (true0, local0, wall0) =
                    (tokio::sim::now(), tokio::time::Instant::now(), wall());
                tokio::time::sleep(s(10)).await;
                let (true1, local1, wall1) =
                    (tokio::sim::now(), tokio::time::Instant::now(), wall());
                // A deadline on this host's own clock: reached by its clock.
                let deadline = local1 + s(10);
                tokio::time::sleep_until(deadline).await;
                let local2 = tokio::time::Instant::now();
                let true2 = tokio::sim::now();
                out.borrow_mut().push((
                    name,
                    true1 - true0,
                    local1 - local0,
                    wall1 - wall0,
                    local2 >= deadline,
                    true2 - true1,
                ));
            }
        });
    }
    sim.client("workload", async move {
        tokio::time::sleep(s(25)).await;
    });
    sim.run();
    let readings = readings.borrow();
    let find = |n| *readings.iter().find(|r| r.0 == n).unwrap();
    let (a, b) = (find("a"), find("b"));
    let ms = Duration::from_millis;
    // A sleep lasts its time on the host's own clock (to the timer's 1 ms
    // grain), as on a real machine: a fast clock's 10 s pass in less true
    // time, a slow one's in more. Leases and timeouts feel the drift.
    for r in [a, b] {
        assert!(r.2 >= s(10) && r.2 <= ms(10_001), "{readings:?}");
        // SystemTime drifts with Instant.
        assert_eq!(r.3, r.2, "{readings:?}");
    }
    assert!(a.1 >= ms(9_989) && a.1 <= ms(9_991), "{readings:?}");
    assert!(b.1 >= ms(10_019) && b.1 <= ms(10_021), "{readings:?}");
    // A deadline on a drifting clock is met on that clock too.
    assert!(a.4 && b.4, "{readings:?}");
    assert!(a.5 >= ms(9_989) && a.5 <= ms(9_991), "{readings:?}");
    assert!(b.5 >= ms(10_019) && b.5 <= ms(10_021), "{readings:?}");
}

#[test]
fn a_panic_in_a_host_main_task_fails_the_run_and_names_the_host() {
    let mut sim = Sim::with_config(SimConfig::with_seed(12));
    sim.host("db", || async {
        tokio::time::sleep(Duration::from_secs(1)).await;
        panic!("the db's state is corrupt");
    });
    sim.client("workload", async {
        tokio::time::sleep(Duration::from_secs(5)).await;
    });
    let run = std::panic::AssertUnwindSafe(|| sim.run());
    let text = panic_text(std::panic::catch_unwind(run).unwrap_err());
    assert!(
        text.starts_with("sim: host \"db\"'s main task panicked at virtual time 1s"),
        "{text}"
    );
    assert!(text.ends_with("the db's state is corrupt"), "{text}");
}

#[test]
fn a_host_whose_main_task_returns_exits_closing_its_connections() {
    let mut sim = Sim::with_config(SimConfig::with_seed(13));
    sim.host("server", || async {
        let listener = tokio::net::TcpListener::bind("0.0.0.0:7").await.unwrap();
        let (stream, _) = listener.accept().await.unwrap();
        // A worker task holds the connection; main returns at 1 s.
        tokio::spawn(async move {
            let _stream = stream;
            std::future::pending::<()>().await;
        });
        tokio::time::sleep(Duration::from_secs(1)).await;
    });
    let seen = Rc::new(std::cell::RefCell::new(Vec::new()));
    let out = seen.clone();
    sim.client("client", async move {
        use tokio::io::AsyncReadExt;
        let mut stream = tokio::net::TcpStream::connect("server:7").await.unwrap();
        let mut buf = [0u8; 8];
        // The process exit closes the connection: end of stream, at once.
        let n = stream.read(&mut buf).await.unwrap();
        out.borrow_mut().push((n, tokio::sim::now()));
        // And nothing listens any more.
        let again = tokio::net::TcpStream::connect("server:7").await;
        out.borrow_mut()
            .push((again.is_err() as usize, tokio::sim::now()));
    });
    sim.run();
    let seen = seen.borrow();
    assert_eq!(seen[0].0, 0, "{seen:?}");
    assert!(seen[0].1 >= Duration::from_secs(1) && seen[0].1 < Duration::from_millis(1_010));
    assert_eq!(seen[1].0, 1, "refused after the exit: {seen:?}");
}

/// A planted bug that needs a late datagram: the client applies whatever
/// configuration arrives, so an old version held back by the link lands
/// after a newer one. The report names the datagram that came late, with
/// its bytes and how long it took.
#[test]
fn a_report_names_the_late_datagram() {
    let found = (0..50u64).find_map(|seed| {
        let mut sim = Sim::with_config(SimConfig::with_seed(seed));
        sim.default_link(tokio::sim::LinkConfig {
            latency_min: Duration::from_millis(1),
            latency_max: Duration::from_millis(5),
            udp_reorder_rate: 0.3,
            ..tokio::sim::LinkConfig::default()
        });
        sim.host("config", || async {
            let socket = tokio::net::UdpSocket::bind("0.0.0.0:0").await.unwrap();
            for version in 1..=5u8 {
                socket
                    .send_to(format!("v{version}").as_bytes(), "app:9")
                    .await
                    .unwrap();
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            std::future::pending::<()>().await;
        });
        sim.host("app", || async {
            let socket = tokio::net::UdpSocket::bind("0.0.0.0:9").await.unwrap();
            let mut buf = [0u8; 8];
            loop {
                let (n, _) = socket.recv_from(&mut buf).await.unwrap();
                // The planted bug: no check that the version is newer.
                tokio::sim::publish("applied", String::from_utf8_lossy(&buf[..n]));
            }
        });
        sim.check("the applied version never goes back", |obs| {
            let applied = obs.history("applied");
            for pair in applied.windows(2) {
                if pair[1].value < pair[0].value {
                    return Err(format!("{} after {}", pair[1].value, pair[0].value));
                }
            }
            Ok(())
        });
        sim.client("clock", async {
            tokio::time::sleep(Duration::from_millis(50)).await;
        });
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sim.run()))
            .err()
            .map(panic_text)
    });
    let text = found.expect("a late datagram on some seed of 50");
    assert!(
        text.contains("the applied version never goes back"),
        "{text}"
    );
    // Which version went back, and the datagram that carried it: held
    // back by the link, then delivered after the newer one.
    let (late, _) = text
        .split("failed at virtual time ")
        .nth(1)
        .and_then(|t| t.split("): ").nth(1))
        .and_then(|t| t.split_once(" after "))
        .expect("the message names the versions");
    let late = late.to_string();
    let reorder = text
        .lines()
        .find(|l| l.contains("reorder udp #") && l.contains("config:"))
        .unwrap_or_else(|| panic!("the report names the reordered datagram: {text}"));
    let number = reorder
        .split("reorder udp #")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap();
    let delivery = format!("deliver udp #{number} config:");
    let delivered = text
        .lines()
        .find(|l| l.contains(&delivery))
        .unwrap_or_else(|| panic!("the report names its delivery: {text}"));
    assert!(
        delivered.contains(&format!("data=\"{late}\" after ")),
        "{delivered}\n{text}"
    );
    // As the kernel saw it: how late over the link's least latency, and
    // the later send it arrived after.
    assert!(
        delivered.contains("over the link's least latency (1ms)"),
        "{delivered}"
    );
    let overtaken = delivered
        .split(", reordered: it arrived after #")
        .nth(1)
        .unwrap_or_else(|| panic!("names the send it arrived after: {delivered}"));
    let later: u64 = overtaken.split(',').next().unwrap().parse().unwrap();
    assert!(later > number.parse::<u64>().unwrap(), "{delivered}");
}

/// A duplicated datagram's second delivery says it is the copy.
#[test]
fn a_report_names_the_duplicate() {
    let mut sim = Sim::with_config(SimConfig::with_seed(3));
    sim.default_link(tokio::sim::LinkConfig {
        udp_dup_rate: 1.0,
        ..tokio::sim::LinkConfig::default()
    });
    sim.host("sender", || async {
        let socket = tokio::net::UdpSocket::bind("0.0.0.0:0").await.unwrap();
        socket.send_to(b"PAY 10", "bank:9").await.unwrap();
        std::future::pending::<()>().await;
    });
    sim.host("bank", || async {
        let socket = tokio::net::UdpSocket::bind("0.0.0.0:9").await.unwrap();
        let mut buf = [0u8; 8];
        let mut paid = 0;
        loop {
            socket.recv_from(&mut buf).await.unwrap();
            paid += 10;
            tokio::sim::publish("paid", paid);
        }
    });
    sim.check("each payment is made once", |obs| {
        match obs.get("bank", "paid") {
            Some(paid) if paid != "10" => Err(format!("paid {paid}")),
            _ => Ok(()),
        }
    });
    sim.client("clock", async {
        tokio::time::sleep(Duration::from_millis(50)).await;
    });
    let text = panic_text(
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sim.run())).unwrap_err(),
    );
    assert!(
        text.contains("data=\"PAY 10\" after ") && text.contains(", its copy 2 (a duplicate)"),
        "{text}"
    );
}

/// A planted bug that needs an isolated host: a follower that hears no
/// heartbeat for 300 ms makes itself leader while the old leader, cut off
/// but alive, still is one. The report names the isolation.
#[test]
fn a_report_names_the_isolated_host() {
    let mut sim = Sim::with_config(SimConfig::with_seed(7));
    sim.host("a", || async {
        tokio::sim::publish("leader", "a");
        let socket = tokio::net::UdpSocket::bind("0.0.0.0:9").await.unwrap();
        loop {
            let _ = socket.send_to(b"beat", "b:9").await;
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    sim.host("b", || async {
        let socket = tokio::net::UdpSocket::bind("0.0.0.0:9").await.unwrap();
        let mut buf = [0u8; 8];
        loop {
            let beat = tokio::time::timeout(Duration::from_millis(300), socket.recv_from(&mut buf));
            if beat.await.is_err() {
                // The planted bug: no lease keeps the old leader from leading.
                tokio::sim::publish("leader", "b");
                std::future::pending::<()>().await;
            }
        }
    });
    sim.at(Duration::from_secs(1), Fault::isolate("a"));
    sim.check("at most one leader", |obs| {
        let leaders = obs.all("leader");
        if leaders.len() > 1 {
            return Err(format!("leaders: {leaders:?}"));
        }
        Ok(())
    });
    sim.client("clock", async {
        tokio::time::sleep(Duration::from_secs(2)).await;
    });
    let text = panic_text(
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sim.run())).unwrap_err(),
    );
    assert!(text.contains("at most one leader"), "{text}");
    assert!(
        text.contains("t=1s isolate a: cut off from every host"),
        "{text}"
    );
    assert!(text.contains("b: publish b leader=b"), "{text}");
}
