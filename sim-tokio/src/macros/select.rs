/// Waits on several futures at once and runs the branch of the first that
/// completes (and matches its pattern); the others are dropped.
///
/// Without `biased;` the branches are polled from a start drawn from the
/// seed, so the tie-break between ready branches varies with the seed and
/// repeats with it. With `biased;` they are polled in order. A branch
/// guarded by `, if cond` is disabled when `cond` is false; `else` runs when
/// every branch is disabled (without it, `select!` panics).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread()
/// #     .enable_all()
/// #     .start_paused(true)
/// #     .build()
/// #     .unwrap()
/// #     .block_on(async {
/// use tokio::time::{sleep, Duration};
/// let out = tokio::select! {
///     _ = sleep(Duration::from_secs(1)) => "slow",
///     v = async { 7 } => if v == 7 { "fast" } else { "wrong" },
/// };
/// assert_eq!(out, "fast");
/// # });
/// ```
#[macro_export]
macro_rules! select {
    ($($tokens:tt)*) => {
        $crate::macros::support::select_impl!($crate; $($tokens)*)
    };
}

/// Runs several futures concurrently on the current task and returns all
/// their outputs as a tuple. Each poll starts one future further on than
/// the last (as in tokio, so none starves the others); with `biased;`, each
/// poll starts at the first.
#[macro_export]
macro_rules! join {
    ($($tokens:tt)*) => {
        $crate::macros::support::join_impl!($crate; $($tokens)*)
    };
}

/// As [`join!`], for futures of `Result`: returns `Ok` of every value, or the
/// first error (the other futures are dropped).
#[macro_export]
macro_rules! try_join {
    ($($tokens:tt)*) => {
        $crate::macros::support::try_join_impl!($crate; $($tokens)*)
    };
}
