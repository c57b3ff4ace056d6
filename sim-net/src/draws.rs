//! What each link draw was for, when the shrinker asks
//! (`SIM_SHRINK_DRAWS_OUT=<file>`): a line per draw, `<stream> <index>
//! <what>`, in the order of the decision log's stream, so a draw the
//! failure needs is named by its message (`datagram #17
//! client0:49152>server:9`). Off, it costs one check of a cached flag.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::OnceLock;

fn out_path() -> Option<&'static PathBuf> {
    static PATH: OnceLock<Option<PathBuf>> = OnceLock::new();
    PATH.get_or_init(|| sim_runtime::settings::SHRINK_DRAWS_OUT.path())
        .as_ref()
}

thread_local! {
    /// Draws so far, by stream.
    static COUNTS: RefCell<BTreeMap<&'static str, u64>> = const { RefCell::new(BTreeMap::new()) };
}

/// A draw of `stream` was made for `what`. Inlined: at every latency
/// drawn, and almost always no shrink asked for the draws.
#[inline]
pub(crate) fn drew(stream: &'static str, what: impl FnOnce() -> String) {
    if let Some(path) = out_path() {
        write_draw(path, stream, what);
    }
}

/// Appends the draw's line to the shrinker's file at `path`.
#[cold]
fn write_draw(path: &std::path::Path, stream: &'static str, what: impl FnOnce() -> String) {
    let index = COUNTS.with(|c| {
        let mut counts = c.borrow_mut();
        let n = counts.entry(stream).or_default();
        let index = *n;
        *n += 1;
        index
    });
    let line = format!("{stream}\t{index}\t{}\n", what());
    // The simulator's own file: on the real disk.
    let _ = sim_runtime::outside::outside(|| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut file| file.write_all(line.as_bytes()))
    });
}
