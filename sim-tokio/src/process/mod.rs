//! Child processes, simulated: a simulation runs no real programs, so
//! [`Command::spawn`] starts the program registered under the command's
//! name with [`crate::sim::process::register`], as a task on the current
//! host. Its [`Child`] waits, kills and pipes with tokio's semantics:
//!
//! - `stdin`, `stdout` and `stderr` set to `Stdio::piped()` give the
//!   parent [`ChildStdin`], [`ChildStdout`] and [`ChildStderr`], pipes of
//!   64 KiB that push back as the kernel's do; a program's end closes when
//!   it exits, the parent's when dropped (`wait` drops `stdin` first).
//! - [`Child::kill`] and [`Child::start_kill`] send `SIGKILL`;
//!   `kill(pid, sig)` through libc or nix reaches the program too, and
//!   most signals terminate it unless it took them over
//!   ([`crate::sim::process::Invocation::signals`]).
//! - `kill_on_drop(true)` kills the program when its `Child` is dropped.
//! - A host crash kills every program running on it, and a simulation's
//!   end every program of it: a `Child` waited on afterwards reports it
//!   killed.
//! - A name registered nowhere may be one of the built-in programs
//!   (`true`, `echo`, `cat`, `sh -c`, ...: see [`crate::sim::process`]);
//!   otherwise `spawn` fails with `NotFound` and a message naming it and
//!   how to register it.
//!
//! ```no_run
//! # #[cfg(simulation)]
//! # async fn example() -> std::io::Result<()> {
//! tokio::sim::process::register("true", |_| async { 0 });
//! let status = tokio::process::Command::new("true").status().await?;
//! assert!(status.success());
//! # Ok(())
//! # }
//! ```

mod child;
mod command;
pub(crate) mod pipe;
pub(crate) mod stdio;
pub(crate) mod table;

pub use child::{Child, ChildStderr, ChildStdin, ChildStdout};
pub use command::Command;
