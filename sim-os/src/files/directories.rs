//! Reading directories: `opendir` and `readdir` over a simulated directory.

use super::common::*;
use super::*;

/// A `DIR` of a simulated directory: its entries, read in order. The
/// address is what `readdir64` gets back; `FAKE_DIRS` knows it.
struct FakeDir {
    fd: i32,
    entries: Vec<(OsString, u64, u8)>,
    next: usize,
    current: libc::dirent64,
}

thread_local! {
    static FAKE_DIRS: std::cell::RefCell<Vec<usize>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn is_fake_dir(dirp: *mut libc::DIR) -> bool {
    FAKE_DIRS
        .try_with(|d| d.borrow().contains(&(dirp as usize)))
        .unwrap_or(false)
}

fn fake_dir(hooks: &dyn FileHooks, fd: i32) -> *mut libc::DIR {
    match hooks.list(fd) {
        Ok(entries) => {
            let dir = Box::new(FakeDir {
                fd,
                entries,
                next: 0,
                // SAFETY: a plain C struct, valid when zeroed.
                current: unsafe { std::mem::zeroed() },
            });
            let ptr = Box::into_raw(dir) as usize;
            FAKE_DIRS.with(|d| d.borrow_mut().push(ptr));
            ptr as *mut libc::DIR
        }
        Err(e) => {
            set_errno(e);
            std::ptr::null_mut()
        }
    }
}

/// `opendir`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn opendir(path: *const libc::c_char) -> *mut libc::DIR {
    if let Some(hooks) = hooks() {
        // SAFETY: the caller's path arguments, NUL-terminated or null (libc's contract), passed on.
        if let Some(p) = unsafe { claimed(hooks, libc::AT_FDCWD, path) } {
            return match hooks.open(&p, libc::O_RDONLY | libc::O_DIRECTORY, 0) {
                Ok(fd) => fake_dir(hooks, fd),
                Err(e) => {
                    set_errno(e);
                    std::ptr::null_mut()
                }
            };
        }
    }
    real!(c"opendir", fn(path: *const libc::c_char) -> *mut libc::DIR)
}

/// `fdopendir`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn fdopendir(fd: i32) -> *mut libc::DIR {
    if let Some(hooks) = fd_hooks(fd) {
        return fake_dir(hooks, fd);
    }
    real!(c"fdopendir", fn(fd: i32) -> *mut libc::DIR)
}

/// `readdir64`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn readdir64(dirp: *mut libc::DIR) -> *mut libc::dirent64 {
    if is_fake_dir(dirp) {
        // SAFETY: a pointer `fake_dir` made and `closedir` not yet took.
        let dir = unsafe { &mut *(dirp as *mut FakeDir) };
        let Some((name, ino, kind)) = dir.entries.get(dir.next) else {
            return std::ptr::null_mut();
        };
        dir.next += 1;
        let bytes = name.as_bytes();
        let n = bytes.len().min(dir.current.d_name.len() - 1);
        dir.current.d_ino = *ino;
        dir.current.d_off = dir.next as i64;
        dir.current.d_reclen = std::mem::size_of::<libc::dirent64>() as u16;
        dir.current.d_type = *kind;
        for (slot, byte) in dir.current.d_name.iter_mut().zip(bytes[..n].iter()) {
            *slot = *byte as libc::c_char;
        }
        dir.current.d_name[n] = 0;
        return &mut dir.current;
    }
    real!(
        c"readdir64",
        fn(dirp: *mut libc::DIR) -> *mut libc::dirent64
    )
}

/// `closedir`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn closedir(dirp: *mut libc::DIR) -> i32 {
    if is_fake_dir(dirp) {
        FAKE_DIRS.with(|d| d.borrow_mut().retain(|p| *p != dirp as usize));
        // SAFETY: made by `fake_dir` with Box::into_raw.
        let dir = unsafe { Box::from_raw(dirp as *mut FakeDir) };
        // SAFETY: the descriptor the fake DIR owned, closed once as the DIR is freed.
        return unsafe { close(dir.fd) };
    }
    real!(c"closedir", fn(dirp: *mut libc::DIR) -> i32)
}

/// `dirfd`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn dirfd(dirp: *mut libc::DIR) -> i32 {
    if is_fake_dir(dirp) {
        // SAFETY: a live fake DIR.
        return unsafe { &*(dirp as *mut FakeDir) }.fd;
    }
    real!(c"dirfd", fn(dirp: *mut libc::DIR) -> i32)
}
