//! tokio::signal: a signal sent before its stream was made. A file of its
//! own, so that its process has one runtime: every runtime's driver is woken
//! by any signal and hands it to the streams alive at that moment, so a
//! runtime of a test running beside this one (in `runtime.rs`, real tokio
//! failed this way on a loaded machine) can take the signal before the
//! stream below exists.

use std::time::Duration;

/// A signal reaches the streams alive when the runtime next turns: one
/// made right after the signal was sent (by this thread, before any
/// `.await`) still receives it.
#[tokio::test]
async fn a_stream_made_right_after_a_signal_receives_it() {
    use tokio::signal::unix::{signal, SignalKind};
    let kind = SignalKind::window_change();
    // The first stream makes SIGWINCH the runtime's for good.
    drop(signal(kind).unwrap());
    // SAFETY: kill of the process's own pid with a signal it handles (and
    // whose default action is to ignore it).
    assert_eq!(unsafe { libc::kill(libc::getpid(), libc::SIGWINCH) }, 0);
    let mut winch = signal(kind).unwrap();
    tokio::time::timeout(Duration::from_secs(5), winch.recv())
        .await
        .expect("the signal sent before the stream was made arrives")
        .unwrap();
}
