//! Examples: see `src/bin/`. They are ordinary tokio programs.
pub mod bench;
pub mod follower_reads;
pub mod jobs;
pub mod kv;
pub mod race;
pub mod txn_store;
pub mod wal;
