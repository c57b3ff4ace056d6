//! Properties: assertions a sweep counts, shaped like Antithesis's SDK, so
//! code moves between the two.
//!
//! - [`assert_always!`](crate::sim::assert_always)`(cond, "message")`: the
//!   condition holds every time, and some run reaches it;
//! - [`assert_always_or_unreachable!`](crate::sim::assert_always_or_unreachable):
//!   the same, and no run need reach it;
//! - [`assert_sometimes!`](crate::sim::assert_sometimes)`(cond, "message")`:
//!   the condition holds at least once in a sweep;
//! - [`assert_reachable!`](crate::sim::assert_reachable)`("message")`: some
//!   run reaches it;
//! - [`assert_unreachable!`](crate::sim::assert_unreachable)`("message")`: no
//!   run reaches it.
//!
//! Each takes an optional last argument of details (any `Debug` value),
//! shown when the assertion fails a run. A broken `always` or a reached
//! `unreachable` fails the run at once with class `assertion`, naming the
//! message, the details and the call site. Every call site is known before
//! the run, so `cargo sim test --seeds N` lists, per test, every property
//! with the runs that satisfied it, and fails the sweep when an `always`,
//! a `sometimes` or a `reachable` was never satisfied (`--allow-unreached`
//! lets it pass). The message is a string literal: it names the property.
//!
//! Outside a run an assertion does nothing. Code that also builds on the
//! real tokio uses the workspace's `sim-assert` crate, whose macros expand
//! to these in a simulation build and to nothing otherwise.
//!
//! # Examples
//!
//! ```
//! use std::time::Duration;
//!
//! #[tokio::main(flavor = "current_thread")]
//! async fn main() {
//!     let mut retries = 0;
//!     for attempt in 0..3u32 {
//!         let timeout_ms = tokio::sim::rng("timeouts").range(1..20);
//!         let reply = tokio::time::timeout(
//!             Duration::from_millis(timeout_ms),
//!             tokio::time::sleep(Duration::from_millis(10)),
//!         )
//!         .await;
//!         tokio::sim::assert_sometimes!(reply.is_err(), "a request timed out");
//!         tokio::sim::assert_always!(attempt < 3, "at most three attempts", attempt);
//!         if reply.is_ok() {
//!             break;
//!         }
//!         retries += 1;
//!         tokio::sim::assert_reachable!("a request was retried");
//!     }
//!     assert!(retries <= 3);
//! }
//! ```

pub use sim_runtime::property::{Kind, Site};

/// One evaluation of `site` (what the macros call): `holds` is the
/// condition, `details` renders the details for a failure report.
#[inline]
pub fn observe(site: &'static Site, holds: bool, details: Option<&dyn Fn() -> String>) {
    site.observe(holds, details);
}

/// The expansion every assertion macro shares: a static site, registered
/// before `main`, and one evaluation.
#[doc(hidden)]
#[macro_export]
macro_rules! __sim_property {
    ($kind:ident, $holds:expr, $message:expr $(, $details:expr)?) => {{
        static SITE: $crate::sim::property::Site = $crate::sim::property::Site::new(
            $crate::sim::property::Kind::$kind,
            $message,
            ::core::file!(),
            ::core::line!(),
            ::core::column!(),
        );
        // Registered before `main` (a constructor, as the `ctor` crate
        // makes), so a sweep names the sites no run reaches.
        #[cfg(target_os = "linux")]
        {
            #[used]
            #[link_section = ".init_array"]
            static REGISTER: extern "C" fn() = {
                extern "C" fn register() {
                    SITE.register();
                }
                register
            };
        }
        let holds: bool = $holds;
        $crate::sim::property::observe(
            &SITE,
            holds,
            $crate::__sim_property!(@details $($details)?),
        );
    }};
    (@details) => {
        ::core::option::Option::None
    };
    (@details $details:expr) => {
        ::core::option::Option::Some(
            (&|| ::std::format!("{:?}", $details))
                as &dyn ::core::ops::Fn() -> ::std::string::String,
        )
    };
}

/// Asserts that `cond` holds every time, and that some run of a sweep gets
/// here. See [the module](crate::sim::property).
#[doc(hidden)]
#[macro_export]
macro_rules! __sim_assert_always {
    ($cond:expr, $message:expr $(, $details:expr)? $(,)?) => {
        $crate::__sim_property!(Always, $cond, $message $(, $details)?)
    };
}

/// Asserts that `cond` holds every time this is reached (which may be
/// never). See [the module](crate::sim::property).
#[doc(hidden)]
#[macro_export]
macro_rules! __sim_assert_always_or_unreachable {
    ($cond:expr, $message:expr $(, $details:expr)? $(,)?) => {
        $crate::__sim_property!(AlwaysOrUnreachable, $cond, $message $(, $details)?)
    };
}

/// Asserts that `cond` holds at least once in a sweep. See [the
/// module](crate::sim::property).
#[doc(hidden)]
#[macro_export]
macro_rules! __sim_assert_sometimes {
    ($cond:expr, $message:expr $(, $details:expr)? $(,)?) => {
        $crate::__sim_property!(Sometimes, $cond, $message $(, $details)?)
    };
}

/// Asserts that some run of a sweep gets here. See [the
/// module](crate::sim::property).
#[doc(hidden)]
#[macro_export]
macro_rules! __sim_assert_reachable {
    ($message:expr $(, $details:expr)? $(,)?) => {
        $crate::__sim_property!(Reachable, true, $message $(, $details)?)
    };
}

/// Asserts that no run gets here. See [the module](crate::sim::property).
#[doc(hidden)]
#[macro_export]
macro_rules! __sim_assert_unreachable {
    ($message:expr $(, $details:expr)? $(,)?) => {
        $crate::__sim_property!(Unreachable, true, $message $(, $details)?)
    };
}
