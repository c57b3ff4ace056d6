//! `tokio::sim::buggify()`: FoundationDB's BUGGIFY. Service code marks a
//! place where it may misbehave on purpose (a short read, a delay, an early
//! error path). In each run, each such site is enabled with probability
//! 1/4, drawn from the seed; an enabled site fires with probability 1/4
//! each time it is reached. Every firing is a note in the trace.
//!
//! Plain builds compile against the real tokio, which has no such function,
//! so give your crate a macro that is `false` there at no cost:
//!
//! ```
//! macro_rules! buggify {
//!     () => {{
//!         #[cfg(simulation)]
//!         let fired = tokio::sim::buggify();
//!         #[cfg(not(simulation))]
//!         let fired = false;
//!         fired
//!     }};
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! if buggify!() {
//!     // Take the slow path that production rarely sees.
//!     tokio::time::sleep(std::time::Duration::from_millis(500)).await;
//! }
//! # }
//! ```

use std::collections::BTreeMap;
use std::panic::Location;
use std::rc::Rc;

/// Whether each site is enabled in this run, by `file:line:column`.
#[derive(Default)]
struct Sites(std::cell::RefCell<BTreeMap<String, bool>>);

/// One in four sites is enabled per run; an enabled site fires one time in
/// four (FoundationDB's defaults).
const ENABLED_ONE_IN: u64 = 4;
const FIRES_ONE_IN: u64 = 4;

/// Whether this BUGGIFY site fires now (see the module docs). `false`
/// outside a simulation run.
///
/// # Examples
///
/// A site that fires in some runs and not others, each time the same for a
/// seed:
///
/// ```
/// #[tokio::main(flavor = "current_thread")]
/// async fn main() {
///     let mut fired = 0;
///     for _ in 0..100 {
///         if tokio::sim::buggify() {
///             fired += 1;
///         }
///     }
///     // Disabled in three runs of four; one reach in four fires otherwise.
///     assert!(fired == 0 || (5..60).contains(&fired), "{fired}");
/// }
/// ```
#[track_caller]
pub fn buggify() -> bool {
    let site = Location::caller();
    sim_runtime::context::with_current(|core| {
        let name = format!("{}:{}:{}", site.file(), site.line(), site.column());
        let stream = format!("buggify {name}");
        let sites: Rc<Sites> = core.extension(Sites::default);
        let enabled = *sites
            .0
            .borrow_mut()
            .entry(name.clone())
            .or_insert_with(|| core.stream_below(&stream, ENABLED_ONE_IN) == 0);
        let fires = enabled && core.stream_below(&stream, FIRES_ONE_IN) == 0;
        if fires {
            core.trace(
                sim_runtime::EventKind::Note,
                core.current_task(),
                sim_runtime::Label::Str(&format!("buggify {name}")),
            );
        }
        fires
    })
    .unwrap_or(false)
}
