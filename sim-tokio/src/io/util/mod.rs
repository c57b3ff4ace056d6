//! The I/O utilities: extension traits and their futures, buffered
//! wrappers, copies and in-memory pipes. Each file is one concept.

mod async_buf_read_ext;
mod async_read_ext;
mod async_seek_ext;
mod async_write_ext;
mod buf_reader;
mod buf_stream;
mod buf_writer;
mod chain;
mod copy;
mod copy_bidirectional;
mod empty;
mod lines;
mod mem;
mod read_until;
mod repeat;
mod sink;
mod split;
mod take;

pub use async_buf_read_ext::AsyncBufReadExt;
pub use async_read_ext::AsyncReadExt;
pub use async_seek_ext::AsyncSeekExt;
pub use async_write_ext::AsyncWriteExt;
pub use buf_reader::BufReader;
pub use buf_stream::BufStream;
pub use buf_writer::BufWriter;
pub use chain::Chain;
pub use copy::{copy, copy_buf};
pub use copy_bidirectional::{copy_bidirectional, copy_bidirectional_with_sizes};
pub use empty::{empty, Empty};
pub use lines::Lines;
pub use mem::{duplex, simplex, DuplexStream, SimplexStream};
pub use repeat::{repeat, Repeat};
pub use sink::{sink, Sink};
pub use split::Split;
pub use take::Take;
