//! Named pipes (FIFOs) on the simulated disk: `mkfifo` (libc, nix) makes
//! one, and `tokio::net::unix::pipe::OpenOptions` opens its ends. The bytes
//! live in one buffer per FIFO and host (64 KiB, as Linux's pipes), shared
//! by every end: any sender writes into it, any receiver reads from it.
//! A receiver reads end of stream while no sender is open, a sender fails
//! with `BrokenPipe` once no receiver is, as with a real FIFO.
//!
//! As with every descriptor tokio registers, an end's readiness is unknown
//! until the driver's next turn (the runtime's next step): before it,
//! nothing is ready and a `try_read`/`try_write` says `WouldBlock`; a poll
//! that waits is woken at that turn, as a `yield_now` is (the wait UDP's
//! receives use for a datagram the driver has not reported).

use crate::io::{Interest, ReadBuf, Ready};
use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::task::{Context, Poll, Waker};

/// Linux's default pipe capacity.
const FIFO_CAPACITY_BYTES: usize = 64 * 1024;

#[derive(Debug, Default)]
struct State {
    buffer: VecDeque<u8>,
    readers: u32,
    writers: u32,
    /// Senders opened so far: a receiver opened while no sender was reads
    /// end of stream only after a sender opened since (Linux reports the
    /// hang-up of a FIFO to such a reader only then, and tokio reads only
    /// on a report).
    writer_opens: u64,
    /// Bounded by the ends open on the FIFO (one waker per waiting end).
    read_wakers: Vec<Waker>,
    write_wakers: Vec<Waker>,
}

type Shared = Arc<Mutex<State>>;

fn lock(shared: &Shared) -> MutexGuard<'_, State> {
    shared.lock().unwrap_or_else(|e| e.into_inner())
}

/// The FIFOs of one simulation, by host and inode (a runtime extension).
#[derive(Default)]
struct Fifos(std::cell::RefCell<BTreeMap<(u32, sim_fs::Ino), Shared>>);

/// One open end of a FIFO.
#[derive(Debug)]
pub(crate) struct FifoEnd {
    shared: Shared,
    reads: bool,
    writes: bool,
    /// `State::writer_opens` when this end opened with no sender open
    /// (`None`: a sender was open, or the end is no receiver).
    writers_at_open: Option<u64>,
    placeholder: OnceLock<OwnedFd>,
    first_turn: FirstTurn,
}

/// The driver's first turn since an end opened (see the module docs).
#[derive(Debug)]
struct FirstTurn {
    /// The runtime's step at the open (`Core::steps`).
    opened_step: u64,
    /// The turn came (kept, so later looks skip the runtime).
    turned: AtomicBool,
}

impl FirstTurn {
    fn new() -> FirstTurn {
        FirstTurn {
            opened_step: sim_runtime::context::with_current(|core| core.steps()).unwrap_or(0),
            turned: AtomicBool::new(false),
        }
    }

    /// Whether the driver has turned since the open.
    fn turned(&self) -> bool {
        if self.turned.load(Ordering::Relaxed) {
            return true;
        }
        let step = sim_runtime::context::with_current(|core| core.steps()).unwrap_or(u64::MAX);
        let turned = step > self.opened_step;
        self.turned.store(turned, Ordering::Relaxed);
        turned
    }

    /// Wakes `cx`'s task at the driver's next turn.
    fn wait(&self, cx: &Context<'_>) {
        let queued = sim_runtime::context::with_current(|core| core.yield_task(cx.waker()));
        if queued.is_none() {
            cx.waker().wake_by_ref();
        }
    }
}

/// What an end opens as.
#[derive(Clone, Copy)]
pub(crate) enum Side {
    Receiver,
    Sender,
}

/// Opens an end of the FIFO at `path` on the current host's disk.
///
/// # Errors
/// `NotFound` for no such path; `InvalidInput` ("not a pipe") for a path
/// that is no FIFO; `ENXIO` for a sender while no receiver is open (unless
/// `read_write`), as Linux gives.
pub(crate) fn open(path: &Path, side: Side, read_write: bool) -> io::Result<FifoEnd> {
    let found = sim_fs::with_disk(|disk| disk.fifo_at(path));
    let ino = match found {
        Ok(Some(ino)) => ino,
        Ok(None) => return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a pipe")),
        Err(e) if e.kind() == io::ErrorKind::NotFound && real_fifo(path) => {
            return Err(crate::net::tcp::stream::escape(&format!(
                "opening the named pipe {} (a real FIFO; make it during the run with mkfifo \
                 to get a simulated one)",
                path.display()
            )))
        }
        Err(e) => return Err(e),
    };
    let (reads, writes) = match side {
        Side::Receiver => (true, read_write),
        Side::Sender => (read_write, true),
    };
    open_ino(sim_fs::current_node(), ino, reads, writes, true)
}

/// Opens an end of FIFO `ino` of host `node` with Linux's rules: a
/// non-blocking writer with no reader fails with `ENXIO`; a blocking open
/// that would wait for the other side fails with `WouldBlock` (`std::fs`
/// refuses it: not simulated).
fn open_ino(
    node: u32,
    ino: sim_fs::Ino,
    reads: bool,
    writes: bool,
    nonblocking: bool,
) -> io::Result<FifoEnd> {
    let shared = sim_runtime::context::with_current(|core| {
        let fifos = core.extension(Fifos::default);
        let mut map = fifos.0.borrow_mut();
        map.entry((node, ino)).or_default().clone()
    })
    .expect("a FIFO is opened inside its runtime");
    let (wake, writers_at_open) = {
        let mut state = lock(&shared);
        let no_sender = state.writers == 0;
        let waits_for_reader = writes && !reads && state.readers == 0;
        let waits_for_writer = reads && !writes && no_sender;
        if waits_for_reader && nonblocking {
            return Err(io::Error::from_raw_os_error(libc_dep::ENXIO));
        }
        if (waits_for_reader || waits_for_writer) && !nonblocking {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        state.readers += u32::from(reads);
        state.writers += u32::from(writes);
        state.writer_opens += u64::from(writes);
        // A new sender ends nothing; a receiver may unblock nobody: only
        // wake when a count went from zero.
        let mut wake = Vec::new();
        if writes && state.writers == 1 {
            wake.append(&mut state.read_wakers);
        }
        if reads && state.readers == 1 {
            wake.append(&mut state.write_wakers);
        }
        let suppress = reads && !writes && no_sender;
        (wake, suppress.then_some(state.writer_opens))
    };
    for w in wake {
        w.wake();
    }
    Ok(FifoEnd {
        shared,
        reads,
        writes,
        writers_at_open,
        placeholder: OnceLock::new(),
        first_turn: FirstTurn::new(),
    })
}

/// Whether a real FIFO is at `path` (a path the simulated disk does not
/// mirror).
fn real_fifo(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    sim_runtime::outside::outside(|| std::fs::metadata(path)).is_ok_and(|m| m.file_type().is_fifo())
}

fn push_waker(wakers: &mut Vec<Waker>, waker: &Waker) {
    if !wakers.iter().any(|w| w.will_wake(waker)) {
        wakers.push(waker.clone());
    }
}

impl FifoEnd {
    fn read_ready(&self, state: &State) -> bool {
        !state.buffer.is_empty() || self.at_end(state)
    }

    /// End of stream: no sender open (and, for a receiver opened while
    /// none was, one has come and gone since: see `State::writer_opens`).
    fn at_end(&self, state: &State) -> bool {
        state.writers == 0
            && self
                .writers_at_open
                .is_none_or(|at_open| state.writer_opens > at_open)
    }

    fn write_ready(state: &State) -> bool {
        state.readers == 0 || state.buffer.len() < FIFO_CAPACITY_BYTES
    }

    pub(crate) fn poll_ready(&self, interest: Interest, cx: &mut Context<'_>) -> Poll<Ready> {
        if !self.first_turn.turned() {
            self.first_turn.wait(cx);
            crate::util::note_wait("FIFO", sim_runtime::WaitDetail::None, None);
            return Poll::Pending;
        }
        let mut state = lock(&self.shared);
        let mut ready = Ready::EMPTY;
        if interest.is_readable() && self.read_ready(&state) {
            ready |= Ready::READABLE;
        }
        if interest.is_writable() && Self::write_ready(&state) {
            ready |= Ready::WRITABLE;
        }
        if !ready.is_empty() {
            return Poll::Ready(ready);
        }
        if interest.is_readable() {
            push_waker(&mut state.read_wakers, cx.waker());
        }
        if interest.is_writable() {
            push_waker(&mut state.write_wakers, cx.waker());
        }
        drop(state);
        crate::util::note_wait("FIFO", sim_runtime::WaitDetail::None, None);
        Poll::Pending
    }

    pub(crate) fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        if !self.first_turn.turned() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        self.read_now(buf)
    }

    /// A read that does not wait, as a non-blocking `read(2)` answers.
    fn read_now(&self, buf: &mut [u8]) -> io::Result<usize> {
        let (n, wake) = {
            let mut state = lock(&self.shared);
            if state.buffer.is_empty() {
                if self.at_end(&state) || buf.is_empty() {
                    return Ok(0);
                }
                return Err(io::ErrorKind::WouldBlock.into());
            }
            let n = buf.len().min(state.buffer.len());
            for (slot, byte) in buf.iter_mut().zip(state.buffer.drain(..n)) {
                *slot = byte;
            }
            (n, std::mem::take(&mut state.write_wakers))
        };
        for w in wake {
            w.wake();
        }
        Ok(n)
    }

    pub(crate) fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        if !self.first_turn.turned() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        self.write_now(buf)
    }

    /// A write that does not wait, as a non-blocking `write(2)` answers.
    fn write_now(&self, buf: &[u8]) -> io::Result<usize> {
        let (n, wake) = {
            let mut state = lock(&self.shared);
            if state.readers == 0 {
                return Err(io::Error::from_raw_os_error(libc_dep::EPIPE));
            }
            let room = FIFO_CAPACITY_BYTES - state.buffer.len();
            if room == 0 && !buf.is_empty() {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            let n = room.min(buf.len());
            state.buffer.extend(&buf[..n]);
            (n, std::mem::take(&mut state.read_wakers))
        };
        for w in wake {
            w.wake();
        }
        Ok(n)
    }

    pub(crate) fn poll_read(
        &self,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        // Bounded: a read either finds bytes or end of stream, or registers.
        loop {
            match self.try_read(buf.initialize_unfilled()) {
                Ok(n) => {
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if self.poll_ready(Interest::READABLE, cx).is_pending() {
                        return Poll::Pending;
                    }
                }
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }

    pub(crate) fn poll_write(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        loop {
            match self.try_write(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if self.poll_ready(Interest::WRITABLE, cx).is_pending() {
                        return Poll::Pending;
                    }
                }
                other => return Poll::Ready(other),
            }
        }
    }

    /// A real descriptor standing for the end (`AsRawFd`): an empty pipe,
    /// non-blocking as tokio sets its pipe ends.
    pub(crate) fn placeholder(&self) -> BorrowedFd<'_> {
        self.placeholder
            .get_or_init(|| {
                let fd = crate::process::stdio::placeholder()
                    .expect("sim: a placeholder for a FIFO end");
                set_nonblocking(&fd);
                fd
            })
            .as_fd()
    }
}

/// Sets `O_NONBLOCK` on a real descriptor.
fn set_nonblocking(fd: &OwnedFd) {
    use std::os::fd::AsRawFd;
    // SAFETY: fcntl on a descriptor `fd` owns; a failure leaves it as it was.
    unsafe {
        let flags = libc_dep::fcntl(fd.as_raw_fd(), libc_dep::F_GETFL);
        if flags >= 0 {
            libc_dep::fcntl(
                fd.as_raw_fd(),
                libc_dep::F_SETFL,
                flags | libc_dep::O_NONBLOCK,
            );
        }
    }
}

/// The FIFO end a `std::fs` descriptor `fd` holds, taken from it for
/// `from_file`/`from_owned_fd` as `side`: `None` when `fd` holds none (the
/// descriptor is then untouched); `InvalidInput` for an end opened without
/// the access `side` needs, as tokio checks.
pub(crate) fn take_std_end(fd: i32, side: Side, what: &str) -> Option<io::Result<FifoEnd>> {
    let (end, status) = sim_fs::take_fifo_descriptor(fd)?;
    let mut end = *end
        .downcast::<FifoEnd>()
        .expect("sim: a FIFO descriptor holds a FifoEnd");
    let access = status & libc_dep::O_ACCMODE;
    let fits = match side {
        Side::Receiver => access != libc_dep::O_WRONLY,
        Side::Sender => access != libc_dep::O_RDONLY,
    };
    if !fits {
        return Some(Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{what}: the FIFO is not open for the access this end needs"),
        )));
    }
    // Registered with the runtime now: ready from its next turn.
    end.first_turn = FirstTurn::new();
    Some(Ok(end))
}

/// Installs [`install`] before `main` (a constructor, as the `ctor` crate
/// makes), in every process that links the facade: a harness test builds
/// no runtime through the facade's builder, and its hosts' `std::fs` meets
/// FIFOs all the same.
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static INSTALL_AT_START: extern "C" fn() = {
    extern "C" fn install_at_start() {
        install();
    }
    install_at_start
};

/// Gives `std::fs` the simulated FIFOs (once per process): an open of one
/// is an end of it, read and written without waiting (see
/// `sim_fs::FifoHooks`).
fn install() {
    fn errno(e: io::Error) -> i32 {
        match e.kind() {
            io::ErrorKind::WouldBlock => libc_dep::EAGAIN,
            _ => e.raw_os_error().unwrap_or(libc_dep::EIO),
        }
    }
    fn end(end: &dyn std::any::Any) -> &FifoEnd {
        end.downcast_ref()
            .expect("sim: a FIFO descriptor holds a FifoEnd")
    }
    sim_fs::set_fifo_hooks(sim_fs::FifoHooks {
        open: |node, ino, read, write, nonblocking| {
            open_ino(node, ino, read, write, nonblocking)
                .map(|end| Box::new(end) as Box<dyn std::any::Any>)
                .map_err(errno)
        },
        read: |e, buf| end(e).read_now(buf).map_err(errno),
        write: |e, buf| end(e).write_now(buf).map_err(errno),
    });
}

impl Drop for FifoEnd {
    fn drop(&mut self) {
        let wake = {
            let mut state = lock(&self.shared);
            state.readers -= u32::from(self.reads);
            state.writers -= u32::from(self.writes);
            let mut wake = Vec::new();
            if self.writes && state.writers == 0 {
                // Receivers read end of stream now.
                wake.append(&mut state.read_wakers);
            }
            if self.reads && state.readers == 0 {
                // Senders get BrokenPipe now; what is buffered is lost.
                state.buffer.clear();
                wake.append(&mut state.write_wakers);
            }
            wake
        };
        for w in wake {
            w.wake();
        }
    }
}
