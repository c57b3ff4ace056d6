//! Descriptor numbers for simulated files and sockets: each is a real
//! `/dev/null` descriptor, so a simulated descriptor never shares its
//! number with a real one.

/// Reserves a descriptor number with a real `/dev/null` descriptor, opened
/// by a raw syscall so that no interposed `open` sees it.
///
/// # Errors
/// `EMFILE` when the process has no descriptor left.
pub fn reserve_fd() -> Result<i32, i32> {
    // SAFETY: a plain openat(2) of a constant path.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat,
            libc::AT_FDCWD,
            c"/dev/null".as_ptr(),
            libc::O_RDWR | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(libc::EMFILE);
    }
    Ok(fd as i32)
}

/// Closes a reservation made by [`reserve_fd`], by a raw syscall (past the
/// interposed `close`).
pub fn release_fd(fd: i32) {
    // SAFETY: closes a descriptor this process reserved.
    unsafe { libc::syscall(libc::SYS_close, fd) };
}
