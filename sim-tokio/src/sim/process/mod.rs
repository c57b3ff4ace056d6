//! Simulated programs for `tokio::process`.
//!
//! A simulation has no real processes: `tokio::process::Command::spawn`
//! starts a program registered here, by name, as a task on the spawning
//! host. The program gets its arguments, environment, working directory
//! and stdin, writes its stdout and stderr, and returns its exit code. Its
//! pipes push back as a real pipe does (64 KiB); a host crash kills the
//! programs it runs; `Child::kill`, `kill_on_drop` and `kill(pid, sig)`
//! (libc, nix) reach it.
//!
//! Register programs at the start of the test (or of a harness host's
//! factory): the registry belongs to the run.
//!
//! A name registered nowhere may be a built-in: `true`, `false`, `echo`,
//! `cat` (of the host's simulated files), `sleep` (in virtual time), `yes`
//! and `sh -c` with simple commands of these, and `>&2` and `2>&1` between
//! their stdout and stderr (see `builtin.rs` and `sh.rs`). A built-in runs
//! the arguments it takes as its POSIX counterpart does and refuses any
//! other at spawn (`NotFound`, naming the argument); a program registered
//! under its name replaces it.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! use tokio::io::{AsyncReadExt, AsyncWriteExt};
//!
//! tokio::sim::process::register("upper", |mut inv| async move {
//!     let mut input = String::new();
//!     inv.stdin.read_to_string(&mut input).await.unwrap();
//!     inv.stdout.write_all(input.to_uppercase().as_bytes()).await.unwrap();
//!     0
//! });
//! let mut child = tokio::process::Command::new("upper")
//!     .stdin(std::process::Stdio::piped())
//!     .stdout(std::process::Stdio::piped())
//!     .spawn()
//!     .unwrap();
//! child.stdin.take().unwrap().write_all(b"hi").await.unwrap();
//! let output = child.wait_with_output().await.unwrap();
//! assert_eq!(output.stdout, b"HI");
//! # }
//! ```
//!
//! What a program sees of its stdio follows the `Command`'s: a pipe for
//! `Stdio::piped()`, nothing for `Stdio::null()`, another child's pipe
//! (`ChildStdout` turned into a `Stdio`), or a file (`Stdio::from(File)`).
//! `Stdio::inherit()` writes go to the test process's own stdout and
//! stderr, as a real child's would, and an inherited stdin reads as empty:
//! the simulation never reads the terminal.

pub(crate) mod builtin;
mod sh;

use crate::io::{AsyncRead, AsyncWrite, ReadBuf};
use crate::process::pipe::{PipeReader, PipeWriter};
use crate::process::table::with_processes;
use crate::signal::unix::SignalKind;
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::future::Future;
use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

/// One run of a program: what `Command` gave it.
#[derive(Debug)]
#[non_exhaustive]
pub struct Invocation {
    /// The program as `Command::new` named it.
    pub program: OsString,
    /// `argv[0]`: the program's name, or `Command::arg0`'s.
    pub arg0: OsString,
    /// The arguments after `argv[0]`.
    pub args: Vec<OsString>,
    /// The environment: the test process's, changed by the `Command`'s
    /// `env`, `env_remove` and `env_clear`.
    pub env: BTreeMap<OsString, OsString>,
    /// The `Command`'s `current_dir`, if it set one.
    pub current_dir: Option<PathBuf>,
    /// The process id `Child::id` reports.
    pub pid: u32,
    /// The program's standard input.
    pub stdin: ProgramStdin,
    /// The program's standard output.
    pub stdout: ProgramOutput,
    /// The program's standard error.
    pub stderr: ProgramOutput,
}

impl Invocation {
    /// Takes the program's signals over: from now on each signal sent to
    /// it (`kill(pid, sig)`) arrives here instead of its default action
    /// (most signals terminate). `SIGKILL` and `SIGSTOP` cannot be taken
    /// over: `Child::kill` still kills.
    pub fn signals(&mut self) -> ProgramSignals {
        let (sender, receiver) = crate::sync::mpsc::unbounded_channel();
        with_processes(|_, table| table.take_signals(self.pid, sender));
        ProgramSignals { receiver }
    }
}

/// The signals sent to a program that took them over
/// ([`Invocation::signals`]).
#[derive(Debug)]
pub struct ProgramSignals {
    receiver: crate::sync::mpsc::UnboundedReceiver<SignalKind>,
}

impl ProgramSignals {
    /// The next signal sent to the program.
    pub async fn recv(&mut self) -> Option<SignalKind> {
        self.receiver.recv().await
    }
}

/// A program's standard input.
#[derive(Debug)]
pub struct ProgramStdin {
    pub(crate) source: Source,
}

#[derive(Debug)]
pub(crate) enum Source {
    Pipe(PipeReader),
    Empty,
    File(std::fs::File),
}

/// A program's standard output or error.
#[derive(Debug)]
pub struct ProgramOutput {
    pub(crate) sink: Sink,
}

#[derive(Debug)]
pub(crate) enum Sink {
    Pipe(PipeWriter),
    Discard,
    Stdout,
    Stderr,
    File(std::fs::File),
}

impl AsyncRead for ProgramStdin {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match &mut self.source {
            Source::Pipe(pipe) => pipe.poll_read(cx, buf, "program stdin read"),
            Source::Empty => Poll::Ready(Ok(())),
            Source::File(file) => {
                let n = file.read(buf.initialize_unfilled())?;
                buf.advance(n);
                Poll::Ready(Ok(()))
            }
        }
    }
}

impl AsyncWrite for ProgramOutput {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match &mut self.sink {
            Sink::Pipe(pipe) => pipe.poll_write(cx, buf, "program output write"),
            Sink::Discard => Poll::Ready(Ok(buf.len())),
            Sink::Stdout => Poll::Ready(io::stdout().write(buf)),
            Sink::Stderr => Poll::Ready(io::stderr().write(buf)),
            Sink::File(file) => Poll::Ready(file.write(buf)),
        }
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match &mut self.sink {
            Sink::Pipe(pipe) => pipe.poll_write_vectored(cx, bufs, "program output write"),
            Sink::Discard => Poll::Ready(Ok(bufs.iter().map(|b| b.len()).sum())),
            Sink::Stdout => Poll::Ready(io::stdout().write_vectored(bufs)),
            Sink::Stderr => Poll::Ready(io::stderr().write_vectored(bufs)),
            Sink::File(file) => Poll::Ready(file.write_vectored(bufs)),
        }
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.sink {
            Sink::Stdout => Poll::Ready(io::stdout().flush()),
            Sink::Stderr => Poll::Ready(io::stderr().flush()),
            _ => Poll::Ready(Ok(())),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // As a pipe's: shutting down flushes; the end closes when dropped.
        self.poll_flush(cx)
    }
}

/// Registers the program `name` for every host of the current run: each
/// `tokio::process::Command::new(name).spawn()` calls `program` with the
/// invocation and runs the future it returns as a task on the spawning
/// host; the future's output is the exit code (its low byte, as a real
/// exit status keeps). A program that panics exits with code 101, as a
/// Rust program does. Registering a name again replaces it.
///
/// A name without a `/` also answers for any path that ends in it
/// (`/usr/bin/git` runs `git`), unless that path is registered itself.
///
/// # Panics
/// Outside a simulation run.
#[track_caller]
pub fn register<F, Fut>(name: impl Into<OsString>, program: F)
where
    F: Fn(Invocation) -> Fut + 'static,
    Fut: Future<Output = i32> + 'static,
{
    register_inner(None, name.into(), program, "register");
}

/// Registers the program `name` for the host `host` only (by its harness
/// name; `main` is a plain test's host). It wins over a program of the
/// same name registered for every host. See [`register`].
///
/// # Panics
/// Outside a simulation run.
#[track_caller]
pub fn register_on<F, Fut>(host: &str, name: impl Into<OsString>, program: F)
where
    F: Fn(Invocation) -> Fut + 'static,
    Fut: Future<Output = i32> + 'static,
{
    register_inner(Some(host.to_string()), name.into(), program, "register_on");
}

#[track_caller]
fn register_inner<F, Fut>(host: Option<String>, name: OsString, program: F, call: &str)
where
    F: Fn(Invocation) -> Fut + 'static,
    Fut: Future<Output = i32> + 'static,
{
    let handler: Handler = Rc::new(move |invocation| Box::pin(program(invocation)));
    let registered = sim_runtime::context::with_current(|core| {
        core.extension(Programs::default)
            .register(host, name, handler)
    });
    if registered.is_none() {
        panic!(
            "sim: tokio::sim::process::{call} was called outside a simulation run: register \
             programs inside the test (or a harness host's factory), where the runtime runs"
        );
    }
}

/// A registered program: called once per spawn, on the spawning host.
pub(crate) type Handler = Rc<dyn Fn(Invocation) -> Pin<Box<dyn Future<Output = i32>>>>;

/// The programs of one simulation (a runtime extension), by name.
#[derive(Default)]
struct Programs {
    by_name: std::cell::RefCell<ProgramNames>,
}

#[derive(Default)]
struct ProgramNames {
    /// Programs for every host, by name.
    everywhere: BTreeMap<OsString, Handler>,
    /// Programs for one host: (host name, program name).
    per_host: BTreeMap<(String, OsString), Handler>,
}

impl Programs {
    pub(crate) fn register(&self, host: Option<String>, name: OsString, handler: Handler) {
        let mut state = self.by_name.borrow_mut();
        match host {
            Some(host) => state.per_host.insert((host, name), handler),
            None => state.everywhere.insert(name, handler),
        };
    }

    /// The program `program` names on `host`: registered for that host
    /// first, then for every host. A name with a `/` is looked up as
    /// given, then by its last component, so `/usr/bin/git` finds `git`.
    pub(crate) fn lookup(&self, host: &str, program: &OsStr) -> Option<Handler> {
        let state = self.by_name.borrow();
        let base = std::path::Path::new(program).file_name();
        let names = std::iter::once(program).chain(base.filter(|b| *b != program));
        for name in names {
            if let Some(h) = state.per_host.get(&(host.to_string(), name.to_os_string())) {
                return Some(h.clone());
            }
            if let Some(h) = state.everywhere.get(name) {
                return Some(h.clone());
            }
        }
        None
    }
}

/// The program `program` names on `host` (see `Programs::lookup`); the
/// outer `None` outside a simulation.
pub(crate) fn program(host: &str, program: &OsStr) -> Option<Option<Handler>> {
    sim_runtime::context::with_current(|core| {
        core.extension(Programs::default).lookup(host, program)
    })
}
