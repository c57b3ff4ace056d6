//! The clocks: `clock_gettime`, `gettimeofday` and `time` read the virtual
//! clock during a run, and `nanosleep` and `clock_nanosleep` sleep in virtual
//! time on a simulated thread.

use crate::symbols::libc_fn;

/// libc's own `clock_gettime` (the vDSO-backed one), the definition past
/// ours; a raw syscall if there is none (or the lookup finds ours, as in a
/// plain build, where ours does not exist and the name is libc's).
///
/// # Safety
/// `tp` is writable, as `clock_gettime` requires.
unsafe fn real_clock_gettime(clock: libc::clockid_t, tp: *mut libc::timespec) -> libc::c_int {
    let next = libc_fn!(
        c"clock_gettime",
        fn(libc::clockid_t, *mut libc::timespec) -> libc::c_int
    )
    .filter(|f| *f as usize != clock_gettime_address());
    match next {
        Some(f) => f(clock, tp),
        None => libc::syscall(libc::SYS_clock_gettime, clock, tp) as libc::c_int,
    }
}

#[cfg(simulation)]
fn clock_gettime_address() -> usize {
    clock_gettime as *const () as usize
}

#[cfg(not(simulation))]
fn clock_gettime_address() -> usize {
    usize::MAX
}

/// The real clock, in ns.
pub fn real_clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write.
    unsafe { real_clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Which virtual clock a clock id maps to.
#[cfg_attr(not(simulation), allow(dead_code))]
enum Virtual {
    Monotonic,
    Realtime,
    Real,
}

#[cfg_attr(not(simulation), allow(dead_code))]
fn classify(clock: libc::clockid_t) -> Virtual {
    match clock {
        libc::CLOCK_REALTIME | libc::CLOCK_REALTIME_COARSE | libc::CLOCK_TAI | 8 => {
            Virtual::Realtime
        }
        libc::CLOCK_MONOTONIC
        | libc::CLOCK_MONOTONIC_RAW
        | libc::CLOCK_MONOTONIC_COARSE
        | libc::CLOCK_BOOTTIME
        | 9 => Virtual::Monotonic,
        _ => Virtual::Real,
    }
}

/// The virtual reading of `clock` if a run is current, or a runtime built
/// on this thread lives (its clock is the thread's): `None` otherwise.
#[cfg_attr(not(simulation), allow(dead_code))]
fn virtual_ns(clock: libc::clockid_t) -> Option<u64> {
    let kind = classify(clock);
    if let Virtual::Real = kind {
        return None;
    }
    sim_runtime::context::with_thread_clock(|core| {
        core.charge_clock_read();
        match kind {
            Virtual::Monotonic => crate::raw::MONOTONIC_ORIGIN_NS + core.local_now_ns(),
            _ => (core.config().epoch_unix_ns + core.now_ns())
                .saturating_add_signed(core.wall_offset_ns()),
        }
    })
}

#[cfg(simulation)]
pub use overrides::*;

#[cfg(simulation)]
mod overrides {
    use super::*;
    use crate::symbols::real;

    /// libc's `clock_gettime`, virtual during a run.
    ///
    /// # Safety
    /// As libc's: `tp` must be valid to write.
    #[no_mangle]
    pub unsafe extern "C" fn clock_gettime(
        clock: libc::clockid_t,
        tp: *mut libc::timespec,
    ) -> libc::c_int {
        match virtual_ns(clock) {
            Some(ns) => {
                if tp.is_null() {
                    return -1;
                }
                (*tp).tv_sec = (ns / 1_000_000_000) as libc::time_t;
                (*tp).tv_nsec = (ns % 1_000_000_000) as libc::c_long;
                0
            }
            None => real_clock_gettime(clock, tp),
        }
    }

    /// libc's `gettimeofday`, virtual during a run.
    ///
    /// # Safety
    /// As libc's: `tv` must be valid to write or null.
    #[no_mangle]
    pub unsafe extern "C" fn gettimeofday(
        tv: *mut libc::timeval,
        _tz: *mut libc::c_void,
    ) -> libc::c_int {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        clock_gettime(libc::CLOCK_REALTIME, &mut ts);
        if !tv.is_null() {
            (*tv).tv_sec = ts.tv_sec;
            (*tv).tv_usec = (ts.tv_nsec / 1000) as libc::suseconds_t;
        }
        0
    }

    /// libc's `time`, virtual during a run.
    ///
    /// # Safety
    /// As libc's: `t` must be valid to write or null.
    #[no_mangle]
    pub unsafe extern "C" fn time(t: *mut libc::time_t) -> libc::time_t {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        clock_gettime(libc::CLOCK_REALTIME, &mut ts);
        if !t.is_null() {
            *t = ts.tv_sec;
        }
        ts.tv_sec
    }

    /// libc's `nanosleep`: virtual time on a simulated thread.
    ///
    /// # Safety
    /// As libc's.
    #[no_mangle]
    pub unsafe extern "C" fn nanosleep(
        request: *const libc::timespec,
        remain: *mut libc::timespec,
    ) -> libc::c_int {
        if !request.is_null() {
            let r = &*request;
            let ns = r.tv_sec as u64 * 1_000_000_000 + r.tv_nsec as u64;
            if crate::threads::sleep_until(|core| core.now_ns() + ns).is_some()
                || crate::threads::background_sleep(|core| core.now_ns() + ns).is_some()
                || crate::threads::simulator_sleep(|core| core.now_ns() + ns).is_some()
                || crate::threads::idle_sleep(|core| core.now_ns() + ns).is_some()
            {
                if !remain.is_null() {
                    (*remain).tv_sec = 0;
                    (*remain).tv_nsec = 0;
                }
                return 0;
            }
        }
        real!(
            c"nanosleep",
            fn(request: *const libc::timespec, remain: *mut libc::timespec) -> libc::c_int
        )
    }

    /// libc's `clock_nanosleep`: virtual time on a simulated thread.
    ///
    /// # Safety
    /// As libc's.
    #[no_mangle]
    pub unsafe extern "C" fn clock_nanosleep(
        clock: libc::clockid_t,
        flags: libc::c_int,
        request: *const libc::timespec,
        remain: *mut libc::timespec,
    ) -> libc::c_int {
        if !request.is_null() {
            let r = &*request;
            let ns = r.tv_sec as u64 * 1_000_000_000 + r.tv_nsec as u64;
            let absolute = flags & libc::TIMER_ABSTIME != 0;
            let deadline = |core: &sim_runtime::Core| {
                if !absolute {
                    core.now_ns() + ns
                } else if matches!(classify(clock), Virtual::Monotonic) {
                    ns.saturating_sub(crate::raw::MONOTONIC_ORIGIN_NS)
                } else {
                    ns.saturating_sub(core.config().epoch_unix_ns)
                }
            };
            let slept = crate::threads::sleep_until(deadline)
                .or_else(|| crate::threads::background_sleep(deadline))
                .or_else(|| crate::threads::simulator_sleep(deadline))
                .or_else(|| crate::threads::idle_sleep(deadline));
            if slept.is_some() {
                return 0;
            }
        }
        real!(
            c"clock_nanosleep",
            fn(
                clock: libc::clockid_t,
                flags: libc::c_int,
                request: *const libc::timespec,
                remain: *mut libc::timespec,
            ) -> libc::c_int
        )
    }
}
