//! Examples: see `src/bin/`. They are ordinary tokio programs.
pub mod bench;
pub mod jobs;
pub mod kv;
pub mod race;
pub mod wal;
