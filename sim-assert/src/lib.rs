//! `tokio::sim`'s properties for code that also builds on the real tokio.
//!
//! In a simulation build (`cargo sim`, which sets `--cfg simulation`) each
//! macro is the `tokio::sim` assertion of the same name: counted per run,
//! listed by a sweep, failing the run when an `always` breaks. In a plain
//! build it is nothing: the condition and the details are type-checked
//! (so a variable used only in an assertion is not unused) and never
//! evaluated. So service code asserts without a `cfg` at each call site:
//!
//! ```
//! fn take(queue: &mut Vec<u32>) -> Option<u32> {
//!     sim_assert::assert_sometimes!(queue.len() > 8, "the queue backed up", queue.len());
//!     let job = queue.pop();
//!     sim_assert::assert_always!(queue.len() < 1_000, "the queue is bounded");
//!     if job.is_none() {
//!         sim_assert::assert_reachable!("a worker found the queue empty");
//!     }
//!     job
//! }
//! assert_eq!(take(&mut vec![1, 2]), Some(2));
//! ```
//!
//! The crate using these needs `tokio` as a dependency (the facade stands
//! in for it in a simulation build). See `tokio::sim::property` for what
//! each kind means to a sweep.

#![no_std]

/// `assert_always!(cond, "message" [, details])`: `cond` holds every time,
/// and some run of a sweep gets here.
#[macro_export]
macro_rules! assert_always {
    ($cond:expr, $message:expr $(, $details:expr)? $(,)?) => {{
        #[cfg(simulation)]
        ::tokio::sim::assert_always!($cond, $message $(, $details)?);
        #[cfg(not(simulation))]
        $crate::__unevaluated!($cond, $message $(, $details)?);
    }};
}

/// `assert_always_or_unreachable!(cond, "message" [, details])`: `cond`
/// holds every time this is reached, which may be never.
#[macro_export]
macro_rules! assert_always_or_unreachable {
    ($cond:expr, $message:expr $(, $details:expr)? $(,)?) => {{
        #[cfg(simulation)]
        ::tokio::sim::assert_always_or_unreachable!($cond, $message $(, $details)?);
        #[cfg(not(simulation))]
        $crate::__unevaluated!($cond, $message $(, $details)?);
    }};
}

/// `assert_sometimes!(cond, "message" [, details])`: `cond` holds at least
/// once in a sweep.
#[macro_export]
macro_rules! assert_sometimes {
    ($cond:expr, $message:expr $(, $details:expr)? $(,)?) => {{
        #[cfg(simulation)]
        ::tokio::sim::assert_sometimes!($cond, $message $(, $details)?);
        #[cfg(not(simulation))]
        $crate::__unevaluated!($cond, $message $(, $details)?);
    }};
}

/// `assert_reachable!("message" [, details])`: some run of a sweep gets
/// here.
#[macro_export]
macro_rules! assert_reachable {
    ($message:expr $(, $details:expr)? $(,)?) => {{
        #[cfg(simulation)]
        ::tokio::sim::assert_reachable!($message $(, $details)?);
        #[cfg(not(simulation))]
        $crate::__unevaluated!(true, $message $(, $details)?);
    }};
}

/// `assert_unreachable!("message" [, details])`: no run gets here.
#[macro_export]
macro_rules! assert_unreachable {
    ($message:expr $(, $details:expr)? $(,)?) => {{
        #[cfg(simulation)]
        ::tokio::sim::assert_unreachable!($message $(, $details)?);
        #[cfg(not(simulation))]
        $crate::__unevaluated!(true, $message $(, $details)?);
    }};
}

/// A plain build's assertion: its parts type-checked in a closure that is
/// never called, so nothing is evaluated and nothing is left unused.
#[doc(hidden)]
#[macro_export]
macro_rules! __unevaluated {
    ($cond:expr, $message:expr $(, $details:expr)?) => {{
        let _ = || {
            let _: bool = $cond;
            let _: &str = $message;
            $(let _ = &$details;)?
        };
    }};
}
