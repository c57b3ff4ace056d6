//! A history's events as notes of a run's trace, and back: the trace is
//! the run's one record, so a history can be read out of any trace file.
//!
//! ```text
//! history kv invoke #3 "c1" write "x" 1
//! history kv ok #3 "c1" write "x" -> nil
//! history kv illegal #3 #7 #9
//! ```

use crate::file::{json_string, read_edn_value};
use crate::history::{Event, History, Kind};
use crate::op::Op;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// The note of `event` of the history `name`.
pub fn note(name: &str, event: &Event) -> String {
    let head = format!(
        "history {name} {} #{} {} {} {}",
        event.kind.name(),
        event.id,
        json_string(&event.client),
        event.op.f,
        event.op.key
    );
    if event.kind == Kind::Invoke {
        format!("{head} {}", event.op.value)
    } else {
        format!("{head} -> {}", event.op.value)
    }
}

/// The note that names the operations a checker found at fault.
pub fn verdict_note(name: &str, what: &str, ids: &[u64]) -> String {
    let ids: Vec<String> = ids.iter().map(|id| format!("#{id}")).collect();
    format!("history {name} {what} {}", ids.join(" "))
}

/// A history note read back: the history's name and the event (its
/// index and time left to the caller). `None` for any other text.
pub fn parse_note(text: &str) -> Option<(String, Event)> {
    let rest = text.strip_prefix("history ")?;
    let (name, rest) = rest.split_once(' ')?;
    let (kind, rest) = rest.split_once(' ')?;
    let kind = Kind::parse(kind)?;
    let (id, rest) = rest.strip_prefix('#')?.split_once(' ')?;
    let id = id.parse().ok()?;
    let (client, rest) = read_edn_value(rest).ok()?;
    let (f, rest) = rest.split_once(' ')?;
    let (key, rest) = read_edn_value(rest).ok()?;
    let (value, _) = match kind {
        Kind::Invoke => read_edn_value(rest).ok()?,
        _ => read_edn_value(rest.strip_prefix("->")?.trim_start()).ok()?,
    };
    Some((
        name.to_string(),
        Event {
            index: 0,
            kind,
            id,
            client: client.as_str()?.to_string(),
            time_ns: 0,
            op: Op {
                f: Cow::Owned(f.to_string()),
                key,
                value,
            },
        },
    ))
}

/// The ids a verdict note names: `history kv illegal #3 #7` gives
/// `("kv", "illegal", [3, 7])`.
pub fn parse_verdict_note(text: &str) -> Option<(String, String, Vec<u64>)> {
    let rest = text.strip_prefix("history ")?;
    let mut words = rest.split(' ');
    let name = words.next()?.to_string();
    let what = words.next()?.to_string();
    if Kind::parse(&what).is_some() {
        return None;
    }
    let ids = words
        .filter_map(|w| w.strip_prefix('#')?.parse().ok())
        .collect();
    Some((name, what, ids))
}

/// Every history in a run's notes, given as (virtual time in ns, text).
///
/// # Errors
/// For a completion with no operation open (a trace cut short).
pub fn histories<'a>(
    notes: impl IntoIterator<Item = (u64, &'a str)>,
) -> Result<BTreeMap<String, History>, String> {
    let mut histories: BTreeMap<String, History> = BTreeMap::new();
    for (time_ns, text) in notes {
        let Some((name, mut event)) = parse_note(text) else {
            continue;
        };
        let history = histories.entry(name).or_default();
        event.time_ns = time_ns;
        event.index = history.events().len() as u64;
        history.push(event)?;
    }
    Ok(histories)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;

    #[test]
    fn a_note_reads_back_as_its_event() {
        let mut h = History::new();
        let id = h.invoke(
            "c \"1\"",
            5,
            Op::cas("x y", 1, Value::List(vec![Value::Nil, Value::from("a b")])),
        );
        h.complete(id, Kind::Ok, 9, Value::Bool(true));
        for event in h.events() {
            let text = note("kv", event);
            let (name, back) = parse_note(&text).unwrap();
            assert_eq!(name, "kv");
            assert_eq!(
                (back.kind, back.id, &back.client, &back.op),
                (event.kind, event.id, &event.client, &event.op),
                "{text}"
            );
        }
        assert_eq!(
            note("kv", &h.events()[1]),
            "history kv ok #0 \"c \\\"1\\\"\" cas \"x y\" -> true"
        );
        let notes: Vec<(u64, String)> = h
            .events()
            .iter()
            .map(|e| (e.time_ns, note("kv", e)))
            .collect();
        let read = histories(notes.iter().map(|(t, n)| (*t, n.as_str()))).unwrap();
        assert_eq!(read["kv"], h);
        assert_eq!(
            parse_verdict_note("history kv illegal #3 #7"),
            Some(("kv".into(), "illegal".into(), vec![3, 7]))
        );
        assert_eq!(parse_verdict_note(&notes[0].1), None);
    }
}
