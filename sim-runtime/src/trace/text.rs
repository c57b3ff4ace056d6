//! The trace file's text: how a line shows payloads, messages, endpoints
//! and words.

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};

/// ` data="<first bytes, escaped>"`, `...` after it when there is more.
pub(crate) fn push_payload(line: &mut Vec<u8>, data: &[u8]) {
    let shown = data.len().min(trace_bytes());
    push_data(line, &data[..shown], shown < data.len());
}

/// ` data="<head, escaped>"`, and `...` after it when `more` was cut off
/// (the trace's and the story's way of showing a payload).
pub(crate) fn push_data(line: &mut Vec<u8>, head: &[u8], more: bool) {
    line.extend_from_slice(b" data=\"");
    for &b in head {
        match b {
            b'"' => line.extend_from_slice(b"\\\""),
            b'\\' => line.extend_from_slice(b"\\\\"),
            0x20..=0x7e => line.push(b),
            _ => {
                const DIGITS: &[u8; 16] = b"0123456789abcdef";
                line.extend_from_slice(b"\\x");
                line.push(DIGITS[(b >> 4) as usize]);
                line.push(DIGITS[(b & 15) as usize]);
            }
        }
    }
    line.push(b'"');
    if more {
        line.extend_from_slice(b"...");
    }
}

/// A message's text (see [`Message`]), without its payload's bytes.
/// A message's text from its parts (see [`Message`]).
pub(crate) fn push_message_text(
    line: &mut Vec<u8>,
    names: &BTreeMap<IpAddr, Box<str>>,
    verb: &str,
    msg: u64,
    ends: Option<(SocketAddr, SocketAddr)>,
    payload: Option<(u32, u32)>,
) {
    line.extend_from_slice(verb.as_bytes());
    line.extend_from_slice(b" #");
    push_u64(line, msg);
    if let Some((src, dst)) = ends {
        line.push(b' ');
        push_endpoint(line, names, &src);
        line.push(b'>');
        push_endpoint(line, names, &dst);
    }
    if let Some((len, digest)) = payload {
        line.extend_from_slice(b" len=");
        push_u64(line, u64::from(len));
        line.extend_from_slice(b" digest=");
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        for shift in (0..8).rev() {
            line.push(DIGITS[((digest >> (shift * 4)) & 15) as usize]);
        }
    }
}

/// `name:port` for a named host's address, the address as it is otherwise.
pub(crate) fn push_endpoint(
    line: &mut Vec<u8>,
    names: &BTreeMap<IpAddr, Box<str>>,
    addr: &SocketAddr,
) {
    match names.get(&addr.ip()) {
        Some(name) => {
            line.extend_from_slice(name.as_bytes());
            line.push(b':');
            push_u64(line, u64::from(addr.port()));
        }
        None => line.extend_from_slice(addr.to_string().as_bytes()),
    }
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(DIGITS[(byte >> 4) as usize] as char);
        out.push(DIGITS[(byte & 15) as usize] as char);
    }
    out
}
/// How many payload bytes a trace line shows (`SIM_TRACE_BYTES`, default 32).
pub(crate) fn trace_bytes() -> usize {
    static BYTES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *BYTES.get_or_init(|| {
        crate::settings::TRACE_BYTES
            .value()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(32)
    })
}

/// `word` with whitespace as `_`, so a line splits at its spaces.
pub(crate) fn push_word(out: &mut Vec<u8>, word: &str) {
    out.extend(
        word.bytes()
            .map(|b| if b.is_ascii_whitespace() { b'_' } else { b }),
    );
}

pub(crate) fn push_u64(out: &mut Vec<u8>, mut value: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// `text` cut to at most `max` bytes, at a space when there is one in the
/// second half (never inside an address or a word), saying how long it
/// was.
pub fn cut_at_word(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    if let Some(space) = text[..cut].rfind(' ').filter(|&space| space >= max / 2) {
        cut = space;
    }
    format!("{}... ({} bytes)", &text[..cut], text.len())
}
