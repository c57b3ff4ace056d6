//! What a page draws, laid out from the trace: a mark per event, arrows
//! from sends to deliveries, stubs for messages lost or still in flight,
//! bands for cut links and hosts that are down. Every position is an
//! event's index in the window: the page maps it to its virtual time, or
//! to the index itself on an event-order axis.

use super::event::{endpoints, message_number, Event};
use super::lanes::Lanes;
use super::operations::{Bar, Operations};
use std::collections::BTreeMap;

/// What the x axis shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Axis {
    /// Event order when virtual time stands still for half the window's
    /// events or more (a one-host test that never sleeps), else time.
    Auto,
    /// Virtual time.
    Time,
    /// Event order: one step per event.
    Order,
}

/// A message delivered: from its send's mark to its delivery's.
#[derive(Debug, PartialEq)]
pub struct Arrow {
    pub from: usize,
    pub sent: usize,
    pub to: usize,
    pub arrived: usize,
    pub message: u64,
}

/// A message lost or still in flight at the end; `arrived` when it was
/// lost where it arrived (no socket there).
#[derive(Debug, PartialEq)]
pub struct Stub {
    pub from: usize,
    pub sent: usize,
    pub to: usize,
    pub arrived: Option<usize>,
    pub why: String,
}

/// A link cut between two lanes, or a host down (`lanes.0 == lanes.1`).
#[derive(Debug, PartialEq)]
pub struct Band {
    pub lanes: (usize, usize),
    pub from: usize,
    pub to: usize,
    pub what: String,
}

/// What a page draws.
#[derive(Debug, PartialEq)]
pub struct Drawing {
    pub lanes: Vec<String>,
    /// (event index, lane).
    pub marks: Vec<(usize, usize)>,
    pub arrows: Vec<Arrow>,
    pub stubs: Vec<Stub>,
    pub bands: Vec<Band>,
    /// The history's operations (`tokio::sim::history`).
    pub ops: Vec<Bar>,
    /// `Time` or `Order`, never `Auto`.
    pub axis: Axis,
    pub shown: usize,
    pub total: usize,
}

/// Lays out the last `last` events of `events` on `axis`.
pub fn draw(events: &[Event], last: usize, axis: Axis) -> Drawing {
    let total = events.len();
    let start = total.saturating_sub(last);
    let shown = &events[start..];
    let mut lanes = Lanes::default();
    for event in events {
        lanes.learn(event);
    }
    lanes.split_hosts();
    let sim_lane = lanes.lane(super::lanes::SIM_LANE, super::lanes::SIM_LANE);
    let mut layout = Layout {
        lanes,
        sim_lane,
        marks: Vec::new(),
        arrows: Vec::new(),
        stubs: Vec::new(),
        bands: Vec::new(),
        sent: BTreeMap::new(),
        delivered: BTreeMap::new(),
        withdrawn: Vec::new(),
        cuts: BTreeMap::new(),
        downs: BTreeMap::new(),
        ops: Operations::default(),
    };
    for (index, event) in shown.iter().enumerate() {
        layout.event(index, event);
    }
    layout.finish(shown.len(), total, chosen_axis(axis, shown))
}

/// `axis`, with `Auto` decided: event order when half the window's events
/// or more share one instant.
fn chosen_axis(axis: Axis, shown: &[Event]) -> Axis {
    if axis != Axis::Auto {
        return axis;
    }
    let mut at_instant: BTreeMap<u64, usize> = BTreeMap::new();
    for event in shown {
        *at_instant.entry(event.ns).or_default() += 1;
    }
    let most = at_instant.values().copied().max().unwrap_or(0);
    if shown.len() >= 2 && most * 2 >= shown.len() {
        Axis::Order
    } else {
        Axis::Time
    }
}

/// A message sent in the window: its lane, its host, where it goes, and
/// the index of its send.
#[derive(Clone)]
struct Sent {
    from: usize,
    host: String,
    to: String,
    index: usize,
}

/// A drawing being laid out, with what is still open: messages sent and
/// not yet delivered or lost, links cut, hosts down.
struct Layout {
    lanes: Lanes,
    sim_lane: usize,
    marks: Vec<(usize, usize)>,
    arrows: Vec<Arrow>,
    stubs: Vec<Stub>,
    bands: Vec<Band>,
    /// Messages sent (in the window): number -> (from lane, to address,
    /// index).
    sent: BTreeMap<u64, Sent>,
    /// Messages delivered (index of the arrow) or lost (`None`).
    delivered: BTreeMap<u64, Option<usize>>,
    /// Arrows that became stubs: lost where they arrived.
    withdrawn: Vec<usize>,
    cuts: BTreeMap<(String, String), usize>,
    downs: BTreeMap<String, usize>,
    ops: Operations,
}

impl Layout {
    /// The event's mark, and what its note (if it is one) opens or closes.
    fn event(&mut self, index: usize, event: &Event) {
        let at = self.lanes.of_event(event);
        self.marks.push((index, at));
        if event.kind != "note" {
            return;
        }
        let label = event.label.as_str();
        match event.verb() {
            "send" => self.send(event, at, index),
            "deliver" => self.deliver(label, index),
            "lost" => self.lost(event, at, index),
            word @ ("partition" | "heal") => self.cut(word == "partition", label, index),
            word @ ("crash" | "exit" | "restart") => self.down(word == "restart", label, index),
            "history" => self.ops.event(&mut self.lanes, index, event),
            _ => {}
        }
    }

    fn send(&mut self, event: &Event, at: usize, index: usize) {
        let label = event.label.as_str();
        if let (Some(n), Some((from, to))) = (message_number(label), endpoints(label)) {
            // A send by a callback (a retransmission, say) starts from
            // the lane of the task whose address it leaves.
            let from = match at == self.sim_lane {
                true => self.lanes.of_owner(from).unwrap_or(at),
                false => at,
            };
            let sent = Sent {
                from,
                host: event.host.clone(),
                to: to.to_string(),
                index,
            };
            self.sent.insert(n, sent);
        }
    }

    fn deliver(&mut self, label: &str, index: usize) {
        let Some(n) = message_number(label) else {
            return;
        };
        let Some(sent) = self.sent.get(&n).cloned() else {
            return;
        };
        if !self.delivered.contains_key(&n) {
            let to = self.lanes.of_address(&sent.to, &sent.host);
            self.delivered.insert(n, Some(self.arrows.len()));
            self.arrows.push(Arrow {
                from: sent.from,
                sent: sent.index,
                to,
                arrived: index,
                message: n,
            });
        }
    }

    /// A loss: at its send (a cut link: no send line before it, the
    /// loss's own line names the ends), on the way, or where it arrived
    /// (`no socket, reset`: its arrow becomes a stub that reaches it).
    fn lost(&mut self, event: &Event, at: usize, index: usize) {
        let label = event.label.as_str();
        let Some(n) = message_number(label) else {
            return;
        };
        let why = label
            .split_once(": ")
            .map_or("lost", |(_, w)| w)
            .to_string();
        match self.delivered.get(&n).copied() {
            Some(None) => {}
            Some(Some(arrow_index)) => {
                let arrow = &self.arrows[arrow_index];
                let stub = Stub {
                    from: arrow.from,
                    sent: arrow.sent,
                    to: arrow.to,
                    arrived: Some(arrow.arrived),
                    why,
                };
                self.stubs.push(stub);
                self.withdrawn.push(arrow_index);
                self.delivered.insert(n, None);
            }
            None => {
                let sent = self.sent.get(&n).cloned().or_else(|| {
                    endpoints(label).map(|(_, to)| Sent {
                        from: at,
                        host: event.host.clone(),
                        to: to.to_string(),
                        index,
                    })
                });
                if let Some(sent) = sent {
                    self.stub(&sent, why);
                    self.delivered.insert(n, None);
                }
            }
        }
    }

    /// A stub for a message lost on the way or still in flight.
    fn stub(&mut self, sent: &Sent, why: String) {
        let to = self.lanes.of_address(&sent.to, &sent.host);
        self.stubs.push(Stub {
            from: sent.from,
            sent: sent.index,
            to,
            arrived: None,
            why,
        });
    }

    /// A link cut (`partition a->b`) opens a band; its heal closes it.
    fn cut(&mut self, opens: bool, label: &str, index: usize) {
        let pair = label
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.split_once("->"));
        let Some((a, b)) = pair else {
            return;
        };
        let key = (a.to_string(), b.to_string());
        if opens {
            self.cuts.entry(key).or_insert(index);
        } else if let Some(from) = self.cuts.remove(&key) {
            self.cut_band(a, b, from, index);
        }
    }

    /// A host's crash or exit opens a band; its restart closes it.
    fn down(&mut self, restarts: bool, label: &str, index: usize) {
        let Some(host) = label.split_whitespace().nth(1) else {
            return;
        };
        if restarts {
            let from = self.downs.remove(host).unwrap_or(0);
            self.down_band(host, from, index);
        } else {
            self.downs.entry(host.to_string()).or_insert(index);
        }
    }

    fn cut_band(&mut self, a: &str, b: &str, from: usize, to: usize) {
        let lanes = (self.lanes.lane(a, a), self.lanes.lane(b, b));
        self.bands.push(Band {
            lanes,
            from,
            to,
            what: format!("{a}->{b} cut"),
        });
    }

    /// A band on each lane of `host`.
    fn down_band(&mut self, host: &str, from: usize, to: usize) {
        self.lanes.lane(host, host);
        for lane in self.lanes.of_host(host) {
            self.bands.push(Band {
                lanes: (lane, lane),
                from,
                to,
                what: format!("{host} down"),
            });
        }
    }

    /// What is still open at the end (messages in flight, links cut, hosts
    /// down), and the lanes in drawing order.
    fn finish(mut self, shown: usize, total: usize, axis: Axis) -> Drawing {
        let end = shown.saturating_sub(1);
        for (n, sent) in std::mem::take(&mut self.sent) {
            if !self.delivered.contains_key(&n) {
                self.stub(&sent, "in flight at the end".to_string());
            }
        }
        for ((a, b), from) in std::mem::take(&mut self.cuts) {
            self.cut_band(&a, &b, from, end);
        }
        for (host, from) in std::mem::take(&mut self.downs) {
            self.down_band(&host, from, end);
        }
        let mut arrows = std::mem::take(&mut self.arrows);
        let mut index = 0;
        arrows.retain(|_| {
            index += 1;
            !self.withdrawn.contains(&(index - 1))
        });
        let order = self.lanes.order();
        let mut new_of = vec![0; order.len()];
        for (new, &old) in order.iter().enumerate() {
            new_of[old] = new;
        }
        for mark in &mut self.marks {
            mark.1 = new_of[mark.1];
        }
        for arrow in &mut arrows {
            (arrow.from, arrow.to) = (new_of[arrow.from], new_of[arrow.to]);
        }
        for stub in &mut self.stubs {
            (stub.from, stub.to) = (new_of[stub.from], new_of[stub.to]);
        }
        for band in &mut self.bands {
            band.lanes = (new_of[band.lanes.0], new_of[band.lanes.1]);
        }
        let mut ops = std::mem::take(&mut self.ops).finish(end);
        for bar in &mut ops {
            bar.lane = new_of[bar.lane];
        }
        Drawing {
            lanes: order
                .iter()
                .map(|&old| self.lanes.names[old].0.clone())
                .collect(),
            marks: self.marks,
            arrows,
            stubs: self.stubs,
            bands: self.bands,
            ops,
            axis,
            shown,
            total,
        }
    }
}
