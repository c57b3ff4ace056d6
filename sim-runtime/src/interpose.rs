//! Determinism below tokio: in a simulation build (`--cfg simulation`), this
//! module defines libc's clock, randomness and thread-creation entry points,
//! so that code which never heard of the simulator still reads the virtual
//! clock and the seed.
//!
//! While a runtime is current on the calling thread:
//! - `clock_gettime` on the monotonic clocks reads `MONOTONIC_ORIGIN` plus
//!   the virtual time, and on the real-time clocks the run's epoch plus the
//!   virtual time; `gettimeofday` and `time` follow the real-time clock. So
//!   `std::time::Instant::now()` and `SystemTime::now()` are virtual.
//! - `getrandom` and `getentropy` draw from the seed, so `HashMap`'s random
//!   state, `rand::random` and v4 UUIDs repeat per seed.
//! - `pthread_create` (what `std::thread::spawn` calls) is refused with an
//!   error on stderr that names the escape, unless `SIM_ALLOW_THREADS=1`.
//!
//! Outside a run every call goes to the real libc. The process CPU-time
//! clocks are always real.

use std::sync::atomic::{AtomicUsize, Ordering};

/// What the monotonic clock reads at virtual time zero: one day, so code
/// that subtracts a few hours from `Instant::now()` does not underflow.
pub const MONOTONIC_ORIGIN_NS: u64 = 86_400 * 1_000_000_000;

/// A random u64 from the operating system, never from the simulation (used
/// to draw a fresh seed).
pub fn real_random_u64() -> u64 {
    let mut bytes = [0u8; 8];
    let mut filled = 0;
    // Bounded: getrandom returns at most the requested bytes per call and
    // only fails on EINTR-like conditions; give up after a few tries.
    for _ in 0..16 {
        // Safety: the buffer is valid for the length given.
        let n = unsafe {
            libc::syscall(
                libc::SYS_getrandom,
                bytes[filled..].as_mut_ptr(),
                bytes.len() - filled,
                0,
            )
        };
        if n > 0 {
            filled += n as usize;
            if filled == bytes.len() {
                break;
            }
        }
    }
    if filled < bytes.len() {
        // No OS randomness at all: fall back to the real clock's nanoseconds.
        return real_clock_ns(libc::CLOCK_REALTIME) ^ u64::from(std::process::id());
    }
    u64::from_le_bytes(bytes)
}

type ClockGettime = unsafe extern "C" fn(libc::clockid_t, *mut libc::timespec) -> libc::c_int;
static REAL_CLOCK_GETTIME: AtomicUsize = AtomicUsize::new(0);

/// libc's own `clock_gettime` (the vDSO-backed one), found past our
/// definition with `dlsym(RTLD_NEXT)`; a raw syscall if that fails.
unsafe fn real_clock_gettime(clock: libc::clockid_t, tp: *mut libc::timespec) -> libc::c_int {
    let mut f = REAL_CLOCK_GETTIME.load(Ordering::Relaxed);
    if f == 0 {
        f = libc::dlsym(libc::RTLD_NEXT, c"clock_gettime".as_ptr()) as usize;
        if f == 0 || f == clock_gettime_address() {
            f = 1;
        }
        REAL_CLOCK_GETTIME.store(f, Ordering::Relaxed);
    }
    if f > 1 {
        let f: ClockGettime = std::mem::transmute(f);
        f(clock, tp)
    } else {
        libc::syscall(libc::SYS_clock_gettime, clock, tp) as libc::c_int
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
    // Safety: `ts` is a valid timespec to write.
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

/// The virtual reading of `clock` if a run is current: `None` otherwise.
#[cfg_attr(not(simulation), allow(dead_code))]
fn virtual_ns(clock: libc::clockid_t) -> Option<u64> {
    let kind = classify(clock);
    if let Virtual::Real = kind {
        return None;
    }
    crate::context::with_current(|core| match kind {
        Virtual::Monotonic => MONOTONIC_ORIGIN_NS + core.now_ns(),
        _ => core.config().epoch_unix_ns + core.now_ns(),
    })
}

/// Keeps the interposed symbols in the link: the linker only pulls objects
/// from a library archive for symbols it is looking for, and libc's
/// definitions would otherwise win. Called when a runtime is built.
#[inline(never)]
pub fn keep_linked() -> usize {
    #[cfg(simulation)]
    {
        let symbols = [
            clock_gettime as *const () as usize,
            gettimeofday as *const () as usize,
            time as *const () as usize,
            getrandom as *const () as usize,
            getentropy as *const () as usize,
            pthread_create as *const () as usize,
        ];
        std::hint::black_box(symbols).iter().fold(0, |a, b| a ^ b)
    }
    #[cfg(not(simulation))]
    {
        0
    }
}

#[cfg(simulation)]
pub use overrides::*;

#[cfg(simulation)]
mod overrides {
    use super::*;

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

    fn fill_from_run(buf: *mut libc::c_void, len: libc::size_t) -> bool {
        crate::context::with_current(|core| {
            if len > 0 {
                // Safety: the caller gave a buffer valid for `len` bytes.
                let slice = unsafe { std::slice::from_raw_parts_mut(buf as *mut u8, len) };
                core.fill_random(slice);
            }
        })
        .is_some()
    }

    /// libc's `getrandom`, seeded during a run.
    ///
    /// # Safety
    /// As libc's: `buf` must be valid for `len` bytes.
    #[no_mangle]
    pub unsafe extern "C" fn getrandom(
        buf: *mut libc::c_void,
        len: libc::size_t,
        flags: libc::c_uint,
    ) -> libc::ssize_t {
        if fill_from_run(buf, len) {
            return len as libc::ssize_t;
        }
        libc::syscall(libc::SYS_getrandom, buf, len, flags) as libc::ssize_t
    }

    /// libc's `getentropy`, seeded during a run.
    ///
    /// # Safety
    /// As libc's: `buf` must be valid for `len` bytes.
    #[no_mangle]
    pub unsafe extern "C" fn getentropy(buf: *mut libc::c_void, len: libc::size_t) -> libc::c_int {
        if len > 256 {
            *libc::__errno_location() = libc::EIO;
            return -1;
        }
        if fill_from_run(buf, len) {
            return 0;
        }
        let n = libc::syscall(libc::SYS_getrandom, buf, len, 0);
        if n == len as libc::c_long {
            0
        } else {
            -1
        }
    }

    type PthreadCreate = unsafe extern "C" fn(
        *mut libc::pthread_t,
        *const libc::pthread_attr_t,
        extern "C" fn(*mut libc::c_void) -> *mut libc::c_void,
        *mut libc::c_void,
    ) -> libc::c_int;

    /// libc's `pthread_create`, refused during a run: a real thread's timing
    /// is outside the simulation.
    ///
    /// # Safety
    /// As libc's.
    #[no_mangle]
    pub unsafe extern "C" fn pthread_create(
        thread: *mut libc::pthread_t,
        attr: *const libc::pthread_attr_t,
        start: extern "C" fn(*mut libc::c_void) -> *mut libc::c_void,
        arg: *mut libc::c_void,
    ) -> libc::c_int {
        let refused =
            crate::context::with_current(|core| !core.config().allow_threads).unwrap_or(false);
        if refused {
            let message = format!(
                "sim: escape refused: a real OS thread was started during a simulation run \
                 (std::thread::spawn, or a library calling pthread_create). Its timing is \
                 outside the simulation, so the run could not be replayed from its seed. Use \
                 tokio::task::spawn_blocking instead (it runs as a scheduled step), or set \
                 {}=1 to allow real threads and give up determinism.\n",
                crate::config::ALLOW_THREADS_VAR
            );
            let _ = std::io::Write::write_all(&mut std::io::stderr(), message.as_bytes());
            return libc::EAGAIN;
        }
        let real = libc::dlsym(libc::RTLD_NEXT, c"pthread_create".as_ptr());
        if real.is_null() {
            return libc::EAGAIN;
        }
        let real: PthreadCreate = std::mem::transmute(real);
        real(thread, attr, start, arg)
    }
}
