//! The swarm's horizon, measured: how long the test runs in virtual time
//! without the swarm, so that its fault pacing fits the test.
//!
//! A swarm without [`Swarm::horizon`](crate::swarm::Swarm::horizon) asks
//! here. The test's binary is run once more, alone, in a child process
//! (the test by name, seed 0, no other `SIM_` setting), where each
//! `Sim::run` leaves its swarm out and writes its virtual end time. The
//! `n`-th swarm run of the test then takes the `n`-th time as its horizon.
//! Like PCT's measured horizon, it depends on the test only, never on the
//! seed being run, so a seed replays alone with the same pacing. The times
//! are kept beside the binary (keyed by its size and modification time),
//! so a sweep measures each test once, not once per seed.
//!
//! The pacing never slows past the swarm's own (a minute): a test longer
//! than that keeps it.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// Set in the measuring child: the file each swarm run appends its end
/// time to (nanoseconds, one line per run).
const MEASURE_VAR: &str = sim_runtime::settings::SWARM_MEASURE.name;

/// The shortest horizon: a test that takes no virtual time still gets
/// faults paced for 100 ms rather than none at all.
const HORIZON_MIN: Duration = Duration::from_millis(100);

/// The longest horizon: the pacing the swarm is written for.
const HORIZON_MAX: Duration = Duration::from_secs(60);

thread_local! {
    /// Swarm runs of this test so far in this thread: the index of the
    /// next one's time.
    static RUNS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// In the measuring child: the file to append this run's end time to (the
/// run leaves its swarm out).
pub(crate) fn measuring() -> Option<PathBuf> {
    sim_runtime::settings::SWARM_MEASURE
        .value_os()
        .map(PathBuf::from)
}

/// Appends a measuring run's end time.
pub(crate) fn record(path: &Path, end: Duration) {
    use std::io::Write;
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut file| writeln!(file, "{}", end.as_nanos()));
    if let Err(e) = written {
        eprintln!(
            "sim: swarm: cannot record the measured length in {}: {e}",
            path.display()
        );
    }
}

/// The horizon of this thread's next swarm run: the test's measured length
/// (at least 100 ms, at most a minute), or `None` when it cannot be
/// measured (said on stderr: the pacing stays a minute's).
///
/// Only runs whose swarm waits for a measure count, here and in the
/// measuring child alike, so the `n`-th of them takes the `n`-th length.
pub(crate) fn next() -> Option<Duration> {
    let index = RUNS.with(|runs| {
        let index = runs.get();
        runs.set(index + 1);
        index
    });
    let ends = match measured() {
        Ok(ends) => ends,
        Err(why) => {
            eprintln!("sim: swarm: the test's length was not measured ({why}); faults are paced for a minute");
            return None;
        }
    };
    let Some(end) = ends.get(index) else {
        eprintln!(
            "sim: swarm: the measuring run made {} swarm runs, this is run {}; faults are paced for a minute",
            ends.len(),
            index + 1
        );
        return None;
    };
    Some(Duration::from_nanos(*end).clamp(HORIZON_MIN, HORIZON_MAX))
}

/// The end times of the test's swarm runs without their swarms, from the
/// cache beside the binary or from a measuring child.
fn measured() -> Result<Vec<u64>, String> {
    let exe = std::env::current_exe().map_err(|e| format!("no path to the test binary: {e}"))?;
    // Under libtest the thread is named after the test; a binary without
    // libtest runs on `main` and is run whole.
    let test = match std::thread::current().name() {
        Some("main") => None,
        Some(name) => Some(name.to_string()),
        None => return Err("the run is on an unnamed thread, so the test is unknown".into()),
    };
    let meta = std::fs::metadata(&exe).map_err(|e| format!("{}: {e}", exe.display()))?;
    let stamp = format!(
        "{} {:?}",
        meta.len(),
        meta.modified().map_err(|e| e.to_string())?
    );
    let name = test.as_deref().unwrap_or("main");
    let cache = cache_path(&exe, name);
    if let Ok(text) = std::fs::read_to_string(&cache) {
        let mut lines = text.lines();
        if lines.next() == Some(stamp.as_str()) {
            return parse(lines);
        }
    }
    let scratch = cache.with_extension(format!("measuring-{}", std::process::id()));
    let _ = std::fs::remove_file(&scratch);
    let mut command = std::process::Command::new(&exe);
    if let Some(test) = &test {
        command.args([test.as_str(), "--exact", "--test-threads", "1"]);
    }
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("SIM_") {
            command.env_remove(key);
        }
    }
    let status = command
        .env(sim_runtime::settings::SEED.name, "0")
        .env(MEASURE_VAR, &scratch)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let text = std::fs::read_to_string(&scratch)
        .map_err(|_| format!("the measuring run ({status}) recorded no length"))?;
    let _ = std::fs::remove_file(&scratch);
    let ends = parse(text.lines())?;
    // Written whole, then renamed: a concurrent seed's process reads the
    // old file or the new one, never half of one.
    let partial = cache.with_extension(format!("partial-{}", std::process::id()));
    let body = format!("{stamp}\n{text}");
    if std::fs::write(&partial, body).is_ok() {
        let _ = std::fs::rename(&partial, &cache);
    }
    Ok(ends)
}

fn parse<'a>(lines: impl Iterator<Item = &'a str>) -> Result<Vec<u64>, String> {
    lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            l.trim()
                .parse()
                .map_err(|_| format!("a bad measured length {l:?}"))
        })
        .collect()
}

/// Where the measured lengths of `test` in `exe` are kept.
fn cache_path(exe: &Path, test: &str) -> PathBuf {
    let safe: String = test
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let file = format!(
        "{}.swarm-horizon.{safe}",
        exe.file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    );
    exe.with_file_name(file)
}
