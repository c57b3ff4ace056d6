//! What a `Command`'s stdio settings are, and the descriptors that stand
//! for a simulated pipe end outside the facade.
//!
//! `std::process::Stdio` is opaque, and `std::process::Command` has no
//! getter for it: the settings are read from the command's alternate
//! `Debug` form (`stdin: Some(MakePipe)`), which the standard library on
//! Linux prints for every field. A form this module does not know makes
//! `spawn` fail with an error that says so, never a guess.
//!
//! A pipe end turned into a `Stdio` (`ChildStdout: TryInto<Stdio>`) or an
//! `OwnedFd` becomes a placeholder descriptor: the read end of a real,
//! empty pipe, unique by its inode, registered here with the simulated end
//! it stands for. A `Command` given that descriptor gets the simulated end.

use super::pipe::{PipeReader, PipeWriter};
use std::collections::BTreeMap;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::process::Command as StdCommand;
use std::sync::Mutex;

/// One stdio setting of a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Spec {
    /// Not set: the call's default applies.
    Default,
    Inherit,
    Null,
    Piped,
    /// A descriptor (a file, or a placeholder for a simulated pipe end).
    Fd(RawFd),
}

/// The settings of a command that `std::process::Command` has no getter
/// for.
#[derive(Debug)]
pub(crate) struct Settings {
    pub(crate) stdin: Spec,
    pub(crate) stdout: Spec,
    pub(crate) stderr: Spec,
    pub(crate) env_clear: bool,
}

/// Reads the settings from `command`'s alternate `Debug` form.
pub(crate) fn settings(command: &StdCommand) -> io::Result<Settings> {
    let text = format!("{command:#?}");
    Ok(Settings {
        stdin: spec(&text, "stdin")?,
        stdout: spec(&text, "stdout")?,
        stderr: spec(&text, "stderr")?,
        env_clear: text.contains("clear: true"),
    })
}

fn spec(text: &str, field: &str) -> io::Result<Spec> {
    let key = format!("\n    {field}: Some(");
    let Some(at) = text.find(&key) else {
        return Ok(Spec::Default);
    };
    let rest = text[at + key.len()..].trim_start();
    let word: String = rest.chars().take_while(|c| c.is_alphanumeric()).collect();
    let fd = || -> Option<RawFd> {
        let at = rest.find("fd: ")?;
        let digits: String = rest[at + 4..]
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        digits.parse().ok()
    };
    let found = match word.as_str() {
        "Inherit" => Some(Spec::Inherit),
        "Null" => Some(Spec::Null),
        "MakePipe" => Some(Spec::Piped),
        "Fd" | "StaticFd" => fd().map(Spec::Fd),
        _ => None,
    };
    found.ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::Unsupported,
            format!(
                "sim: tokio::process cannot tell this command's {field} setting \
                 ({word:?} in std's Debug form of the command); use Stdio::piped(), \
                 Stdio::null(), Stdio::inherit() or a file"
            ),
        )
    })
}

/// A simulated pipe end that a placeholder descriptor stands for.
#[derive(Debug)]
pub(crate) enum End {
    Reader(PipeReader),
    Writer(PipeWriter),
}

/// The placeholders given out, by descriptor: the pipe inode that makes
/// the descriptor theirs (a number reused by another file is not), and
/// the end.
static PLACEHOLDERS: Mutex<BTreeMap<RawFd, (u64, End)>> = Mutex::new(BTreeMap::new());

/// The inode of a real descriptor.
fn inode(fd: RawFd) -> Option<u64> {
    // SAFETY: `stat` is plain data, written by fstat.
    let mut stat: libc_dep::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid buffer; an invalid descriptor only fails.
    (unsafe { libc_dep::fstat(fd, &mut stat) } == 0).then_some(stat.st_ino)
}

/// A fresh placeholder descriptor: the read end of a real pipe whose write
/// end is closed (a read gives end of stream, nothing blocks).
pub(crate) fn placeholder() -> io::Result<OwnedFd> {
    let mut fds = [0 as RawFd; 2];
    // A real pipe (`outside`: not a simulated one), only for its number.
    // SAFETY: `fds` has room for the two descriptors.
    let made = sim_runtime::outside::outside(|| unsafe {
        libc_dep::pipe2(fds.as_mut_ptr(), libc_dep::O_CLOEXEC)
    });
    if made != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both were just made and belong to nobody else.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(write);
    Ok(read)
}

/// Gives `end` a placeholder descriptor that a `Command` can take it back
/// from.
pub(crate) fn register(end: End) -> io::Result<OwnedFd> {
    let fd = placeholder()?;
    let ino = inode(fd.as_raw_fd()).ok_or_else(io::Error::last_os_error)?;
    let mut map = PLACEHOLDERS.lock().unwrap_or_else(|e| e.into_inner());
    map.insert(fd.as_raw_fd(), (ino, end));
    Ok(fd)
}

/// The simulated end `fd` stands for, if it is a live placeholder (taken:
/// one process gets it).
pub(crate) fn take(fd: RawFd) -> Option<End> {
    let ino = inode(fd)?;
    let mut map = PLACEHOLDERS.lock().unwrap_or_else(|e| e.into_inner());
    match map.get(&fd) {
        Some((registered, _)) if *registered == ino => map.remove(&fd).map(|(_, end)| end),
        _ => None,
    }
}

/// A file for the descriptor a command was given (`Stdio::from(File)`):
/// a duplicate, since the command keeps its own.
pub(crate) fn file(fd: RawFd) -> io::Result<std::fs::File> {
    // SAFETY: the command holds `fd` open for the duration of this call.
    let borrowed = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
    Ok(std::fs::File::from(borrowed.try_clone_to_owned()?))
}
