//! `std::os::unix::net` streams bound to a path (or an abstract name):
//! `UnixListener::bind`, `accept`, `UnixStream::connect` through libc's
//! calls, on the host's namespace of Unix paths that `tokio::net`'s Unix
//! sockets share. A bind leaves a socket file on the host's simulated
//! disk, as Linux's does. (Unnamed pairs from `socketpair` are `mod.rs`'s.)

use super::{
    errno_of, lock, new_sock, on_net, register, thread_core, view, Family, Phase, Shared, View,
};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// `socket(AF_UNIX, SOCK_STREAM)` in a simulation (`SOCK_NONBLOCK` of
/// `flags`); `None` outside one.
pub(super) fn socket(flags: i32) -> Option<Result<i32, i32>> {
    let core = thread_core()?;
    if core.is_shut_down() {
        return None;
    }
    let nonblocking = flags & libc::SOCK_NONBLOCK != 0;
    let sock = new_sock(core.id(), Phase::Fresh(None), false, nonblocking);
    lock(&sock).family = Family::Unix;
    Some(register(sock))
}

fn path_of(bytes: &[u8]) -> PathBuf {
    PathBuf::from(std::ffi::OsStr::from_bytes(bytes))
}

/// A fresh, unbound Unix stream socket's view, or `EINVAL`.
fn fresh(fd: i32) -> Result<(Shared, View), i32> {
    let (sock, v) = view(fd)?;
    if v.family != Family::Unix || v.phase != Phase::Fresh(None) {
        return Err(libc::EINVAL);
    }
    Ok((sock, v))
}

/// `bind`: the path is taken (its socket file made) now; the socket
/// listens or connects from it later.
pub(super) fn bind(fd: i32, path: &[u8]) -> Result<(), i32> {
    let (sock, v) = fresh(fd)?;
    if lock(&sock).unix_path.is_some() {
        return Err(libc::EINVAL);
    }
    let path = path_of(path);
    if path.as_os_str().is_empty() {
        return Err(libc::EINVAL);
    }
    let abstract_name = path.as_os_str().as_bytes().first() == Some(&0);
    if !abstract_name {
        on_net(v.core, |_| {
            sim_fs::with_disk(|disk| disk.bind_socket_file(&path))
        })?
        .map_err(|e| errno_of(&e))?;
    }
    lock(&sock).unix_path = Some(path);
    Ok(())
}

/// `listen` on a bound Unix stream socket.
pub(super) fn listen(sock: &Shared, v: &View, backlog: i32) -> Result<(), i32> {
    match v.phase {
        Phase::Listening(_) => return Ok(()),
        Phase::Fresh(None) => {}
        _ => return Err(libc::EINVAL),
    }
    let Some(path) = lock(sock).unix_path.clone() else {
        // Linux would bind an abstract name of its own choosing; a socket
        // nobody can name is of no use to a simulated peer.
        return Err(libc::EINVAL);
    };
    let backlog = usize::try_from(backlog).unwrap_or(0).clamp(1, 4096);
    let id = on_net(v.core, |net| net.unix_listen(&path, backlog))?.map_err(|e| errno_of(&e))?;
    lock(sock).phase = Phase::Listening(id);
    Ok(())
}

/// `connect` to the listener at `path` (from the bound path, if any): a
/// Unix stream connects at once.
pub(super) fn connect(fd: i32, path: &[u8]) -> Result<(), i32> {
    let (sock, v) = view(fd)?;
    match v.phase {
        Phase::Connected(_) => return Err(libc::EISCONN),
        Phase::Fresh(None) if v.family == Family::Unix => {}
        _ => return Err(libc::EINVAL),
    }
    let to = path_of(path);
    let from = lock(&sock).unix_path.clone();
    let id = on_net(v.core, |net| {
        net.unix_connect_from(&to, from.as_deref().map(Path::new))
    })?
    .map_err(|e| errno_of(&e))?;
    lock(&sock).phase = Phase::Connected(id);
    Ok(())
}
