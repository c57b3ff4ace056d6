//! Unix sockets: real ones (plain build), simulated ones (cargo sim test).

use std::io::ErrorKind;
use std::path::PathBuf;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixDatagram, UnixListener, UnixStream};

/// A fresh socket path for `name` (the same in every run).
fn path(name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("tokio-sim-compat-{name}.sock"));
    let _ = std::fs::remove_file(&path);
    path
}

#[tokio::test]
async fn stream_echo_and_addresses() {
    let path = path("echo");
    let listener = UnixListener::bind(&path).unwrap();
    assert_eq!(
        listener.local_addr().unwrap().as_pathname(),
        Some(path.as_path())
    );
    let server = tokio::spawn(async move {
        let (mut stream, peer) = listener.accept().await.unwrap();
        assert!(peer.is_unnamed());
        let mut buf = [0u8; 5];
        stream.read_exact(&mut buf).await.unwrap();
        stream.write_all(&buf).await.unwrap();
    });
    let mut client = UnixStream::connect(&path).await.unwrap();
    assert!(client.local_addr().unwrap().is_unnamed());
    assert_eq!(
        client.peer_addr().unwrap().as_pathname(),
        Some(path.as_path())
    );
    client.write_all(b"hello").await.unwrap();
    let mut back = [0u8; 5];
    client.read_exact(&mut back).await.unwrap();
    assert_eq!(&back, b"hello");
    server.await.unwrap();
    let _ = std::fs::remove_file(&path);
}

/// A bind leaves a socket file, which `std::fs` sees and removes; a file
/// that is no socket makes the bind fail.
#[tokio::test]
async fn a_bind_leaves_a_socket_file() {
    use std::os::unix::fs::FileTypeExt;
    let path = path("file");
    let listener = tokio::net::UnixListener::bind(&path).unwrap();
    assert!(std::fs::metadata(&path).unwrap().file_type().is_socket());
    drop(listener);
    std::fs::remove_file(&path).unwrap();
    std::fs::write(&path, b"not a socket").unwrap();
    let err = tokio::net::UnixListener::bind(&path).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::AddrInUse);
    std::fs::remove_file(&path).unwrap();
}

#[tokio::test]
async fn connecting_to_a_missing_path_fails() {
    let path = path("missing");
    let err = UnixStream::connect(&path).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
}

#[tokio::test]
async fn binding_a_bound_path_fails() {
    let path = path("twice");
    let _first = UnixListener::bind(&path).unwrap();
    let err = UnixListener::bind(&path).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::AddrInUse);
    let _ = std::fs::remove_file(&path);
}

#[tokio::test]
async fn pairs_shutdown_and_credentials() {
    let (mut a, mut b) = UnixStream::pair().unwrap();
    a.write_all(b"ab").await.unwrap();
    a.shutdown().await.unwrap();
    let mut got = Vec::new();
    b.read_to_end(&mut got).await.unwrap();
    assert_eq!(got, b"ab");
    b.write_all(b"back").await.unwrap();
    let mut four = [0u8; 4];
    a.read_exact(&mut four).await.unwrap();
    assert_eq!(&four, b"back");
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    assert_eq!(a.peer_cred().unwrap().uid(), uid);
    // Both ends are this process.
    assert_eq!(
        a.peer_cred().unwrap().pid(),
        Some(std::process::id() as libc::pid_t)
    );
}

#[tokio::test]
async fn owned_halves_reunite() {
    let (a, mut b) = UnixStream::pair().unwrap();
    let (mut r, mut w) = a.into_split();
    w.write_all(b"x").await.unwrap();
    let mut one = [0u8; 1];
    b.read_exact(&mut one).await.unwrap();
    b.write_all(b"y").await.unwrap();
    r.read_exact(&mut one).await.unwrap();
    assert_eq!(&one, b"y");
    assert!(r.reunite(w).is_ok());
}

#[tokio::test]
async fn datagrams_carry_their_sender() {
    let pa = path("dgram-a");
    let pb = path("dgram-b");
    let a = UnixDatagram::bind(&pa).unwrap();
    let b = UnixDatagram::bind(&pb).unwrap();
    a.send_to(b"one", &pb).await.unwrap();
    let mut buf = [0u8; 8];
    let (n, from) = b.recv_from(&mut buf).await.unwrap();
    assert_eq!(&buf[..n], b"one");
    assert_eq!(from.as_pathname(), Some(pa.as_path()));
    a.connect(&pb).unwrap();
    a.send(b"two").await.unwrap();
    assert_eq!(b.recv(&mut buf).await.unwrap(), 3);
    assert_eq!(
        b.try_recv(&mut buf).unwrap_err().kind(),
        ErrorKind::WouldBlock
    );
    let _ = std::fs::remove_file(&pa);
    let _ = std::fs::remove_file(&pb);
}

#[tokio::test]
async fn datagram_pairs() {
    let (a, b) = UnixDatagram::pair().unwrap();
    a.send(b"ping").await.unwrap();
    let mut buf = [0u8; 4];
    b.recv(&mut buf).await.unwrap();
    assert_eq!(&buf, b"ping");
    assert!(b.peer_addr().unwrap().is_unnamed());
}

#[tokio::test]
async fn anonymous_pipes_carry_bytes_one_way() {
    let (mut tx, mut rx) = tokio::net::unix::pipe::pipe().unwrap();
    tx.write_all(b"through the pipe").await.unwrap();
    drop(tx);
    let mut got = String::new();
    rx.read_to_string(&mut got).await.unwrap();
    assert_eq!(got, "through the pipe");
}

#[tokio::test]
async fn connecting_after_the_listener_dropped_is_refused() {
    let dir = std::env::temp_dir().join(format!("compat-unix-gone-{}", std::process::id()));
    let _ = tokio::fs::remove_dir_all(&dir).await;
    tokio::fs::create_dir_all(&dir).await.unwrap();
    let path = dir.join("sock");
    let listener = UnixListener::bind(&path).unwrap();
    drop(listener);
    // The socket file stays; nobody listens on it.
    let err = UnixStream::connect(&path).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ConnectionRefused);
}

#[tokio::test]
async fn unix_errors_carry_the_os_codes_and_texts() {
    let missing = path("texts-missing");
    let err = UnixStream::connect(&missing).await.unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::ENOENT));
    assert_eq!(err.to_string(), "No such file or directory (os error 2)");

    let taken = path("texts-taken");
    let _listener = UnixListener::bind(&taken).unwrap();
    let err = UnixListener::bind(&taken).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EADDRINUSE));
    assert_eq!(err.to_string(), "Address already in use (os error 98)");
    let err = UnixDatagram::bind(&taken).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EADDRINUSE));

    let long = std::env::temp_dir().join("x".repeat(200));
    let err = UnixListener::bind(&long).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert_eq!(err.to_string(), "path must be shorter than SUN_LEN");

    let dgram = UnixDatagram::unbound().unwrap();
    let err = dgram.send_to(b"x", &missing).await.unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::ENOENT));
    let err = dgram.send(b"x").await.unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::ENOTCONN));
    let _ = std::fs::remove_file(&taken);
}

#[tokio::test]
async fn unix_peer_and_local_paths() {
    let path = path("peer-paths");
    let listener = UnixListener::bind(&path).unwrap();
    let client = UnixStream::connect(&path).await.unwrap();
    let (server, from) = listener.accept().await.unwrap();
    assert!(from.is_unnamed());
    assert!(from.as_pathname().is_none());
    assert_eq!(
        client.peer_addr().unwrap().as_pathname(),
        Some(path.as_path())
    );
    assert!(client.local_addr().unwrap().is_unnamed());
    assert_eq!(
        server.local_addr().unwrap().as_pathname(),
        Some(path.as_path())
    );
    assert!(server.peer_addr().unwrap().is_unnamed());
    assert_eq!(format!("{:?}", client.local_addr().unwrap()), "(unnamed)");
    assert_eq!(
        format!("{:?}", server.local_addr().unwrap()),
        format!("{path:?} (pathname)")
    );
    let (a, _b) = UnixStream::pair().unwrap();
    assert!(a.local_addr().unwrap().is_unnamed());
    assert!(a.peer_addr().unwrap().is_unnamed());
    let _ = std::fs::remove_file(&path);
}

/// A FIFO made with libc's `mkfifo` (as nix calls it): real in the plain
/// build, simulated on the host's disk in a simulation.
fn make_fifo(name: &str) -> PathBuf {
    let path = path(name);
    let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
    path
}

#[tokio::test]
async fn named_pipes_made_with_mkfifo() {
    use std::os::unix::fs::FileTypeExt;
    use tokio::net::unix::pipe::OpenOptions;
    let fifo = make_fifo("fifo-basic");
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    // No reader yet: a sender cannot open.
    let err = OpenOptions::new().open_sender(&fifo).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::ENXIO));
    let mut rx = OpenOptions::new().open_receiver(&fifo).unwrap();
    let mut tx = OpenOptions::new().open_sender(&fifo).unwrap();
    tx.write_all(b"through a fifo").await.unwrap();
    drop(tx);
    let mut got = String::new();
    rx.read_to_string(&mut got).await.unwrap();
    assert_eq!(got, "through a fifo");
    // With no receiver left, a read-write sender opens; a plain one fails.
    drop(rx);
    let mut rw = OpenOptions::new()
        .read_write(true)
        .open_sender(&fifo)
        .unwrap();
    rw.write_all(b"x").await.unwrap();
    drop(rw);
    // A regular file is not a pipe.
    let file = path("fifo-not-a-pipe");
    std::fs::write(&file, b"").unwrap();
    let err = OpenOptions::new().open_receiver(&file).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    let _ = std::fs::remove_file(&fifo);
    let _ = std::fs::remove_file(&file);
}

/// Linux reports a FIFO's hang-up to a reader opened while no writer was
/// only after a writer came: until then it waits, and tokio with it.
#[tokio::test]
async fn a_fifo_receiver_opened_before_any_sender_waits_for_one() {
    use tokio::net::unix::pipe::OpenOptions;
    let fifo = make_fifo("fifo-wait");
    let mut rx = OpenOptions::new().open_receiver(&fifo).unwrap();
    let mut one = [0u8; 1];
    assert_eq!(
        rx.try_read(&mut one).unwrap_err().kind(),
        ErrorKind::WouldBlock
    );
    let mut tx = OpenOptions::new().open_sender(&fifo).unwrap();
    tx.write_all(b"late").await.unwrap();
    drop(tx);
    let mut got = String::new();
    rx.read_to_string(&mut got).await.unwrap();
    assert_eq!(got, "late");
    let _ = std::fs::remove_file(&fifo);
}

/// As every descriptor tokio registers, a FIFO end knows nothing of its
/// readiness until the driver's next turn: a `try_write` right after the
/// open says `WouldBlock`, and once `writable` returned it writes.
#[tokio::test]
async fn a_fifo_end_is_ready_from_the_drivers_next_turn() {
    use tokio::net::unix::pipe::OpenOptions;
    let fifo = make_fifo("fifo-turn");
    let rx = OpenOptions::new().open_receiver(&fifo).unwrap();
    let tx = OpenOptions::new().open_sender(&fifo).unwrap();
    assert_eq!(
        tx.try_write(b"x").unwrap_err().kind(),
        ErrorKind::WouldBlock
    );
    tx.writable().await.unwrap();
    assert_eq!(tx.try_write(b"x").unwrap(), 1);
    rx.readable().await.unwrap();
    let mut one = [0u8; 1];
    assert_eq!(rx.try_read(&mut one).unwrap(), 1);
    let _ = std::fs::remove_file(&fifo);
}

fn nonblocking(fd: &impl std::os::fd::AsRawFd) -> bool {
    // SAFETY: F_GETFL on a descriptor the caller holds open.
    let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
    assert!(flags >= 0);
    flags & libc::O_NONBLOCK != 0
}

/// A FIFO opened with `std::fs` is read and written as a pipe, and becomes
/// a pipe end with `from_file` (set non-blocking) when its access mode
/// fits the end.
#[tokio::test]
async fn a_fifo_opened_with_std_fs_becomes_a_pipe_end() {
    use std::io::{Read, Write};
    use std::os::unix::fs::OpenOptionsExt;
    use tokio::net::unix::pipe;
    let fifo = make_fifo("fifo-std");
    let open = |read: bool, flags: i32| {
        std::fs::OpenOptions::new()
            .read(read)
            .write(!read)
            .custom_flags(flags)
            .open(&fifo)
            .unwrap()
    };
    let mut rx = pipe::Receiver::from_file(open(true, libc::O_NONBLOCK)).unwrap();
    // A reader is open, so a blocking open for writing does not wait.
    let tx_file = open(false, 0);
    assert!(!nonblocking(&tx_file));
    let mut tx = pipe::Sender::from_file(tx_file).unwrap();
    assert!(nonblocking(&tx));
    tx.write_all(b"via std").await.unwrap();
    drop(tx);
    let mut got = String::new();
    rx.read_to_string(&mut got).await.unwrap();
    assert_eq!(got, "via std");

    let read_only = open(true, libc::O_NONBLOCK);
    let err = pipe::Sender::from_file(read_only).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);

    let (mut r, mut w) = (open(true, libc::O_NONBLOCK), open(false, libc::O_NONBLOCK));
    w.write_all(b"raw").unwrap();
    let mut buf = [0u8; 3];
    r.read_exact(&mut buf).unwrap();
    assert_eq!(&buf, b"raw");
    assert_eq!(r.read(&mut buf).unwrap_err().kind(), ErrorKind::WouldBlock);
    drop(w);
    assert_eq!(r.read(&mut buf).unwrap(), 0, "no writer left: end of file");
    let _ = std::fs::remove_file(&fifo);
}

#[tokio::test]
async fn a_fifo_receiver_waits_for_writes_from_several_senders() {
    use tokio::net::unix::pipe::OpenOptions;
    let fifo = make_fifo("fifo-many");
    let mut rx = OpenOptions::new()
        .read_write(true)
        .open_receiver(&fifo)
        .unwrap();
    let mut a = OpenOptions::new().open_sender(&fifo).unwrap();
    let mut b = OpenOptions::new().open_sender(&fifo).unwrap();
    a.write_all(b"one ").await.unwrap();
    b.write_all(b"two").await.unwrap();
    let mut buf = [0u8; 7];
    rx.read_exact(&mut buf).await.unwrap();
    assert_eq!(&buf, b"one two");
    // Opened read-write, the receiver never reads end of stream: it waits.
    drop((a, b));
    let mut one = [0u8; 1];
    assert_eq!(
        rx.try_read(&mut one).unwrap_err().kind(),
        ErrorKind::WouldBlock
    );
    let _ = std::fs::remove_file(&fifo);
}

/// A pipe made with libc's `pipe2`, as nix and `std::io::pipe` make one.
fn libc_pipe() -> (std::os::fd::OwnedFd, std::os::fd::OwnedFd) {
    use std::os::fd::FromRawFd;
    let mut fds = [0i32; 2];
    // SAFETY: `fds` has room for the two descriptors; the result is checked.
    let made = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) };
    assert_eq!(made, 0, "{}", std::io::Error::last_os_error());
    // SAFETY: both were just made and belong to nobody else.
    unsafe {
        (
            std::os::fd::OwnedFd::from_raw_fd(fds[0]),
            std::os::fd::OwnedFd::from_raw_fd(fds[1]),
        )
    }
}

#[tokio::test]
async fn a_libc_pipe_becomes_a_sender_and_a_receiver() {
    use tokio::net::unix::pipe;
    let (rx, tx) = libc_pipe();
    // The wrong end is refused, as tokio checks the access mode.
    let (rx2, tx2) = libc_pipe();
    let err = pipe::Sender::from_owned_fd(rx2).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    let err = pipe::Receiver::from_owned_fd(tx2).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);

    let mut rx = pipe::Receiver::from_owned_fd(rx).unwrap();
    let mut tx = pipe::Sender::from_owned_fd(tx).unwrap();
    tx.write_all(b"through the pipe").await.unwrap();
    drop(tx);
    let mut got = String::new();
    rx.read_to_string(&mut got).await.unwrap();
    assert_eq!(got, "through the pipe");
}

#[tokio::test]
async fn a_pipe_end_becomes_a_descriptor_in_the_mode_asked() {
    use std::io::Read;
    use tokio::net::unix::pipe;
    let nonblocking = |fd: &std::os::fd::OwnedFd| {
        use std::os::fd::AsRawFd;
        // SAFETY: a flags query of an open descriptor.
        let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
        flags & libc::O_NONBLOCK != 0
    };
    let (mut tx, rx) = pipe::pipe().unwrap();
    tx.write_all(b"abc").await.unwrap();
    drop(tx);
    let fd = rx.into_blocking_fd().unwrap();
    assert!(!nonblocking(&fd));
    let mut got = Vec::new();
    std::fs::File::from(fd).read_to_end(&mut got).unwrap();
    assert_eq!(got, b"abc");

    let (tx, _rx) = pipe::pipe().unwrap();
    assert!(nonblocking(&tx.into_nonblocking_fd().unwrap()));
}

#[tokio::test]
async fn a_std_unix_stream_pair_moves_to_tokio_and_back() {
    let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
    a.set_nonblocking(true).unwrap();
    b.set_nonblocking(true).unwrap();
    let mut a = UnixStream::from_std(a).unwrap();
    let mut b = UnixStream::from_std(b).unwrap();
    a.write_all(b"ping").await.unwrap();
    let mut buf = [0u8; 4];
    b.read_exact(&mut buf).await.unwrap();
    assert_eq!(&buf, b"ping");
    let a = a.into_std().unwrap();
    a.set_nonblocking(false).unwrap();
    b.write_all(b"pong").await.unwrap();
    std::io::Read::read_exact(&mut &a, &mut buf).unwrap();
    assert_eq!(&buf, b"pong");
}

#[tokio::test]
async fn std_unix_sockets_bound_to_a_path_meet_tokio_ones() {
    use std::io::{Read, Write};
    let std_path = path("std-bound");
    let listener = std::os::unix::net::UnixListener::bind(&std_path).unwrap();
    assert_eq!(
        listener.local_addr().unwrap().as_pathname(),
        Some(std_path.as_path())
    );
    let mut client = UnixStream::connect(&std_path).await.unwrap();
    // The connection is in the backlog already: this accept does not wait.
    let (mut server, _) = listener.accept().unwrap();
    server.write_all(b"hi").unwrap();
    let mut buf = [0u8; 2];
    client.read_exact(&mut buf).await.unwrap();
    assert_eq!(&buf, b"hi");

    let tokio_path = path("tokio-bound");
    let tokio_listener = UnixListener::bind(&tokio_path).unwrap();
    let mut std_client = std::os::unix::net::UnixStream::connect(&tokio_path).unwrap();
    let (mut accepted, _) = tokio_listener.accept().await.unwrap();
    accepted.write_all(b"yo").await.unwrap();
    std_client.read_exact(&mut buf).unwrap();
    assert_eq!(&buf, b"yo");
    assert_eq!(
        std_client.peer_addr().unwrap().as_pathname(),
        Some(tokio_path.as_path())
    );
}
