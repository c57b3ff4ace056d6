//! Which file a run's trace goes to (the rule is in the module's docs).

use std::path::PathBuf;

/// `name` as part of a file name: characters other than `[A-Za-z0-9_.-]`
/// become `_` (`tests::echo` becomes `tests__echo`).
pub fn file_name_part(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The file a run writes its trace to, by the rule in the module docs.
///
/// `thread_name` is `None` for the main thread; `run_index` counts the
/// simulations this thread ran before, from 1.
pub fn trace_path(base: &str, thread_name: Option<&str>, run_index: u64) -> PathBuf {
    let mut path = match thread_name {
        None if base.contains("{name}") => base.replace("{name}", "main"),
        None => base.to_string(),
        Some(name) => {
            let clean = file_name_part(name);
            if base.contains("{name}") {
                base.replace("{name}", &clean)
            } else {
                format!("{base}.{clean}")
            }
        }
    };
    if run_index > 1 {
        path.push_str(&format!(".{run_index}"));
    }
    PathBuf::from(path)
}
