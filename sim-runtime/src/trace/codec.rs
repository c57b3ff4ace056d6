//! The hash's encoding of events: compact bytes (LEB128 task and time
//! delta), written straight into the pending chunk, and read back for the
//! last events of a report.

use super::event::EventKind;
use super::text::push_message_text;
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};

/// Decodes the events of one chunk of the hash's encoding (see
/// `Trace::record`), appending `(seq, ns, kind, task, label text)` for
/// those numbered `from_seq` or later (the ones before are read past,
/// their labels never made). `start` is the sequence number and time
/// before the chunk's first event. Returns the sequence number after the
/// chunk's last event. Stops at anything it cannot read (it never can, for
/// bytes the trace wrote).
pub(crate) fn decode_events(
    bytes: &[u8],
    start: (u64, u64),
    names: &BTreeMap<IpAddr, Box<str>>,
    from_seq: u64,
    out: &mut Vec<(u64, u64, EventKind, u64, String, bool)>,
) -> u64 {
    let mut reader = Reader { bytes, at: 0 };
    let (mut seq, mut now_ns) = start;
    // Bounded by the chunk's length: every event reads at least one byte.
    while reader.at < bytes.len() {
        let render = seq >= from_seq;
        let Some(event) = reader.event(&mut now_ns, names, render) else {
            return seq;
        };
        if render {
            out.push((seq, now_ns, event.0, event.1, event.2, event.3));
        }
        seq += 1;
    }
    seq
}

/// Reads the hash's encoding back (for reports).
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    pub(crate) fn byte(&mut self) -> Option<u8> {
        let byte = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(byte)
    }

    pub(crate) fn take(&mut self, n: usize) -> Option<&[u8]> {
        let slice = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(slice)
    }

    pub(crate) fn varint(&mut self) -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.byte()?;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }

    pub(crate) fn text(&mut self, len: usize) -> Option<String> {
        Some(String::from_utf8_lossy(self.take(len)?).into_owned())
    }

    pub(crate) fn addr(&mut self) -> Option<SocketAddr> {
        let ip = match self.byte()? {
            4 => IpAddr::from(<[u8; 4]>::try_from(self.take(4)?).ok()?),
            6 => IpAddr::from(<[u8; 16]>::try_from(self.take(16)?).ok()?),
            _ => return None,
        };
        let port = u16::from_le_bytes(self.take(2)?.try_into().ok()?);
        Some(SocketAddr::new(ip, port))
    }

    /// Text of `len` bytes, or, when not `render`ed, nothing (read past).
    fn text_if(&mut self, len: usize, render: bool) -> Option<String> {
        match render {
            true => self.text(len),
            false => self.take(len).map(|_| String::new()),
        }
    }

    /// One event: its kind, task and label text (empty unless `render`);
    /// moves `now_ns` on.
    pub(crate) fn event(
        &mut self,
        now_ns: &mut u64,
        names: &BTreeMap<IpAddr, Box<str>>,
        render: bool,
    ) -> Option<(EventKind, u64, String, bool)> {
        let head = self.byte()?;
        let kind = EventKind::from_code(head >> 3)?;
        let task = self.varint()?;
        *now_ns = now_ns.wrapping_add(self.varint()?);
        let form = head & 7;
        let label = match form {
            0 => String::new(),
            1 => {
                let len = self.varint()? as usize;
                self.text_if(len, render)?
            }
            2 if !render => self.varint().map(|_| String::new())?,
            2 => self.varint()?.to_string(),
            3 => {
                let id = self.varint()?;
                let at_ns = now_ns.wrapping_add(self.varint()?);
                match render {
                    true => format!("timer={id} at={at_ns}"),
                    false => String::new(),
                }
            }
            4 => {
                let verb_len = self.byte()? as usize;
                let verb = self.text_if(verb_len, render)?;
                let msg = self.varint()?;
                let ends = match self.byte()? {
                    0 => None,
                    _ => Some((self.addr()?, self.addr()?)),
                };
                let payload = match self.byte()? {
                    0 => None,
                    _ => {
                        let len = self.varint()? as u32;
                        let digest = u32::from_le_bytes(self.take(4)?.try_into().ok()?);
                        Some((len, digest))
                    }
                };
                if !render {
                    return Some((kind, task, String::new(), false));
                }
                let mut line = Vec::new();
                push_message_text(&mut line, names, &verb, msg, ends, payload);
                String::from_utf8_lossy(&line).into_owned()
            }
            5 => {
                // A spawn: the task's name (its site is in the trace file).
                let len = self.varint()? as usize;
                let name = self.text_if(len, render)?;
                let file_len = self.varint()? as usize;
                self.take(file_len)?;
                self.varint()?;
                self.varint()?;
                name
            }
            _ => return None,
        };
        // Free text is cut for a report; a message's text is shown whole.
        Some((kind, task, label, form != 4))
    }
}

/// The longest verb a message's hash takes (longer ones are cut: verbs are
/// the network's own short words).
pub(crate) const VERB_MAX: usize = 32;

/// The most bytes an event's fixed parts take: the head (21 at most) and a
/// message's parts (97 at most).
pub(crate) const ENCODED_MAX: usize = 128;
// A power of two: a byte's place in the window is a mask.
const _: () = assert!(ENCODED_MAX.is_power_of_two());

/// Writes an event's fixed parts straight into the pending bytes' spare
/// capacity (its first [`ENCODED_MAX`] bytes, reserved first): no buffer
/// to fill and copy. A byte's place is taken modulo the window's size,
/// which the compiler knows in range (no bounds check per byte, every
/// event writes a dozen); `encode_into` asserts that no event wrote past
/// the window, so a wrap could never go unnoticed.
pub(crate) struct Encoder<'a> {
    buf: &'a mut [std::mem::MaybeUninit<u8>; ENCODED_MAX],
    len: usize,
}

impl Encoder<'_> {
    #[inline]
    pub(crate) fn byte(&mut self, byte: u8) {
        self.buf[self.len % ENCODED_MAX].write(byte);
        self.len += 1;
    }

    #[inline]
    pub(crate) fn bytes(&mut self, bytes: &[u8]) {
        let slots = &mut self.buf[self.len..self.len + bytes.len()];
        // SAFETY: `slots` is exactly `bytes.len()` bytes of our own spare
        // buffer (the indexing above checked the bounds), and the source is
        // a shared slice, so the two cannot overlap; writing initialised
        // bytes into `MaybeUninit` slots is always valid. One copy where a
        // loop wrote (and bounds-checked) a byte at a time.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                slots.as_mut_ptr().cast::<u8>(),
                bytes.len(),
            );
        }
        self.len += bytes.len();
    }

    /// `value` in LEB128 (see [`push_varint`]).
    #[inline]
    pub(crate) fn varint(&mut self, mut value: u64) {
        while value >= 0x80 {
            self.byte(value as u8 | 0x80);
            value >>= 7;
        }
        self.byte(value as u8);
    }

    /// An address: a family tag, the address's bytes, the port.
    #[inline]
    pub(crate) fn addr(&mut self, addr: &SocketAddr) {
        match addr.ip() {
            IpAddr::V4(v4) => {
                self.byte(4);
                self.bytes(&v4.octets());
            }
            IpAddr::V6(v6) => {
                self.byte(6);
                self.bytes(&v6.octets());
            }
        }
        self.bytes(&addr.port().to_le_bytes());
    }
}

/// The head of an event's encoding: kind and label form in one byte, the
/// task, the time since the previous event. Always inlined: every event
/// of the run is encoded through it, and as a call it cost as much again.
#[inline(always)]
pub(crate) fn begin_event(
    out: &mut Encoder<'_>,
    last_ns: u64,
    now_ns: u64,
    kind: EventKind,
    form: u8,
    task: u64,
) {
    debug_assert!(now_ns >= last_ns, "virtual time never goes back");
    out.byte(((kind as u8) << 3) | form);
    out.varint(task);
    out.varint(now_ns.wrapping_sub(last_ns));
}

/// Runs `encode` on the spare capacity of `pending` and keeps what it wrote.
#[inline]
pub(crate) fn encode_into(pending: &mut Vec<u8>, encode: impl FnOnce(&mut Encoder<'_>)) {
    pending.reserve(ENCODED_MAX);
    let window = &mut pending.spare_capacity_mut()[..ENCODED_MAX];
    let mut out = Encoder {
        buf: window.try_into().expect("the window is ENCODED_MAX long"),
        len: 0,
    };
    encode(&mut out);
    let written = out.len;
    assert!(
        written <= ENCODED_MAX,
        "an event's fixed parts fit its window"
    );
    // SAFETY: the encoder initialised exactly the first `written` bytes of
    // the spare capacity: each was written once, in order, with `len`
    // counting them (by `byte`, whose mask never wrapped since `written`
    // is within the window, as asserted above, or by `bytes`' copy into a
    // bounds-checked slice of the window).
    unsafe { pending.set_len(pending.len() + written) };
}

/// `value` in LEB128: 7 bits a byte, low first, the top bit set on all
/// but the last.
#[inline]
pub(crate) fn push_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}
