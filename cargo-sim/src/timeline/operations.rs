//! A run's history of client operations (`tokio::sim::history`) as bars:
//! one lane per history and client, a bar from each operation's
//! invocation to its completion (or to the end, for one still open),
//! coloured by how it ended; the operations a checker found at fault
//! (the trace's `history NAME illegal #3 #7` note) marked.

use super::event::Event;
use super::lanes::Lanes;
use sim_history::note::{parse_note, parse_verdict_note};
use sim_history::Kind;
use std::collections::{BTreeMap, BTreeSet};

/// One operation's bar.
#[derive(Debug, PartialEq)]
pub struct Bar {
    pub lane: usize,
    /// The indices of its invocation and completion (or of the window's
    /// last event, for one still open).
    pub from: usize,
    pub to: usize,
    /// `ok`, `fail`, `info` or `open`.
    pub outcome: &'static str,
    /// `write "x" 1 -> nil`.
    pub text: String,
    /// Found at fault by a checker.
    pub marked: bool,
}

/// The bars of the window's operations, as its events come.
#[derive(Default)]
pub struct Operations {
    /// (history, id) -> (lane, invocation's index, the operation).
    open: BTreeMap<(String, u64), (usize, usize, String)>,
    bars: Vec<(String, u64, Bar)>,
    marked: BTreeSet<(String, u64)>,
}

impl Operations {
    /// Takes a note of the history, if `event` is one.
    pub fn event(&mut self, lanes: &mut Lanes, index: usize, event: &Event) {
        if let Some((name, ids)) = parse_verdict_note(&event.label).map(|(n, _, ids)| (n, ids)) {
            self.marked
                .extend(ids.into_iter().map(|id| (name.clone(), id)));
            return;
        }
        let Some((name, history_event)) = parse_note(&event.label) else {
            return;
        };
        let key = (name.clone(), history_event.id);
        let op = &history_event.op;
        if history_event.kind == Kind::Invoke {
            let lane = lanes.lane(&format!("{name}: {}", history_event.client), &event.host);
            let text = format!("{} {} {}", op.f, op.key, op.value);
            self.open.insert(key, (lane, index, text));
            return;
        }
        // A completion whose invocation is before the window: no bar.
        let Some((lane, from, text)) = self.open.remove(&key) else {
            return;
        };
        let outcome = match history_event.kind {
            Kind::Ok => "ok",
            Kind::Fail => "fail",
            _ => "info",
        };
        let text = format!("#{} {text} -> {}", key.1, op.value);
        self.bars.push((
            key.0,
            key.1,
            Bar {
                lane,
                from,
                to: index,
                outcome,
                text,
                marked: false,
            },
        ));
    }

    /// Every bar, the open ones to `end`, the marked ones marked.
    pub fn finish(mut self, end: usize) -> Vec<Bar> {
        for ((name, id), (lane, from, text)) in std::mem::take(&mut self.open) {
            let bar = Bar {
                lane,
                from,
                to: end,
                outcome: "open",
                text: format!("#{id} {text} (open at the end)"),
                marked: false,
            };
            self.bars.push((name, id, bar));
        }
        self.bars
            .into_iter()
            .map(|(name, id, mut bar)| {
                bar.marked = self.marked.contains(&(name, id));
                bar
            })
            .collect()
    }
}
