use std::time::Duration;

/// Pauses time: from now on `advance` moves the clock by hand. (The virtual
/// clock also moves by itself whenever every task is idle, as a paused
/// tokio clock does.)
///
/// # Panics
/// When time is already paused, on a `multi_thread` runtime, or outside a
/// runtime, as in tokio.
#[track_caller]
pub fn pause() {
    let paused = sim_runtime::context::with_current(|core| {
        if core.flavor() == sim_runtime::Flavor::MultiThread {
            panic!(
                "`time::pause()` requires the `current_thread` Tokio runtime. This is the \
                 default Runtime used by `#[tokio::test]."
            );
        }
        if core.is_paused() {
            panic!("time is already frozen");
        }
        core.set_paused(true);
    });
    if paused.is_none() {
        panic!("time cannot be frozen from outside the Tokio runtime");
    }
}

/// Resumes time after [`pause`].
///
/// # Panics
/// When time is not paused, or outside a runtime.
#[track_caller]
pub fn resume() {
    let resumed = sim_runtime::context::with_current(|core| {
        if !core.is_paused() {
            panic!("time is not frozen");
        }
        core.set_paused(false);
    });
    if resumed.is_none() {
        panic!("time cannot be frozen from outside the Tokio runtime");
    }
}

/// Moves the paused clock forward by `duration`, firing every timer due by
/// then, and yields so the woken tasks run.
///
/// # Panics
/// When time is not paused, or outside a runtime.
pub async fn advance(duration: Duration) {
    let advanced = sim_runtime::context::with_current(|core| {
        if !core.is_paused() {
            panic!("time is not frozen");
        }
        core.advance_clock(duration);
    });
    if advanced.is_none() {
        panic!("time cannot be frozen from outside the Tokio runtime");
    }
    crate::task::yield_now().await;
}
