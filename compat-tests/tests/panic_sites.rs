//! Misuse panics point at the caller's line (tokio's `#[track_caller]`),
//! with tokio's messages. Every test here swaps the process's panic hook,
//! so they take one lock.

use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Runs `f`, which must panic, and returns the panic's file and message.
fn panic_site(f: impl FnOnce()) -> (String, String) {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let seen: Arc<Mutex<Option<(String, String)>>> = Arc::default();
    let sink = seen.clone();
    let previous = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        let file = info
            .location()
            .map(|l| l.file().to_string())
            .unwrap_or_default();
        let message = info
            .payload()
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| info.payload().downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        *sink.lock().unwrap() = Some((file, message));
    }));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    panic::set_hook(previous);
    assert!(result.is_err(), "no panic");
    let seen = seen.lock().unwrap().take();
    seen.expect("the hook saw the panic")
}

fn assert_here(site: (String, String), message: &str) {
    assert!(
        site.0.ends_with("tests/panic_sites.rs"),
        "the panic points at {} instead of the caller",
        site.0
    );
    assert!(site.1.contains(message), "{:?} lacks {message:?}", site.1);
}

#[test]
fn builder_settings() {
    use tokio::runtime::Builder;
    assert_here(
        panic_site(|| {
            Builder::new_multi_thread().worker_threads(0);
        }),
        "Worker threads cannot be set to 0",
    );
    assert_here(
        panic_site(|| {
            Builder::new_current_thread().name("  ");
        }),
        "runtime name shouldn't be empty",
    );
    assert_here(
        panic_site(|| {
            Builder::new_current_thread().event_interval(0);
        }),
        "event_interval must be greater than 0",
    );
}

#[test]
fn in_memory_pipes_and_buffers() {
    assert_here(
        panic_site(|| {
            let _ = tokio::io::duplex(0);
        }),
        "`max_buf_size` must be greater than 0",
    );
    assert_here(
        panic_site(|| {
            let _ = tokio::io::simplex(0);
        }),
        "`max_buf_size` must be greater than 0",
    );
    assert_here(
        panic_site(|| {
            let _ = tokio::io::BufReader::with_capacity(0, tokio::io::empty());
        }),
        "capacity must be greater than zero",
    );
    assert_here(
        panic_site(|| {
            let _ = tokio::io::BufStream::with_capacity(0, 8, tokio::io::empty());
        }),
        "capacity must be greater than zero",
    );
}

#[tokio::test]
async fn file_buffer_size() {
    let path = std::env::temp_dir().join("tokio-sim-compat-panic-sites.txt");
    let mut file = tokio::fs::File::create(&path).await.unwrap();
    assert_here(
        panic_site(|| file.set_max_buf_size(0)),
        "`max_buf_size` must be greater than 0",
    );
    drop(file);
    tokio::fs::remove_file(&path).await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn pausing_and_resuming_time() {
    assert_here(
        panic_site(|| tokio::time::pause()),
        "time is already frozen",
    );
    tokio::time::resume();
    assert_here(panic_site(|| tokio::time::resume()), "time is not frozen");
    tokio::time::pause();
    tokio::time::sleep(Duration::from_secs(1)).await;
}

tokio::task_local! {
    static REQUEST: u32;
}

#[test]
fn task_locals_and_spawning_outside_their_context() {
    assert_here(
        panic_site(|| {
            REQUEST.with(|_| ());
        }),
        "cannot access a task-local storage value without setting it first",
    );
    assert_here(
        panic_site(|| {
            REQUEST.get();
        }),
        "cannot access a task-local storage value without setting it first",
    );
    assert_here(
        panic_site(|| {
            REQUEST.sync_scope(1, || REQUEST.with(|_| REQUEST.sync_scope(2, || ())));
        }),
        "cannot enter a task-local scope while the task-local storage is borrowed",
    );
    assert_here(
        panic_site(|| {
            tokio::spawn(async {});
        }),
        "must be called from the context of a Tokio 1.x runtime",
    );
    assert_here(
        panic_site(|| {
            tokio::runtime::Handle::current();
        }),
        "must be called from the context of a Tokio 1.x runtime",
    );
}

#[test]
fn blocking_on_a_runtime_inside_a_runtime() {
    let outer = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let inner = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let handle = inner.handle().clone();
    let local = tokio::task::LocalSet::new();
    outer.block_on(async {
        assert_here(
            panic_site(|| inner.block_on(async {})),
            "Cannot start a runtime from within a runtime",
        );
        assert_here(
            panic_site(|| handle.block_on(async {})),
            "Cannot start a runtime from within a runtime",
        );
        assert_here(
            panic_site(|| local.block_on(&inner, async {})),
            "Cannot start a runtime from within a runtime",
        );
    });
}

/// tokio's signal driver comes with its I/O driver: a signal stream on a
/// runtime without `enable_io` panics at the caller's line, before the
/// signal number is looked at.
#[test]
fn a_signal_on_a_runtime_without_io() {
    use tokio::signal::unix::{signal, SignalKind};
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        assert_here(
            panic_site(|| {
                let _ = signal(SignalKind::from_raw(-1));
            }),
            "IO is disabled",
        );
    });
}
