//! libc's `syscall`, for the calls some libraries make directly:
//! `SYS_getrandom` (the `getrandom` crate, aws-lc's fallback),
//! `SYS_clock_gettime`, and the futex a simulated thread blocks on. During
//! a run they are answered like the functions beside this module;
//! everything else goes to the real `syscall`.
//!
//! `syscall` is variadic in C. On the 64-bit Linux ABIs (x86-64, AArch64)
//! variadic integer arguments travel in the same registers as fixed ones,
//! so a definition with six `long` parameters receives them all; extra
//! ones passed on are ignored by the kernel.

use crate::raw::real_syscall;

/// libc's `syscall`, seeded and virtual for getrandom and clock_gettime
/// during a run, and the futex a simulated thread blocks on.
///
/// # Safety
/// As libc's.
#[no_mangle]
pub unsafe extern "C" fn syscall(
    number: libc::c_long,
    a1: libc::c_long,
    a2: libc::c_long,
    a3: libc::c_long,
    a4: libc::c_long,
    a5: libc::c_long,
    a6: libc::c_long,
) -> libc::c_long {
    if number == libc::SYS_futex {
        if let Some(r) = crate::threads::futex(
            a1 as *const std::sync::atomic::AtomicU32,
            a2 as i32,
            a3 as u32,
            a4 as *const libc::timespec,
        ) {
            return r;
        }
    } else if number == libc::SYS_getrandom {
        let buf = a1 as *mut libc::c_void;
        let len = a2 as libc::size_t;
        if super::random::fill_from_run(buf, len) {
            return len as libc::c_long;
        }
    } else if number == libc::SYS_clock_gettime
        && sim_runtime::context::with_simulation(|_| ()).is_some()
    {
        return super::clock_gettime(a1 as libc::clockid_t, a2 as *mut libc::timespec)
            as libc::c_long;
    }
    real_syscall(number, a1, a2, a3, a4, a5, a6)
}
