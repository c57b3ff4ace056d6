use super::unix::{signal, SignalKind};
use std::io;

/// Waits for Ctrl-C (SIGINT) to reach this task's host. From the first call
/// on, SIGINT no longer crashes the host.
///
/// # Errors
/// Never in a simulation.
pub async fn ctrl_c() -> io::Result<()> {
    let mut interrupt = signal(SignalKind::interrupt())?;
    interrupt.recv().await;
    Ok(())
}
