//! Randomness: `getrandom` and `getentropy` draw from the seed during a run.

pub(super) fn fill_from_run(buf: *mut libc::c_void, len: libc::size_t) -> bool {
    if len == 0 {
        return true;
    }
    // SAFETY: the caller gave a buffer valid for `len` bytes.
    let slice = unsafe { std::slice::from_raw_parts_mut(buf as *mut u8, len) };
    sim_runtime::context::with_simulation(|core| core.fill_random(slice)).is_some()
        || sim_runtime::sweep::fill_before_run(slice)
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
