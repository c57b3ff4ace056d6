//! Helpers shared by the simulation tests of this package.

/// Runs the test `name` of the current test binary in a child process with
/// `SIM_SEED=seed` and `SIM_TRACE`, and returns the trace it wrote. `label`
/// keeps the files of several calls apart.
#[allow(dead_code)] // Not every test binary that includes this module uses it.
pub fn child_trace(name: &str, seed: &str, label: &str) -> Vec<u8> {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let base = dir.join(label);
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args([name, "--exact", "--test-threads", "1"])
        .env("SIM_SEED", seed)
        .env("SIM_TRACE", &base)
        .env_remove("SIM_TRACE_BYTES")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "{name} failed in a child process");
    let file = dir.join(format!("{label}.{name}"));
    std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

/// The text of a panic's payload (its message).
#[allow(dead_code)] // Not every test binary that includes this module uses it.
pub fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// The README and the guide's chapters (`docs/*.md`) as one text: what the
/// docs show, wherever a block of it lives.
#[allow(dead_code)] // Not every test binary that includes this module uses it.
pub fn docs() -> String {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let mut text = std::fs::read_to_string(format!("{root}/README.md")).expect("the README");
    let mut chapters: Vec<std::path::PathBuf> = std::fs::read_dir(format!("{root}/docs"))
        .expect("the guide, docs/")
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    chapters.sort();
    for chapter in chapters {
        text.push('\n');
        text.push_str(&std::fs::read_to_string(chapter).unwrap());
    }
    text
}
