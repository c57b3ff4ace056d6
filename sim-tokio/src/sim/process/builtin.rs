//! The built-in programs: `true`, `false`, `echo`, `cat`, `sleep`, `yes`
//! and `sh -c`, which a simulation runs when the test registered no
//! program of that name.
//!
//! Each behaves as its POSIX (and GNU coreutils) counterpart for the
//! arguments it takes, and refuses the others when the `Command` spawns
//! (`NotFound`, with a message that says which argument and how to
//! register a program of one's own): a built-in never runs an argument it
//! would get wrong. `cat` reads the host's simulated files; `sleep` sleeps
//! in virtual time; `yes` writes about 8 KiB a millisecond; a write to a
//! closed pipe kills the program with `SIGPIPE`, as the kernel does.

use super::sh::{self, Script};
use super::{Invocation, ProgramOutput, ProgramStdin};
use crate::io::{AsyncReadExt, AsyncWriteExt};
use std::ffi::{OsStr, OsString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A built-in program with its arguments checked.
#[derive(Debug)]
pub(crate) enum Program {
    /// `true`: exits 0.
    True,
    /// `false`: exits 1.
    False,
    /// `echo`: writes this line.
    Echo(Vec<u8>),
    /// `cat`: copies these files (`-` for stdin) to stdout, in order.
    Cat(Vec<OsString>),
    /// `sleep`: waits this long.
    Sleep(Duration),
    /// `yes`: writes this line until its stdout closes.
    Yes(Vec<u8>),
    /// `sh -c`: runs the script.
    Sh(Script),
}

/// How a built-in ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Exit {
    /// It exited with this code.
    Code(i32),
    /// The kernel would have killed it with this signal (a write to a
    /// closed pipe: `SIGPIPE`).
    Signal(i32),
}

/// A built-in's standard streams, borrowed (so `sh` can run one as a
/// command on its own).
struct Stdio<'a> {
    stdin: &'a mut ProgramStdin,
    /// The program's stdout and stderr, as it was started with them.
    outputs: [&'a mut ProgramOutput; 2],
    /// Which of `outputs` descriptors 1 and 2 write to now (`sh`'s
    /// `>&2` and `2>&1` move them).
    route: [usize; 2],
    /// Where relative paths start (`Command::current_dir`).
    dir: Option<&'a Path>,
}

impl<'a> Stdio<'a> {
    fn new(
        stdin: &'a mut ProgramStdin,
        stdout: &'a mut ProgramOutput,
        stderr: &'a mut ProgramOutput,
        dir: Option<&'a Path>,
    ) -> Stdio<'a> {
        Stdio {
            stdin,
            outputs: [stdout, stderr],
            route: [0, 1],
            dir,
        }
    }

    /// Where descriptor 1 writes.
    fn stdout(&mut self) -> &mut ProgramOutput {
        self.outputs[self.route[0]]
    }

    /// Where descriptor 2 writes.
    fn stderr(&mut self) -> &mut ProgramOutput {
        self.outputs[self.route[1]]
    }

    /// Applies `from>&to` redirections, left to right; returns the routes
    /// before them, for [`Stdio::restore`].
    fn redirect(&mut self, redirects: &[(u8, u8)]) -> [usize; 2] {
        let before = self.route;
        for &(from, to) in redirects {
            self.route[usize::from(from) - 1] = self.route[usize::from(to) - 1];
        }
        before
    }

    fn restore(&mut self, route: [usize; 2]) {
        self.route = route;
    }
}

/// The names of the built-in programs.
const NAMES: [&str; 7] = ["true", "false", "echo", "cat", "sleep", "yes", "sh"];

/// The built-in `program` names (by its last path component: `/bin/sh`
/// is `sh`) with `invocation`'s arguments: `None` if it is no built-in,
/// `Err` (why) if the built-in does not take these arguments.
pub(crate) fn parse(invocation_args: &Args<'_>) -> Option<Result<Program, String>> {
    let name = Path::new(invocation_args.program).file_name()?;
    let name = name.to_str()?;
    if !NAMES.contains(&name) {
        return None;
    }
    Some(parse_named(name, invocation_args))
}

/// What a built-in is parsed from.
pub(crate) struct Args<'a> {
    pub(crate) program: &'a OsStr,
    pub(crate) arg0: &'a OsStr,
    pub(crate) args: &'a [OsString],
    pub(crate) pid: u32,
    pub(crate) env: &'a std::collections::BTreeMap<OsString, OsString>,
}

fn parse_named(name: &str, a: &Args<'_>) -> Result<Program, String> {
    match name {
        "true" => Ok(Program::True),
        "false" => Ok(Program::False),
        "echo" => echo(a.args).map(Program::Echo),
        "cat" => cat(a.args).map(Program::Cat),
        "sleep" => sleep(a.args).map(Program::Sleep),
        "yes" => yes(a.args).map(Program::Yes),
        "sh" => {
            let script = Script::parse(a.args, a.arg0, a.env, a.pid)?;
            check_script(&script)?;
            Ok(Program::Sh(script))
        }
        _ => unreachable!("{name} is one of NAMES"),
    }
}

fn text(arg: &OsStr) -> &[u8] {
    arg.as_bytes()
}

/// The arguments joined by spaces, as `echo` and `yes` write them.
fn joined(args: &[OsString]) -> Vec<u8> {
    let words: Vec<&[u8]> = args.iter().map(|a| text(a)).collect();
    words.join(&b' ')
}

/// GNU's `--help` or `--version` as a program's only argument: refused
/// (its text is GNU's, not the built-in's).
fn refuse_info_option(program: &str, args: &[OsString]) -> Result<(), String> {
    match args {
        [only] if only == "--help" || only == "--version" => Err(format!("{program} {only:?}")),
        _ => Ok(()),
    }
}

/// GNU `echo`'s line: the arguments joined by spaces, then a newline
/// unless the first arguments are `-n`. Escapes and `-e`/`-E` are refused:
/// shells' `echo`s disagree on them.
fn echo(args: &[OsString]) -> Result<Vec<u8>, String> {
    let mut newline = true;
    let mut rest = args;
    while let Some((first, tail)) = rest.split_first() {
        let flag = text(first);
        if flag == b"-n" {
            newline = false;
            rest = tail;
        } else if flag.len() > 1 && flag[0] == b'-' && flag[1..].iter().all(|c| b"neE".contains(c))
        {
            return Err(format!("echo's option {first:?} (only -n is built in)"));
        } else {
            break;
        }
    }
    refuse_info_option("echo", args)?;
    if let Some(arg) = rest.iter().find(|a| text(a).contains(&b'\\')) {
        return Err(format!(
            "echo of {arg:?}: a backslash (shells' echos read escapes differently)"
        ));
    }
    let mut line = joined(rest);
    if newline {
        line.push(b'\n');
    }
    Ok(line)
}

fn cat(args: &[OsString]) -> Result<Vec<OsString>, String> {
    if let Some(option) = args
        .iter()
        .find(|a| text(a).len() > 1 && text(a)[0] == b'-')
    {
        return Err(format!(
            "cat's option {option:?} (cat takes files and - only)"
        ));
    }
    if args.is_empty() {
        return Ok(vec![OsString::from("-")]);
    }
    Ok(args.to_vec())
}

/// GNU `sleep`: the sum of its durations, each a decimal number with an
/// optional unit (`s`, `m`, `h`, `d`).
fn sleep(args: &[OsString]) -> Result<Duration, String> {
    if args.is_empty() {
        return Err("sleep without a duration".to_string());
    }
    let mut total = Duration::ZERO;
    for arg in args {
        let bad = || format!("sleep's duration {arg:?} (a decimal number of s, m, h or d)");
        let s = arg.to_str().ok_or_else(bad)?;
        let (number, unit_s) = match s.as_bytes().last() {
            Some(b's') => (&s[..s.len() - 1], 1.0),
            Some(b'm') => (&s[..s.len() - 1], 60.0),
            Some(b'h') => (&s[..s.len() - 1], 3_600.0),
            Some(b'd') => (&s[..s.len() - 1], 86_400.0),
            _ => (s, 1.0),
        };
        let plain = !number.is_empty()
            && number.bytes().all(|c| c.is_ascii_digit() || c == b'.')
            && number.bytes().filter(|&c| c == b'.').count() <= 1
            && number != ".";
        if !plain {
            return Err(bad());
        }
        let value: f64 = number.parse().map_err(|_| bad())?;
        total += Duration::try_from_secs_f64(value * unit_s).map_err(|_| bad())?;
    }
    Ok(total)
}

fn yes(args: &[OsString]) -> Result<Vec<u8>, String> {
    refuse_info_option("yes", args)?;
    let mut line = if args.is_empty() {
        b"y".to_vec()
    } else {
        joined(args)
    };
    line.push(b'\n');
    Ok(line)
}

impl Program {
    /// Runs the program on `io`.
    async fn run(&self, io: &mut Stdio<'_>) -> Exit {
        match self {
            Program::True => Exit::Code(0),
            Program::False => Exit::Code(1),
            Program::Echo(line) => write(io.stdout(), line).await.unwrap_or(Exit::Code(0)),
            Program::Cat(files) => run_cat(files, io).await,
            Program::Sleep(duration) => {
                crate::time::sleep(*duration).await;
                Exit::Code(0)
            }
            Program::Yes(line) => run_yes(line, io).await,
            Program::Sh(script) => Box::pin(run_script(script, io)).await,
        }
    }
}

/// What a command of a script runs.
enum ShCommand {
    /// `exit [N]`.
    Exit(Option<i32>),
    /// A built-in program, and whether it runs in the shell itself (a
    /// shell's own `echo`, `true`, `false`, `:`).
    Program(Program, bool),
}

/// Every command of `script` names a command the built-in runs, with
/// arguments it takes (expanded as they will be: `$?` is a number either
/// way, which changes neither).
fn check_script(script: &Script) -> Result<(), String> {
    for command in script.commands() {
        let fields = script.expand(command, 0);
        if let Some((name, args)) = fields.split_first() {
            sh_command(name, args)?;
        }
    }
    Ok(())
}

/// The command `name` of a script, with `args`.
fn sh_command(name: &[u8], args: &[Vec<u8>]) -> Result<ShCommand, String> {
    use std::os::unix::ffi::OsStringExt;
    let args: Vec<OsString> = args.iter().map(|a| OsString::from_vec(a.clone())).collect();
    let name = String::from_utf8_lossy(name).into_owned();
    match name.as_str() {
        "exit" => match args.as_slice() {
            [] => Ok(ShCommand::Exit(None)),
            [code] => code
                .to_str()
                .and_then(|c| c.parse::<i64>().ok())
                .filter(|c| *c >= 0)
                .map(|c| ShCommand::Exit(Some((c & 0xff) as i32)))
                .ok_or_else(|| sh::refuse(&format!("exit {code:?}: not a number"))),
            _ => Err(sh::refuse("exit with more than one argument")),
        },
        ":" | "true" => Ok(ShCommand::Program(Program::True, true)),
        "false" => Ok(ShCommand::Program(Program::False, true)),
        "echo" => Ok(ShCommand::Program(Program::Echo(echo(&args)?), true)),
        "cat" | "sleep" | "yes" => {
            let env = std::collections::BTreeMap::new();
            let a = Args {
                program: name.as_ref(),
                arg0: name.as_ref(),
                args: &args,
                pid: 0,
                env: &env,
            };
            Ok(ShCommand::Program(parse_named(&name, &a)?, false))
        }
        "sh" => Err(sh::refuse("a nested sh")),
        other => Err(sh::refuse(&format!(
            "the command {other:?} (register a program called sh to run other programs)"
        ))),
    }
}

/// Runs `script`: its exit status, or the signal that ended it.
async fn run_script(script: &Script, io: &mut Stdio<'_>) -> Exit {
    let mut status = 0;
    let mut cursor = script.cursor();
    while let Some(command) = cursor.next(status) {
        let fields = script.expand(command, status);
        let Some((name, args)) = fields.split_first() else {
            status = 0;
            continue;
        };
        match sh_command(name, args).expect("sim: sh's commands were checked at spawn") {
            ShCommand::Exit(code) => return Exit::Code(code.unwrap_or(status) & 0xff),
            ShCommand::Program(program, in_shell) => {
                let route = io.redirect(command.redirects());
                let exit = program.run(io).await;
                io.restore(route);
                match exit {
                    Exit::Code(code) => status = code,
                    // A program's death is a status of 128 + its signal;
                    // the shell's own echo dies with it.
                    Exit::Signal(sig) if !in_shell => status = 128 + sig,
                    Exit::Signal(sig) => return Exit::Signal(sig),
                }
            }
        }
    }
    Exit::Code(status)
}

/// Writes `bytes` to `out`: `Some` with how the program ends if it
/// cannot (killed by `SIGPIPE` on a closed pipe).
async fn write(out: &mut ProgramOutput, bytes: &[u8]) -> Option<Exit> {
    match out.write_all(bytes).await {
        Ok(()) => None,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Some(Exit::Signal(libc_dep::SIGPIPE)),
        // Another error of the sink (a full disk under a file): GNU's
        // programs give up with status 1.
        Err(_) => Some(Exit::Code(1)),
    }
}

async fn run_cat(files: &[OsString], io: &mut Stdio<'_>) -> Exit {
    let mut code = 0;
    let mut buf = vec![0u8; 64 * 1024];
    for file in files {
        if file == "-" {
            loop {
                let n = match io.stdin.read(&mut buf).await {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) => {
                        let _ = write(io.stderr(), format!("cat: -: {e}\n").as_bytes()).await;
                        code = 1;
                        break;
                    }
                };
                if let Some(exit) = write(io.stdout(), &buf[..n]).await {
                    return exit;
                }
            }
            continue;
        }
        let path = match io.dir {
            Some(dir) => dir.join(file),
            None => PathBuf::from(file),
        };
        match crate::fs::read(&path).await {
            Ok(bytes) => {
                if let Some(exit) = write(io.stdout(), &bytes).await {
                    return exit;
                }
            }
            Err(e) => {
                let why = match e.kind() {
                    io::ErrorKind::NotFound => "No such file or directory".to_string(),
                    io::ErrorKind::PermissionDenied => "Permission denied".to_string(),
                    _ => e.to_string(),
                };
                let line = format!("cat: {}: {why}\n", file.to_string_lossy());
                if let Some(exit) = write(io.stderr(), line.as_bytes()).await {
                    return exit;
                }
                code = 1;
            }
        }
    }
    Exit::Code(code)
}

/// The virtual time `yes` takes to write one chunk (about 8 KiB).
const YES_CHUNK_TIME: Duration = Duration::from_millis(1);

async fn run_yes(line: &[u8], io: &mut Stdio<'_>) -> Exit {
    // Whole lines in writes of about 8 KiB, as GNU yes fills its buffer.
    let copies = (8 * 1024 / line.len()).max(1);
    let chunk = line.repeat(copies);
    loop {
        if let Some(exit) = write(io.stdout(), &chunk).await {
            return exit;
        }
        // Writing takes time: a chunk a millisecond. A sink that never
        // pushes back (`Stdio::null()`) would otherwise keep the turn for
        // good, and a paused clock would never move.
        crate::time::sleep(YES_CHUNK_TIME).await;
    }
}

/// The handler of a built-in: runs `program` on the invocation's stdio,
/// and ends as it ended (a signal death through the process table, as a
/// kill would).
pub(crate) fn handler(program: Program) -> super::Handler {
    let program = std::rc::Rc::new(program);
    std::rc::Rc::new(move |invocation: Invocation| {
        let program = program.clone();
        Box::pin(async move {
            let Invocation {
                mut stdin,
                mut stdout,
                mut stderr,
                current_dir,
                pid,
                ..
            } = invocation;
            let mut io = Stdio::new(&mut stdin, &mut stdout, &mut stderr, current_dir.as_deref());
            let exit = program.run(&mut io).await;
            let _ = io.stdout().flush().await;
            match exit {
                Exit::Code(code) => code,
                Exit::Signal(sig) => {
                    crate::process::table::with_processes(|core, table| {
                        table.signal(core, pid, sig)
                    });
                    // The kill ends this task at its next turn.
                    std::future::pending().await
                }
            }
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn sleep_sums_its_durations_and_refuses_what_gnu_would_read_otherwise() {
        assert_eq!(
            sleep(&os(&["1", "0.5s", "2m"])),
            Ok(Duration::from_millis(121_500))
        );
        assert_eq!(sleep(&os(&["1d"])), Ok(Duration::from_secs(86_400)));
        for bad in [&[][..], &["x"], &["-1"], &["inf"], &["1e3"], &["."]] {
            assert!(sleep(&os(bad)).is_err(), "{bad:?}");
        }
    }

    fn sh(script: &str) -> Result<Program, String> {
        let args = os(&["-c", script]);
        parse_named(
            "sh",
            &Args {
                program: "sh".as_ref(),
                arg0: "sh".as_ref(),
                args: &args,
                pid: 1,
                env: &std::collections::BTreeMap::new(),
            },
        )
    }

    /// A script's commands are checked at spawn: those no built-in runs,
    /// and arguments a built-in refuses, are named.
    #[test]
    fn a_scripts_commands_are_checked_at_spawn() {
        for (script, what) in [
            ("ls", "the command \"ls\""),
            ("exit x", "not a number"),
            ("echo -e x", "-e"),
            ("true; sleep forever", "sleep's duration"),
            ("sh -c true", "a nested sh"),
        ] {
            let error = sh(script).unwrap_err();
            assert!(error.contains(what), "{script:?}: {error}");
        }
        assert!(sh("true && echo a || exit 3; false\nexit 2").is_ok());
    }

    #[test]
    fn echo_takes_dash_n_and_refuses_escapes() {
        assert_eq!(echo(&os(&["-n", "-n", "a", "-n"])), Ok(b"a -n".to_vec()));
        assert_eq!(echo(&os(&["-x"])), Ok(b"-x\n".to_vec()));
        assert!(echo(&os(&["-e", "a"])).unwrap_err().contains("-e"));
        assert!(echo(&os(&["a\\tb"])).unwrap_err().contains("backslash"));
        assert_eq!(yes(&os(&[])), Ok(b"y\n".to_vec()));
        assert_eq!(yes(&os(&["a", "b"])), Ok(b"a b\n".to_vec()));
        // GNU's --help alone is GNU's text; beside other words, a word.
        assert!(echo(&os(&["--help"])).unwrap_err().contains("--help"));
        assert!(yes(&os(&["--version"])).is_err());
        assert_eq!(echo(&os(&["--help", "x"])), Ok(b"--help x\n".to_vec()));
        assert!(cat(&os(&["-n"])).is_err());
    }
}
