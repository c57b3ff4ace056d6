//! The shrink's last pass: each link and disk draw toward its mildest
//! value (the least latency; no loss, duplicate, reordering or disk error).
//!
//! 1. A whole stream goes mild at once when the failure allows it.
//! 2. Otherwise its draws go mild in chunks, latest first: halves, then
//!    quarters, down to one draw at a time, and the single-draw pass
//!    repeats until no one more draw can go mild with the failure still
//!    there (or the stream's budget of runs is spent).
//! 3. Each latency draw that stays is bisected toward the least: what is
//!    left is how late each message had to be, not how late the seed drew
//!    it.
//!
//! The report names each kept draw by its message (`datagram #11
//! client:49152>server:9 21.301 ms late (over the link's least)`), from the
//! file the last run writes (`SIM_SHRINK_DRAWS_OUT`).

use super::{write_log, KeptDraws, Shrinker};
use sim_runtime::decision::{Log, Rest, Stream, Value, Values};
use std::collections::BTreeMap;
use std::path::Path;

/// The most runs spent making one stream's draws mild (chunks and single
/// draws together).
const STREAM_TRIES_MAX: usize = 64;
/// The most kept latency draws bisected toward the least, and the
/// bisection steps for each (8 steps: within 1/256 of the drawn lateness).
const VALUES_PUSHED_MAX: usize = 8;
const VALUE_STEPS_MAX: usize = 8;
/// The kept draws a report line names; the rest are counted.
const DRAWS_NAMED_MAX: usize = 4;

/// The mildest value of a link or disk draw stream: the least latency,
/// and no loss, duplicate, reordering or disk error (a chance draw at its
/// largest is over every rate). `None`: not a draw the shrinker moves.
fn mild_value(stream: &str) -> Option<Value> {
    if stream.ends_with(" latency") && (stream.starts_with("net") || stream.starts_with("disk")) {
        Some(Value::Min)
    } else if stream == "net chance"
        || stream == "net segment"
        || (stream.starts_with("disk ") && stream.ends_with(" chance"))
    {
        Some(Value::Num(u64::MAX))
    } else {
        None
    }
}

/// What each link draw of the last run was for, by (stream, index), from
/// the file `SIM_SHRINK_DRAWS_OUT` wrote.
fn draws_said(path: &Path) -> BTreeMap<(String, usize), String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| {
            let mut fields = line.splitn(3, '\t');
            let stream = fields.next()?.to_string();
            let index = fields.next()?.parse().ok()?;
            Some(((stream, index), fields.next()?.to_string()))
        })
        .collect()
}

/// One kept draw in words: what it was for (`datagram #17
/// client0:49152>server:9`) and what it drew.
fn draw_in_words(
    stream: &str,
    index: usize,
    value: Value,
    what: &BTreeMap<(String, usize), String>,
) -> String {
    let drawn = match (stream.ends_with(" latency"), value) {
        (true, Value::Num(ns)) => {
            format!("{:.3} ms late (over the link's least)", ns as f64 / 1e6)
        }
        (false, Value::Num(n)) => format!("chance {:.4}", n as f64 / (1u64 << 53) as f64),
        (_, Value::Min) => "the least".to_string(),
    };
    match what.get(&(stream.to_string(), index)) {
        Some(what) => format!("{what} {drawn}"),
        None => format!("{stream} #{index}: {drawn}"),
    }
}

/// `log` with stream `name`'s draws set to `values` (and, past them, its
/// mildest: a run that moves its failure later draws more).
fn with_stream(log: &Log, name: &str, values: &[Value], mild: Value) -> Log {
    let rest = if mild == Value::Min {
        Rest::Min
    } else {
        Rest::Max
    };
    let mut log = log.clone();
    log.streams.insert(
        name.to_string(),
        Stream {
            rest,
            values: Values::from_slice(values),
            cut: false,
        },
    );
    log
}

/// The indices of `kept` that are not `mild`, in `[start, end)`.
fn not_mild(kept: &[Value], mild: Value, start: usize, end: usize) -> Vec<usize> {
    (start..end).filter(|&i| kept[i] != mild).collect()
}

/// One stream being made mild: its name, its mildest value, and the runs
/// it has spent.
struct StreamShrink<'f> {
    name: &'f str,
    mild: Value,
    file: &'f Path,
    tries: usize,
}

impl Shrinker<'_> {
    /// Each link and disk draw toward its mildest value, keeping the
    /// draws the failure needs (`None`: no decision file to edit).
    pub(super) fn draws_pass(&mut self) -> Result<Option<Vec<KeptDraws>>, String> {
        let Some(file) = self.replay_file.clone() else {
            return Ok(None);
        };
        let env = self.env_of(&self.skip, self.fast, &self.later, Some(&file));
        let Some(recorded) = super::record(
            self.config,
            self.binaries,
            self.case,
            self.seed,
            "draws",
            env,
        )?
        else {
            return Ok(None);
        };
        let mut log = Log::parse(&std::fs::read_to_string(&file).map_err(|e| e.to_string())?)?;
        let mut kept_draws = Vec::new();
        for (name, stream) in &recorded.streams {
            let Some(mild) = mild_value(name) else {
                continue;
            };
            if crate::signals::received().is_some() {
                break;
            }
            let mut one = StreamShrink {
                name,
                mild,
                file: &file,
                tries: 0,
            };
            let kept = self.mild_stream(&log, &mut one, &stream.values.to_vec())?;
            let left: Vec<(usize, Value)> = kept
                .iter()
                .enumerate()
                .filter(|(_, v)| **v != mild)
                .map(|(i, v)| (i, *v))
                .collect();
            if !left.is_empty() {
                kept_draws.push((name.clone(), left, kept.len()));
            }
            log = with_stream(&log, name, &kept, mild);
        }
        write_log(&file, &log)?;
        Ok(Some(kept_draws))
    }

    /// The draws of one stream (`original`) made mild where the failure
    /// stays: all at once; or else in chunks, halving down to single
    /// draws until no one more can go; then each kept latency pushed
    /// toward the least.
    fn mild_stream(
        &mut self,
        log: &Log,
        one: &mut StreamShrink,
        original: &[Value],
    ) -> Result<Vec<Value>, String> {
        let all_mild = vec![one.mild; original.len()];
        if original.iter().all(|v| *v == one.mild) || self.same_stream(log, one, &all_mild)? {
            return Ok(all_mild);
        }
        let mut kept = original.to_vec();
        let mut size = (kept.len() / 2).max(1);
        loop {
            let changed = self.mild_chunks(log, one, &mut kept, size)?;
            if size > 1 {
                size /= 2;
            } else if !changed || one.tries >= STREAM_TRIES_MAX {
                break;
            }
        }
        if one.mild == Value::Min {
            self.push_values(log, one, &mut kept)?;
        }
        Ok(kept)
    }

    /// One pass over `kept` in chunks of `size` draws, latest first: each
    /// chunk goes mild where the failure stays. Whether any did.
    fn mild_chunks(
        &mut self,
        log: &Log,
        one: &mut StreamShrink,
        kept: &mut Vec<Value>,
        size: usize,
    ) -> Result<bool, String> {
        let mut changed = false;
        let mut end = kept.len();
        while end > 0 {
            let start = end.saturating_sub(size);
            let chunk = not_mild(kept, one.mild, start, end);
            end = start;
            if chunk.is_empty() {
                continue;
            }
            if one.tries >= STREAM_TRIES_MAX || crate::signals::received().is_some() {
                break;
            }
            let mut trial = kept.clone();
            for &i in &chunk {
                trial[i] = one.mild;
            }
            if self.same_stream(log, one, &trial)? {
                *kept = trial;
                changed = true;
            }
        }
        Ok(changed)
    }

    /// Each kept latency draw, latest first, bisected toward the least:
    /// the smallest lateness with which the failure stays.
    fn push_values(
        &mut self,
        log: &Log,
        one: &mut StreamShrink,
        kept: &mut [Value],
    ) -> Result<(), String> {
        let pushed: Vec<usize> = not_mild(kept, one.mild, 0, kept.len())
            .into_iter()
            .rev()
            .take(VALUES_PUSHED_MAX)
            .collect();
        for i in pushed {
            let Value::Num(drawn) = kept[i] else {
                continue;
            };
            // `lo` passes (the draw at the least did: the chunk pass
            // tried it) and `hi` fails.
            let (mut lo, mut hi) = (0u64, drawn);
            for _ in 0..VALUE_STEPS_MAX {
                if hi - lo <= 1 || crate::signals::received().is_some() {
                    break;
                }
                let mid = lo + (hi - lo) / 2;
                let mut trial = kept.to_vec();
                trial[i] = Value::Num(mid);
                if self.same_stream(log, one, &trial)? {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            kept[i] = Value::Num(hi);
        }
        Ok(())
    }

    /// Whether the run with stream `one` set to `values` fails as the
    /// first did.
    fn same_stream(
        &mut self,
        log: &Log,
        one: &mut StreamShrink,
        values: &[Value],
    ) -> Result<bool, String> {
        one.tries += 1;
        write_log(one.file, &with_stream(log, one.name, values, one.mild))?;
        let env = self.env_of(&self.skip, self.fast, &self.later, Some(one.file));
        self.same(&env)
    }

    /// The kept draws in words, each by its message, from the file the
    /// last run wrote (`what_file`): one line per stream for the report's
    /// head (`net latency 2 of 12 (datagram #11 ... and 1 more)`), and one
    /// per draw for the scenario.
    pub(super) fn draws_in_words(
        &self,
        kept_draws: &[KeptDraws],
        what_file: &Path,
    ) -> (Vec<String>, Vec<String>) {
        let what = draws_said(what_file);
        let mut per_stream = Vec::new();
        let mut per_draw = Vec::new();
        for (stream, left, total) in kept_draws {
            let words: Vec<String> = left
                .iter()
                .map(|(i, v)| draw_in_words(stream, *i, *v, &what))
                .collect();
            let more = match words.len().saturating_sub(DRAWS_NAMED_MAX) {
                0 => String::new(),
                n => format!(" and {n} more"),
            };
            let named = &words[..words.len().min(DRAWS_NAMED_MAX)];
            per_stream.push(format!(
                "{stream} {} of {total} ({}{more})",
                left.len(),
                named.join(", ")
            ));
            per_draw.extend(words);
        }
        (per_stream, per_draw)
    }
}
