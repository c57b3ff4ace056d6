//! `cargo sim timeline TRACE [-o FILE] [--last N] [--axis A]`: a trace
//! file as one self-contained HTML page.
//!
//! - `event.rs`: a trace line, and the words of a label.
//! - `lanes.rs`: which lane an event is on: one per host, one for the
//!   simulation itself (the root future and the callbacks), and one per
//!   task group when a host runs several.
//! - `layout.rs`: a mark per event (hover shows its line); an arrow for
//!   each message from its send to its delivery, and a stub for each one
//!   lost or still in flight at the end; bands for partitions and for
//!   hosts that are down; the x axis, virtual time or event order (chosen
//!   by itself when time stands still).
//! - `operations.rs`: a run's history of client operations as bars, a
//!   lane per client, the ones a checker found at fault marked.
//! - `page.rs`, `page.html`: the page. It draws itself from the events
//!   embedded in it (no network, no files), and records what it drew on
//!   `<body>` (`data-lanes`, `data-marks`, `data-arrows`, `data-stubs`,
//!   `data-bands`, `data-ops`, `data-marked-ops`, `data-axis`,
//!   `data-errors`), so a test can load it in a
//!   headless browser and count.
//!
//! The last `N` events (default 2,000), with a note when some were left
//! out.

mod event;
mod lanes;
mod layout;
mod operations;
mod page;

pub use event::{parse_line, Event};
pub use layout::{draw, Axis};
use page::html;
pub(crate) use page::html_escape;
use std::path::Path;

/// How many of a trace's last events a timeline draws, by default
/// (`cargo sim timeline` and `cargo sim test --timeline`).
pub const EVENTS_DEFAULT: usize = 2_000;

/// Reads `trace`, writes its page to `out`; returns a one-line summary.
pub fn write(
    trace: &Path,
    out: &Path,
    (last, axis): (usize, Axis),
    title: &str,
) -> Result<String, String> {
    let text = std::fs::read_to_string(trace)
        .map_err(|e| format!("cannot read the trace {}: {e}", trace.display()))?;
    let events: Vec<Event> = text.lines().filter_map(parse_line).collect();
    if events.is_empty() {
        return Err(format!(
            "{} has no trace lines (a file written with SIM_TRACE=<path> is one)",
            trace.display()
        ));
    }
    let drawing = draw(&events, last, axis);
    std::fs::write(out, html(title, &events, &drawing))
        .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    Ok(format!(
        "timeline: {} lanes, {} events shown of {}, {} arrows, {} stubs, {} bands -> {}",
        drawing.lanes.len(),
        drawing.shown,
        drawing.total,
        drawing.arrows.len(),
        drawing.stubs.len(),
        drawing.bands.len(),
        out.display()
    ))
}

/// The page of a failing seed's trace, as `<dir>/<test>-<seed>.html`.
pub fn for_failure(trace: &Path, dir: &Path, test: &str, seed: u64) -> Result<String, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let clean = sim_runtime::trace::file_name_part(test);
    let out = dir.join(format!("{clean}-{seed:#x}.html"));
    // The trace beside its page, for `cargo sim diff` and for reading.
    let copy = out.with_extension("trace");
    std::fs::copy(trace, &copy).map_err(|e| format!("cannot write {}: {e}", copy.display()))?;
    write(
        trace,
        &out,
        (EVENTS_DEFAULT, Axis::Auto),
        &format!("{test}, seed {seed:#x}"),
    )
}

/// `cargo sim timeline TRACE [-o FILE] [--last N] [--axis A]`.
/// Draws the last `last` events of `trace` into `output` (default: the
/// trace's path with `.html` added), on `axis`.
pub fn command(
    trace: &Path,
    output: Option<std::path::PathBuf>,
    (last, axis): (usize, Axis),
) -> Result<std::process::ExitCode, String> {
    let out = output.unwrap_or_else(|| {
        let mut page = trace.as_os_str().to_os_string();
        page.push(".html");
        page.into()
    });
    let title = format!("timeline of {}", trace.display());
    let summary = write(trace, &out, (last, axis), &title)?;
    println!("{summary}");
    Ok(std::process::ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::layout::Arrow;
    use super::*;

    fn events(lines: &[&str]) -> Vec<Event> {
        lines.iter().filter_map(|l| parse_line(l)).collect()
    }

    #[test]
    fn a_history_is_drawn_as_bars_per_client_with_the_ones_at_fault_marked() {
        let trace = events(&[
            "0 0 0.000000000s main start 0:root 1",
            "1 10 0.000000010s a note 1:a history ops invoke #0 \"a\" write \"x\" 1",
            "2 20 0.000000020s b note 2:b history ops invoke #1 \"b\" read \"x\" nil",
            "3 30 0.000000030s a note 1:a history ops ok #0 \"a\" write \"x\" -> nil",
            "4 40 0.000000040s b note 2:b history ops ok #1 \"b\" read \"x\" -> 0",
            "5 50 0.000000050s a note 1:a history ops invoke #2 \"a\" write \"x\" 2",
            "6 60 0.000000060s main note 0:root history ops illegal #0 #1",
        ]);
        let drawing = draw(&trace, 100, Axis::Auto);
        assert!(
            drawing.lanes.contains(&"ops: a".to_string()),
            "{:?}",
            drawing.lanes
        );
        assert!(
            drawing.lanes.contains(&"ops: b".to_string()),
            "{:?}",
            drawing.lanes
        );
        let summary: Vec<(usize, usize, &str, bool)> = drawing
            .ops
            .iter()
            .map(|b| (b.from, b.to, b.outcome, b.marked))
            .collect();
        assert_eq!(
            summary,
            [
                (1, 3, "ok", true),
                (2, 4, "ok", true),
                (5, 6, "open", false)
            ]
        );
        assert_eq!(drawing.ops[1].text, "#1 read \"x\" nil -> 0");
    }

    #[test]
    fn sends_pair_with_deliveries_and_losses_become_stubs() {
        let trace = events(&[
            "0 0 0.000000000s main start 0:root 1",
            "1 10 0.000000010s a note 1:a send #1 a:1>b:2 len=3 digest=0 data=\"abc\"",
            "2 20 0.000000020s main note 0:root deliver #1",
            "3 30 0.000000030s main note 0:root partition a->b",
            "4 40 0.000000040s a note 1:a send udp #2 a:1>b:2 len=1 digest=0 data=\"x\"",
            "5 40 0.000000040s a note 1:a lost udp #2 a:1>b:2: partition",
            "6 50 0.000000050s main note 0:root heal a->b",
            "7 60 0.000000060s b note 2:b send #3 b:2>a:1 len=1 digest=0 data=\"y\"",
            "8 70 0.000000070s main note 0:root crash b",
            "- 75 0.000000075s a log 1:a INFO app: a service's log line",
        ]);
        let d = draw(&trace, 100, Axis::Auto);
        assert_eq!(d.axis, Axis::Time, "time moves at every event");
        assert_eq!(d.lanes, ["(simulation)", "a", "b"]);
        let delivered = Arrow {
            from: 1,
            sent: 1,
            to: 2,
            arrived: 2,
            message: 1,
        };
        assert_eq!(d.arrows, [delivered]);
        assert_eq!(d.stubs.len(), 2, "{:?}", d.stubs);
        assert_eq!(d.stubs[0].why, "partition");
        assert_eq!(d.stubs[1].why, "in flight at the end");
        assert_eq!(d.bands.len(), 2, "{:?}", d.bands);
        // The log line is a mark on its host's lane.
        assert_eq!(d.marks.len(), 10);
        assert_eq!(d.marks[9], (9, 1));
        // The window: the last 3 events only.
        let d = draw(&trace, 3, Axis::Auto);
        assert_eq!((d.shown, d.total), (3, 10));
        assert!(d.arrows.is_empty());
    }

    /// A one-host test that never sleeps: every event at t=0, three
    /// servers spawned by the test body, each on its own port.
    const ONE_HOST: &[&str] = &[
        "0 0 0.000000000s main start 0:root 1",
        "1 0 0.000000000s main poll 0:root -",
        "2 0 0.000000000s main spawn 1:task alpha@tests/local.rs:10:5",
        "3 0 0.000000000s main spawn 2:task beta@tests/local.rs:11:5",
        "4 0 0.000000000s main spawn 3:task gamma@tests/local.rs:12:5",
        "5 0 0.000000000s main note 0:root send #1 127.0.0.1:50000>127.0.0.1:7001 len=1 digest=0 data=\"a\"",
        "6 0 0.000000000s main note 0:root deliver #1",
        "7 0 0.000000000s main poll 1:task -",
        "8 0 0.000000000s main spawn 4:task conn@tests/local.rs:30:9",
        "9 0 0.000000000s main poll 4:task -",
        "10 0 0.000000000s main note 4:task send #2 127.0.0.1:7001>127.0.0.1:50000 len=1 digest=0 data=\"a\"",
        "11 0 0.000000000s main note 0:root deliver #2",
        "12 0 0.000000000s main poll 2:task -",
        "13 0 0.000000000s main note 2:task send #3 127.0.0.1:7002>127.0.0.1:50000 len=1 digest=0 data=\"b\"",
        "14 0 0.000000000s main note 0:root deliver #3",
        "15 0 0.000000000s main poll 3:task -",
        "16 0 0.000000000s main note 3:task tcp-listen 127.0.0.1:7003",
        "17 0 0.000000000s main note 0:root send #4 127.0.0.1:50000>127.0.0.1:7003 len=1 digest=0 data=\"c\"",
        "18 0 0.000000000s main note 0:root deliver #4",
        "19 0 0.000000000s main note 0:root lost #4 127.0.0.1:50000>127.0.0.1:7003: no socket, reset",
        "20 5 0.000000005s main poll 3:task -",
    ];

    #[test]
    fn time_standing_still_draws_in_event_order_with_a_lane_per_server() {
        let d = draw(&events(ONE_HOST), 100, Axis::Auto);
        assert_eq!(d.axis, Axis::Order, "20 of 21 events at t=0");
        assert_eq!(
            d.lanes,
            [
                "(simulation)",
                "main alpha@local.rs:10",
                "main beta@local.rs:11",
                "main gamma@local.rs:12"
            ]
        );
        // The connection task spawned by alpha is on alpha's lane.
        assert_eq!(d.marks[9], (9, 1));
        // The test body's request goes to the lane of the task that
        // answers from its port; the answers come back to the body's.
        let ends: Vec<(usize, usize, u64)> =
            d.arrows.iter().map(|a| (a.from, a.to, a.message)).collect();
        assert_eq!(ends, [(0, 1, 1), (1, 0, 2), (2, 0, 3)]);
        // A message lost where it arrived is a stub that reaches it.
        assert_eq!(d.stubs.len(), 1, "{:?}", d.stubs);
        assert_eq!(d.stubs[0].arrived, Some(18));
        assert_eq!(d.stubs[0].why, "no socket, reset");
        // Asked for, the time axis stays.
        assert_eq!(draw(&events(ONE_HOST), 100, Axis::Time).axis, Axis::Time);
    }

    #[test]
    fn one_server_on_a_host_keeps_one_lane() {
        let lines: Vec<&str> = ONE_HOST
            .iter()
            .copied()
            .filter(|l| !l.contains("beta@") && !l.contains("gamma@"))
            .collect();
        let d = draw(&events(&lines), 100, Axis::Auto);
        assert!(d.lanes.iter().all(|l| !l.contains('@')), "{:?}", d.lanes);
    }
}
