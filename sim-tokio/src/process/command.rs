//! `tokio::process::Command`: a `std::process::Command` whose `spawn`
//! starts a simulated program (see `tokio::sim::process`).

use super::child::{Child, ChildState, ChildStderr, ChildStdin, ChildStdout};
use super::pipe::{pipe, PipeReader, PipeWriter};
use super::stdio::{self, End, Spec};
use super::table::{with_processes, ExitGuard};
use crate::sim::process::{Invocation, ProgramOutput, ProgramStdin, Sink, Source};
use sim_runtime::TaskMeta;
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::future::Future;
use std::io;
use std::panic::Location;
use std::path::Path;
use std::pin::Pin;
use std::process::{Command as StdCommand, ExitStatus, Output, Stdio};
use std::task::{Context, Poll};

/// A process builder, as `std::process::Command`, whose children are
/// simulated programs: `spawn` runs the program registered under the
/// command's name ([`crate::sim::process::register`]) as a task on the
/// current host, and its `Child` is awaited instead of blocked on.
///
/// ```no_run
/// # async fn example() -> std::io::Result<()> {
/// let output = tokio::process::Command::new("echo").arg("hello").output().await?;
/// assert!(output.status.success());
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct Command {
    std: StdCommand,
    kill_on_drop: bool,
    /// `arg0`, when set through this type (std has no getter).
    arg0: Option<OsString>,
}

impl Command {
    /// A command for the program `program`, with no arguments, the test
    /// process's environment and working directory, and stdio inherited
    /// for `spawn` and `status` (piped stdout and stderr for `output`).
    pub fn new<S: AsRef<OsStr>>(program: S) -> Command {
        Command::from(StdCommand::new(program))
    }

    /// The `std::process::Command` inside.
    pub fn as_std(&self) -> &StdCommand {
        &self.std
    }

    /// The `std::process::Command` inside, to change.
    pub fn as_std_mut(&mut self) -> &mut StdCommand {
        &mut self.std
    }

    /// The `std::process::Command` inside; `kill_on_drop` is lost.
    pub fn into_std(self) -> StdCommand {
        self.std
    }

    /// Adds an argument.
    pub fn arg<S: AsRef<OsStr>>(&mut self, arg: S) -> &mut Command {
        self.std.arg(arg);
        self
    }

    /// Adds arguments.
    pub fn args<I, S>(&mut self, args: I) -> &mut Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.std.args(args);
        self
    }

    /// Sets an environment variable for the program.
    pub fn env<K, V>(&mut self, key: K, val: V) -> &mut Command
    where
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        self.std.env(key, val);
        self
    }

    /// Sets environment variables for the program.
    pub fn envs<I, K, V>(&mut self, vars: I) -> &mut Command
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        self.std.envs(vars);
        self
    }

    /// Removes an environment variable from the program's environment.
    pub fn env_remove<K: AsRef<OsStr>>(&mut self, key: K) -> &mut Command {
        self.std.env_remove(key);
        self
    }

    /// Starts the program's environment empty.
    pub fn env_clear(&mut self) -> &mut Command {
        self.std.env_clear();
        self
    }

    /// Sets the program's working directory ([`Invocation::current_dir`]).
    pub fn current_dir<P: AsRef<Path>>(&mut self, dir: P) -> &mut Command {
        self.std.current_dir(dir);
        self
    }

    /// Sets the program's stdin: `Stdio::piped()` gives `Child::stdin`.
    pub fn stdin<T: Into<Stdio>>(&mut self, cfg: T) -> &mut Command {
        self.std.stdin(cfg);
        self
    }

    /// Sets the program's stdout: `Stdio::piped()` gives `Child::stdout`.
    pub fn stdout<T: Into<Stdio>>(&mut self, cfg: T) -> &mut Command {
        self.std.stdout(cfg);
        self
    }

    /// Sets the program's stderr: `Stdio::piped()` gives `Child::stderr`.
    pub fn stderr<T: Into<Stdio>>(&mut self, cfg: T) -> &mut Command {
        self.std.stderr(cfg);
        self
    }

    /// Whether dropping the `Child` before it exited kills the program
    /// (`SIGKILL`). Off by default: a dropped child runs on.
    pub fn kill_on_drop(&mut self, kill_on_drop: bool) -> &mut Command {
        self.kill_on_drop = kill_on_drop;
        self
    }

    /// Sets the user id of the child (kept in the command; a simulated
    /// program has no credentials to change).
    pub fn uid(&mut self, id: u32) -> &mut Command {
        std::os::unix::process::CommandExt::uid(&mut self.std, id);
        self
    }

    /// Sets the group id of the child (kept in the command, as `uid`).
    pub fn gid(&mut self, id: u32) -> &mut Command {
        std::os::unix::process::CommandExt::gid(&mut self.std, id);
        self
    }

    /// Sets `argv[0]` ([`Invocation::arg0`]).
    pub fn arg0<S>(&mut self, arg: S) -> &mut Command
    where
        S: AsRef<OsStr>,
    {
        self.arg0 = Some(arg.as_ref().to_os_string());
        std::os::unix::process::CommandExt::arg0(&mut self.std, arg);
        self
    }

    /// Registers a closure to run in the child after `fork`. A simulated
    /// program is no forked process: the closure is kept in the command and
    /// never runs, so what it would change in a child (its session, its
    /// limits) changes nothing in the test process.
    ///
    /// # Safety
    /// As `std::os::unix::process::CommandExt::pre_exec`.
    pub unsafe fn pre_exec<F>(&mut self, f: F) -> &mut Command
    where
        F: FnMut() -> io::Result<()> + Send + Sync + 'static,
    {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { std::os::unix::process::CommandExt::pre_exec(&mut self.std, f) };
        self
    }

    /// Sets the child's process group (kept in the command; simulated
    /// programs have no groups to signal).
    pub fn process_group(&mut self, pgroup: i32) -> &mut Command {
        std::os::unix::process::CommandExt::process_group(&mut self.std, pgroup);
        self
    }

    /// Starts the program as a child, stdio inherited unless set.
    ///
    /// # Errors
    /// `NotFound` when no program of this name is registered on the current
    /// host (nor built in for these arguments), with a message that names
    /// it and says how to register it.
    ///
    /// # Panics
    /// Outside a runtime, with tokio's message.
    #[track_caller]
    pub fn spawn(&mut self) -> io::Result<Child> {
        // As tokio: a child needs the runtime's driver.
        crate::util::with_runtime(|_| ());
        self.spawn_at(Location::caller())
    }

    /// Starts the program and waits for its exit status. Stdio is inherited
    /// unless set; pipes the command asked for are closed at once, so the
    /// program never waits on them.
    #[track_caller]
    pub fn status(&mut self) -> impl Future<Output = io::Result<ExitStatus>> {
        let child = self.spawn();
        async {
            let mut child = child?;
            child.stdin.take();
            child.stdout.take();
            child.stderr.take();
            child.wait().await
        }
    }

    /// Starts the program with piped stdout and stderr (stdin as set,
    /// inherited by default) and collects its output and exit status.
    #[track_caller]
    pub fn output(&mut self) -> impl Future<Output = io::Result<Output>> {
        self.std.stdout(Stdio::piped());
        self.std.stderr(Stdio::piped());
        let child = self.spawn();
        async { child?.wait_with_output().await }
    }

    /// Whether the child is killed when its `Child` is dropped.
    pub fn get_kill_on_drop(&self) -> bool {
        self.kill_on_drop
    }

    /// Spawns with stdio inherited where the command set none (`input`
    /// and `output` read `Spec::Default` as inherit, as std's spawn does).
    fn spawn_at(&mut self, location: &'static Location<'static>) -> io::Result<Child> {
        let settings = stdio::settings(&self.std)?;
        let (stdin_spec, stdout_spec, stderr_spec) =
            (settings.stdin, settings.stdout, settings.stderr);
        let program = self.std.get_program().to_os_string();
        let host = sim_net::try_with_net(|net| net.host_name(net.current_host()))
            .unwrap_or_else(|| "main".to_string());
        let registered = crate::sim::process::program(&host, &program).flatten();
        let spawned = with_processes(|core, table| {
            let arg0 = self.arg0.clone().unwrap_or_else(|| program.clone());
            let args: Vec<OsString> = self.std.get_args().map(OsStr::to_os_string).collect();
            let env = environment(&self.std, settings.env_clear);
            // Taken before the program is known, as a fork takes it.
            let pid = table.next_pid();
            let handler = match registered {
                Some(handler) => handler,
                None => builtin(&program, &host, &arg0, &args, pid, &env)?,
            };
            let (source, parent_stdin) = input(stdin_spec)?;
            let (stdout_sink, parent_stdout) = output(stdout_spec, Sink::Stdout)?;
            let (stderr_sink, parent_stderr) = output(stderr_spec, Sink::Stderr)?;
            let invocation = Invocation {
                arg0,
                args,
                env,
                current_dir: self.std.get_current_dir().map(Path::to_path_buf),
                program: program.clone(),
                pid,
                stdin: ProgramStdin { source },
                stdout: ProgramOutput { sink: stdout_sink },
                stderr: ProgramOutput { sink: stderr_sink },
            };
            // Made before the task, so a program killed before its first
            // poll still records its exit when the task is dropped.
            let guard = ExitGuard { pid, code: None };
            // The program exists from here, as a real process does from
            // its spawn. A program's panic (here or in its future) is its
            // exit with code 101, as a Rust program's; the caller sees only
            // the status.
            let started =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handler(invocation)));
            let task = async move {
                let mut guard = guard;
                guard.code = Some(match started {
                    Ok(future) => CatchUnwind(future).await.unwrap_or(101),
                    Err(_) => 101,
                });
            };
            let name = format!("process {}", program.to_string_lossy());
            let meta = TaskMeta {
                name: Some(name.into_boxed_str()),
                location,
                kind: "process",
            };
            let raw = core.spawn(task, meta, 0);
            table.started(pid, raw);
            let peer = |p: &mut Option<PipeWriter>| {
                if let Some(p) = p {
                    p.peer_task = raw.id;
                }
            };
            let mut parent_stdin = parent_stdin;
            peer(&mut parent_stdin);
            let (mut parent_stdout, mut parent_stderr) = (parent_stdout, parent_stderr);
            for r in [&mut parent_stdout, &mut parent_stderr]
                .into_iter()
                .flatten()
            {
                r.peer_task = raw.id;
            }
            Ok(Child {
                _unwind: std::marker::PhantomData,
                child: ChildState::Running {
                    pid,
                    kill_on_drop: self.kill_on_drop,
                    sim: core.id(),
                },
                stdin: parent_stdin.map(ChildStdin::new),
                stdout: parent_stdout.map(ChildStdout::new),
                stderr: parent_stderr.map(ChildStderr::new),
            })
        });
        spawned.expect("sim: spawn checked that a runtime is current")
    }
}

impl From<StdCommand> for Command {
    fn from(std: StdCommand) -> Command {
        Command {
            std,
            kill_on_drop: false,
            arg0: None,
        }
    }
}

/// The built-in program `program` names, for these arguments; otherwise
/// `NotFound`, saying why and how to register one.
fn builtin(
    program: &OsStr,
    host: &str,
    arg0: &OsStr,
    args: &[OsString],
    pid: u32,
    env: &BTreeMap<OsString, OsString>,
) -> io::Result<crate::sim::process::Handler> {
    use crate::sim::process::builtin;
    let parsed = builtin::parse(&builtin::Args {
        program,
        arg0,
        args,
        pid,
        env,
    });
    match parsed {
        Some(Ok(parsed)) => Ok(builtin::handler(parsed)),
        Some(Err(why)) => Err(not_registered(
            program,
            host,
            &format!(", and the built-in one does not run these arguments: {why}"),
        )),
        None => Err(not_registered(program, host, "")),
    }
}

fn not_registered(program: &OsStr, host: &str, why: &str) -> io::Error {
    let name = program.to_string_lossy();
    io::Error::new(
        io::ErrorKind::NotFound,
        format!(
            "sim: no program {name:?} is registered on host {host:?}{why}: a simulation runs no \
             real programs. Register one at the start of the test: \
             tokio::sim::process::register({name:?}, |inv| async move {{ /* use inv.args, \
             inv.stdin, inv.stdout */ 0 }}), or register_on({host:?}, {name:?}, ...) for this \
             host only"
        ),
    )
}

/// The program's stdin, and the parent's end if piped.
fn input(spec: Spec) -> io::Result<(Source, Option<PipeWriter>)> {
    Ok(match spec {
        Spec::Piped => {
            let (reader, writer) = pipe();
            (Source::Pipe(reader), Some(writer))
        }
        Spec::Default | Spec::Inherit | Spec::Null | Spec::Fd(0) => (Source::Empty, None),
        Spec::Fd(fd) => match stdio::take(fd) {
            Some(End::Reader(reader)) => (Source::Pipe(reader), None),
            Some(End::Writer(_)) => return Err(wrong_end("stdin", "a child's stdin")),
            None => (Source::File(stdio::file(fd)?), None),
        },
    })
}

/// The program's stdout or stderr, and the parent's end if piped.
fn output(spec: Spec, inherit: Sink) -> io::Result<(Sink, Option<PipeReader>)> {
    Ok(match spec {
        Spec::Piped => {
            let (reader, writer) = pipe();
            (Sink::Pipe(writer), Some(reader))
        }
        Spec::Default | Spec::Inherit => (inherit, None),
        Spec::Null => (Sink::Discard, None),
        Spec::Fd(1) => (Sink::Stdout, None),
        Spec::Fd(2) => (Sink::Stderr, None),
        Spec::Fd(fd) => match stdio::take(fd) {
            Some(End::Writer(writer)) => (Sink::Pipe(writer), None),
            Some(End::Reader(_)) => return Err(wrong_end("output", "a child's stdout or stderr")),
            None => (Sink::File(stdio::file(fd)?), None),
        },
    })
}

fn wrong_end(field: &str, given: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("sim: the command's {field} was given {given}, the wrong end of a pipe for it"),
    )
}

/// The program's environment: the test process's (unless cleared) with the
/// command's changes.
fn environment(std: &StdCommand, cleared: bool) -> BTreeMap<OsString, OsString> {
    let mut env: BTreeMap<OsString, OsString> = if cleared {
        BTreeMap::new()
    } else {
        std::env::vars_os().collect()
    };
    for (key, value) in std.get_envs() {
        match value {
            Some(value) => env.insert(key.to_os_string(), value.to_os_string()),
            None => env.remove(key),
        };
    }
    env
}

/// Polls a program's future, catching its panic.
struct CatchUnwind(Pin<Box<dyn Future<Output = i32>>>);

impl Future for CatchUnwind {
    type Output = Result<i32, ()>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let future = self.0.as_mut();
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| future.poll(cx))) {
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(_) => Poll::Ready(Err(())),
        }
    }
}
