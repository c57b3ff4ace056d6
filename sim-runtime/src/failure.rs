//! Why a run failed: the classes the runtime and the harness give their
//! failures, and the class of the failure this thread is about to raise.
//!
//! The core sets the class just before it panics (a deadlock, a limit);
//! the sweep (`sweep.rs`, above the core) reads it back when it records the failure.

use std::cell::Cell;

/// Why a run failed. Each class is named in the runner's report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailureClass {
    /// A panic or a failed assertion (also a test that returned an error).
    Panic,
    /// Nothing can ever run again.
    Deadlock,
    /// The virtual clock would pass `SIM_TIME_LIMIT_S`.
    TimeLimit,
    /// More polls than `SIM_STEP_LIMIT`.
    StepLimit,
    /// More polls than `SIM_INSTANT_STEP_LIMIT` with no event between them.
    Livelock,
    /// One poll or one run passed its wall-clock budget.
    Hang,
    /// A refused escape from the simulation (a real thread, descriptor or
    /// file change) preceded the failure.
    Escape,
    /// The process died (an abort, a stack overflow, a signal).
    Crash,
    /// Two runs of one seed gave different traces.
    Nondeterminism,
    /// A harness checker (an invariant) failed.
    Correctness,
    /// A harness liveness property did not hold within its bound.
    Liveness,
    /// An `assert_always!` did not hold, or an `assert_unreachable!` was
    /// reached (`tokio::sim`'s properties).
    Assertion,
    /// A history of client operations is not linearizable, or shows a
    /// transactional anomaly its isolation level forbids, or could not be
    /// checked within its budget (`tokio::sim::history`).
    Consistency,
}

/// Every class, in the order reports list them.
const ALL: [FailureClass; 13] = [
    FailureClass::Panic,
    FailureClass::Deadlock,
    FailureClass::TimeLimit,
    FailureClass::StepLimit,
    FailureClass::Livelock,
    FailureClass::Hang,
    FailureClass::Escape,
    FailureClass::Crash,
    FailureClass::Nondeterminism,
    FailureClass::Correctness,
    FailureClass::Liveness,
    FailureClass::Assertion,
    FailureClass::Consistency,
];

impl FailureClass {
    /// The class's name in records and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureClass::Panic => "panic",
            FailureClass::Deadlock => "deadlock",
            FailureClass::TimeLimit => "time-limit",
            FailureClass::StepLimit => "step-limit",
            FailureClass::Livelock => "livelock",
            FailureClass::Hang => "hang",
            FailureClass::Escape => "escape",
            FailureClass::Crash => "crash",
            FailureClass::Nondeterminism => "nondeterminism",
            FailureClass::Correctness => "correctness",
            FailureClass::Liveness => "liveness",
            FailureClass::Assertion => "assertion",
            FailureClass::Consistency => "consistency",
        }
    }

    /// The class named `name`.
    pub fn parse(name: &str) -> Option<FailureClass> {
        ALL.into_iter().find(|c| c.as_str() == name)
    }
}

thread_local! {
    /// The class the runtime gave its own failure, set just before it panics.
    static FAILURE: Cell<Option<FailureClass>> = const { Cell::new(None) };
}

/// Records the class of a failure the runtime is about to raise as a panic.
pub fn set_failure_class(class: FailureClass) {
    FAILURE.with(|f| f.set(Some(class)));
}

/// The class of the failure being raised on this thread, if the runtime
/// gave it one.
pub fn failure_class() -> Option<FailureClass> {
    FAILURE.with(Cell::get)
}

/// Takes the class of the failure being raised (see [`failure_class`]).
pub fn take_failure_class() -> Option<FailureClass> {
    FAILURE.with(Cell::take)
}
