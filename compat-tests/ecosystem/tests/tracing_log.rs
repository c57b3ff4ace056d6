//! tracing with a subscriber whose timer reads tokio's clock: in a
//! simulation, log lines are stamped with virtual time.
//!
//! How to set one up: give `tracing_subscriber::fmt()` a timer that formats
//! `tokio::time::Instant::now()` (virtual in a simulation, paused or real
//! in tokio), as `VirtualUptime` below does. The default `SystemTime` timer
//! works too: in a simulation build `SystemTime::now()` reads the virtual
//! clock (from `SIM_EPOCH_UNIX_S`).

mod common;

use common::Cluster;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::time::FormatTime;

/// Time since a start instant, on tokio's clock.
struct VirtualUptime {
    start: tokio::time::Instant,
}

impl FormatTime for VirtualUptime {
    fn format_time(&self, w: &mut Writer<'_>) -> std::fmt::Result {
        let elapsed = tokio::time::Instant::now() - self.start;
        write!(w, "t={:.3}s", elapsed.as_secs_f64())
    }
}

/// A writer into a shared buffer, to read the log back.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

const WORKERS: u64 = 8;
const ROUNDS: u64 = 3;

async fn client_scenario() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_timer(VirtualUptime {
            start: tokio::time::Instant::now(),
        })
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    tracing::info!("starting");
    // Workers log from their own spans at known virtual times: worker `w`
    // logs round `r` at (w + 1) * (r + 1) * 10 ms.
    let workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            tokio::spawn(async move {
                let span = tracing::info_span!("worker", w);
                for round in 0..ROUNDS {
                    tokio::time::sleep(Duration::from_millis(10 * (w + 1))).await;
                    span.in_scope(|| tracing::debug!(round, "tick"));
                    tracing::info!(parent: &span, round, "tick");
                }
            })
        })
        .collect();
    for worker in workers {
        worker.await.unwrap();
    }
    tokio::time::sleep(Duration::from_secs(90)).await;
    tracing::warn!(attempt = 2, "ninety seconds later");
    let log = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    // The default level filter is INFO: the debug lines are dropped.
    assert_eq!(lines.len(), 2 + (WORKERS * ROUNDS) as usize, "{log}");
    assert!(lines[0].starts_with("t=0.000s"), "{log}");
    for w in 0..WORKERS {
        for round in 0..ROUNDS {
            let stamp = format!("t={:.3}s", ((w + 1) * (round + 1) * 10) as f64 / 1000.0);
            let needle = format!("worker{{w={w}}}: tracing_log: tick round={round}");
            let line = lines
                .iter()
                .find(|l| l.contains(&needle))
                .unwrap_or_else(|| panic!("{needle} in {log}"));
            assert!(line.starts_with(&stamp), "{line}: expected {stamp}");
        }
    }
    let last = lines.last().unwrap();
    // The last worker finishes at 8 * 3 * 10 = 240 ms; the warning comes 90 s
    // after.
    assert!(last.starts_with("t=90.240s"), "{log}");
    assert!(last.contains("attempt=2"), "{log}");
}

#[test]
fn log_lines_carry_virtual_time() {
    if cfg!(simulation) {
        Cluster::new().run(client_scenario);
    } else {
        // Real tokio with a paused clock: the same stamps.
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .unwrap()
            .block_on(client_scenario());
    }
}

#[cfg(simulation)]
#[test]
fn tracing_scenario_has_one_trace_per_seed_across_processes() {
    common::assert_same_trace_in_two_processes("log_lines_carry_virtual_time");
}
