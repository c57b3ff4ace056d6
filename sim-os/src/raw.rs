//! The OS beneath the interposition: what the simulator itself calls past
//! its own definitions of libc's entry points (the `interpose` module).

/// What the monotonic clock reads at virtual time zero: one day, so code
/// that subtracts a few hours from `Instant::now()` does not underflow.
pub const MONOTONIC_ORIGIN_NS: u64 = 86_400 * 1_000_000_000;

/// libc's own `syscall`, past the interposed definition (for the
/// simulator's own futexes and for calls the interposition passes on).
///
/// # Safety
/// As libc's `syscall`.
#[cfg(all(
    simulation,
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
pub(crate) unsafe fn real_syscall(
    number: libc::c_long,
    a1: libc::c_long,
    a2: libc::c_long,
    a3: libc::c_long,
    a4: libc::c_long,
    a5: libc::c_long,
    a6: libc::c_long,
) -> libc::c_long {
    crate::symbols::real!(
        c"syscall",
        fn(
            number: libc::c_long,
            a1: libc::c_long,
            a2: libc::c_long,
            a3: libc::c_long,
            a4: libc::c_long,
            a5: libc::c_long,
            a6: libc::c_long,
        ) -> libc::c_long
    )
}
