//! Every message the simulator and its runner give the user begins the
//! same way: `sim: ` (then, for a warning or an error, `warning: ` or
//! `error: `). A message that names a crate or a part first (`sim-net: `,
//! `nemesis: `, `cargo sim: `) or an API (`tokio::sim::now() was called`)
//! is a different style, and fails here. The trace's notes are not
//! messages: the nemesis names itself in them (`nemesis: crash a`), and they
//! are hashed, so they stay as they are.

mod common;

/// The starts of a message in another style.
const OTHER_STYLES: &[&str] = &[
    "\"cargo sim: ",
    "\"sim-net: ",
    "\"sim-fs: ",
    "\"sim-os: ",
    "\"sim-harness: ",
    "\"sim-runtime: ",
    "\"sim-tokio: ",
    "\"nemesis: ",
    "\"tokio::sim::",
];

#[test]
fn every_message_begins_with_the_simulators_prefix() {
    let offences = common::offending_lines(|_, lines, number| {
        // A trace note: the call on its line or the one before.
        let previous = number.checked_sub(1).map_or("", |n| lines[n]);
        let line = lines[number];
        let note = line.contains("note(") || previous.contains("note(");
        !note && OTHER_STYLES.iter().any(|start| line.contains(start))
    });
    assert!(
        offences.is_empty(),
        "begin these messages with `sim: ` (`sim: error: ` for the runner's errors):\n{}",
        offences.join("\n")
    );
}
