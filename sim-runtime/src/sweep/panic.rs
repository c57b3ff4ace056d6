//! The panic hook: a failure's class, its seed and replay line, the last
//! events of the run, and the explanation of any refused escape.

use super::record::{reporting, write_record, Record};
use super::state::{ESCAPES, LAST_PANIC, LAST_SEED, SEED_LINE_SHOWN, SWEEP_THREAD};
use crate::failure::FailureClass;
use std::cell::Cell;
use std::sync::Once;

/// The text of a panic's payload (its message, for `&str` and `String`).
pub fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "Box<dyn Any>".to_string()
    }
}

/// The failure of this thread: its class and a message that carries the
/// explanation of any refused escape.
pub(crate) fn classify(message: String) -> (FailureClass, String) {
    let class = crate::failure::take_failure_class();
    let escapes = ESCAPES.with(|e| e.borrow().clone());
    match class {
        _ if message.contains("sim: escape refused") => (FailureClass::Escape, message),
        // A refused escape is the cause of what failed after it (a deadlock
        // on an answer the kernel's side never sent, a refused connect).
        _ if !escapes.is_empty() => {
            let mut message = message;
            for escape in escapes {
                message.push_str("\n\n");
                message.push_str(&escape);
            }
            (FailureClass::Escape, message)
        }
        Some(class) => (class, message),
        None => (FailureClass::Panic, message),
    }
}

/// A panic's first line and message: where it panicked, or, for a
/// failure the simulator raises (a checker, a liveness property, a
/// deadlock, a limit), its class: the simulator's own line would only
/// mislead.
fn headline(
    info: &std::panic::PanicHookInfo<'_>,
    name: &str,
    raised: Option<FailureClass>,
) -> String {
    match raised {
        Some(class) => format!(
            "thread '{name}' failed ({}):\n{}",
            class.as_str(),
            payload_text(info.payload())
        ),
        None => {
            let location = info
                .location()
                .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()))
                .unwrap_or_else(|| "an unknown place".to_string());
            format!(
                "thread '{name}' panicked at {location}:\n{}",
                payload_text(info.payload())
            )
        }
    }
}

/// What happened just before, inside a run; after one, how the last run
/// on this thread ended (empty when nothing ran): the story (the last
/// notes, the earlier faults of the failing host and its peers, the held
/// messages, the crashes) and the last events. `told` is the failure's
/// own text: a report that already tells the story (a checker's) gets only
/// the events.
fn recent_events_text(told: &str) -> String {
    let (story, recent, when) = match crate::executor::context::with_current(|core| {
        (core.story_report(), core.recent_events())
    }) {
        Some((story, recent)) => (story, recent, "of the run before it"),
        None => match crate::executor::context::alive().last() {
            Some(core) => (
                core.story_report(),
                core.recent_events(),
                "of the last run before it",
            ),
            None => (
                crate::summary::last_run_story(),
                crate::summary::last_run_recent_events(),
                "of the last run, as it ended",
            ),
        },
    };
    let mut text = String::new();
    if !story.is_empty() && !told.contains(STORY_HEADING) {
        text.push('\n');
        text.push_str(story.trim_end());
    }
    if !recent.is_empty() {
        text.push_str(&format!(
            "\nThe last events {when}:\n  {}",
            recent.join("\n  ")
        ));
    }
    text
}

/// The first line of a story's report (see `Core::story_report`).
const STORY_HEADING: &str = "What happened before it:";

pub(crate) fn install_panic_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            crate::property::fork::note_panic();
            let thread = std::thread::current();
            let raised = crate::failure::failure_class();
            let mut text = headline(info, thread.name().unwrap_or("<unnamed>"), raised);
            let recent_text = recent_events_text(&text);
            // In a sweep, only a process's first failing seed shows the
            // default report (with a backtrace under RUST_BACKTRACE): the
            // sweep's report shows one failure's output, and symbolizing a
            // backtrace for every failing seed made failing seeds many times
            // slower than passing ones.
            static DEFAULT_SHOWN: std::sync::atomic::AtomicBool =
                std::sync::atomic::AtomicBool::new(false);
            // A harness test's forked branch run that panics is replayed
            // from the start for its report (`property::fork`): no
            // backtrace to symbolize here.
            let quiet = (SWEEP_THREAD.with(Cell::get)
                && DEFAULT_SHOWN.swap(true, std::sync::atomic::Ordering::Relaxed))
                || crate::property::fork::judged_by_panics();
            if raised.is_some() || quiet {
                eprintln!("{text}");
            } else {
                previous(info);
            }
            text.push_str(&recent_text);
            if SWEEP_THREAD.with(Cell::get) {
                // The sweep's record carries it, with the seed; the output
                // (above) goes to the runner's log of this process.
                LAST_PANIC.with(|p| *p.borrow_mut() = Some(text));
                return;
            }
            let Some(seed) = LAST_SEED.with(Cell::get) else {
                record_outside_runs(info, &thread, text);
                return;
            };
            // The failure report of a test shows what it printed: say which
            // seed failed, and why an escape was refused, right there.
            let escapes = ESCAPES.with(|e| e.borrow().clone());
            for escape in &escapes {
                eprintln!("{escape}");
            }
            if !SEED_LINE_SHOWN.with(|s| s.replace(true)) {
                let test = name_of_test(&thread);
                eprintln!(
                    "sim: {}: seed {seed:#x}; replay: {}",
                    test.unwrap_or("main"),
                    crate::seed::replay_command(seed, test)
                );
            }
            if !recent_text.is_empty() {
                eprintln!("{}", recent_text.trim_start());
            }
            if reporting() {
                // A refused escape is the cause of what failed after it.
                let class = if escapes.is_empty() {
                    crate::failure::failure_class().unwrap_or(FailureClass::Panic)
                } else {
                    FailureClass::Escape
                };
                let mut message = text;
                for escape in &escapes {
                    message.push_str("\n\n");
                    message.push_str(escape);
                }
                write_record(&Record::Panic {
                    seed,
                    class,
                    message,
                });
            }
        }));
    });
}

/// A panic on a thread that ran no simulation. A refused escape (a
/// runtime handle used on a real thread) is the cause of whatever the run
/// it escaped from does next, so the seed's record says so, whichever
/// thread's failure comes first. A test thread's own failure (an assertion
/// after its runs, which ran on threads of their own) is what failed the
/// test: its record comes after theirs, and the runner reports the last.
/// A panic that only passes on another thread's (`join().unwrap()`, whose
/// message is the payload's `Any { .. }`) says nothing of its own: the
/// other thread's record stands.
fn record_outside_runs(
    info: &std::panic::PanicHookInfo<'_>,
    thread: &std::thread::Thread,
    text: String,
) {
    let payload = payload_text(info.payload());
    let escape = payload.contains("sim: escape refused");
    let own_failure = name_of_test(thread).is_some() && !payload.contains("Any {");
    if !(escape || own_failure) || !reporting() {
        return;
    }
    let seed = crate::settings::SEED
        .value()
        .and_then(|v| crate::config::parse_seed(&v).ok());
    if let Some(seed) = seed {
        let class = if escape {
            FailureClass::Escape
        } else {
            FailureClass::Panic
        };
        write_record(&Record::Panic {
            seed,
            class,
            message: text,
        });
    }
}

pub(crate) fn name_of_test(thread: &std::thread::Thread) -> Option<&str> {
    thread.name().filter(|name| *name != "main")
}
