//! Unix domain sockets: a per-host namespace of paths.
//!
//! A Unix stream is a connection within one host, built on the TCP
//! endpoints (same ordering, flow control, FIN and RST) with no link in
//! between, so bytes arrive at once. Connecting completes immediately, as a
//! local connect does. A dropped listener's path stays, as its socket file
//! does on Linux: connecting to it is refused (binding it again takes it
//! over). Unix datagrams are reliable and ordered: a full receiver makes
//! the sender wait.

use crate::socket::UnixDatagramState;
pub use crate::socket::UNIX_QUEUE_MAX;
use crate::socket::{Phase, TcpEnd, TcpListenerState};
use crate::state::{Network, Socket, SocketId};
use std::collections::VecDeque;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::task::{Context, Poll, Waker};

/// The stand-in IP address of Unix endpoints inside the TCP machinery: the
/// host's loopback, so segments stay on the host.
const LOCAL: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(Ipv4Addr::LOCALHOST), 0);

/// An error as the kernel gives it: its errno, so `raw_os_error` and the
/// text match a real socket's.
fn os(errno: i32) -> io::Error {
    io::Error::from_raw_os_error(errno)
}

/// The room for a path in a `sockaddr_un`, as std checks it.
const SUN_PATH_BYTES: usize = 108;

/// std's check of a socket path: it must fit `sun_path` with its NUL.
fn check_path(path: &Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    if path.as_os_str().as_bytes().len() >= SUN_PATH_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "path must be shorter than SUN_LEN",
        ));
    }
    Ok(())
}

fn addr_in_use(_path: &Path) -> io::Error {
    os(libc::EADDRINUSE)
}

fn not_found(_path: &Path) -> io::Error {
    os(libc::ENOENT)
}

impl Network {
    fn unix_lookup(&self, host: u32, path: &Path) -> Option<SocketId> {
        let st = self.state.borrow();
        let index = *st.hosts[host as usize].unix_paths.get(path)?;
        Some(SocketId {
            net: st.net,
            index,
            generation: st.sockets[index as usize].generation,
        })
    }

    /// Binds a Unix listener at `path` on the current host.
    ///
    /// # Errors
    /// `AddrInUse` when the path is bound.
    pub fn unix_listen(&self, path: &Path, backlog: usize) -> io::Result<SocketId> {
        check_path(path)?;
        let host = self.current_host().0;
        let mut st = self.state.borrow_mut();
        if st.hosts[host as usize].unix_paths.contains_key(path) {
            return Err(addr_in_use(path));
        }
        // Binding over a dead listener's socket file takes it over (where
        // Linux wants the file unlinked first).
        st.hosts[host as usize].unix_stale.remove(path);
        let id = st.insert(Socket::Listener(TcpListenerState {
            host,
            local: LOCAL,
            path: Some(path.to_path_buf()),
            backlog: VecDeque::new(),
            backlog_max: backlog.max(1),
            wakers: Vec::new(),
            paused: false,
            arrivals: 0,
            fd_watch_read: None,
        }));
        st.hosts[host as usize]
            .unix_paths
            .insert(path.to_path_buf(), id.index);
        drop(st);
        self.note(&format!("unix-listen {}", path.display()));
        Ok(id)
    }

    fn unix_end(&self, host: u32, local: Option<PathBuf>, peer: Option<PathBuf>) -> TcpEnd {
        let mut end = TcpEnd::new(host, LOCAL, LOCAL, Phase::Established);
        end.unix = Some((local, peer));
        end
    }

    /// Connects to the listener at `path` on the current host, at once.
    ///
    /// # Errors
    /// `NotFound` when nothing is bound there; `ConnectionRefused` when the
    /// path is a datagram socket or the backlog is full.
    pub fn unix_connect(&self, path: &Path) -> io::Result<SocketId> {
        self.unix_connect_from(path, None)
    }

    /// Connects to the listener at `path` from a socket bound at `local`
    /// (`UnixSocket::bind` before `connect`): the peer sees that path.
    ///
    /// # Errors
    /// As [`Network::unix_connect`].
    pub fn unix_connect_from(&self, path: &Path, local: Option<&Path>) -> io::Result<SocketId> {
        check_path(path)?;
        let host = self.current_host().0;
        let Some(listener) = self.unix_lookup(host, path) else {
            // A listener's socket file outlives it: refused, not missing.
            if self.state.borrow().hosts[host as usize]
                .unix_stale
                .contains(path)
            {
                return Err(os(libc::ECONNREFUSED));
            }
            return Err(not_found(path));
        };
        let mut st = self.state.borrow_mut();
        match st.get(listener) {
            Some(Socket::Listener(l)) if l.backlog.len() < l.backlog_max => {}
            _ => return Err(os(libc::ECONNREFUSED)),
        }
        let client = st.insert(Socket::Tcp(self.unix_end(
            host,
            local.map(Path::to_path_buf),
            Some(path.to_path_buf()),
        )));
        let server = st.insert(Socket::Tcp(self.unix_end(
            host,
            Some(path.to_path_buf()),
            local.map(Path::to_path_buf),
        )));
        if let Some(Socket::Tcp(end)) = st.get_mut(client) {
            end.peer_id = Some(server);
        }
        if let Some(Socket::Tcp(end)) = st.get_mut(server) {
            end.peer_id = Some(client);
        }
        let mut woken = Vec::new();
        if let Some(Socket::Listener(l)) = st.get_mut(listener) {
            l.backlog.push_back((server, LOCAL));
            l.arrived();
            woken = std::mem::take(&mut l.wakers);
        }
        drop(st);
        // Woken with the state released (a wake may drop the listener).
        woken.into_iter().for_each(std::task::Waker::wake);
        self.note(&format!("unix-connect {}", path.display()));
        Ok(client)
    }

    /// A connected pair of unnamed Unix streams.
    pub fn unix_pair(&self) -> (SocketId, SocketId) {
        let host = self.current_host().0;
        let mut st = self.state.borrow_mut();
        let a = st.insert(Socket::Tcp(self.unix_end(host, None, None)));
        let b = st.insert(Socket::Tcp(self.unix_end(host, None, None)));
        for (x, y) in [(a, b), (b, a)] {
            if let Some(Socket::Tcp(end)) = st.get_mut(x) {
                end.peer_id = Some(y);
            }
        }
        (a, b)
    }

    /// The local path of a Unix stream or listener (`None`: unnamed).
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn unix_local_path(&self, id: SocketId) -> io::Result<Option<PathBuf>> {
        match self.state.borrow().get(id) {
            Some(Socket::Listener(l)) => Ok(l.path.clone()),
            Some(Socket::Tcp(end)) => Ok(end.unix.as_ref().and_then(|u| u.0.clone())),
            Some(Socket::UnixDatagram(d)) => Ok(d.path.clone()),
            _ => Err(os(libc::EBADF)),
        }
    }

    /// The peer path of a Unix stream (`None`: unnamed).
    ///
    /// # Errors
    /// When the socket is gone or not connected.
    pub fn unix_peer_path(&self, id: SocketId) -> io::Result<Option<PathBuf>> {
        match self.state.borrow().get(id) {
            Some(Socket::Tcp(end)) => Ok(end.unix.as_ref().and_then(|u| u.1.clone())),
            Some(Socket::UnixDatagram(d)) => {
                d.peer.clone().map(Some).ok_or_else(|| os(libc::ENOTCONN))
            }
            _ => Err(os(libc::EBADF)),
        }
    }

    // ----- datagrams -------------------------------------------------------

    /// A Unix datagram socket on the current host, bound at `path` or
    /// unnamed.
    ///
    /// # Errors
    /// `AddrInUse` when the path is bound.
    pub fn unix_dgram_bind(&self, path: Option<&Path>) -> io::Result<SocketId> {
        if let Some(path) = path {
            check_path(path)?;
        }
        let host = self.current_host().0;
        let mut st = self.state.borrow_mut();
        if let Some(path) = path {
            if st.hosts[host as usize].unix_paths.contains_key(path) {
                return Err(addr_in_use(path));
            }
        }
        let id = st.insert(Socket::UnixDatagram(UnixDatagramState {
            host,
            path: path.map(Path::to_path_buf),
            peer: None,
            queue: VecDeque::new(),
            read_waker: None,
            send_wakers: Vec::new(),
            shut_read: false,
            shut_write: false,
            arrivals: 0,
            read_cleared_at: None,
        }));
        if let Some(path) = path {
            st.hosts[host as usize]
                .unix_paths
                .insert(path.to_path_buf(), id.index);
        }
        Ok(id)
    }

    /// Two connected unnamed datagram sockets.
    pub fn unix_dgram_pair(&self) -> (SocketId, SocketId) {
        let a = self
            .unix_dgram_bind(None)
            .expect("unnamed binds cannot collide");
        let b = self
            .unix_dgram_bind(None)
            .expect("unnamed binds cannot collide");
        let mut st = self.state.borrow_mut();
        // Unnamed peers are addressed by id through a private path.
        for (x, y) in [(a, b), (b, a)] {
            if let Some(Socket::UnixDatagram(d)) = st.get_mut(x) {
                d.peer = Some(pair_path(y));
            }
        }
        (a, b)
    }

    fn with_dgram<R>(
        &self,
        id: SocketId,
        f: impl FnOnce(&mut UnixDatagramState) -> R,
    ) -> io::Result<R> {
        match self.state.borrow_mut().get_mut(id) {
            Some(Socket::UnixDatagram(d)) => Ok(f(d)),
            _ => Err(os(libc::EBADF)),
        }
    }

    /// Connects a datagram socket to `path`.
    ///
    /// # Errors
    /// `NotFound` when nothing is bound there.
    pub fn unix_dgram_connect(&self, id: SocketId, path: &Path) -> io::Result<()> {
        check_path(path)?;
        let host = self.current_host().0;
        self.unix_lookup(host, path)
            .ok_or_else(|| not_found(path))?;
        self.with_dgram(id, |d| d.peer = Some(path.to_path_buf()))
    }

    fn dgram_target(&self, host: u32, path: &Path) -> Option<SocketId> {
        match parse_pair_path(path) {
            Some(id) => Some(id),
            None => self.unix_lookup(host, path),
        }
    }

    /// Sends a datagram to `path` (or the connected peer); waits while the
    /// receiver is full.
    pub fn unix_dgram_poll_send(
        &self,
        id: SocketId,
        cx: &mut Context<'_>,
        buf: &[u8],
        to: Option<&Path>,
    ) -> Poll<io::Result<usize>> {
        let (host, from, peer, shut) = match self.with_dgram(id, |d| {
            (d.host, d.path.clone(), d.peer.clone(), d.shut_write)
        }) {
            Ok(v) => v,
            Err(e) => return Poll::Ready(Err(e)),
        };
        if shut {
            return Poll::Ready(Err(os(libc::EPIPE)));
        }
        let Some(path) = to.map(Path::to_path_buf).or(peer) else {
            return Poll::Ready(Err(os(libc::ENOTCONN)));
        };
        let Some(target) = self.dgram_target(host, &path) else {
            // A bound socket's file outlives it: refused; no file: missing.
            let stale = self.state.borrow().hosts[host as usize]
                .unix_stale
                .contains(&path);
            return Poll::Ready(Err(os(if stale {
                libc::ECONNREFUSED
            } else {
                libc::ENOENT
            })));
        };
        let sender_name = from;
        let mut st = self.state.borrow_mut();
        match st.get_mut(target) {
            Some(Socket::UnixDatagram(t)) => {
                if t.shut_read {
                    return Poll::Ready(Ok(buf.len()));
                }
                if t.queue.len() >= UNIX_QUEUE_MAX {
                    t.send_wakers.push(cx.waker().clone());
                    return Poll::Pending;
                }
                t.queue.push_back((buf.to_vec(), sender_name));
                t.arrivals += 1;
                if let Some(w) = t.read_waker.take() {
                    w.wake();
                }
                Poll::Ready(Ok(buf.len()))
            }
            _ => Poll::Ready(Err(os(libc::ECONNREFUSED))),
        }
    }

    /// Receives a datagram and its sender's path (`None`: unnamed).
    pub fn unix_dgram_poll_recv(
        &self,
        id: SocketId,
        cx: &mut Context<'_>,
        buf: &mut [u8],
        peek: bool,
    ) -> Poll<io::Result<(usize, Option<PathBuf>)>> {
        let mut st = self.state.borrow_mut();
        let Some(Socket::UnixDatagram(d)) = st.get_mut(id) else {
            return Poll::Ready(Err(os(libc::EBADF)));
        };
        let next = if peek {
            d.queue.front().cloned()
        } else {
            d.queue.pop_front()
        };
        match next {
            Some((data, from)) => {
                let n = buf.len().min(data.len());
                buf[..n].copy_from_slice(&data[..n]);
                if !peek {
                    for w in d.send_wakers.drain(..) {
                        w.wake();
                    }
                }
                Poll::Ready(Ok((n, from)))
            }
            None if d.shut_read => Poll::Ready(Ok((0, None))),
            None => {
                d.read_waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }

    /// Whether a datagram is waiting (or reads are shut).
    pub fn unix_dgram_read_ready(&self, id: SocketId) -> bool {
        self.with_dgram(id, |d| {
            (!d.queue.is_empty() || d.shut_read) && d.read_cleared_at != Some(d.arrivals)
        })
        .unwrap_or(true)
    }

    /// Registers for the next datagram (or shutdown).
    pub fn unix_dgram_register_read(&self, id: SocketId, waker: &Waker) {
        let _ = self.with_dgram(id, |d| d.read_waker = Some(waker.clone()));
    }

    /// Clears read readiness until the next datagram (`try_io`).
    pub fn unix_dgram_clear_read(&self, id: SocketId) {
        let _ = self.with_dgram(id, |d| d.read_cleared_at = Some(d.arrivals));
    }

    /// Shuts reading, writing, or both.
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn unix_dgram_shutdown(&self, id: SocketId, read: bool, write: bool) -> io::Result<()> {
        self.with_dgram(id, |d| {
            d.shut_read |= read;
            d.shut_write |= write;
            d.arrivals += 1;
            if let Some(w) = d.read_waker.take() {
                w.wake();
            }
        })
    }

    /// Closes a datagram socket and frees its path.
    pub fn unix_dgram_close(&self, id: SocketId) {
        let mut st = self.state.borrow_mut();
        if let Some(Socket::UnixDatagram(d)) = st.get_mut(id) {
            let (host, path, wakers) = (d.host, d.path.take(), std::mem::take(&mut d.send_wakers));
            if let Some(path) = path {
                st.hosts[host as usize].unix_paths.remove(&path);
            }
            st.free_slot(id.index);
            for w in wakers {
                w.wake();
            }
        }
    }
}

/// The private name of an unnamed socket of a pair.
fn pair_path(id: SocketId) -> PathBuf {
    PathBuf::from(format!(
        "\0sim-pair-{}-{}-{}",
        id.net, id.index, id.generation
    ))
}

fn parse_pair_path(path: &Path) -> Option<SocketId> {
    let s = path.to_str()?.strip_prefix("\0sim-pair-")?;
    let (net, rest) = s.split_once('-')?;
    let (index, generation) = rest.split_once('-')?;
    Some(SocketId {
        net: net.parse().ok()?,
        index: index.parse().ok()?,
        generation: generation.parse().ok()?,
    })
}
