//! The decision log: every choice a run makes, stream by stream, written
//! to a file (`SIM_RECORD=<path>`) and replayed from one
//! (`SIM_REPLAY=<path>`).
//!
//! A run's choices come from named streams of its seed tree. The log keeps
//! each stream's values in the order they were drawn:
//!
//! - `schedule`: which ready task runs next, by task id (`0` is the root
//!   future); `min`, or a task that is not ready, is the task that has been
//!   ready longest (FIFO);
//! - `select`: the branch order of `select!`;
//! - `random`: what `getrandom` returned, 8 bytes per value;
//! - `net latency`, `net chance`: each message's latency draw, and the draws
//!   behind drops, duplicates and reordering;
//! - `disk <host> latency`, `disk <host> chance`, `disk <host> damage`,
//!   `disk <host> crash`: the same for each host's disk;
//! - every other stream the run drew from by name: the harness's (nemesis
//!   times and targets, `buggify!`, `tokio::sim::rng`, poll costs).
//!
//! What is not listed comes from the seed, which the file names: the
//! swarm's configuration, and draws made before the run began.
//!
//! A replayed stream gives its listed values in order. A value too large for
//! the choice it meets (a branch past the last of a `select!`) is clamped to
//! the largest one. Past its last value, a stream draws from
//! the seed (`rest=seed`) or makes the least choice every time (`rest=min`),
//! or the largest (`rest=max`: a chance draw over every rate).
//! So a file edited by hand, or by `cargo sim test --shrink`, still drives a
//! whole run: the shrinker rewrites the `schedule` stream toward FIFO and
//! checks that the failure stays.
//!
//! The file also carries the run's settings (`set SIM_POLICY=pct`, ...). A
//! replay reads them where the variable is not set in the environment.
//!
//! # The format
//!
//! ```text
//! # sim decisions v1
//! seed 0x2a
//! set SIM_POLICY=random
//! stream→schedule→rest=seed→3 1 3*3 2 min*10
//! stream→nemesis crash #0→rest=seed→1833 2
//! ```
//!
//! A `stream` line has four fields separated by tabs (`→` above): the word, the
//! stream's name (tabs, newlines and backslashes escaped with `\`), its rest
//! mode, and its values. `v*n` is the value `v` `n` times.
//!
//! Which file a run records to follows the trace's rule (see
//! [`crate::trace`]): a test's run records to `<path>.<test name>`. A
//! replay reads `<path>` itself for the first run of each thread, and
//! `<path>.<n>` for its `n`th run.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use crate::rng::Rng;

/// Records the run's decisions to this file.
pub const RECORD_VAR: &str = crate::settings::RECORD.name;
/// Replays the run from this decision file.
pub const REPLAY_VAR: &str = crate::settings::REPLAY.name;
pub use crate::seams::{clamp, Value, RANDOM, SCHEDULE, SELECT};

/// The most values one stream records. A longer run's stream keeps its
/// first values, and the file says it was cut (its replay then draws the
/// rest from the seed and may part from the recorded run).
pub const VALUES_MAX: u64 = 50_000_000;

/// What a stream does past its last value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rest {
    /// It draws from the seed.
    Seed,
    /// It makes the least choice.
    Min,
    /// It makes the largest choice (a chance draw over every rate: no
    /// loss, duplicate or error; what a shrunk run's draws settle at).
    Max,
}

/// A stream's values, run-length encoded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Values {
    runs: Vec<(Value, u64)>,
    len: u64,
}

impl Values {
    /// Appends `value`.
    pub fn push(&mut self, value: Value) {
        self.len += 1;
        if let Some((last, count)) = self.runs.last_mut() {
            if *last == value {
                *count += 1;
                return;
            }
        }
        self.runs.push((value, 1));
    }

    /// How many values.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The values, one by one.
    pub fn to_vec(&self) -> Vec<Value> {
        self.runs
            .iter()
            .flat_map(|&(value, count)| std::iter::repeat_n(value, count as usize))
            .collect()
    }

    /// The values of `list`, in order.
    pub fn from_slice(list: &[Value]) -> Values {
        let mut values = Values::default();
        for &value in list {
            values.push(value);
        }
        values
    }

    /// The first `n` values.
    pub fn prefix(&self, n: u64) -> Values {
        let mut out = Values::default();
        let mut left = n;
        for &(value, count) in &self.runs {
            if left == 0 {
                break;
            }
            let take = count.min(left);
            out.runs.push((value, take));
            out.len += take;
            left -= take;
        }
        out
    }

    fn to_text(&self) -> String {
        let mut text = String::new();
        for (i, (value, count)) in self.runs.iter().enumerate() {
            if i > 0 {
                text.push(' ');
            }
            match value {
                Value::Num(v) => text.push_str(&v.to_string()),
                Value::Min => text.push_str("min"),
            }
            if *count > 1 {
                text.push_str(&format!("*{count}"));
            }
        }
        text
    }

    fn parse(text: &str) -> Result<Values, String> {
        let mut values = Values::default();
        for token in text.split_whitespace() {
            let (value, count) = match token.split_once('*') {
                Some((v, n)) => (
                    v,
                    n.parse::<u64>()
                        .map_err(|_| format!("{token:?} repeats a value a bad number of times"))?,
                ),
                None => (token, 1),
            };
            let value =
                if value == "min" {
                    Value::Min
                } else {
                    Value::Num(value.parse().map_err(|_| {
                        format!("{token:?} is not a value: expected a number or `min`")
                    })?)
                };
            if count > 0 {
                values.runs.push((value, count));
                values.len += count;
            }
        }
        Ok(values)
    }
}

/// One stream of a decision file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stream {
    /// What it gives past its values.
    pub rest: Rest,
    /// Its values, in order.
    pub values: Values,
    /// Whether recording stopped at [`VALUES_MAX`].
    pub cut: bool,
}

/// A decision file: the seed, the settings and the streams of one run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Log {
    /// The run's seed.
    pub seed: u64,
    /// The thread the run was on (`main`, or a test's name): a replay
    /// drives that thread's run only.
    pub run: Option<String>,
    /// `SIM_*` settings, as (name, value).
    pub settings: Vec<(String, String)>,
    /// The streams by name.
    pub streams: BTreeMap<String, Stream>,
}

use crate::escape::{escape_field as escape, unescape_field as unescape};

impl Log {
    /// The file's text.
    pub fn to_text(&self) -> String {
        let mut text = String::from(
            "# sim decisions v1: what one run chose, stream by stream.\n\
             # Replay: SIM_REPLAY=<this file>. `min` is the least choice (the first ready\n\
             # task, for the schedule); `v*n` is v n times; past its values a stream draws\n\
             # from the seed (rest=seed) or makes the least choice (rest=min).\n",
        );
        text.push_str(&format!("seed {:#x}\n", self.seed));
        if let Some(run) = &self.run {
            text.push_str(&format!("run {}\n", escape(run)));
        }
        for (name, value) in &self.settings {
            text.push_str(&format!("set {name}={value}\n"));
        }
        for (name, stream) in &self.streams {
            let rest = match stream.rest {
                Rest::Seed => "rest=seed",
                Rest::Min => "rest=min",
                Rest::Max => "rest=max",
            };
            text.push_str(&format!(
                "stream\t{}\t{rest}{}\t{}\n",
                escape(name),
                if stream.cut { " cut" } else { "" },
                stream.values.to_text()
            ));
        }
        text
    }

    /// Parses a file's text.
    ///
    /// # Errors
    /// The line that does not parse, and why.
    pub fn parse(text: &str) -> Result<Log, String> {
        let mut log = Log::default();
        let mut seed = None;
        for (n, line) in text.lines().enumerate() {
            let at = |why: String| format!("line {}: {why}", n + 1);
            let line = line.trim_end_matches('\r');
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            if let Some(value) = line.strip_prefix("seed ") {
                seed = Some(crate::config::parse_seed(value).map_err(at)?);
            } else if let Some(run) = line.strip_prefix("run ") {
                log.run = Some(unescape(run));
            } else if let Some(setting) = line.strip_prefix("set ") {
                let (name, value) = setting
                    .split_once('=')
                    .ok_or_else(|| at(format!("{setting:?} is not NAME=VALUE")))?;
                log.settings.push((name.to_string(), value.to_string()));
            } else if let Some(fields) = line.strip_prefix("stream\t") {
                let mut parts = fields.splitn(3, '\t');
                let name = unescape(parts.next().unwrap_or(""));
                let mode = parts.next().unwrap_or("");
                let rest = match mode.split_whitespace().next() {
                    Some("rest=seed") => Rest::Seed,
                    Some("rest=min") => Rest::Min,
                    Some("rest=max") => Rest::Max,
                    _ => {
                        return Err(at(format!(
                            "stream {name:?} has rest mode {mode:?}: expected rest=seed, \
                             rest=min or rest=max"
                        )))
                    }
                };
                let values = Values::parse(parts.next().unwrap_or("")).map_err(at)?;
                log.streams.insert(
                    name,
                    Stream {
                        rest,
                        values,
                        cut: mode.contains("cut"),
                    },
                );
            } else {
                return Err(at(format!(
                    "{line:?} is not a `seed`, `run`, `set` or `stream` line"
                )));
            }
        }
        log.seed = seed.ok_or("the file has no `seed` line")?;
        Ok(log)
    }

    /// Reads and parses a decision file.
    ///
    /// # Errors
    /// A message naming the file and what is wrong with it.
    pub fn read(path: &Path) -> Result<Log, String> {
        let text = crate::outside::outside(|| std::fs::read_to_string(path)).map_err(|e| {
            format!(
                "sim: {REPLAY_VAR}={}: cannot read the decision file: {e}",
                path.display()
            )
        })?;
        Log::parse(&text).map_err(|e| {
            format!(
                "sim: {REPLAY_VAR}={} is not a decision file ({e}); write one with \
                 {RECORD_VAR}=<path> or cargo sim test --shrink",
                path.display()
            )
        })
    }

    /// The value of setting `name`, if the file has it.
    pub fn setting(&self, name: &str) -> Option<&str> {
        self.settings
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

// ----- the replay file of this process --------------------------------------

fn replay_base() -> Option<PathBuf> {
    crate::settings::REPLAY.path()
}

/// The parsed decision files of this process, by path (read once each).
fn cached(path: &Path) -> Result<Arc<Log>, String> {
    static FILES: OnceLock<Mutex<BTreeMap<PathBuf, Arc<Log>>>> = OnceLock::new();
    let files = FILES.get_or_init(Default::default);
    if let Some(log) = files.lock().expect("the file cache").get(path) {
        return Ok(log.clone());
    }
    let log = Arc::new(Log::read(path)?);
    files
        .lock()
        .expect("the file cache")
        .insert(path.to_path_buf(), log.clone());
    Ok(log)
}

/// The name a decision file gives the current thread's runs.
fn this_run() -> String {
    std::thread::current().name().unwrap_or("main").to_string()
}

/// Whether `log` is for runs of this thread.
fn is_ours(log: &Log) -> bool {
    log.run.as_ref().is_none_or(|run| *run == this_run())
}

/// The decision file the `run_index`th run of this thread replays, if any:
/// `SIM_REPLAY` itself for the first, `<SIM_REPLAY>.<n>` for the `n`th, when
/// the file was recorded on a thread of this name (a test's, or `main`).
///
/// # Panics
/// When `SIM_REPLAY` names a file that cannot be read or parsed: the message
/// names it and says how to make one.
pub fn replay_log(run_index: u64) -> Option<Arc<Log>> {
    let base = replay_base()?;
    let path = if run_index <= 1 {
        base
    } else {
        let mut p = base.into_os_string();
        p.push(format!(".{run_index}"));
        let p = PathBuf::from(p);
        if !crate::outside::outside(|| p.exists()) {
            return None;
        }
        p
    };
    match cached(&path) {
        Ok(log) => is_ours(&log).then_some(log),
        Err(message) => panic!("{message}"),
    }
}

/// The seed `SIM_REPLAY`'s file was recorded with, if a replay of this
/// thread's run is asked for.
///
/// # Errors
/// When the file cannot be read or parsed.
pub fn replay_seed() -> Result<Option<u64>, String> {
    match replay_base() {
        Some(path) => {
            let log = cached(&path)?;
            Ok(is_ours(&log).then_some(log.seed))
        }
        None => Ok(None),
    }
}

/// The seed the decision file at `path` was recorded with (for a runner
/// that replays it).
///
/// # Errors
/// When the file cannot be read or parsed.
pub fn file_seed(path: &Path) -> Result<u64, String> {
    Ok(cached(path)?.seed)
}

/// Reads setting `name`: the environment's value, or else the replayed
/// decision file's `set` line.
///
/// # Panics
/// When `name` is no setting of [`crate::settings::ALL`]: every variable
/// the simulator reads is one.
pub fn var(name: &str) -> Result<Option<String>, String> {
    let setting = crate::settings::find(name).unwrap_or_else(|| {
        panic!("sim: {name} is read but is no setting of sim_runtime::settings")
    });
    match std::env::var(setting.name) {
        Ok(value) => return Ok(Some(value)),
        Err(std::env::VarError::NotPresent) => {}
        Err(std::env::VarError::NotUnicode(value)) => {
            return Err(format!("sim: {name}={value:?} is not valid unicode"))
        }
    }
    let Some(path) = replay_base() else {
        return Ok(None);
    };
    Ok(cached(&path)?.setting(name).map(str::to_string))
}

// ----- a run's decisions ------------------------------------------------------

struct Replaying {
    stream: Stream,
    /// Index into the runs, and values used of that run.
    run: usize,
    used: u64,
}

impl Replaying {
    fn next(&mut self) -> Option<Value> {
        let runs = &self.stream.values.runs;
        while let Some(&(value, count)) = runs.get(self.run) {
            if self.used < count {
                self.used += 1;
                return Some(value);
            }
            self.run += 1;
            self.used = 0;
        }
        match self.stream.rest {
            Rest::Seed => None,
            Rest::Min => Some(Value::Min),
            // Clamped to the largest choice where it meets one.
            Rest::Max => Some(Value::Num(u64::MAX)),
        }
    }
}

/// What a run records and replays. Made by the core when `SIM_RECORD` or
/// `SIM_REPLAY` is set.
pub struct Decisions {
    replay: BTreeMap<String, Replaying>,
    replaying: bool,
    record: Option<(PathBuf, Log)>,
}

thread_local! {
    /// How many runs of this thread record or replay (the fast path of
    /// [`below`] checks it alone).
    static ACTIVE: Cell<u32> = const { Cell::new(0) };
}

impl Decisions {
    /// The decisions of a run with `seed`, the `run_index`th of its thread,
    /// recording to `record` if given; `None` when neither a record nor a
    /// replay is asked for.
    pub fn new(seed: u64, run_index: u64, record: Option<PathBuf>) -> Option<Decisions> {
        let replay = replay_log(run_index);
        if replay.is_none() && record.is_none() {
            return None;
        }
        let replaying = replay.is_some();
        let replay = replay
            .map(|log| {
                log.streams
                    .iter()
                    .map(|(name, stream)| {
                        (
                            name.clone(),
                            Replaying {
                                stream: stream.clone(),
                                run: 0,
                                used: 0,
                            },
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        ACTIVE.with(|a| a.set(a.get() + 1));
        Some(Decisions {
            replay,
            replaying,
            record: record.map(|path| {
                (
                    path,
                    Log {
                        seed,
                        run: Some(this_run()),
                        ..Log::default()
                    },
                )
            }),
        })
    }

    /// Whether a file drives this run.
    pub fn replaying(&self) -> bool {
        self.replaying
    }

    /// The next value of `stream`: the replayed one, or `draw()`'s.
    /// Records what it gives.
    pub fn next(&mut self, stream: &str, draw: impl FnOnce() -> Value) -> Value {
        let value = self
            .replay
            .get_mut(stream)
            .and_then(Replaying::next)
            .unwrap_or_else(draw);
        if let Some((_, log)) = &mut self.record {
            let entry = log
                .streams
                .entry(stream.to_string())
                .or_insert_with(|| Stream {
                    rest: Rest::Seed,
                    values: Values::default(),
                    cut: false,
                });
            if entry.values.len() < VALUES_MAX {
                entry.values.push(value);
            } else {
                entry.cut = true;
            }
        }
        value
    }

    /// Adds a setting to the record.
    pub fn set(&mut self, name: &str, value: String) {
        if let Some((_, log)) = &mut self.record {
            log.settings.push((name.to_string(), value));
        }
    }

    /// Writes the record, if one was asked for. Returns its path.
    pub fn write(&mut self) -> Option<PathBuf> {
        let (path, log) = self.record.take()?;
        let text = log.to_text();
        match crate::outside::outside(|| std::fs::write(&path, text)) {
            Ok(()) => Some(path),
            Err(e) => {
                eprintln!(
                    "sim: {RECORD_VAR}: cannot write the decision file {}: {e}",
                    path.display()
                );
                None
            }
        }
    }
}

impl crate::seams::DecisionLog for Decisions {
    fn replaying(&self) -> bool {
        Decisions::replaying(self)
    }

    fn next(&mut self, stream: &str, draw: &mut dyn FnMut() -> u64) -> Value {
        Decisions::next(self, stream, || Value::Num(draw()))
    }

    fn finish(&mut self) -> Option<PathBuf> {
        self.write()
    }
}

impl Drop for Decisions {
    fn drop(&mut self) {
        ACTIVE.with(|a| a.set(a.get().saturating_sub(1)));
    }
}

/// Whether some run of this thread records or replays.
#[inline]
pub fn active() -> bool {
    ACTIVE.with(Cell::get) > 0
}

/// A draw in `0..n` from `rng` for the stream `stream()` names: through
/// the current run's decision log when it records or replays. `n == 0`
/// means the whole 64-bit range.
#[inline]
pub fn below(stream: impl FnOnce() -> String, rng: &mut Rng, n: u64) -> u64 {
    let draw = |rng: &mut Rng| if n == 0 { rng.next_u64() } else { rng.below(n) };
    if !active() {
        return draw(rng);
    }
    let decided =
        crate::executor::context::with_current(|core| core.decide(&stream(), n, || draw(rng)));
    match decided {
        Some(v) => v,
        None => draw(rng),
    }
}

/// A fair draw in `[0, 1)` with 53 bits from `rng`, for `stream()` (see
/// [`below`]).
#[inline]
pub fn unit(stream: impl FnOnce() -> String, rng: &mut Rng) -> f64 {
    below(stream, rng, 1 << 53) as f64 / (1u64 << 53) as f64
}

/// The file the `run_index`th run of a thread named `thread_name` records
/// to, by the trace's naming rule, if `SIM_RECORD` is set.
pub fn record_path(thread_name: Option<&str>, run_index: u64) -> Option<PathBuf> {
    let base = crate::settings::RECORD.value().filter(|p| !p.is_empty())?;
    Some(crate::trace::trace_path(&base, thread_name, run_index))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_round_trips_through_its_text() {
        let mut values = Values::default();
        for v in [0, 1, 1, 1, 2] {
            values.push(Value::Num(v));
        }
        values.push(Value::Min);
        values.push(Value::Min);
        let mut log = Log {
            seed: 42,
            settings: vec![("SIM_POLICY".into(), "random".into())],
            ..Log::default()
        };
        log.streams.insert(
            "nemesis crash #0\twith a tab".into(),
            Stream {
                rest: Rest::Min,
                values,
                cut: false,
            },
        );
        let text = log.to_text();
        assert!(text.contains("0 1*3 2 min*2"), "{text}");
        assert_eq!(Log::parse(&text).unwrap(), log);
    }

    #[test]
    fn a_bad_line_is_named() {
        let err = Log::parse("seed 1\nstream\tschedule\trest=later\t1\n").unwrap_err();
        assert!(err.contains("line 2") && err.contains("rest=seed"), "{err}");
        let err = Log::parse("stream\tschedule\trest=seed\t1\n").unwrap_err();
        assert!(err.contains("no `seed` line"), "{err}");
        let err = Log::parse("seed 1\nstream\ts\trest=seed\tx\n").unwrap_err();
        assert!(err.contains("\"x\" is not a value"), "{err}");
    }

    #[test]
    fn a_replayed_stream_gives_its_values_then_its_rest() {
        let mut values = Values::default();
        values.push(Value::Num(3));
        values.push(Value::Num(3));
        values.push(Value::Num(1));
        let mut replay = Replaying {
            stream: Stream {
                rest: Rest::Min,
                values: values.clone(),
                cut: false,
            },
            run: 0,
            used: 0,
        };
        let got: Vec<Option<Value>> = (0..5).map(|_| replay.next()).collect();
        use Value::*;
        assert_eq!(
            got,
            vec![
                Some(Num(3)),
                Some(Num(3)),
                Some(Num(1)),
                Some(Min),
                Some(Min)
            ]
        );
        assert_eq!(values.prefix(2).len(), 2);
        assert_eq!(clamp(Num(7), 3), 2);
        assert_eq!(clamp(Num(7), 0), 7);
        assert_eq!(clamp(Min, 3), 0);
    }
}
