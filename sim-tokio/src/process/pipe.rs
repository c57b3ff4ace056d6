//! The pipes between a parent and a simulated program: one direction, a
//! bounded buffer (64 KiB, Linux's default pipe size) that pushes back on
//! the writer, end of stream once the writer is gone, `BrokenPipe` once the
//! reader is.

use crate::io::ReadBuf;
use std::collections::VecDeque;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

/// Linux's default pipe capacity.
pub(crate) const PIPE_CAPACITY_BYTES: usize = 64 * 1024;

#[derive(Debug)]
struct State {
    buffer: VecDeque<u8>,
    reader_alive: bool,
    writer_alive: bool,
    read_waker: Option<Waker>,
    write_waker: Option<Waker>,
}

/// The state both ends share.
type Shared = Arc<Mutex<State>>;

fn lock(shared: &Shared) -> MutexGuard<'_, State> {
    shared.lock().unwrap_or_else(|e| e.into_inner())
}

/// The read end of a pipe.
#[derive(Debug)]
pub(crate) struct PipeReader {
    shared: Shared,
    /// The task of the program at the other end, for wait reports.
    pub(crate) peer_task: u64,
}

/// The write end of a pipe.
#[derive(Debug)]
pub(crate) struct PipeWriter {
    shared: Shared,
    pub(crate) peer_task: u64,
}

/// A new pipe, its two ends.
pub(crate) fn pipe() -> (PipeReader, PipeWriter) {
    let shared = Arc::new(Mutex::new(State {
        buffer: VecDeque::new(),
        reader_alive: true,
        writer_alive: true,
        read_waker: None,
        write_waker: None,
    }));
    (
        PipeReader {
            shared: shared.clone(),
            peer_task: 0,
        },
        PipeWriter {
            shared,
            peer_task: 0,
        },
    )
}

impl PipeReader {
    pub(crate) fn poll_read(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
        what: &'static str,
    ) -> Poll<io::Result<()>> {
        let waker = {
            let mut state = lock(&self.shared);
            if state.buffer.is_empty() {
                if !state.writer_alive || buf.remaining() == 0 {
                    return Poll::Ready(Ok(()));
                }
                state.read_waker = Some(cx.waker().clone());
                drop(state);
                crate::util::note_wait(what, sim_runtime::WaitDetail::Task(self.peer_task), None);
                return Poll::Pending;
            }
            let n = buf.remaining().min(state.buffer.len());
            let (front, back) = state.buffer.as_slices();
            let from_front = n.min(front.len());
            buf.put_slice(&front[..from_front]);
            buf.put_slice(&back[..n - from_front]);
            state.buffer.drain(..n);
            state.write_waker.take()
        };
        // Woken outside the lock: a waker's wake may run arbitrary code.
        if let Some(w) = waker {
            w.wake();
        }
        Poll::Ready(Ok(()))
    }
}

impl PipeWriter {
    pub(crate) fn poll_write(
        &mut self,
        cx: &mut Context<'_>,
        buf: &[u8],
        what: &'static str,
    ) -> Poll<io::Result<usize>> {
        let waker = {
            let mut state = lock(&self.shared);
            if !state.reader_alive {
                return Poll::Ready(Err(io::Error::from(io::ErrorKind::BrokenPipe)));
            }
            if buf.is_empty() {
                return Poll::Ready(Ok(0));
            }
            let room = PIPE_CAPACITY_BYTES - state.buffer.len();
            if room == 0 {
                state.write_waker = Some(cx.waker().clone());
                drop(state);
                crate::util::note_wait(what, sim_runtime::WaitDetail::Task(self.peer_task), None);
                return Poll::Pending;
            }
            let n = room.min(buf.len());
            state.buffer.extend(&buf[..n]);
            debug_assert!(state.buffer.len() <= PIPE_CAPACITY_BYTES);
            (state.read_waker.take(), n)
        };
        if let Some(w) = waker.0 {
            w.wake();
        }
        Poll::Ready(Ok(waker.1))
    }

    /// Writes as much of `bufs` as fits, in order.
    pub(crate) fn poll_write_vectored(
        &mut self,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
        what: &'static str,
    ) -> Poll<io::Result<usize>> {
        let Some(first) = bufs.iter().position(|b| !b.is_empty()) else {
            return self.poll_write(cx, &[], what);
        };
        let mut total = match self.poll_write(cx, &bufs[first], what) {
            Poll::Ready(Ok(n)) => n,
            other => return other,
        };
        if total < bufs[first].len() {
            return Poll::Ready(Ok(total));
        }
        // The rest goes in without waiting: a partial write is a write.
        for b in &bufs[first + 1..] {
            let n = self.write_now(b);
            total += n;
            if n < b.len() {
                break;
            }
        }
        Poll::Ready(Ok(total))
    }

    /// Writes what fits of `buf` now, without waiting: 0 when full or
    /// broken (the next poll reports which).
    fn write_now(&mut self, buf: &[u8]) -> usize {
        let waker = {
            let mut state = lock(&self.shared);
            if !state.reader_alive {
                return 0;
            }
            let n = (PIPE_CAPACITY_BYTES - state.buffer.len()).min(buf.len());
            state.buffer.extend(&buf[..n]);
            (state.read_waker.take(), n)
        };
        if let Some(w) = waker.0 {
            w.wake();
        }
        waker.1
    }
}

impl Drop for PipeReader {
    fn drop(&mut self) {
        let waker = {
            let mut state = lock(&self.shared);
            state.reader_alive = false;
            state.buffer.clear();
            state.write_waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }
}

impl Drop for PipeWriter {
    fn drop(&mut self) {
        let waker = {
            let mut state = lock(&self.shared);
            state.writer_alive = false;
            state.read_waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }
}
