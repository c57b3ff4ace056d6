//! `cargo sim timeline TRACE [-o FILE] [--last N]`: a trace file as one
//! self-contained HTML page. One lane per host, plus one for the
//! simulation itself (the root future and the network's and disks'
//! callbacks); a mark per event (hover shows its line); an arrow for each
//! message from its send to its delivery, and a stub for each one lost or
//! still in flight at the end; bands for partitions and for hosts that are
//! down. The last `N` events (default 2,000), with a note when some were
//! left out.
//!
//! The page draws itself from the events embedded in it (no network, no
//! files), and records what it drew on `<body>` (`data-lanes`,
//! `data-marks`, `data-arrows`, `data-stubs`, `data-bands`, `data-errors`),
//! so a test can load it in a headless browser and count.

use std::collections::BTreeMap;
use std::path::Path;

/// One parsed trace line.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub seq: u64,
    pub ns: u64,
    pub host: String,
    pub kind: String,
    pub task: String,
    pub label: String,
    pub line: String,
}

/// Parses a trace file's line: `<seq> <ns> <secs>s <host> <kind> <task>:<name> <label>`
/// (`-` for the sequence number of a log line).
pub fn parse_line(line: &str) -> Option<Event> {
    let mut parts = line.splitn(7, ' ');
    // A service's log line (`SIM_TRACE_LOGS`) has `-`: a mark, not an event.
    let seq = match parts.next()? {
        "-" => u64::MAX,
        number => number.parse().ok()?,
    };
    let ns = parts.next()?.parse().ok()?;
    let _secs = parts.next()?;
    let host = parts.next()?.to_string();
    let kind = parts.next()?.to_string();
    let task = parts.next()?.to_string();
    let label = parts.next().unwrap_or("-").to_string();
    Some(Event {
        seq,
        ns,
        host,
        kind,
        task,
        label,
        line: line.to_string(),
    })
}

/// What a page draws.
#[derive(Debug, Default, PartialEq)]
pub struct Drawing {
    pub lanes: Vec<String>,
    /// (event index, lane).
    pub marks: Vec<(usize, usize)>,
    /// (from lane, send ns, to lane, delivery ns, message).
    pub arrows: Vec<(usize, u64, usize, u64, u64)>,
    /// (from lane, send ns, to lane, why) for messages lost or in flight.
    pub stubs: Vec<(usize, u64, usize, String)>,
    /// (lane a, lane b, from ns, to ns, what): a partition between two
    /// lanes, or a host down (a == b).
    pub bands: Vec<(usize, usize, u64, u64, String)>,
    pub shown: usize,
    pub total: usize,
    pub end_ns: u64,
}

/// The simulation's own lane: the root future and the callbacks.
const SIM_LANE: &str = "(simulation)";

fn host_of(endpoint: &str) -> &str {
    endpoint.rsplit_once(':').map_or(endpoint, |(h, _)| h)
}

/// `#17` in a label: a message number.
fn message_number(label: &str) -> Option<u64> {
    label
        .split_whitespace()
        .find_map(|w| w.strip_prefix('#'))
        .and_then(|n| n.parse().ok())
}

/// `a:1>b:2` in a label: the sending and receiving hosts.
fn endpoints(label: &str) -> Option<(String, String)> {
    let word = label.split_whitespace().find(|w| w.contains('>'))?;
    let (a, b) = word.trim_end_matches(':').split_once('>')?;
    Some((host_of(a).to_string(), host_of(b).to_string()))
}

/// Lays out the last `last` events of `events`.
pub fn draw(events: &[Event], last: usize) -> Drawing {
    let total = events.len();
    let shown = &events[total.saturating_sub(last)..];
    let mut layout = Layout {
        drawing: Drawing {
            shown: shown.len(),
            total,
            end_ns: shown.last().map_or(0, |e| e.ns),
            ..Drawing::default()
        },
        first_ns: shown.first().map_or(0, |e| e.ns),
        ..Layout::default()
    };
    layout.lane(SIM_LANE);
    for (index, event) in shown.iter().enumerate() {
        layout.event(index, event);
    }
    layout.finish()
}

/// A drawing being laid out, with what is still open: messages sent and
/// not yet delivered or lost, links cut, hosts down.
#[derive(Default)]
struct Layout {
    drawing: Drawing,
    lanes: BTreeMap<String, usize>,
    /// Messages sent (in the window): number -> (from, to, ns).
    sent: BTreeMap<u64, (usize, usize, u64)>,
    /// Messages delivered (true) or lost (false).
    delivered: BTreeMap<u64, bool>,
    cuts: BTreeMap<(String, String), u64>,
    downs: BTreeMap<String, u64>,
    first_ns: u64,
}

impl Layout {
    /// The lane of `name`, made when first seen.
    fn lane(&mut self, name: &str) -> usize {
        let lanes = &mut self.drawing.lanes;
        *self.lanes.entry(name.to_string()).or_insert_with(|| {
            lanes.push(name.to_string());
            lanes.len() - 1
        })
    }

    /// The event's mark, and what its note (if it is one) opens or closes.
    fn event(&mut self, index: usize, event: &Event) {
        let own = if event.host == "main" && event.task.starts_with("0:") {
            SIM_LANE
        } else {
            event.host.as_str()
        };
        let at = self.lane(own);
        self.drawing.marks.push((index, at));
        if event.kind != "note" {
            return;
        }
        let label = event.label.as_str();
        match label.split_whitespace().next().unwrap_or("") {
            "send" => self.send(label, event.ns),
            "deliver" => self.deliver(label, event.ns),
            "lost" => self.lost(label, event.ns),
            word @ ("partition" | "heal") => self.cut(word == "partition", label, event.ns),
            word @ ("crash" | "exit" | "restart") => self.down(word == "restart", label, event.ns),
            _ => {}
        }
    }

    fn send(&mut self, label: &str, ns: u64) {
        if let (Some(n), Some((a, b))) = (message_number(label), endpoints(label)) {
            let (la, lb) = (self.lane(&a), self.lane(&b));
            self.sent.insert(n, (la, lb, ns));
        }
    }

    fn deliver(&mut self, label: &str, ns: u64) {
        let Some(n) = message_number(label) else {
            return;
        };
        if let Some(&(la, lb, sent_ns)) = self.sent.get(&n) {
            if self.delivered.insert(n, true).is_none() {
                self.drawing.arrows.push((la, sent_ns, lb, ns, n));
            }
        }
    }

    fn lost(&mut self, label: &str, ns: u64) {
        let Some(n) = message_number(label) else {
            return;
        };
        // Lost at its send (a cut link) has no send line before it: the
        // loss's own line names the ends.
        let from = match self.sent.get(&n).copied() {
            Some(from) => Some(from),
            None => endpoints(label).map(|(a, b)| (self.lane(&a), self.lane(&b), ns)),
        };
        if let Some((la, lb, sent_ns)) = from {
            if self.delivered.insert(n, false).is_none() {
                let why = label.split_once(": ").map_or("lost", |(_, w)| w);
                self.drawing.stubs.push((la, sent_ns, lb, why.to_string()));
            }
        }
    }

    /// A link cut (`partition a->b`) opens a band; its heal closes it.
    fn cut(&mut self, opens: bool, label: &str, ns: u64) {
        let pair = label
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.split_once("->"));
        let Some((a, b)) = pair else {
            return;
        };
        let key = (a.to_string(), b.to_string());
        if opens {
            self.cuts.entry(key).or_insert(ns);
        } else if let Some(from) = self.cuts.remove(&key) {
            self.cut_band(a, b, from, ns);
        }
    }

    /// A host's crash or exit opens a band; its restart closes it.
    fn down(&mut self, restarts: bool, label: &str, ns: u64) {
        let Some(host) = label.split_whitespace().nth(1) else {
            return;
        };
        if restarts {
            let from = self.downs.remove(host).unwrap_or(self.first_ns);
            self.down_band(host, from, ns);
        } else {
            self.downs.entry(host.to_string()).or_insert(ns);
        }
    }

    fn cut_band(&mut self, a: &str, b: &str, from: u64, to: u64) {
        let (la, lb) = (self.lane(a), self.lane(b));
        self.drawing
            .bands
            .push((la, lb, from, to, format!("{a}->{b} cut")));
    }

    fn down_band(&mut self, host: &str, from: u64, to: u64) {
        let l = self.lane(host);
        self.drawing
            .bands
            .push((l, l, from, to, format!("{host} down")));
    }

    /// What is still open at the end: messages in flight, links cut,
    /// hosts down.
    fn finish(mut self) -> Drawing {
        let end = self.drawing.end_ns;
        for (n, (la, lb, ns)) in std::mem::take(&mut self.sent) {
            if !self.delivered.contains_key(&n) {
                self.drawing
                    .stubs
                    .push((la, ns, lb, "in flight at the end".to_string()));
            }
        }
        for ((a, b), from) in std::mem::take(&mut self.cuts) {
            self.cut_band(&a, &b, from, end);
        }
        for (host, from) in std::mem::take(&mut self.downs) {
            self.down_band(&host, from, end);
        }
        self.drawing
    }
}

fn json_str(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

/// The page for `drawing` of `events`.
pub fn html(title: &str, events: &[Event], drawing: &Drawing) -> String {
    let start = drawing.total - drawing.shown;
    let shown = &events[start..];
    let lines: Vec<String> = shown.iter().map(|e| json_str(&e.line)).collect();
    let times: Vec<String> = shown.iter().map(|e| e.ns.to_string()).collect();
    let marks: Vec<String> = drawing
        .marks
        .iter()
        .map(|(i, l)| format!("[{i},{l}]"))
        .collect();
    let arrows: Vec<String> = drawing
        .arrows
        .iter()
        .map(|(a, t0, b, t1, n)| format!("[{a},{t0},{b},{t1},{n}]"))
        .collect();
    let stubs: Vec<String> = drawing
        .stubs
        .iter()
        .map(|(a, t, b, why)| format!("[{a},{t},{b},{}]", json_str(why)))
        .collect();
    let bands: Vec<String> = drawing
        .bands
        .iter()
        .map(|(a, b, t0, t1, what)| format!("[{a},{b},{t0},{t1},{}]", json_str(what)))
        .collect();
    let lanes: Vec<String> = drawing.lanes.iter().map(|l| json_str(l)).collect();
    let note = if drawing.shown < drawing.total {
        format!(
            "the last {} of {} events (the first {} are left out; --last N shows more)",
            drawing.shown,
            drawing.total,
            drawing.total - drawing.shown
        )
    } else {
        format!("all {} events", drawing.total)
    };
    PAGE.replace("__TITLE__", &html_escape(title))
        .replace("__NOTE__", &html_escape(&note))
        .replace(
            "__DATA__",
            &format!(
                "{{\"lanes\":[{}],\"lines\":[{}],\"times\":[{}],\"marks\":[{}],\"arrows\":[{}],\"stubs\":[{}],\"bands\":[{}]}}",
                lanes.join(","),
                lines.join(","),
                times.join(","),
                marks.join(","),
                arrows.join(","),
                stubs.join(","),
                bands.join(",")
            )
            // Inside a <script>, a "</" would end it.
            .replace("</", "<\\/"),
        )
}

/// `s` escaped for HTML text and attributes (the properties page too).
pub(crate) fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const PAGE: &str = r##"<!doctype html>
<html><head><meta charset="utf-8"><title>__TITLE__</title>
<style>
body { font: 13px system-ui, sans-serif; margin: 16px; color: #222; }
h1 { font-size: 16px; margin: 0 0 4px; }
p.note { margin: 0 0 12px; color: #555; }
svg { border: 1px solid #ddd; background: #fff; }
.lane-name { font-size: 12px; fill: #333; }
.lane { stroke: #ccc; }
.mark { fill: #4a78c2; }
.mark.note { fill: #999; }
.arrow { stroke: #2a9d4a; stroke-width: 1.2; fill: none; marker-end: url(#head); }
.stub { stroke: #d33; stroke-width: 1.5; }
.band { fill: #f4c542; opacity: 0.25; }
.band.down { fill: #d33; opacity: 0.15; }
#line { font-family: monospace; white-space: pre; min-height: 1.4em; margin-top: 8px; }
</style></head>
<body data-errors="0">
<h1>__TITLE__</h1>
<p class="note">__NOTE__. Hover over a mark for its trace line.</p>
<div id="chart"></div>
<div id="line"></div>
<script>
"use strict";
window.addEventListener("error", function () {
  document.body.dataset.errors = String(Number(document.body.dataset.errors) + 1);
});
var data = __DATA__;
(function draw() {
  var NS = "http://www.w3.org/2000/svg";
  var laneHeight = 36, left = 130, width = 1100, top = 20;
  var height = top + data.lanes.length * laneHeight + 20;
  var t0 = data.times.length ? data.times[0] : 0;
  var t1 = data.times.length ? data.times[data.times.length - 1] : 1;
  var span = Math.max(1, t1 - t0);
  function x(t) { return left + (Math.max(t, t0) - t0) / span * (width - left - 20); }
  function y(lane) { return top + lane * laneHeight + laneHeight / 2; }
  function el(name, attrs, parent) {
    var node = document.createElementNS(NS, name);
    for (var k in attrs) node.setAttribute(k, attrs[k]);
    parent.appendChild(node);
    return node;
  }
  var svg = el("svg", { width: width, height: height, id: "timeline" }, document.getElementById("chart"));
  var defs = el("defs", {}, svg);
  var head = el("marker", { id: "head", markerWidth: 8, markerHeight: 6, refX: 8, refY: 3, orient: "auto" }, defs);
  el("path", { d: "M0,0 L8,3 L0,6 z", fill: "#2a9d4a" }, head);
  data.bands.forEach(function (b) {
    var ya = Math.min(y(b[0]), y(b[1])) - laneHeight / 2, yb = Math.max(y(b[0]), y(b[1])) + laneHeight / 2;
    var r = el("rect", { class: b[0] === b[1] ? "band down" : "band", x: x(b[2]), y: ya,
      width: Math.max(1, x(b[3]) - x(b[2])), height: yb - ya }, svg);
    el("title", {}, r).textContent = b[4];
  });
  data.lanes.forEach(function (name, i) {
    el("line", { class: "lane", x1: left, x2: width - 10, y1: y(i), y2: y(i) }, svg);
    el("text", { class: "lane-name", x: 6, y: y(i) + 4 }, svg).textContent = name;
  });
  data.arrows.forEach(function (a) {
    var p = el("path", { class: "arrow", d: "M" + x(a[1]) + "," + y(a[0]) + " L" + x(a[3]) + "," + y(a[2]) }, svg);
    el("title", {}, p).textContent = "#" + a[4];
  });
  data.stubs.forEach(function (s) {
    var x0 = x(s[1]), y0 = y(s[0]), dy = (y(s[2]) - y0) / 3;
    var l = el("line", { class: "stub", x1: x0, y1: y0, x2: x0 + 12, y2: y0 + dy }, svg);
    el("title", {}, l).textContent = s[3];
  });
  var shown = document.getElementById("line");
  data.marks.forEach(function (m) {
    var line = data.lines[m[0]];
    var c = el("circle", { class: line.indexOf(" note ") > 0 ? "mark note" : "mark",
      cx: x(data.times[m[0]]), cy: y(m[1]), r: 3 }, svg);
    el("title", {}, c).textContent = line;
    c.addEventListener("mouseover", function () { shown.textContent = line; });
  });
  var body = document.body.dataset;
  body.lanes = String(svg.querySelectorAll("text.lane-name").length);
  body.marks = String(svg.querySelectorAll("circle.mark").length);
  body.arrows = String(svg.querySelectorAll("path.arrow").length);
  body.stubs = String(svg.querySelectorAll("line.stub").length);
  body.bands = String(svg.querySelectorAll("rect.band").length);
  body.drawn = "1";
})();
</script>
</body></html>
"##;

/// Reads `trace`, writes its page to `out`; returns a one-line summary.
pub fn write(trace: &Path, out: &Path, last: usize, title: &str) -> Result<String, String> {
    let text = std::fs::read_to_string(trace)
        .map_err(|e| format!("cannot read the trace {}: {e}", trace.display()))?;
    let events: Vec<Event> = text.lines().filter_map(parse_line).collect();
    if events.is_empty() {
        return Err(format!(
            "{} has no trace lines (a file written with SIM_TRACE=<path> is one)",
            trace.display()
        ));
    }
    let drawing = draw(&events, last);
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
        crate::cli::TIMELINE_EVENTS_DEFAULT,
        &format!("{test}, seed {seed:#x}"),
    )
}

/// `cargo sim timeline TRACE [-o FILE] [--last N]`.
/// Draws the last `last` events of `trace` into `output` (default: the
/// trace's path with `.html` added).
pub fn command(
    trace: &Path,
    output: Option<std::path::PathBuf>,
    last: usize,
) -> Result<std::process::ExitCode, String> {
    let out = output.unwrap_or_else(|| {
        let mut page = trace.as_os_str().to_os_string();
        page.push(".html");
        page.into()
    });
    let title = format!("timeline of {}", trace.display());
    let summary = write(trace, &out, last, &title)?;
    println!("{summary}");
    Ok(std::process::ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(lines: &[&str]) -> Vec<Event> {
        lines.iter().filter_map(|l| parse_line(l)).collect()
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
        let d = draw(&trace, 100);
        assert_eq!(d.lanes, ["(simulation)", "a", "b"]);
        assert_eq!(d.arrows, [(1, 10, 2, 20, 1)]);
        assert_eq!(d.stubs.len(), 2, "{:?}", d.stubs);
        assert_eq!(d.stubs[0].3, "partition");
        assert_eq!(d.stubs[1].3, "in flight at the end");
        assert_eq!(d.bands.len(), 2, "{:?}", d.bands);
        // The log line is a mark on its host's lane.
        assert_eq!(d.marks.len(), 10);
        assert_eq!(d.marks[9], (9, 1));
        // The window: the last 3 events only.
        let d = draw(&trace, 3);
        assert_eq!((d.shown, d.total), (3, 10));
        assert!(d.arrows.is_empty());
    }
}
