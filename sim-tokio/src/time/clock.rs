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
    // The panics are outside the closure, so they point at the caller.
    let state = sim_runtime::context::with_current(|core| {
        let multi = core.flavor() == sim_runtime::Flavor::MultiThread;
        let was_paused = core.is_paused();
        if !multi && !was_paused {
            // Pausing reads the clock, which takes time as any read does:
            // the paused instant is a little after the last read before it.
            core.charge_clock_read();
            core.set_paused(true);
        }
        (multi, was_paused)
    });
    match state {
        None => panic!("time cannot be frozen from outside the Tokio runtime"),
        Some((true, _)) => panic!(
            "`time::pause()` requires the `current_thread` Tokio runtime. This is the \
             default Runtime used by `#[tokio::test]."
        ),
        Some((false, true)) => panic!("time is already frozen"),
        Some((false, false)) => {}
    }
}

/// Resumes time after [`pause`].
///
/// # Panics
/// When time is not paused, or outside a runtime.
#[track_caller]
pub fn resume() {
    let was_paused = sim_runtime::context::with_current(|core| {
        let was_paused = core.is_paused();
        core.set_paused(false);
        was_paused
    });
    match was_paused {
        None => panic!("time cannot be frozen from outside the Tokio runtime"),
        Some(false) => panic!("time is not frozen"),
        Some(true) => {}
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
