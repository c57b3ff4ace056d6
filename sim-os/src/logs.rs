//! The service's `tracing` events in the trace file (`SIM_TRACE_LOGS`).
//!
//! With `SIM_TRACE_LOGS=<level>` (`error`, `warn`, `info`, `debug` or
//! `trace`) and a trace file (`SIM_TRACE`, or a sweep's `--timeline`), a
//! run installs a `tracing` dispatcher on its thread for as long as it
//! runs. Each event at that level or above becomes a line of the trace file,
//! at its virtual time, on its task's host:
//!
//! ```text
//! - 1204519000 1.204519000s n2 log 7:replicate INFO kv::node: appended index=4 term=2
//! ```
//!
//! A log line's sequence number is `-`: it is not an event of the run, and
//! the hash does not cover it, so turning logs on, or adding a log line to
//! the service, changes no hash. The dispatcher that was in place before
//! (a `tracing_subscriber::fmt()` the test installed, say) still gets every
//! span and event, so the service's own log output is unchanged.

use std::fmt::Write as _;
use tracing_core::field::{Field, Visit};
use tracing_core::span::{Attributes, Current, Id, Record};
use tracing_core::subscriber::{Interest, Subscriber};
use tracing_core::{Dispatch, Event, Level, Metadata};

/// The level of the service's `tracing` events written to the trace file.
pub const TRACE_LOGS_VAR: &str = sim_runtime::settings::TRACE_LOGS.name;

/// Parses `SIM_TRACE_LOGS`.
///
/// # Errors
/// A message naming the variable, its value and the accepted ones.
pub fn parse_level(value: &str) -> Result<Level, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "error" => Ok(Level::ERROR),
        "warn" => Ok(Level::WARN),
        "info" | "1" => Ok(Level::INFO),
        "debug" => Ok(Level::DEBUG),
        "trace" => Ok(Level::TRACE),
        _ => Err(format!(
            "sim: {TRACE_LOGS_VAR}={value:?} is not a level: expected error, warn, info, debug \
             or trace (such as {TRACE_LOGS_VAR}=debug)"
        )),
    }
}

/// The level `SIM_TRACE_LOGS` asks for, if any.
///
/// # Panics
/// When the value is not a level: the message names it.
pub fn level_from_env() -> Option<Level> {
    let value = sim_runtime::settings::TRACE_LOGS
        .value()
        .filter(|v| !v.is_empty())?;
    match parse_level(&value) {
        Ok(level) => Some(level),
        Err(message) => panic!("{message}"),
    }
}

/// Writes events into the current run's trace, and passes everything on
/// to the dispatcher that was the default before.
struct TraceLogs {
    level: Level,
    inner: Dispatch,
}

impl TraceLogs {
    fn ours(&self, metadata: &Metadata<'_>) -> bool {
        // Levels order by verbosity: TRACE is the greatest.
        *metadata.level() <= self.level
    }
}

/// Gathers an event's message and fields as text.
struct Text {
    message: String,
    fields: String,
}

impl Visit for Text {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            let _ = write!(self.fields, " {}={value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            let _ = write!(self.fields, " {}={value}", field.name());
        }
    }
}

impl Subscriber for TraceLogs {
    fn register_callsite(&self, metadata: &'static Metadata<'static>) -> Interest {
        let inner = self.inner.register_callsite(metadata);
        if self.ours(metadata) && !inner.is_always() {
            // Asked again at each event: the interest is shared by every
            // thread's dispatchers.
            Interest::sometimes()
        } else {
            inner
        }
    }

    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        self.ours(metadata) || self.inner.enabled(metadata)
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        self.inner.new_span(span)
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        self.inner.record(span, values);
    }

    fn record_follows_from(&self, span: &Id, follows: &Id) {
        self.inner.record_follows_from(span, follows);
    }

    fn event(&self, event: &Event<'_>) {
        let metadata = event.metadata();
        if self.ours(metadata) {
            let mut text = Text {
                message: String::new(),
                fields: String::new(),
            };
            event.record(&mut text);
            let line = format!(
                "{} {}: {}{}",
                metadata.level(),
                metadata.target(),
                text.message,
                text.fields
            );
            sim_runtime::context::with_current(|core| core.trace_log(&line));
        }
        if self.inner.enabled(metadata) {
            self.inner.event(event);
        }
    }

    fn enter(&self, span: &Id) {
        self.inner.enter(span);
    }

    fn exit(&self, span: &Id) {
        self.inner.exit(span);
    }

    fn clone_span(&self, id: &Id) -> Id {
        self.inner.clone_span(id)
    }

    fn try_close(&self, id: Id) -> bool {
        self.inner.try_close(id)
    }

    fn current_span(&self) -> Current {
        self.inner.current_span()
    }
}

/// The installed dispatcher of one run: the previous one comes back when
/// it drops.
pub struct Installed(#[allow(dead_code)] tracing_core::dispatcher::DefaultGuard);

/// Installs the trace's dispatcher on this thread, at `level`.
pub fn install(level: Level) -> Installed {
    let inner = tracing_core::dispatcher::get_default(Dispatch::clone);
    let dispatch = Dispatch::new(TraceLogs { level, inner });
    Installed(tracing_core::dispatcher::set_default(&dispatch))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_parse_and_a_bad_one_names_the_variable() {
        assert_eq!(parse_level("debug").unwrap(), Level::DEBUG);
        assert_eq!(parse_level(" WARN ").unwrap(), Level::WARN);
        assert_eq!(parse_level("1").unwrap(), Level::INFO);
        let err = parse_level("loud").unwrap_err();
        assert!(err.contains("SIM_TRACE_LOGS=\"loud\""), "{err}");
    }
}
