//! Asynchronous I/O: the traits, their extension helpers, buffered
//! wrappers, copies, in-memory pipes and the standard streams, with tokio's
//! semantics. Nothing here touches the operating system except the
//! standard streams (see [`stdin`]); `unix::AsyncFd` watches simulated
//! connections and refuses real descriptors during a simulation.

mod async_buf_read;
mod async_read;
mod async_seek;
mod async_write;
mod interest;
mod join;
mod read_buf;
mod ready;
mod split;
mod stdio;
pub mod unix;
mod util;

pub use async_buf_read::AsyncBufRead;
pub use async_read::AsyncRead;
pub use async_seek::AsyncSeek;
pub use async_write::AsyncWrite;
pub use interest::Interest;
pub use join::{join, Join};
pub use read_buf::ReadBuf;
pub use ready::Ready;
pub use split::{split, ReadHalf, WriteHalf};
pub use std::io::{Error, ErrorKind, Result, SeekFrom};
pub use stdio::{stderr, stdin, stdout, Stderr, Stdin, Stdout};
pub use util::{
    copy, copy_bidirectional, copy_bidirectional_with_sizes, copy_buf, duplex, empty, repeat,
    simplex, sink, AsyncBufReadExt, AsyncReadExt, AsyncSeekExt, AsyncWriteExt, BufReader,
    BufStream, BufWriter, Chain, DuplexStream, Empty, Lines, Repeat, SimplexStream, Sink, Split,
    Take,
};
