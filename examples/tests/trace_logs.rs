//! The service's `tracing` events in the trace file (`SIM_TRACE_LOGS`):
//! at their virtual time and host, not counted by the hash, and still
//! passed on to the dispatcher the test installed. Simulation build only.
#![cfg(simulation)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sim::Sim;
use tracing::subscriber::Subscriber;

/// Events the test's own dispatcher saw.
static SEEN: AtomicU64 = AtomicU64::new(0);

/// A dispatcher that counts events, as a user's `fmt()` would print them.
struct Counter;

impl Subscriber for Counter {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, _: &tracing::Event<'_>) {
        SEEN.fetch_add(1, Ordering::Relaxed);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// A host logs at info and debug; a client waits for it.
#[test]
fn logging_service() {
    tracing::subscriber::with_default(Counter, || {
        let mut sim = Sim::new();
        sim.host("logger", || async {
            for round in 0..3u32 {
                tokio::time::sleep(Duration::from_millis(250)).await;
                tracing::info!(round, "tick {}", round * 10);
                tracing::debug!("a detail");
            }
            std::future::pending::<()>().await;
        });
        sim.client("client", async {
            tokio::time::sleep(Duration::from_secs(1)).await;
        });
        sim.run();
    });
    // Six events, each passed on whatever the trace file takes.
    assert_eq!(SEEN.load(Ordering::Relaxed), 6);
}

/// Runs `logging_service` in a child with `logs` as `SIM_TRACE_LOGS`.
fn trace_with(label: &str, logs: Option<&str>) -> String {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let base = dir.join(label);
    let mut command = std::process::Command::new(std::env::current_exe().unwrap());
    command
        .args(["logging_service", "--exact", "--test-threads", "1"])
        .env("SIM_SEED", "5")
        .env("SIM_TRACE", &base)
        .env_remove("SIM_TRACE_LOGS");
    if let Some(level) = logs {
        command.env("SIM_TRACE_LOGS", level);
    }
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let file = dir.join(format!("{label}.logging_service"));
    std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

#[test]
fn log_lines_join_the_trace_at_their_time_and_host_and_change_no_event() {
    let quiet = trace_with("logs-off", None);
    let info = trace_with("logs-info", Some("info"));
    let debug = trace_with("logs-debug", Some("debug"));
    let logs = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with("- "))
            .map(str::to_string)
            .collect()
    };
    let events = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| !l.starts_with("- "))
            .map(str::to_string)
            .collect()
    };
    assert!(logs(&quiet).is_empty());
    let lines = logs(&info);
    assert_eq!(lines.len(), 3, "{lines:#?}");
    assert!(
        lines[0].starts_with("- 250000000 0.250000000s logger log ")
            && lines[0].ends_with(" INFO trace_logs: tick 0 round=0"),
        "{}",
        lines[0]
    );
    assert!(lines[2].contains(" 0.750000000s ") && lines[2].contains("tick 20 round=2"));
    assert_eq!(logs(&debug).len(), 6);
    assert!(logs(&debug)[1].ends_with(" DEBUG trace_logs: a detail"));
    // The events, their numbers and so the hash are the same either way.
    assert_eq!(events(&quiet), events(&info));
    assert_eq!(events(&quiet), events(&debug));
}
