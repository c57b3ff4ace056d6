//! The data of a file: `read`, `write` and their positioned and vectored
//! forms, `lseek`, `fsync`, `ftruncate`, `sendfile`.

use super::common::*;

fn io_result(r: Result<usize, i32>) -> isize {
    match r {
        Ok(n) => n as isize,
        Err(e) => fail(e),
    }
}

/// `read`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn read(fd: i32, buf: *mut libc::c_void, n: usize) -> isize {
    if crate::sockets::sim_fd(fd).is_some() {
        // SAFETY: the caller's arguments, passed on.
        return unsafe { crate::sockets::recv(fd, buf, n, 0) };
    }
    if let Some(hooks) = fd_hooks(fd) {
        // SAFETY: the caller's buffer.
        let buf = unsafe { std::slice::from_raw_parts_mut(buf.cast::<u8>(), n) };
        return io_result(hooks.read(fd, buf, None));
    }
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    if let Some(errno) = crate::threads::refuse_real_block(fd, "read") {
        return fail(errno);
    }
    real!(
        c"read",
        fn(fd: i32, buf: *mut libc::c_void, n: usize) -> isize
    )
}

/// `pread64`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn pread64(fd: i32, buf: *mut libc::c_void, n: usize, at: i64) -> isize {
    if let Some(hooks) = fd_hooks(fd) {
        // SAFETY: the caller's buffer.
        let buf = unsafe { std::slice::from_raw_parts_mut(buf.cast::<u8>(), n) };
        return io_result(hooks.read(fd, buf, Some(at as u64)));
    }
    real!(
        c"pread64",
        fn(fd: i32, buf: *mut libc::c_void, n: usize, at: i64) -> isize
    )
}

/// `write`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn write(fd: i32, buf: *const libc::c_void, n: usize) -> isize {
    if crate::sockets::sim_fd(fd).is_some() {
        // SAFETY: the caller's arguments, passed on.
        return unsafe { crate::sockets::send(fd, buf, n, 0) };
    }
    if let Some(hooks) = fd_hooks(fd) {
        // SAFETY: the caller's buffer.
        let buf = unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), n) };
        return io_result(hooks.write(fd, buf, None));
    }
    // SAFETY: the caller's buffer of `n` bytes, passed on.
    unsafe { real_write(fd, buf, n) }
}

/// `pwrite64`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn pwrite64(fd: i32, buf: *const libc::c_void, n: usize, at: i64) -> isize {
    if let Some(hooks) = fd_hooks(fd) {
        // SAFETY: the caller's buffer.
        let buf = unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), n) };
        return io_result(hooks.write(fd, buf, Some(at as u64)));
    }
    real!(
        c"pwrite64",
        fn(fd: i32, buf: *const libc::c_void, n: usize, at: i64) -> isize
    )
}

/// `readv`: a simulated socket reads into the first buffer that has room
/// (a short read, as a stream socket may give).
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn readv(fd: i32, iov: *const libc::iovec, count: i32) -> isize {
    if let Some(sockets) = crate::sockets::sim_fd(fd) {
        for i in 0..count.max(0) as usize {
            // SAFETY: the caller's iovec array of `count` entries.
            let v = unsafe { &*iov.add(i) };
            if v.iov_len > 0 {
                // SAFETY: each iovec points at `iov_len` writable bytes (libc's contract).
                let buf =
                    unsafe { std::slice::from_raw_parts_mut(v.iov_base.cast::<u8>(), v.iov_len) };
                return io_result(sockets.recv(fd, buf, 0).map(|(n, _)| n));
            }
        }
        return 0;
    }
    if let Some(hooks) = fd_hooks(fd) {
        for i in 0..count.max(0) as usize {
            // SAFETY: as above.
            let v = unsafe { &*iov.add(i) };
            if v.iov_len > 0 {
                // SAFETY: as above.
                let buf =
                    unsafe { std::slice::from_raw_parts_mut(v.iov_base.cast::<u8>(), v.iov_len) };
                return io_result(hooks.read(fd, buf, None));
            }
        }
        return 0;
    }
    real!(
        c"readv",
        fn(fd: i32, iov: *const libc::iovec, count: i32) -> isize
    )
}

/// `writev`: a simulated descriptor takes the buffers one by one.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn writev(fd: i32, iov: *const libc::iovec, count: i32) -> isize {
    let sockets = crate::sockets::sim_fd(fd);
    let files = if sockets.is_none() {
        fd_hooks(fd)
    } else {
        None
    };
    if sockets.is_some() || files.is_some() {
        let mut total = 0usize;
        for i in 0..count.max(0) as usize {
            // SAFETY: the caller's iovec array of `count` entries.
            let v = unsafe { &*iov.add(i) };
            // SAFETY: each iovec of the caller's array points at `iov_len` readable bytes (libc's contract).
            let buf = unsafe { std::slice::from_raw_parts(v.iov_base.cast::<u8>(), v.iov_len) };
            let wrote = match (sockets, files) {
                // After the first buffer, a socket takes only what fits now.
                (Some(s), _) => s.send(
                    fd,
                    buf,
                    if total == 0 { 0 } else { libc::MSG_DONTWAIT },
                    None,
                ),
                (_, Some(f)) => f.write(fd, buf, None),
                _ => unreachable!("one of the two is set"),
            };
            match wrote {
                Ok(n) => {
                    total += n;
                    if n < buf.len() {
                        break;
                    }
                }
                Err(e) if total == 0 => return fail(e),
                Err(_) => break,
            }
        }
        return total as isize;
    }
    real!(
        c"writev",
        fn(fd: i32, iov: *const libc::iovec, count: i32) -> isize
    )
}

/// `lseek64`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn lseek64(fd: i32, offset: i64, whence: i32) -> i64 {
    if let Some(hooks) = fd_hooks(fd) {
        return match hooks.seek(fd, offset, whence) {
            Ok(pos) => pos as i64,
            Err(e) => fail(e),
        };
    }
    real!(c"lseek64", fn(fd: i32, offset: i64, whence: i32) -> i64)
}

/// `fsync`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn fsync(fd: i32) -> i32 {
    if let Some(hooks) = fd_hooks(fd) {
        return to_c_int(hooks.fsync(fd));
    }
    real!(c"fsync", fn(fd: i32) -> i32)
}

/// `fdatasync`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn fdatasync(fd: i32) -> i32 {
    if let Some(hooks) = fd_hooks(fd) {
        return to_c_int(hooks.fsync(fd));
    }
    real!(c"fdatasync", fn(fd: i32) -> i32)
}

/// `ftruncate64`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn ftruncate64(fd: i32, len: i64) -> i32 {
    if let Some(hooks) = fd_hooks(fd) {
        if len < 0 {
            return fail(libc::EINVAL);
        }
        return to_c_int(hooks.ftruncate(fd, len as u64));
    }
    real!(c"ftruncate64", fn(fd: i32, len: i64) -> i32)
}

/// Defines a kernel copy between two descriptors (`copy_file_range`,
/// `splice`) that refuses simulated descriptors with `errno`: std then
/// copies with reads and writes.
macro_rules! no_kernel_copy {
    ($name:ident, $cname:literal, $errno:expr) => {
        #[doc = concat!("`", stringify!($name), "`: never between simulated and other files.")]
        ///
        /// # Safety
        /// libc's contract.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            fd_in: i32,
            off_in: *mut i64,
            fd_out: i32,
            off_out: *mut i64,
            len: usize,
            flags: u32,
        ) -> isize {
            if fd_hooks(fd_in).is_some() || fd_hooks(fd_out).is_some() {
                return fail($errno);
            }
            real!(
                $cname,
                fn(
                    fd_in: i32,
                    off_in: *mut i64,
                    fd_out: i32,
                    off_out: *mut i64,
                    len: usize,
                    flags: u32,
                ) -> isize
            )
        }
    };
}

no_kernel_copy!(copy_file_range, c"copy_file_range", libc::EXDEV);
no_kernel_copy!(splice, c"splice", libc::EINVAL);

/// `sendfile64`: as `copy_file_range`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn sendfile64(
    out_fd: i32,
    in_fd: i32,
    offset: *mut i64,
    count: usize,
) -> isize {
    if fd_hooks(in_fd).is_some() || fd_hooks(out_fd).is_some() {
        return fail(libc::EINVAL);
    }
    real!(
        c"sendfile64",
        fn(out_fd: i32, in_fd: i32, offset: *mut i64, count: usize) -> isize
    )
}
