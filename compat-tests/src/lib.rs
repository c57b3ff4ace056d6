//! Tests only: see `tests/`. Each file there passes on real tokio (plain
//! `cargo test`) and on the simulator (`cargo sim test`).
