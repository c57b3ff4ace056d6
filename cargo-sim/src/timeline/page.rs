//! A drawing as one self-contained HTML page (`page.html`, with the
//! drawing's data put in it as JSON).

use super::event::Event;
use super::layout::{Axis, Drawing};

/// The page: its style, and the script that draws `data` into an SVG and
/// records what it drew on `<body>`.
const PAGE: &str = include_str!("page.html");

fn json_str(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

/// `s` escaped for HTML text and attributes (the properties page too).
pub(crate) fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The page's note: which events it shows, and what its x axis is.
fn note(drawing: &Drawing, shown: &[Event]) -> String {
    let which = if drawing.shown < drawing.total {
        format!(
            "the last {} of {} events (the first {} are left out; --last N shows more)",
            drawing.shown,
            drawing.total,
            drawing.total - drawing.shown
        )
    } else {
        format!("all {} events", drawing.total)
    };
    let (first, last) = match (shown.first(), shown.last()) {
        (Some(first), Some(last)) => (first.ns, last.ns),
        _ => (0, 0),
    };
    let (first, last) = (duration(first), duration(last));
    let axis = match drawing.axis {
        Axis::Order if first == last => {
            format!("x: event order (virtual time stands still at t={first})")
        }
        Axis::Order => {
            format!(
                "x: event order (virtual time from t={first} to t={last}, mostly standing still)"
            )
        }
        _ => format!("x: virtual time, from t={first} to t={last}"),
    };
    format!("{which}; {axis}")
}

/// A virtual time as a reader takes it in: `0`, `750 ns`, `40 ms`,
/// `1.25 s`.
fn duration(ns: u64) -> String {
    let (value, unit) = match ns {
        0 => return "0".to_string(),
        1..=999 => return format!("{ns} ns"),
        1_000..=999_999 => (ns as f64 / 1e3, "µs"),
        1_000_000..=999_999_999 => (ns as f64 / 1e6, "ms"),
        _ => (ns as f64 / 1e9, "s"),
    };
    let text = format!("{value:.3}");
    format!(
        "{} {unit}",
        text.trim_end_matches('0').trim_end_matches('.')
    )
}

/// The data the page's script draws, as JSON.
fn data(drawing: &Drawing, shown: &[Event]) -> String {
    let join = |items: Vec<String>| items.join(",");
    let lanes = join(drawing.lanes.iter().map(|l| json_str(l)).collect());
    let lines = join(shown.iter().map(|e| json_str(&e.line)).collect());
    let times = join(shown.iter().map(|e| e.ns.to_string()).collect());
    let marks = join(
        drawing
            .marks
            .iter()
            .map(|(i, l)| format!("[{i},{l}]"))
            .collect(),
    );
    let arrows = join(
        drawing
            .arrows
            .iter()
            .map(|a| {
                format!(
                    "[{},{},{},{},{}]",
                    a.from, a.sent, a.to, a.arrived, a.message
                )
            })
            .collect(),
    );
    let stubs = join(
        drawing
            .stubs
            .iter()
            .map(|s| {
                let arrived = s.arrived.map_or(-1, |i| i as i64);
                format!(
                    "[{},{},{},{arrived},{}]",
                    s.from,
                    s.sent,
                    s.to,
                    json_str(&s.why)
                )
            })
            .collect(),
    );
    let bands = join(
        drawing
            .bands
            .iter()
            .map(|b| {
                let (a, c) = b.lanes;
                format!("[{a},{c},{},{},{}]", b.from, b.to, json_str(&b.what))
            })
            .collect(),
    );
    let ops = join(
        drawing
            .ops
            .iter()
            .map(|b| {
                format!(
                    "[{},{},{},{},{},{}]",
                    b.lane,
                    b.from,
                    b.to,
                    json_str(b.outcome),
                    json_str(&b.text),
                    b.marked
                )
            })
            .collect(),
    );
    let axis = if drawing.axis == Axis::Order {
        "order"
    } else {
        "time"
    };
    format!(
        "{{\"axis\":\"{axis}\",\"lanes\":[{lanes}],\"lines\":[{lines}],\"times\":[{times}],\
         \"marks\":[{marks}],\"arrows\":[{arrows}],\"stubs\":[{stubs}],\"bands\":[{bands}],\
         \"ops\":[{ops}]}}"
    )
}

/// The page for `drawing` of `events`.
pub fn html(title: &str, events: &[Event], drawing: &Drawing) -> String {
    let shown = &events[drawing.total - drawing.shown..];
    PAGE.replace("__TITLE__", &html_escape(title))
        .replace("__NOTE__", &html_escape(&note(drawing, shown)))
        // Inside a <script>, a "</" would end it.
        .replace("__DATA__", &data(drawing, shown).replace("</", "<\\/"))
}
