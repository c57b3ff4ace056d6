//! Messages as the kernel saw them: each send kept (by its number, in a
//! ring of the last ones) so its delivery says how long it took, how much
//! more than its link's least latency, whether a link held it first, which
//! copy of a duplicated datagram it is, and which later send of the same
//! ends it arrived after. A note names its message by number; the send's
//! parts are looked up when a report is written.

use super::entry::{Flight, Sent};
use crate::trace::Message;
use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;

/// How many of the last sends are kept (older ones are forgotten: their
/// notes are long out of a report's window).
const SENDS_MAX: usize = 4_096;
/// How many held messages are kept (a long partition of a busy link).
const HELD_MAX: usize = 4_096;
/// How many messages held before and delivered since are kept for the
/// report of their delivery.
const RELEASED_MAX: usize = 256;

/// The sends, the held messages and each flow's latest delivered send.
#[derive(Default)]
pub(crate) struct Messages {
    /// The last sends, direct-mapped: message `m` is at `m % SENDS_MAX`
    /// while no later send took its place (each entry knows its number).
    /// A send writes its entry in place: no ring to shift, no search.
    recent: Vec<Option<Sent>>,
    /// The highest message number kept in `recent` (`None` before any).
    newest: Option<u64>,
    /// The messages a link holds now, by number.
    held: BTreeMap<u64, Sent>,
    /// Messages a link held, sent again since, until their delivery.
    released: BTreeMap<u64, Sent>,
    /// Released messages delivered: kept for their delivery's line.
    delivered_released: VecDeque<Sent>,
}

/// The number of a message in a note (`hold tcp-data #17 a>b`), after
/// `verb`.
pub(crate) fn number_after(text: &str, verb: &str) -> Option<u64> {
    let rest = text.strip_prefix(verb)?.strip_prefix(" #")?;
    let end = rest.find([' ', ':']).unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// Takes message `msg` out of `map`: on every send and delivery, where
/// most runs hold and release none, so the empty check (a load) comes
/// before the map's search (a call).
fn take(map: &mut BTreeMap<u64, Sent>, msg: u64) -> Option<Sent> {
    match map.is_empty() {
        true => None,
        false => map.remove(&msg),
    }
}

impl Messages {
    /// Where message `msg` is kept in `recent`.
    fn index(msg: u64) -> usize {
        (msg % SENDS_MAX as u64) as usize
    }

    /// Whether message `msg` may still have its place: not a whole table
    /// behind the newest (told without touching the table, whose entry
    /// would be a cache miss at scale).
    fn may_be_kept(&self, msg: u64) -> bool {
        self.newest
            .is_some_and(|newest| msg.saturating_add(SENDS_MAX as u64) > newest)
    }

    /// Where the kept send of message `msg` is, if no later one took its
    /// place.
    fn kept_index(&self, msg: u64) -> Option<usize> {
        if !self.may_be_kept(msg) {
            return None;
        }
        let index = Self::index(msg);
        let kept = self.recent.get(index)?.as_ref()?;
        (kept.msg == msg).then_some(index)
    }

    /// The kept send of message `msg`, if no later one took its place.
    fn recent(&self, msg: u64) -> Option<&Sent> {
        self.recent[self.kept_index(msg)?].as_ref()
    }

    fn recent_mut(&mut self, msg: u64) -> Option<&mut Sent> {
        let index = self.kept_index(msg)?;
        self.recent[index].as_mut()
    }

    /// The entry of message `msg`, made (as `Sent::new(verb, msg, at_ns)`)
    /// if it has none, over whatever older send had its place; `None` for
    /// a message older than every kept one (its place went to a later).
    fn recent_or_new(&mut self, verb: &'static str, msg: u64, at_ns: u64) -> Option<&mut Sent> {
        if self.newest.is_some() && !self.may_be_kept(msg) {
            return None;
        }
        self.newest = Some(self.newest.map_or(msg, |newest| newest.max(msg)));
        let index = Self::index(msg);
        if self.recent.len() <= index {
            // Grows once, over a run's first SENDS_MAX messages.
            self.recent.resize(index + 1, None);
        }
        let entry = &mut self.recent[index];
        if entry.as_ref().is_none_or(|sent| sent.msg != msg) {
            *entry = Some(Sent::new(verb, msg, at_ns));
        }
        entry.as_mut()
    }

    /// The send of message `msg`, wherever it is kept.
    pub(crate) fn get(&self, msg: u64) -> Option<&Sent> {
        if let Some(sent) = self.held.get(&msg).or_else(|| self.released.get(&msg)) {
            return Some(sent);
        }
        if let Some(sent) = self.delivered_released.iter().rev().find(|s| s.msg == msg) {
            return Some(sent);
        }
        self.recent(msg)
    }

    /// Message `msg` is held by a link from `at_ns`.
    fn hold(&mut self, msg: u64, at_ns: u64) -> &mut Sent {
        if !self.held.contains_key(&msg) {
            if self.held.len() >= HELD_MAX {
                self.held.pop_first();
            }
            let recent = self.recent_mut(msg).map(|sent| {
                let taken = *sent;
                // Its place is free: the number no longer matches.
                sent.msg = u64::MAX;
                taken
            });
            let sent = recent
                .or_else(|| self.released.remove(&msg))
                .unwrap_or_else(|| Sent::new("send", msg, at_ns));
            self.held.insert(msg, sent);
        }
        let sent = self.held.get_mut(&msg).expect("inserted above");
        sent.held_ns.get_or_insert(at_ns);
        sent.flight = Flight::Held;
        sent
    }

    /// A text note about a message: a link holds it, the network will
    /// duplicate it, or it is lost (the note itself is told as its text).
    pub(crate) fn text(&mut self, text: &str, at_ns: u64) {
        if !(text.starts_with("hold ") || text.starts_with("dup ") || text.starts_with("lost ")) {
            return;
        }
        let held = number_after(text, "hold tcp-data").or_else(|| number_after(text, "hold udp"));
        if let Some(msg) = held {
            self.hold(msg, at_ns);
        } else if let Some(msg) = number_after(text, "dup udp") {
            if let Some(sent) = self.recent_or_new("send udp", msg, at_ns) {
                sent.copies = 2;
            }
        } else if let Some(msg) = number_after(text, "lost udp")
            .or_else(|| number_after(text, "lost"))
            .or_else(|| number_after(text, "lost tcp-data"))
        {
            self.held.remove(&msg);
            self.released.remove(&msg);
        }
    }

    /// A message held by a link, with its payload.
    pub(crate) fn held(
        &mut self,
        msg: u64,
        ends: (SocketAddr, SocketAddr),
        data: &[u8],
        at_ns: u64,
    ) {
        let sent = self.hold(msg, at_ns);
        sent.ends = Some(ends);
        sent.set_payload(data);
    }

    /// A send's note: its parts are kept by its number.
    pub(crate) fn sent(&mut self, message: &Message<'_>, at_ns: u64) {
        let msg = message.msg;
        let update = |sent: &mut Sent| {
            sent.verb = message.verb;
            if message.ends.is_some() {
                sent.ends = message.ends;
            }
            if let Some(data) = message.data {
                sent.set_payload(data);
            }
            if message.least_ns.is_some() {
                sent.least_ns = message.least_ns;
            }
            sent.flight = Flight::Sent;
        };
        if let Some(mut sent) = take(&mut self.held, msg) {
            // Sent again after a hold: kept apart until its delivery, however
            // many messages pass meanwhile.
            update(&mut sent);
            if self.released.len() >= RELEASED_MAX {
                self.released.pop_first();
            }
            self.released.insert(msg, sent);
            return;
        }
        if let Some(sent) = self.recent_or_new(message.verb, msg, at_ns) {
            update(sent);
        }
    }

    /// A delivery's note, the run's note number `seq`: returns which
    /// copy it is (2: the duplicate).
    pub(crate) fn delivered(&mut self, message: &Message<'_>, seq: u64) -> u8 {
        let msg = message.msg;
        if let Some(mut sent) = take(&mut self.released, msg) {
            sent.delivered += 1;
            sent.delivered_seq.get_or_insert(seq);
            if self.delivered_released.len() == RELEASED_MAX {
                self.delivered_released.pop_front();
            }
            self.delivered_released.push_back(sent);
            return sent.delivered;
        }
        match self.recent_mut(msg) {
            Some(sent) => {
                sent.delivered += 1;
                sent.delivered_seq.get_or_insert(seq);
                sent.delivered
            }
            _ => 1,
        }
    }

    /// The first datagram sent after `msg` on the same ends and delivered
    /// before note `seq` (its number and when it was sent): what `msg`
    /// arrived after. Only datagrams: TCP's segments never overtake.
    pub(crate) fn overtaken_by(&self, msg: u64, seq: u64) -> Option<(u64, u64)> {
        let sent = self.get(msg)?;
        let ends = sent.ends?;
        let newest = self.newest?;
        let start = (msg + 1).max((newest + 1).saturating_sub(SENDS_MAX as u64));
        // Bounded by SENDS_MAX: the kept numbers.
        (start..=newest).find_map(|later| {
            let other = self.recent(later)?;
            let overtook =
                other.ends == Some(ends) && other.delivered_seq.is_some_and(|first| first < seq);
            overtook.then_some((later, other.first_ns))
        })
    }

    /// The messages a link holds now, oldest first.
    pub(crate) fn held_now(&self) -> impl Iterator<Item = &Sent> {
        self.held.values()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ends() -> (SocketAddr, SocketAddr) {
        ("10.0.0.1:1".parse().unwrap(), "10.0.0.2:2".parse().unwrap())
    }

    fn send(messages: &mut Messages, verb: &'static str, msg: u64, at_ns: u64) {
        let message = Message {
            verb,
            msg,
            ends: Some(ends()),
            data: Some(b"x"),
            least_ns: Some(1_000),
        };
        messages.sent(&message, at_ns);
    }

    fn deliver(messages: &mut Messages, verb: &'static str, msg: u64, seq: u64) -> u8 {
        let message = Message {
            verb,
            msg,
            ends: None,
            data: None,
            least_ns: None,
        };
        messages.delivered(&message, seq)
    }

    #[test]
    fn a_datagram_delivered_after_a_later_one_names_it() {
        let mut m = Messages::default();
        send(&mut m, "send udp", 38, 212);
        send(&mut m, "send udp", 39, 220);
        deliver(&mut m, "deliver udp", 39, 3);
        assert!(m.overtaken_by(39, 3).is_none());
        deliver(&mut m, "deliver udp", 38, 4);
        assert_eq!(m.overtaken_by(38, 4), Some((39, 220)));
    }

    #[test]
    fn a_send_whose_place_a_later_one_took_is_forgotten() {
        let mut m = Messages::default();
        send(&mut m, "send udp", 3, 10);
        let later = 3 + SENDS_MAX as u64;
        send(&mut m, "send udp", later, 20);
        assert!(m.get(3).is_none(), "its place is the later send's");
        assert_eq!(m.get(later).map(|s| s.first_ns), Some(20));
        // A delivery of the forgotten one is the first copy, and leaves the
        // later send's entry alone.
        assert_eq!(deliver(&mut m, "deliver udp", 3, 1), 1);
        assert_eq!(m.get(later).map(|s| s.delivered), Some(0));
        // A gap in the numbers (a datagram dropped at once) is no send.
        send(&mut m, "send udp", later + 2, 30);
        assert!(m.get(later + 1).is_none());
    }

    #[test]
    fn a_duplicate_is_the_second_copy() {
        let mut m = Messages::default();
        m.text("dup udp #5 a:1>b:2", 10);
        send(&mut m, "send udp", 5, 10);
        assert_eq!(deliver(&mut m, "deliver udp", 5, 1), 1);
        assert_eq!(deliver(&mut m, "deliver udp", 5, 2), 2);
        assert_eq!(m.get(5).map(|s| s.copies), Some(2));
    }

    #[test]
    fn a_held_message_is_held_until_it_is_sent_again_and_kept_past_the_ring() {
        let mut m = Messages::default();
        m.held(7, ends(), b"ADD 1", 100);
        m.text("hold tcp-data #7 a:1>b:2", 100);
        assert_eq!(m.held_now().count(), 1);
        for msg in 8..8 + 2 * SENDS_MAX as u64 {
            send(&mut m, "send", msg, 200);
        }
        send(&mut m, "send", 7, 500);
        assert_eq!(m.held_now().count(), 0);
        assert_eq!(deliver(&mut m, "deliver", 7, 9), 1);
        let sent = m.get(7).expect("kept for its delivery's line");
        assert_eq!((sent.first_ns, sent.held_ns), (100, Some(100)));
        assert_eq!(sent.head(), b"x");
        assert!(m.get(8).is_none(), "the ring forgets the oldest sends");
    }
}
