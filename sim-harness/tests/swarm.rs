//! The swarm: per seed, fault settings drawn from ranges that include zero
//! and off, each dimension fixable or switchable off, and the plan applied
//! to the run. Simulation build only.
#![cfg(simulation)]

use sim_runtime::SimConfig;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sim::swarm::{Dim, Swarm};
use tokio::sim::Sim;

#[test]
fn each_dimension_is_off_in_about_half_the_seeds_and_follows_the_seed() {
    let swarm = Swarm::new(&["a", "b"]);
    let plans: Vec<_> = (0..400).map(|seed| swarm.plan(seed)).collect();
    assert_eq!(plans[7], swarm.plan(7), "a plan is a function of its seed");
    let off = |f: &dyn Fn(&tokio::sim::swarm::Plan) -> bool| plans.iter().filter(|p| f(p)).count();
    for (name, count) in [
        ("udp drop", off(&|p| p.udp_drop_rate == 0.0)),
        ("crash", off(&|p| p.crash_every_s.is_none())),
        ("isolate", off(&|p| p.isolate_every_s.is_none())),
        ("disk errors", off(&|p| p.disk_error_rate == 0.0)),
        ("udp reorder", off(&|p| p.udp_reorder_rate == 0.0)),
        ("partition", off(&|p| p.partition_every_s.is_none())),
        ("clock jump", off(&|p| p.clock_jump_every_s.is_none())),
        ("disk full", off(&|p| p.disk_full_every_s.is_none())),
    ] {
        assert!((150..250).contains(&count), "{name} off in {count} of 400");
    }
    assert!(plans
        .iter()
        .all(|p| p.latency_max_ms <= 50 && p.udp_drop_rate <= 0.1));
    // Latency is a range: its least is drawn too, never above its most.
    assert!(plans.iter().all(|p| p.latency_min_ms <= p.latency_max_ms));
    assert!(plans.iter().any(|p| p.latency_min_ms > 0));
    // Corruption is off unless the test asks for it.
    assert!(plans.iter().all(|p| p.disk_corruption_rate == 0.0));
    let corrupt = Swarm::new(&["a"]).disk_corruption_rate(Dim::range(0.0, 0.01));
    assert!((0..50).any(|seed| corrupt.plan(seed).disk_corruption_rate > 0.0));
    // Dimensions are independent streams: crash and isolate differ.
    assert!(plans
        .iter()
        .any(|p| p.crash_every_s.is_some() != p.isolate_every_s.is_some()));
    // Fixed and off are what the test says, on every seed.
    let fixed = Swarm::new(&["a"])
        .latency_max_ms(Dim::Fixed(7))
        .crash_every_s(Dim::Off);
    for seed in 0..50 {
        let plan = fixed.plan(seed);
        assert_eq!(plan.latency_max_ms, 7);
        assert_eq!(plan.crash_every_s, None);
    }
}

/// Round trips of one echo client, in ms, under `swarm` (or the default
/// link).
fn round_trips(swarm: Option<Swarm>) -> Vec<u128> {
    let mut sim = Sim::with_config(SimConfig::with_seed(11));
    sim.host("echo", || async {
        let listener = tokio::net::TcpListener::bind("0.0.0.0:7").await.unwrap();
        let (mut stream, _) = listener.accept().await.unwrap();
        let (mut r, mut w) = stream.split();
        let _ = tokio::io::copy(&mut r, &mut w).await;
    });
    if let Some(swarm) = swarm {
        sim.swarm(swarm);
    }
    let trips = Rc::new(RefCell::new(Vec::new()));
    let out = trips.clone();
    sim.client("client", async move {
        let mut stream = tokio::net::TcpStream::connect("echo:7").await.unwrap();
        let mut byte = [0u8; 1];
        for _ in 0..20 {
            let sent = tokio::time::Instant::now();
            stream.write_all(b"x").await.unwrap();
            stream.read_exact(&mut byte).await.unwrap();
            out.borrow_mut().push(sent.elapsed().as_millis());
        }
    });
    sim.run();
    let trips = trips.borrow().clone();
    trips
}

/// `swarm` with every dimension off but the link latency's most.
fn quiet(swarm: Swarm) -> Swarm {
    swarm
        .udp_drop_rate(Dim::Off)
        .udp_dup_rate(Dim::Off)
        .crash_every_s(Dim::Off)
        .isolate_every_s(Dim::Off)
        .latency_min_ms(Dim::Off)
        .udp_reorder_rate(Dim::Off)
        .partition_every_s(Dim::Off)
        .clock_jump_every_s(Dim::Off)
        .disk_full_every_s(Dim::Off)
        .disk_error_rate(Dim::Off)
        .disk_latency_max_us(Dim::Off)
        .poll_cost_max_us(Dim::Off)
}

#[test]
fn the_plan_is_applied_to_the_run() {
    // The default link: 0 to 1 ms each way.
    assert!(round_trips(None).iter().all(|ms| *ms <= 2));
    // The swarm's link: 0 to 40 ms each way.
    let slow = round_trips(Some(
        quiet(Swarm::new(&["echo"])).latency_max_ms(Dim::Fixed(40)),
    ));
    assert!(slow.iter().all(|ms| *ms <= 80), "{slow:?}");
    assert!(slow.iter().any(|ms| *ms > 10), "{slow:?}");
}

#[test]
fn a_poll_cost_lets_a_timer_fire_in_the_middle_of_work() {
    let finished_in_time = |cost: Duration| {
        let mut sim = Sim::with_config(SimConfig::with_seed(12));
        sim.poll_cost(cost);
        let result = Rc::new(Cell::new(None));
        let out = result.clone();
        sim.client("worker", async move {
            let work = async {
                for _ in 0..100 {
                    tokio::task::yield_now().await;
                }
            };
            let done = tokio::time::timeout(Duration::from_millis(10), work).await;
            out.set(Some(done.is_ok()));
        });
        sim.run();
        result.get().expect("the worker ran")
    };
    assert!(
        finished_in_time(Duration::ZERO),
        "free polls: the work takes no time"
    );
    assert!(
        !finished_in_time(Duration::from_millis(1)),
        "polls of up to 1 ms: the 10 ms timeout fires in the middle of the work"
    );
}

/// How many of 200 numbered datagrams, sent 1 ms apart over a 2 ms link,
/// arrived after a later one.
fn overtaken(reorder: Dim<f64>) -> usize {
    let mut sim = Sim::with_config(SimConfig::with_seed(13));
    sim.swarm(
        Swarm::new(&["sink"])
            .latency_min_ms(Dim::Fixed(2))
            .latency_max_ms(Dim::Fixed(2))
            .udp_drop_rate(Dim::Off)
            .udp_dup_rate(Dim::Off)
            .udp_reorder_rate(reorder)
            .crash_every_s(Dim::Off)
            .isolate_every_s(Dim::Off)
            .clock_jump_every_s(Dim::Off)
            .disk_full_every_s(Dim::Off),
    );
    let order = Rc::new(RefCell::new(Vec::new()));
    let out = order.clone();
    sim.host("sink", move || {
        let out = out.clone();
        async move {
            let socket = tokio::net::UdpSocket::bind("0.0.0.0:9").await.unwrap();
            let mut buf = [0u8; 8];
            loop {
                let n = socket.recv(&mut buf).await.unwrap();
                out.borrow_mut()
                    .push(u64::from_le_bytes(buf[..n].try_into().unwrap()));
            }
        }
    });
    sim.client("source", async {
        let socket = tokio::net::UdpSocket::bind("0.0.0.0:0").await.unwrap();
        for i in 0u64..200 {
            socket.send_to(&i.to_le_bytes(), "sink:9").await.unwrap();
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    });
    sim.run();
    let order = order.borrow();
    assert_eq!(order.len(), 200, "nothing is lost");
    order.windows(2).filter(|w| w[1] < w[0]).count()
}

#[test]
fn the_reorder_dimension_holds_datagrams_back_past_later_ones() {
    // A fixed latency keeps datagrams in order; reordering overtakes some.
    assert_eq!(overtaken(Dim::Off), 0);
    let late = overtaken(Dim::Fixed(0.2));
    assert!((10..80).contains(&late), "{late} of 200 overtaken");
}

/// Only crashes, on the hosts the swarm's `crash_only` keeps, at its pace.
fn crashes_only(swarm: Swarm) -> Swarm {
    quiet(swarm)
        .latency_max_ms(Dim::Off)
        .crash_every_s(Dim::Fixed(20))
}

/// A 2-second test with a planted bug that needs a crash: the store keeps
/// acknowledged counts in memory only, so a crash loses them. Whether
/// `seed`'s run under `swarm` loses an acknowledged write.
fn loses_writes(seed: u64, swarm: Swarm) -> bool {
    let mut sim = Sim::with_config(SimConfig::with_seed(seed));
    sim.swarm(swarm);
    sim.host("store", || async {
        let listener = tokio::net::TcpListener::bind("0.0.0.0:9").await.unwrap();
        let mut count = 0u32;
        loop {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut op = [0u8; 1];
            if stream.read_exact(&mut op).await.is_err() {
                continue;
            }
            count += u32::from(op[0]);
            let _ = stream.write_all(&count.to_be_bytes()).await;
        }
    });
    sim.host("witness", || async {
        // Never crashed: `crash_only` leaves it out.
        std::future::pending::<()>().await
    });
    let lost = Rc::new(Cell::new(false));
    let flag = lost.clone();
    sim.client("client", async move {
        let request = |op: u8| async move {
            let mut stream = tokio::net::TcpStream::connect("store:9").await?;
            stream.write_all(&[op]).await?;
            let mut count = [0u8; 4];
            stream.read_exact(&mut count).await?;
            Ok::<u32, std::io::Error>(u32::from_be_bytes(count))
        };
        let mut acknowledged = 0;
        for _ in 0..20 {
            // Bounded: a crash lasts at most a few virtual seconds.
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
            if let Ok(Ok(count)) =
                tokio::time::timeout(Duration::from_millis(200), request(0)).await
            {
                flag.set(count < acknowledged);
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    sim.run();
    lost.get()
}

#[test]
fn a_horizon_brings_faults_into_a_short_test_and_groups_keep_hosts_out() {
    let swarm = || crashes_only(Swarm::new(&["store", "witness"])).crash_only(&["store"]);
    // Paced for a minute, the first crash comes after the 2 s test is over.
    let minute = Duration::from_secs(60);
    let unpaced = (0..30)
        .filter(|&seed| loses_writes(seed, swarm().horizon(minute)))
        .count();
    assert_eq!(unpaced, 0);
    let paced = (0..30)
        .filter(|&seed| loses_writes(seed, swarm().horizon(Duration::from_secs(2))))
        .count();
    assert!(
        paced > 0,
        "a crash lands in the 2 s test on some seed of 30"
    );
    // The plan says so: a crash every ~0.667 s (20 s scaled by 2 s / 60 s).
    let plan = swarm().horizon(Duration::from_secs(2)).plan(1);
    assert!(
        plan.describe().contains("crash every ~0.667s"),
        "{}",
        plan.describe()
    );
    assert_eq!(swarm().plan(1).time_scale, 1.0);
}

/// Without a horizon, the swarm measures the test's length (a run of its
/// own without the swarm, in a child process) and paces its faults to it:
/// the 2 s test gets its crashes. (In the measuring child, these runs go
/// without the swarm, so none loses a write there; the lengths are
/// recorded before the assertion.)
#[test]
fn without_a_horizon_the_pacing_fits_the_measured_length() {
    let swarm = || crashes_only(Swarm::new(&["store", "witness"])).crash_only(&["store"]);
    let found = (0..30).filter(|&seed| loses_writes(seed, swarm())).count();
    let measuring = std::env::var_os("SIM_SWARM_MEASURE").is_some();
    assert!(
        found > 0 || measuring,
        "a crash lands in the 2 s test on some seed of 30"
    );
}
