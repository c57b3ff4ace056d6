//! The simulator's own real files: while [`outside`] runs, libc's file
//! calls reach the real filesystem whatever the path. The trace, a decision
//! file and mirrored inputs are written and read this way, never user code.
//!
//! The core owns the flag; the OS layer (`sim-os`), which redirects file
//! calls into the simulation, reads it through [`is_outside`].

use std::cell::Cell;

thread_local! {
    /// Set while the simulator itself touches the real filesystem.
    static OUTSIDE: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with libc's file calls going to the real filesystem.
pub fn outside<R>(f: impl FnOnce() -> R) -> R {
    let previous = OUTSIDE.with(|o| o.replace(true));
    let result = f();
    OUTSIDE.with(|o| o.set(previous));
    result
}

/// Whether the calling code is inside [`outside`] (also while the thread
/// is being torn down, when no simulation can answer).
pub fn is_outside() -> bool {
    OUTSIDE.try_with(Cell::get).unwrap_or(true)
}
