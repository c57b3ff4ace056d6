//! The simulated disk's faults and crashes, each seen by the caller as a
//! real disk would show it. Simulation build only (these are the
//! simulator's own features).
#![cfg(simulation)]

use sim_runtime::SimConfig;
use std::cell::RefCell;
use std::io::ErrorKind;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Duration;
use tokio::fs::{self, File, OpenOptions};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sim::{DiskConfig, Fault, Sim};
use tokio::time::Instant;

fn scratch(name: &str) -> PathBuf {
    std::env::temp_dir().join(name)
}

/// Every fault off, and no latency, but for the field a test sets.
fn quiet() -> DiskConfig {
    DiskConfig {
        latency_min_us: 0,
        latency_max_us: 0,
        ..DiskConfig::default()
    }
}

#[tokio::test]
async fn a_read_error_is_eio() {
    let path = scratch("read-eio");
    fs::write(&path, b"data").await.unwrap();
    tokio::sim::set_disk_config(DiskConfig {
        read_error_rate: 1.0,
        ..quiet()
    });
    let err = fs::read(&path).await.unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EIO), "{err}");
    tokio::sim::set_disk_config(quiet());
    assert_eq!(fs::read(&path).await.unwrap(), b"data");
}

#[tokio::test]
async fn a_write_error_is_eio_and_writes_nothing() {
    let path = scratch("write-eio");
    let mut file = File::create(&path).await.unwrap();
    tokio::sim::set_disk_config(DiskConfig {
        write_error_rate: 1.0,
        ..quiet()
    });
    let err = file.write_all(b"lost").await.unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EIO), "{err}");
    tokio::sim::set_disk_config(quiet());
    assert_eq!(fs::read(&path).await.unwrap(), b"");
}

#[tokio::test]
async fn a_full_disk_gives_a_short_write_then_storage_full() {
    tokio::sim::set_disk_config(DiskConfig {
        capacity_bytes: 100,
        ..quiet()
    });
    let path = scratch("full");
    let mut file = File::create(&path).await.unwrap();
    // write_all goes on after the short write and then meets ENOSPC.
    let err = file.write_all(&[7; 150]).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::StorageFull, "{err}");
    assert_eq!(err.raw_os_error(), Some(libc::ENOSPC));
    assert_eq!(fs::metadata(&path).await.unwrap().len(), 100);
    let err = fs::write(scratch("another"), b"x").await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::StorageFull);
    // Freeing space makes room again.
    drop(file);
    fs::remove_file(&path).await.unwrap();
    fs::write(scratch("another"), b"x").await.unwrap();
}

// Paused, so that only the disk's latency moves the clock.
#[tokio::test(start_paused = true)]
async fn each_operation_takes_its_latency_in_virtual_time() {
    tokio::sim::set_disk_config(DiskConfig {
        latency_min_us: 3_000,
        latency_max_us: 3_000,
        ..quiet()
    });
    let start = Instant::now();
    fs::write(scratch("slow"), b"x").await.unwrap();
    assert_eq!(start.elapsed(), Duration::from_millis(3));
    let mut file = File::open(scratch("slow")).await.unwrap();
    let mut byte = [0u8; 1];
    file.read_exact(&mut byte).await.unwrap();
    // write, open, read: three operations.
    assert_eq!(start.elapsed(), Duration::from_millis(9));
}

#[tokio::test]
async fn silent_corruption_flips_one_bit() {
    let path = scratch("corrupt");
    let data = vec![0u8; 4096];
    fs::write(&path, &data).await.unwrap();
    tokio::sim::set_disk_config(DiskConfig {
        corruption_rate: 1.0,
        ..quiet()
    });
    let read = fs::read(&path).await.unwrap();
    let flipped: u32 = read.iter().map(|b| b.count_ones()).sum();
    assert_eq!(flipped, 1, "exactly one bit differs, and no error says so");
    tokio::sim::set_disk_config(quiet());
    assert_eq!(
        fs::read(&path).await.unwrap(),
        data,
        "the disk itself is intact"
    );
}

/// A failed fsync on Linux drops the dirty pages: still readable, never
/// written, and the next fsync reports success. After a crash they are
/// gone.
#[test]
fn after_a_failed_fsync_the_data_is_lost_in_a_crash() {
    let seen = Rc::new(RefCell::new(Vec::new()));
    let mut sim = Sim::with_config(SimConfig::with_seed(7));
    let log = seen.clone();
    sim.host("db", move || {
        let log = log.clone();
        async move {
            let path = scratch("fsyncgate");
            let dir = std::env::temp_dir();
            if fs::try_exists(&path).await.unwrap() {
                // After the restart.
                let data = fs::read(&path).await.unwrap();
                log.borrow_mut().push(data);
                std::future::pending::<()>().await;
            }
            let mut file = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .open(&path)
                .await
                .unwrap();
            file.write_all(b"synced").await.unwrap();
            file.sync_all().await.unwrap();
            File::open(&dir).await.unwrap().sync_all().await.unwrap();
            file.write_all(b"+unsynced").await.unwrap();
            Fault::Disk(
                "db".into(),
                DiskConfig {
                    sync_error_rate: 1.0,
                    ..quiet()
                },
            )
            .apply();
            let err = file.sync_all().await.unwrap_err();
            assert_eq!(err.raw_os_error(), Some(libc::EIO));
            Fault::Disk("db".into(), quiet()).apply();
            // The next fsync succeeds: the pages were marked clean.
            file.sync_all().await.unwrap();
            // Reads still see them.
            let data = fs::read(&path).await.unwrap();
            log.borrow_mut().push(data);
            std::future::pending::<()>().await;
        }
    });
    sim.at(Duration::from_millis(50), Fault::Crash("db".into()));
    sim.at(Duration::from_millis(60), Fault::Restart("db".into()));
    sim.client("clock", async {
        tokio::time::sleep(Duration::from_millis(100)).await;
    });
    sim.run();
    let seen = seen.borrow();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0], b"synced+unsynced");
    // The dropped page never reached the disk. (The length did: it is
    // inode metadata, which the later successful fsync wrote, so the tail
    // reads as zeros, as on Linux.)
    assert_eq!(&seen[1][..6], b"synced");
    assert!(seen[1][6..].iter().all(|&b| b == 0), "{:?}", seen[1]);
}

/// A host's disk outlives its crash: what was synced is there after the
/// restart, and only that host's disk is touched.
#[test]
fn each_host_has_its_own_disk_and_it_survives_restarts() {
    let seen = Rc::new(RefCell::new(Vec::new()));
    let mut sim = Sim::with_config(SimConfig::with_seed(3));
    for name in ["a", "b"] {
        let log = seen.clone();
        sim.host(name, move || {
            let log = log.clone();
            async move {
                let path = scratch("identity");
                match fs::read_to_string(&path).await {
                    Ok(text) => log.borrow_mut().push(format!("{name} found {text}")),
                    Err(e) => {
                        assert_eq!(e.kind(), ErrorKind::NotFound);
                        let file = File::create(&path).await.unwrap();
                        let mut file = file;
                        file.write_all(name.as_bytes()).await.unwrap();
                        file.sync_all().await.unwrap();
                        File::open(std::env::temp_dir())
                            .await
                            .unwrap()
                            .sync_all()
                            .await
                            .unwrap();
                        log.borrow_mut().push(format!("{name} wrote"));
                    }
                }
                std::future::pending::<()>().await;
            }
        });
    }
    sim.at(Duration::from_millis(20), Fault::Crash("a".into()));
    sim.at(Duration::from_millis(30), Fault::Restart("a".into()));
    sim.client("clock", async {
        tokio::time::sleep(Duration::from_millis(50)).await;
    });
    sim.run();
    let mut seen = seen.borrow().clone();
    seen.sort();
    assert_eq!(seen, ["a found a", "a wrote", "b wrote"]);
}

/// Runs in a child process (see the test below): a crash with unsynced
/// writes and an injected fault, traced to `SIM_TRACE`.
#[test]
fn disk_crash_child() {
    let mut sim = Sim::new();
    sim.host("db", || async {
        let mut file = File::create(scratch("traced")).await.unwrap();
        File::open(std::env::temp_dir())
            .await
            .unwrap()
            .sync_all()
            .await
            .unwrap();
        for i in 0..50u8 {
            file.write_all(&[i; 700]).await.unwrap();
            if i % 10 == 0 {
                file.sync_data().await.unwrap();
            }
        }
        Fault::Disk(
            "db".into(),
            DiskConfig {
                read_error_rate: 1.0,
                ..quiet()
            },
        )
        .apply();
        assert!(fs::read(scratch("traced")).await.is_err());
        // Not made durable (no directory sync): the crash takes it back.
        fs::rename(scratch("traced"), scratch("renamed"))
            .await
            .unwrap();
        std::future::pending::<()>().await;
    });
    sim.at(Duration::from_millis(30), Fault::Crash("db".into()));
    sim.client("clock", async {
        tokio::time::sleep(Duration::from_millis(40)).await;
    });
    sim.run();
}

#[test]
fn crash_resolution_and_faults_are_in_the_trace_and_replay() {
    let a = sim_test_support::child_trace(
        env!("CARGO_TARGET_TMPDIR"),
        "disk_crash_child",
        "0x5d",
        "disk-a.trace",
    );
    let b = sim_test_support::child_trace(
        env!("CARGO_TARGET_TMPDIR"),
        "disk_crash_child",
        "0x5d",
        "disk-b.trace",
    );
    let text = String::from_utf8_lossy(&a);
    let traced = scratch("traced").display().to_string();
    let renamed = scratch("renamed").display().to_string();
    let tmp = std::env::temp_dir().display().to_string();
    // Each disk operation, by path, with its outcome; the crash's
    // resolution per path, and the namespace change it lost.
    for words in [
        format!("fs open {traced} write,truncate,create -> ok"),
        format!("fs fsync {tmp} (dir) -> ok"),
        format!("fs write {traced} @0 +700 -> 700"),
        format!("fs write {traced} @700 +700 -> 700"),
        format!("fs fsync {traced} -> ok"),
        format!("fs eio read {traced} (injected)"),
        format!("fs read {traced} @0 +"),
        format!("fs rename {traced} -> {renamed}: ok"),
        format!(
            "fs crash host=1: namespace changes kept 0 of 1; lost: rename {traced} -> {renamed}"
        ),
        format!("fs crash {traced}: len "),
    ] {
        assert!(
            text.contains(&words),
            "the trace records {words:?}:\n{text}"
        );
    }
    assert!(a == b, "one seed, two processes, two different traces");
}

/// The real filesystem is an input: a host sees it as it was, and what
/// the host writes stays on its own disk, for `tokio::fs` and `std::fs`
/// alike.
#[tokio::test]
async fn writes_to_mirrored_files_stay_on_the_simulated_disk() {
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let real = std::fs::read(manifest).unwrap();
    fs::write(manifest, b"changed in the simulation")
        .await
        .unwrap();
    assert_eq!(
        fs::read(manifest).await.unwrap(),
        b"changed in the simulation"
    );
    // One disk for both APIs.
    assert_eq!(
        std::fs::read(manifest).unwrap(),
        b"changed in the simulation"
    );
    // The real file is untouched.
    assert_eq!(
        sim_runtime::outside::outside(|| std::fs::read(manifest)).unwrap(),
        real
    );
    fs::remove_file(manifest).await.unwrap();
    // Removed on this disk: not mirrored again.
    assert!(!fs::try_exists(manifest).await.unwrap());
    assert!(!std::path::Path::new(manifest).exists());
}

/// One rule for both APIs: a run never changes the real filesystem. A
/// `std::fs` change outside the temporary directory goes to the host's
/// simulated disk, where `tokio::fs` sees it too; the kernel's trees stay
/// refused.
#[tokio::test]
async fn std_fs_changes_outside_the_temporary_directory_go_to_the_simulated_disk() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/sim-artifacts");
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/sim-artifacts/run.log");
    std::fs::create_dir(dir).unwrap();
    std::fs::write(file, b"written by std").unwrap();
    assert_eq!(std::fs::read(file).unwrap(), b"written by std");
    assert_eq!(fs::read(file).await.unwrap(), b"written by std");
    let names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["run.log"]);
    // The real directory's other entries still show through.
    assert!(std::fs::read_dir(env!("CARGO_MANIFEST_DIR"))
        .unwrap()
        .any(|e| e.unwrap().file_name() == "Cargo.toml"));
    // tokio::fs writes, std::fs reads.
    let other = concat!(env!("CARGO_MANIFEST_DIR"), "/sim-artifacts/other.txt");
    fs::write(other, b"written by tokio").await.unwrap();
    assert_eq!(std::fs::read(other).unwrap(), b"written by tokio");
    // Nothing reached the real filesystem.
    assert!(!sim_runtime::outside::outside(
        || std::path::Path::new(dir).exists()
    ));
    // The kernel's trees are no files to simulate.
    let err = std::fs::write("/sys/kernel/sim-test-escape", b"x").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PermissionDenied, "{err}");
    // Under the temporary directory, as before.
    let inside = std::env::temp_dir().join("std-inside");
    std::fs::write(&inside, b"simulated").unwrap();
    assert_eq!(fs::read(&inside).await.unwrap(), b"simulated");
}

/// A test that writes a log next to its sources, as tests do.
#[tokio::test]
async fn a_test_that_writes_a_log_in_its_package() {
    let log = concat!(env!("CARGO_MANIFEST_DIR"), "/run.log");
    std::fs::write(log, b"step 1 done\n").unwrap();
    assert_eq!(fs::read(log).await.unwrap(), b"step 1 done\n");
}

/// The end of a run says which files it changed outside the temporary
/// directory, past the test harness's capture: a test that writes a log
/// learns where it went. The README shows this report.
#[test]
fn the_end_of_a_run_lists_the_files_it_changed_outside_the_temporary_directory() {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "a_test_that_writes_a_log_in_its_package",
            "--exact",
            "--test-threads",
            "1",
        ])
        .env("SIM_SEED", "7")
        .output()
        .unwrap();
    assert!(output.status.success());
    assert!(!std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/run.log")).exists());
    let stderr = String::from_utf8_lossy(&output.stderr)
        .replace(env!("CARGO_MANIFEST_DIR"), "/path/to/your/package");
    let docs = sim_test_support::docs();
    let readme = docs.as_str();
    let shown: Vec<&str> = readme
        .lines()
        .skip_while(|l| !l.starts_with("<!-- outside-report:start"))
        .skip(2)
        .take_while(|l| !l.starts_with("```"))
        .collect();
    assert_eq!(shown.len(), 3);
    let printed: Vec<&str> = stderr
        .lines()
        .skip_while(|l| !l.starts_with("sim: this run changed files"))
        .take(3)
        .collect();
    assert_eq!(shown, printed, "the README's report is stale:\n{stderr}");
}
