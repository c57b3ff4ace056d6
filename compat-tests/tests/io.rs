//! tokio::io semantics, in both builds.

use std::io::{Cursor, SeekFrom};
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{
    self, AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncSeekExt, AsyncWrite, AsyncWriteExt,
    BufReader, BufStream, BufWriter, ReadBuf,
};

#[tokio::test]
async fn read_helpers_and_integers() {
    let data: Vec<u8> = vec![
        1, // u8
        0, 2, // u16 be
        3, 0, // u16 le
        0, 0, 0, 4, // u32 be
        0x40, 0x49, 0x0f, 0xdb, // f32 be (pi)
        b'h', b'i',
    ];
    let mut r = &data[..];
    assert_eq!(r.read_u8().await.unwrap(), 1);
    assert_eq!(r.read_u16().await.unwrap(), 2);
    assert_eq!(r.read_u16_le().await.unwrap(), 3);
    assert_eq!(r.read_u32().await.unwrap(), 4);
    assert!((r.read_f32().await.unwrap() - std::f32::consts::PI).abs() < 1e-6);
    let mut rest = String::new();
    assert_eq!(r.read_to_string(&mut rest).await.unwrap(), 2);
    assert_eq!(rest, "hi");
    let err = r.read_u8().await.unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof);
}

#[tokio::test]
async fn read_exact_fails_at_early_eof_and_read_to_end_appends() {
    let mut r: &[u8] = b"abc";
    let mut buf = [0u8; 5];
    assert_eq!(
        r.read_exact(&mut buf).await.unwrap_err().kind(),
        std::io::ErrorKind::UnexpectedEof
    );
    let mut r: &[u8] = b"world";
    let mut out = b"hello ".to_vec();
    assert_eq!(r.read_to_end(&mut out).await.unwrap(), 5);
    assert_eq!(out, b"hello world");
}

#[tokio::test]
async fn read_to_string_rejects_invalid_utf8_and_keeps_the_string() {
    let mut r: &[u8] = &[0xff, 0xfe];
    let mut s = String::from("keep");
    let err = r.read_to_string(&mut s).await.unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
    assert_eq!(s, "keep");
}

#[tokio::test]
async fn write_helpers_and_integers() {
    let mut out = Vec::new();
    out.write_u8(1).await.unwrap();
    out.write_u16(2).await.unwrap();
    out.write_u32_le(3).await.unwrap();
    out.write_i64(-1).await.unwrap();
    out.write_all(b"xy").await.unwrap();
    let mut buf = &b"zz"[..];
    out.write_all_buf(&mut buf).await.unwrap();
    out.flush().await.unwrap();
    out.shutdown().await.unwrap();
    let mut expected = vec![1, 0, 2, 3, 0, 0, 0];
    expected.extend_from_slice(&[0xff; 8]);
    expected.extend_from_slice(b"xyzz");
    assert_eq!(out, expected);
}

#[tokio::test]
async fn read_buf_and_write_buf_with_bytes() {
    let mut r: &[u8] = b"0123456789";
    let mut dst = Vec::with_capacity(4);
    let n = r.read_buf(&mut dst).await.unwrap();
    assert!(n > 0);
    assert_eq!(&dst[..], &b"0123456789"[..n]);
    let mut out = Vec::new();
    let mut src = Cursor::new(b"abc".to_vec());
    let written = out.write_buf(&mut src).await.unwrap();
    assert_eq!(written, 3);
    assert_eq!(out, b"abc");
}

#[tokio::test]
async fn buffered_lines_split_and_read_until() {
    let r = BufReader::new(&b"one\ntwo\r\nthree"[..]);
    let mut lines = r.lines();
    let mut got = Vec::new();
    while let Some(line) = lines.next_line().await.unwrap() {
        got.push(line);
    }
    assert_eq!(got, vec!["one", "two", "three"]);

    let mut segments = BufReader::new(&b"a,b,,c"[..]).split(b',');
    let mut parts = Vec::new();
    while let Some(seg) = segments.next_segment().await.unwrap() {
        parts.push(String::from_utf8(seg).unwrap());
    }
    assert_eq!(parts, vec!["a", "b", "", "c"]);

    let mut r = BufReader::new(&b"key=value;rest"[..]);
    let mut buf = Vec::new();
    assert_eq!(r.read_until(b';', &mut buf).await.unwrap(), 10);
    assert_eq!(buf, b"key=value;");
    let mut line = String::new();
    assert_eq!(r.read_line(&mut line).await.unwrap(), 4);
    assert_eq!(line, "rest");
}

/// A reader that counts how often it is asked to read.
struct CountingReader {
    data: Vec<u8>,
    pos: usize,
    reads: usize,
}

impl AsyncRead for CountingReader {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        self.reads += 1;
        let n = buf.remaining().min(self.data.len() - self.pos);
        let start = self.pos;
        buf.put_slice(&self.data[start..start + n]);
        self.pos += n;
        Poll::Ready(Ok(()))
    }
}

#[tokio::test]
async fn buf_reader_turns_small_reads_into_one_and_bypasses_for_big_ones() {
    let inner = CountingReader {
        data: (0..100u8).collect(),
        pos: 0,
        reads: 0,
    };
    let mut r = BufReader::with_capacity(64, inner);
    let mut one = [0u8; 1];
    for i in 0..10u8 {
        r.read_exact(&mut one).await.unwrap();
        assert_eq!(one[0], i);
    }
    assert_eq!(r.get_ref().reads, 1, "ten one-byte reads, one inner read");
    assert_eq!(r.buffer().len(), 54);
    // A read as large as the buffer, with the buffer drained, goes straight
    // through.
    let mut rest = vec![0u8; 54];
    r.read_exact(&mut rest).await.unwrap();
    let mut big = [0u8; 64];
    let n = r.read(&mut big).await.unwrap();
    assert_eq!(n, 36);
    assert_eq!(big[0], 64);
}

/// A writer that records each write it receives.
#[derive(Default)]
struct RecordingWriter {
    writes: Vec<Vec<u8>>,
    flushes: usize,
}

impl AsyncWrite for RecordingWriter {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.writes.push(buf.to_vec());
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.flushes += 1;
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[tokio::test]
async fn buf_writer_holds_writes_until_flush_or_full() {
    let mut w = BufWriter::with_capacity(8, RecordingWriter::default());
    w.write_all(b"abc").await.unwrap();
    w.write_all(b"de").await.unwrap();
    assert!(w.get_ref().writes.is_empty(), "buffered, not written");
    assert_eq!(w.buffer(), b"abcde");
    w.write_all(b"fghi").await.unwrap(); // does not fit: the buffer goes first
    assert_eq!(w.get_ref().writes, vec![b"abcde".to_vec()]);
    w.flush().await.unwrap();
    assert_eq!(
        w.get_ref().writes,
        vec![b"abcde".to_vec(), b"fghi".to_vec()]
    );
    assert_eq!(w.get_ref().flushes, 1);
    // A write at least as big as the buffer bypasses it.
    w.write_all(b"0123456789").await.unwrap();
    assert_eq!(w.get_ref().writes.last().unwrap(), b"0123456789");
    assert!(w.buffer().is_empty());
}

#[tokio::test]
async fn buf_stream_reads_and_writes() {
    let (a, b) = io::duplex(64);
    let mut a = BufStream::new(a);
    let mut b = BufStream::new(b);
    a.write_all(b"ping\n").await.unwrap();
    a.flush().await.unwrap();
    let mut line = String::new();
    b.read_line(&mut line).await.unwrap();
    assert_eq!(line, "ping\n");
}

#[tokio::test]
async fn take_chain_empty_repeat_sink() {
    let mut t = (&b"abcdef"[..]).take(4);
    let mut out = String::new();
    t.read_to_string(&mut out).await.unwrap();
    assert_eq!(out, "abcd");
    assert_eq!(t.limit(), 0);

    let mut c = (&b"ab"[..]).chain(&b"cd"[..]);
    let mut out = String::new();
    c.read_to_string(&mut out).await.unwrap();
    assert_eq!(out, "abcd");

    let mut e = io::empty();
    let mut buf = [0u8; 4];
    assert_eq!(e.read(&mut buf).await.unwrap(), 0);

    let mut r = io::repeat(7).take(3);
    let mut v = Vec::new();
    r.read_to_end(&mut v).await.unwrap();
    assert_eq!(v, vec![7, 7, 7]);

    let mut s = io::sink();
    assert_eq!(s.write(b"gone").await.unwrap(), 4);
}

#[tokio::test]
async fn copy_moves_everything_and_flushes() {
    let mut src: &[u8] = &[5u8; 20_000];
    let mut dst = BufWriter::new(Vec::new());
    let n = io::copy(&mut src, &mut dst).await.unwrap();
    assert_eq!(n, 20_000);
    assert!(dst.buffer().is_empty(), "copy flushed at the end");
    assert_eq!(dst.get_ref().len(), 20_000);

    let mut buffered = BufReader::new(&b"buffered copy"[..]);
    let mut out = Vec::new();
    assert_eq!(io::copy_buf(&mut buffered, &mut out).await.unwrap(), 13);
}

#[tokio::test]
async fn duplex_pushes_back_when_full_and_ends_on_drop() {
    let (mut a, mut b) = io::duplex(4);
    // Only four bytes fit until the peer reads.
    let written = a.write(b"123456").await.unwrap();
    assert_eq!(written, 4);
    let writer = tokio::spawn(async move {
        a.write_all(b"56789").await.unwrap();
        a.shutdown().await.unwrap();
        a
    });
    let mut all = Vec::new();
    b.read_to_end(&mut all).await.unwrap();
    assert_eq!(all, b"123456789");
    let a = writer.await.unwrap();
    drop(b);
    let mut a = a;
    let err = a.write_all(b"x").await.unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::BrokenPipe);
}

#[tokio::test]
async fn copy_bidirectional_propagates_shutdown() {
    // client <-> (proxy_a | proxy_b) <-> server
    let (mut client, mut proxy_a) = io::duplex(64);
    let (mut proxy_b, mut server) = io::duplex(64);
    let proxy = tokio::spawn(async move {
        io::copy_bidirectional(&mut proxy_a, &mut proxy_b)
            .await
            .unwrap()
    });
    client.write_all(b"request").await.unwrap();
    client.shutdown().await.unwrap();
    let mut req = Vec::new();
    // The server reads end of stream: the client's shutdown went through.
    server.read_to_end(&mut req).await.unwrap();
    assert_eq!(req, b"request");
    server.write_all(b"response!").await.unwrap();
    server.shutdown().await.unwrap();
    let mut resp = Vec::new();
    client.read_to_end(&mut resp).await.unwrap();
    assert_eq!(resp, b"response!");
    assert_eq!(proxy.await.unwrap(), (7, 9));
}

#[tokio::test]
async fn split_halves_and_unsplit() {
    let (a, mut b) = io::duplex(16);
    let (mut r, mut w) = io::split(a);
    w.write_all(b"hi").await.unwrap();
    let mut buf = [0u8; 2];
    b.read_exact(&mut buf).await.unwrap();
    b.write_all(b"yo").await.unwrap();
    r.read_exact(&mut buf).await.unwrap();
    assert_eq!(&buf, b"yo");
    assert!(r.is_pair_of(&w));
    let _a = r.unsplit(w);

    let (mut rd, mut wr) = io::simplex(8);
    wr.write_all(b"one way").await.unwrap();
    // Dropping a half does not close the pipe; shutting the writer does.
    wr.shutdown().await.unwrap();
    let mut s = String::new();
    rd.read_to_string(&mut s).await.unwrap();
    assert_eq!(s, "one way");
}

#[tokio::test]
async fn join_reads_one_and_writes_the_other() {
    let mut joined = io::join(&b"from reader"[..], Vec::new());
    let mut s = String::new();
    joined.read_to_string(&mut s).await.unwrap();
    joined.write_all(b"to writer").await.unwrap();
    let (_, w) = joined.into_inner();
    assert_eq!(s, "from reader");
    assert_eq!(w, b"to writer");
}

#[tokio::test]
async fn seek_on_cursors_and_buf_reader() {
    let mut c = Cursor::new(b"0123456789".to_vec());
    assert_eq!(c.seek(SeekFrom::Start(4)).await.unwrap(), 4);
    assert_eq!(c.read_u8().await.unwrap(), b'4');
    assert_eq!(c.stream_position().await.unwrap(), 5);
    c.rewind().await.unwrap();
    assert_eq!(c.read_u8().await.unwrap(), b'0');

    let mut r = BufReader::with_capacity(4, Cursor::new(b"abcdefgh".to_vec()));
    assert_eq!(r.read_u8().await.unwrap(), b'a');
    // Relative seeks account for what is buffered.
    assert_eq!(r.seek(SeekFrom::Current(2)).await.unwrap(), 3);
    assert_eq!(r.read_u8().await.unwrap(), b'd');
}

#[tokio::test]
async fn interest_and_ready_combine() {
    let both = io::Interest::READABLE | io::Interest::WRITABLE;
    assert!(both.is_readable() && both.is_writable());
    assert_eq!(
        both.remove(io::Interest::READABLE),
        Some(io::Interest::WRITABLE)
    );
    assert_eq!(io::Interest::READABLE.remove(io::Interest::READABLE), None);
    let r = io::Ready::READABLE | io::Ready::READ_CLOSED;
    assert!(r.is_readable() && r.is_read_closed() && !r.is_writable());
    assert!(
        (r - io::Ready::READABLE).is_readable(),
        "read-closed counts as readable"
    );
    assert!(io::Ready::EMPTY.is_empty());
}

#[tokio::test]
async fn stdout_and_stderr_accept_writes() {
    let mut out = io::stdout();
    out.write_all(b"").await.unwrap();
    out.flush().await.unwrap();
    let mut err = io::stderr();
    err.write_all(b"").await.unwrap();
}

#[tokio::test]
async fn cursors_write_as_std_cursors_do() {
    // Over a vector: it grows, and a gap before the position fills with 0.
    let mut grown = Cursor::new(Vec::new());
    grown.write_all(b"hello").await.unwrap();
    grown.set_position(7);
    grown.write_all(b"!").await.unwrap();
    assert_eq!(grown.get_ref().as_slice(), b"hello\0\0!");
    // Over a slice: up to its end, then nothing.
    let mut backing = [0u8; 4];
    let mut slice = Cursor::new(&mut backing[..]);
    assert_eq!(slice.write(b"abcdef").await.unwrap(), 4);
    assert_eq!(slice.write(b"x").await.unwrap(), 0);
    assert_eq!(&backing, b"abcd");
    // Over a borrowed vector, flushed and shut down.
    let mut vec = Vec::new();
    let mut borrowed = Cursor::new(&mut vec);
    borrowed.write_all(b"ab").await.unwrap();
    borrowed.flush().await.unwrap();
    borrowed.shutdown().await.unwrap();
    assert_eq!(vec, b"ab");
    // Over a boxed slice, vectored: across the buffers, up to its end.
    let mut boxed = Cursor::new(vec![0u8; 3].into_boxed_slice());
    assert!(boxed.is_write_vectored());
    let bufs = [std::io::IoSlice::new(b"ab"), std::io::IoSlice::new(b"cd")];
    assert_eq!(boxed.write_vectored(&bufs).await.unwrap(), 3);
    assert_eq!(&*boxed.into_inner(), b"abc");
}

#[tokio::test]
async fn a_buf_reader_seek_past_i64_seeks_twice() {
    // Four bytes buffered, one read: three unread. Current(i64::MIN) less
    // three overflows: tokio seeks back by the three, then by i64::MIN,
    // which fails and leaves the reader where Current(0) would.
    let mut r = BufReader::with_capacity(4, Cursor::new(b"abcdefgh".to_vec()));
    let mut one = [0u8; 1];
    r.read_exact(&mut one).await.unwrap();
    let err = r.seek(SeekFrom::Current(i64::MIN)).await.unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    assert_eq!(r.stream_position().await.unwrap(), 1);
    let mut rest = String::new();
    r.read_to_string(&mut rest).await.unwrap();
    assert_eq!(rest, "bcdefgh");
}

#[tokio::test]
async fn read_to_end_grows_a_vector_only_when_it_must() {
    // Big enough from the start: it never grows, even at the end.
    for cap in [50, 64, 100] {
        let mut v = Vec::with_capacity(cap);
        Cursor::new(vec![7u8; 50])
            .read_to_end(&mut v)
            .await
            .unwrap();
        assert_eq!((v.len(), v.capacity()), (50, cap));
    }
    // Too small: it doubles when full, and again at the end.
    let data = b"the_vector_startingcap_will_be_smaller";
    let start = data.len() - 4;
    let mut v = Vec::with_capacity(start);
    Cursor::new(data.to_vec())
        .read_to_end(&mut v)
        .await
        .unwrap();
    assert_eq!(v.as_slice(), data);
    assert_eq!(v.capacity(), start * 4);
}

/// Gives `first`, then fails.
struct ThenFails(Option<&'static [u8]>);

impl AsyncRead for ThenFails {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.0.take() {
            Some(bytes) => {
                buf.put_slice(bytes);
                Poll::Ready(Ok(()))
            }
            None => Poll::Ready(Err(std::io::Error::other("the disk went away"))),
        }
    }
}

#[tokio::test]
async fn read_to_string_leaves_the_string_as_it_was_after_an_error() {
    let mut s = String::from("kept ");
    let err = ThenFails(Some(b"lost"))
        .read_to_string(&mut s)
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "the disk went away");
    assert_eq!(s, "kept ");
}

/// Records how it was written to.
#[derive(Default)]
struct Recorder {
    vectored: usize,
    plain: usize,
    bytes: Vec<u8>,
}

impl AsyncWrite for Recorder {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.plain += 1;
        self.bytes.extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        self.vectored += 1;
        let mut n = 0;
        for b in bufs {
            self.bytes.extend_from_slice(b);
            n += b.len();
        }
        Poll::Ready(Ok(n))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[tokio::test]
async fn write_buf_writes_every_chunk_to_a_vectored_writer_at_once() {
    let mut w = Recorder::default();
    let mut src = tokio_util::bytes::Buf::chain(&b"ab"[..], &b"cd"[..]);
    assert_eq!(w.write_buf(&mut src).await.unwrap(), 4);
    assert_eq!((w.vectored, w.plain), (1, 0));
    assert_eq!(w.bytes, b"abcd");
}

/// Counts calls to `poll_fill_buf`.
struct Counted {
    calls: usize,
}

impl AsyncRead for Counted {
    fn poll_read(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        _buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl tokio::io::AsyncBufRead for Counted {
    fn poll_fill_buf(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<&[u8]>> {
        let me = self.get_mut();
        me.calls += 1;
        Poll::Ready(Ok(b"data"))
    }

    fn consume(self: Pin<&mut Self>, _amt: usize) {}
}

#[tokio::test]
async fn fill_buf_asks_the_reader_once() {
    let mut r = Counted { calls: 0 };
    assert_eq!(r.fill_buf().await.unwrap(), b"data");
    assert_eq!(r.calls, 1);
}
