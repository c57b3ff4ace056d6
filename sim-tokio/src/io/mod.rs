//! Async I/O traits. This part holds the core traits (`AsyncRead`,
//! `AsyncWrite`, `ReadBuf`); the rest of tokio's `io` comes with its own
//! issue and is absent until then.

mod async_read;
mod async_write;
mod read_buf;

pub use async_read::AsyncRead;
pub use async_write::AsyncWrite;
pub use read_buf::ReadBuf;
pub use std::io::{Error, ErrorKind, Result, SeekFrom};
