//! The linearizability checker on the histories porcupine tests itself
//! with: Jepsen's etcd register histories and its key-value histories
//! (`test_data/` of porcupine's repository, not part of this one). Prints
//! each history's verdict and the checker's CPU time, median of 5:
//!
//! ```sh
//! cargo run --release -p sim-history --example porcupine_data -- PORCUPINE/test_data
//! ```

use sim_history::linear::{check, is_linearizable, models, Budget, Model, Verdict};
use sim_history::{Event, History, Kind, Op, Value};
use std::path::Path;
use std::time::Duration;

/// CPU time of this process (user + system), from getrusage.
fn cpu() -> Duration {
    extern "C" {
        fn getrusage(who: i32, usage: *mut [i64; 18]) -> i32;
    }
    let mut usage = [0i64; 18];
    // SAFETY: `usage` is writable and at least as large as struct rusage
    // on 64-bit Linux (144 bytes); RUSAGE_SELF (0) is a valid `who`.
    unsafe { getrusage(0, &mut usage) };
    Duration::from_secs((usage[0] + usage[2]) as u64)
        + Duration::from_micros((usage[1] + usage[3]) as u64)
}

/// A Jepsen etcd log line: `INFO  jepsen.util - 3\t:ok\t:read\t4`.
fn etcd_event(line: &str, index: u64) -> Option<Event> {
    let rest = line.split(" - ").nth(1)?;
    // Tabs between the fields, or (in a few logs) spaces.
    let mut fields = rest.split_whitespace();
    let (process, kind, f) = (fields.next()?, fields.next()?, fields.next()?);
    let value = fields.collect::<Vec<_>>().join(" ");
    let value = value.as_str();
    let int = |s: &str| s.trim_matches(['[', ']']).parse::<i64>().ok();
    let (kind, f, value) = match (kind.trim_start_matches(':'), f.trim_start_matches(':')) {
        ("invoke", "cas") => {
            let mut parts = value.split(' ');
            let (from, to) = (int(parts.next()?)?, int(parts.next()?)?);
            (
                Kind::Invoke,
                "cas",
                Value::List(vec![Value::Int(from), Value::Int(to)]),
            )
        }
        ("invoke", f) => (Kind::Invoke, f, int(value).map_or(Value::Nil, Value::Int)),
        ("ok", "cas") => (Kind::Ok, "cas", Value::Bool(true)),
        // A cas whose compare failed: it returned false.
        ("fail", "cas") => (Kind::Ok, "cas", Value::Bool(false)),
        ("ok", f) => (Kind::Ok, f, int(value).map_or(Value::Nil, Value::Int)),
        // A timed-out read: nobody knows.
        (_, f) => (Kind::Info, f, Value::Nil),
    };
    Some(Event {
        index,
        kind,
        id: u64::MAX,
        client: process.trim().to_string(),
        time_ns: index,
        op: Op::new(f.to_string(), "x", value),
    })
}

fn read_etcd(path: &Path) -> History {
    let text = std::fs::read_to_string(path).expect("an etcd log");
    let mut history = History::new();
    for line in text.lines() {
        let index = history.events().len() as u64;
        if let Some(event) = etcd_event(line, index) {
            history
                .push(event)
                .expect("a completion pairs with its invocation");
        }
    }
    history
}

/// porcupine's key-value test model: `get`, `put`, and `append`, which
/// adds its value to the end of the key's string. An absent key reads "".
struct AppendKv;

impl Model for AppendKv {
    type State = String;

    fn name(&self) -> String {
        "key-value map with append".to_string()
    }

    fn init(&self) -> String {
        String::new()
    }

    fn step(&self, state: &String, op: &Op, output: Option<&Value>) -> Option<String> {
        let value = op.value.as_str().unwrap_or("");
        match op.f.as_ref() {
            "get" => match output {
                Some(seen) if seen.as_str().unwrap_or("") != state => None,
                _ => Some(state.clone()),
            },
            "put" => Some(value.to_string()),
            "append" => Some(format!("{state}{value}")),
            _ => None,
        }
    }

    fn read_only(&self, op: &Op) -> bool {
        op.f == "get"
    }
}

/// The CPU time of `f`, median of 5, and its last result.
fn median<R>(mut f: impl FnMut() -> R) -> (Duration, R) {
    let mut times = Vec::new();
    let mut result = None;
    for _ in 0..5 {
        let start = cpu();
        result = Some(f());
        times.push(cpu() - start);
    }
    times.sort();
    (times[2], result.expect("five runs"))
}

/// The verdict alone (as porcupine answers), then the whole check with
/// the smallest window of an illegal history: (verdict, its time, the
/// check's time).
fn timed<M: Model>(model: &M, history: &History) -> (String, Duration, Duration) {
    let (decide, verdict) = median(|| is_linearizable(model, history, Budget::default()));
    let (whole, report) = median(|| check(model, history, Budget::default()));
    let verdict = match (verdict, report.verdict) {
        (Some(true), Verdict::Ok) => "linearizable",
        (Some(false), Verdict::Illegal(_)) => "illegal",
        (None, Verdict::Unknown { .. }) => "unknown",
        _ => "the two disagree",
    };
    (verdict.to_string(), decide, whole)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .expect("the path of porcupine's test_data/");
    let dir = Path::new(&dir);
    let (mut decide_total, mut whole_total) = (Duration::ZERO, Duration::ZERO);
    let mut counts = std::collections::BTreeMap::new();
    for n in 0..=102 {
        let path = dir.join(format!("jepsen/etcd_{n:03}.log"));
        let history = read_etcd(&path);
        let (verdict, decide, whole) = timed(&models::Register::new(), &history);
        (decide_total, whole_total) = (decide_total + decide, whole_total + whole);
        println!(
            "etcd_{n:03} {} ops {verdict} {:.3} ms ({:.3} ms with the window)",
            history.operations().len(),
            ms(decide),
            ms(whole)
        );
        *counts.entry(verdict).or_insert(0) += 1;
    }
    println!(
        "etcd: 103 histories, {counts:?}, {:.1} ms of CPU in all ({:.1} ms with the windows)",
        ms(decide_total),
        ms(whole_total)
    );
    for name in [
        "c01-ok", "c01-bad", "c10-ok", "c10-bad", "c50-ok", "c50-bad",
    ] {
        let text =
            std::fs::read_to_string(dir.join(format!("kv/{name}.txt"))).expect("a kv history");
        let history = History::from_edn(&text).expect("EDN");
        let (verdict, decide, whole) = timed(&AppendKv, &history);
        println!(
            "kv {name} {} ops {verdict} {:.3} ms ({:.3} ms with the window)",
            history.operations().len(),
            ms(decide),
            ms(whole)
        );
    }
}
