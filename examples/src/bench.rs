//! What the benchmark binaries share (`src/bin/thread_switch.rs`,
//! `src/bin/property_cost.rs`).

#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

type ClockGettime = unsafe extern "C" fn(i32, *mut Timespec) -> i32;

extern "C" {
    fn dlsym(handle: *mut std::ffi::c_void, name: *const std::ffi::c_char)
        -> *mut std::ffi::c_void;
}

/// `RTLD_NEXT` on glibc.
const RTLD_NEXT: *mut std::ffi::c_void = -1isize as *mut std::ffi::c_void;

/// The real monotonic clock in ns, libc's own (past the simulation's
/// definition): a run's clocks are virtual and stand still while it works.
pub fn real_now_ns() -> f64 {
    // SAFETY: dlsym of libc's clock_gettime, called with a valid timespec.
    unsafe {
        let f = dlsym(RTLD_NEXT, c"clock_gettime".as_ptr());
        assert!(!f.is_null(), "libc's clock_gettime");
        let f: ClockGettime = std::mem::transmute(f);
        let mut ts = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        f(1, &mut ts); // CLOCK_MONOTONIC
        ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64
    }
}
