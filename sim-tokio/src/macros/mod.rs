//! The macros: `select!`, `join!`, `try_join!`, `pin!`, `task_local!`.
//! `#[tokio::main]` and `#[tokio::test]` are tokio-macros' (their expansion
//! calls this crate's `runtime::Builder`).

mod pin;
mod select;
mod task_local;

#[doc(hidden)]
pub mod support;
