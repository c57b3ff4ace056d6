//! Scratch or real: the one rule that says which real paths a run always
//! simulates. `tokio::fs` and `std::fs` both follow it: the simulated disk
//! records a change outside the scratch area as a change of the real
//! filesystem's view (`disk/mirror.rs`), and `std::fs` sends the scratch
//! area to the disk (`std_fs.rs`).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Which real paths are simulated: the temporary directory, except the
/// first level under it that holds the working directory or the running
/// binary (a checkout or build living under `/tmp` stays real).
struct Area {
    tmp: PathBuf,
    real_inside: Vec<PathBuf>,
}

fn area() -> &'static Area {
    static AREA: OnceLock<Area> = OnceLock::new();
    AREA.get_or_init(|| {
        let tmp = sim_os::files::normalize(&std::env::temp_dir());
        let mut real_inside = Vec::new();
        let anchors = [std::env::current_dir().ok(), std::env::current_exe().ok()];
        for anchor in anchors.into_iter().flatten() {
            if let Ok(rest) = sim_os::files::normalize(&anchor).strip_prefix(&tmp) {
                if let Some(first) = rest.components().next() {
                    real_inside.push(tmp.join(first));
                }
            }
        }
        Area { tmp, real_inside }
    })
}

/// Whether `path` (absolute, normalized) is in the scratch area that is
/// always simulated: the temporary directory, but for a checkout or build
/// that lives under it.
pub fn is_scratch(path: &Path) -> bool {
    let area = area();
    path.starts_with(&area.tmp) && !area.real_inside.iter().any(|real| path.starts_with(real))
}
