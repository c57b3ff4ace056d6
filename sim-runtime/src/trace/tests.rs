use super::*;

#[test]
fn equal_events_hash_equal_and_labels_matter() {
    let mut a = Trace::new(None);
    let mut b = Trace::new(None);
    for t in [&mut a, &mut b] {
        t.record(0, EventKind::Spawn, 1, Label::Str("x"));
        t.record(5, EventKind::Poll, 1, Label::None);
    }
    assert_eq!(a.hash_hex(), b.hash_hex());
    a.record(6, EventKind::Wake, 1, Label::Str("ab"));
    b.record(6, EventKind::Wake, 1, Label::Str("ac"));
    assert_ne!(a.hash_hex(), b.hash_hex());
    assert_eq!(a.len(), 3);
}

/// The last events are decoded from the hash's own bytes, across a
/// chunk boundary, with every label form.
#[test]
fn recent_lines_decode_the_last_events() {
    let mut t = Trace::new(None);
    let a: SocketAddr = "10.0.0.2:49152".parse().unwrap();
    let b: SocketAddr = "10.0.0.3:7".parse().unwrap();
    t.name_address(a.ip(), "client");
    // Enough events to flush a few chunks first.
    for i in 0..3_000u64 {
        t.record(i * 10, EventKind::Poll, i % 7, Label::None);
    }
    let base = 30_000;
    t.record(base, EventKind::Wake, 3, Label::Str(LONG_LABEL));
    t.record(base + 5, EventKind::Note, 0, Label::Num(base + 5));
    t.record(
        base + 5,
        EventKind::TimerSet,
        2,
        Label::Timer {
            id: 9,
            at_ns: base + 1_000,
        },
    );
    let message = Message {
        verb: "send",
        msg: 4,
        ends: Some((a, b)),
        data: Some(b"hello"),
        least_ns: None,
    };
    t.record(base + 6, EventKind::Note, 2, Label::Msg(&message));
    let lines = t.recent_lines();
    assert_eq!(lines.len(), 16);
    assert_eq!(lines[11], "#2999 0.000029990s poll task 3 -");
    assert_eq!(
        lines[12],
        "#3000 0.000030000s wake task 3 a label longer than a report shows, which it cuts at a \
         space and never inside an address such as... (161 bytes)"
    );
    assert_eq!(lines[13], "#3001 0.000030005s note task 0 30005");
    assert_eq!(
        lines[14],
        "#3002 0.000030005s timer-set task 2 timer=9 at=31000"
    );
    assert_eq!(
        lines[15],
        format!(
            "#3003 0.000030006s note task 2 send #4 client:49152>10.0.0.3:7 len=5 digest={:08x}",
            payload_digest(b"hello")
        )
    );
}

#[test]
fn trace_paths_follow_the_documented_rule() {
    assert_eq!(trace_path("t.txt", None, 1), PathBuf::from("t.txt"));
    assert_eq!(trace_path("t.txt", None, 2), PathBuf::from("t.txt.2"));
    assert_eq!(
        trace_path("t.txt", Some("tests::echo"), 1),
        PathBuf::from("t.txt.tests__echo")
    );
    assert_eq!(
        trace_path("out/{name}.trace", Some("a::b"), 3),
        PathBuf::from("out/a__b.trace.3")
    );
}

#[test]
fn numbers_print_in_decimal() {
    let mut out = Vec::new();
    push_u64(&mut out, 0);
    out.push(b' ');
    push_u64(&mut out, u64::MAX);
    assert_eq!(out, b"0 18446744073709551615");
}

/// A label longer than a report shows: cut at a space before the address.
const LONG_LABEL: &str = "a label longer than a report shows, which it cuts at a space and never \
    inside an address such as 127.0.0.1:49159>127.0.0.1:4000 tcp-connect with more words after";
