//! Per-host simulated disks for the tokio simulator.
//!
//! Every host of a simulation (the tasks tagged with its node in
//! `sim-runtime`) has its own disk: an in-memory tree of files,
//! directories and symlinks, made on first use and kept across the host's
//! crashes and restarts. What a crash keeps follows a durability model (see
//! [`disk`]): synced data always survives; unsynced writes are lost,
//! applied or torn at sector granularity; unsynced namespace changes
//! survive as a prefix, so a rename is all or nothing. Faults (`EIO`,
//! `ENOSPC`, latency, silent corruption) come from [`DiskConfig`], drawn
//! from the seed, and every crash resolution and injected fault is a note
//! in the run's trace.
//!
//! `tokio::fs` in the facade is built on [`with_disk`] and [`delay`].

pub mod config;
mod data;
pub mod disk;
pub mod scratch;
mod std_fs;

pub use config::DiskConfig;
pub use disk::{errno, Disk, Entry, Handle, Ino, Kind, OpenFlags, Skeleton};
pub use std_fs::{
    give_descriptor, install, set_fifo_hooks, take_descriptor, take_fifo_descriptor, FifoHooks,
};

use sim_runtime::{Core, EventKind, Label};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

/// The disks of one simulation, by node. A runtime extension.
pub struct FileSystem {
    seed: u64,
    disks: RefCell<BTreeMap<u32, Disk>>,
    configs: RefCell<BTreeMap<u32, DiskConfig>>,
    skeleton: Skeleton,
}

impl FileSystem {
    fn new(core: &Core) -> Rc<FileSystem> {
        // The real process's working and temporary directories, so
        // relative paths and `std::env::temp_dir()` mean on every host what
        // they mean outside.
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        let fs = Rc::new(FileSystem {
            seed: core.config().seed,
            disks: RefCell::new(BTreeMap::new()),
            configs: RefCell::new(BTreeMap::new()),
            skeleton: Skeleton {
                cwd,
                tmp: sim_os::files::normalize(&std::env::temp_dir()),
                mirror_real: true,
            },
        });
        let weak = Rc::downgrade(&fs);
        core.on_node_crash(Rc::new(move |node| {
            if let Some(fs) = weak.upgrade() {
                fs.crash(node);
            }
        }));
        fs
    }

    fn crash(&self, node: u32) {
        let mut disks = self.disks.borrow_mut();
        if let Some(disk) = disks.get_mut(&node) {
            disk.crash();
            let notes = disk.take_notes();
            drop(disks);
            record(notes);
        }
    }
}

/// Whether the current host's disk changed `path`, something inside it or
/// something holding it, outside the temporary directory: then `std::fs`
/// calls on it go to the disk, as `tokio::fs` ones do.
pub(crate) fn shadowed(path: &std::path::Path) -> bool {
    if !disk::ANY_CHANGED_OUTSIDE.load(std::sync::atomic::Ordering::Relaxed) {
        return false;
    }
    sim_runtime::context::with_simulation(|core| {
        let slot = core.extension(|| FileSystemSlot(RefCell::new(None)));
        let fs = slot.0.try_borrow().ok()?.clone()?;
        let disks = fs.disks.try_borrow().ok()?;
        Some(disks.get(&core.current_node())?.shadows(path))
    })
    .flatten()
    .unwrap_or(false)
}

impl Drop for FileSystem {
    /// The end of the run: says, once per process, which files the run
    /// wrote outside the temporary directory, since they never reach the
    /// real filesystem and are gone now.
    fn drop(&mut self) {
        static REPORTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        let disks = self.disks.borrow();
        let changed: Vec<(u32, &std::path::Path)> = disks
            .iter()
            .flat_map(|(node, disk)| disk.changed_outside().iter().map(|p| (*node, p.as_path())))
            .collect();
        if changed.is_empty() || REPORTED.swap(true, std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        let shown: Vec<String> = changed
            .iter()
            .take(REPORT_PATHS_MAX)
            .map(|(node, path)| format!("  {} (host node {node})", path.display()))
            .collect();
        let more = match changed.len().saturating_sub(REPORT_PATHS_MAX) {
            0 => String::new(),
            n => format!("\n  and {n} more"),
        };
        let message = format!(
            "sim: this run changed files outside the temporary directory. A run never \
             changes the real filesystem: they were on their host's simulated disk, with \
             its crash rules, and are gone with the run:\n{}{more}\nTo keep a file a test \
             writes (a log, an artifact), write it after the simulation ends.\n",
            shown.join("\n")
        );
        // Past the test harness's capture: a passing test should say it too.
        let _ = std::io::Write::write_all(&mut std::io::stderr(), message.as_bytes());
    }
}

/// How many changed paths the end-of-run report lists.
const REPORT_PATHS_MAX: usize = 10;

fn record(notes: Vec<String>) {
    if notes.is_empty() {
        return;
    }
    sim_runtime::context::with_simulation(|core| {
        for note in &notes {
            core.trace(EventKind::Note, core.current_task(), Label::Str(note));
        }
    });
}

fn file_system(core: &Core) -> Rc<FileSystem> {
    // `extension` keys on the type: one `FileSystem` per simulation. It
    // holds an `Rc` so the crash listener can see it.
    core.extension(|| FileSystemSlot(RefCell::new(None)))
        .get_or_init(core)
}

struct FileSystemSlot(RefCell<Option<Rc<FileSystem>>>);

impl FileSystemSlot {
    fn get_or_init(&self, core: &Core) -> Rc<FileSystem> {
        if let Some(fs) = self.0.borrow().as_ref() {
            return fs.clone();
        }
        let fs = FileSystem::new(core);
        *self.0.borrow_mut() = Some(fs.clone());
        fs
    }
}

/// The host (node) of the running task: whose disk [`with_disk`] uses.
///
/// # Panics
/// Outside a simulation, with tokio's message for a missing runtime.
#[track_caller]
pub fn current_node() -> u32 {
    match sim_runtime::context::with_simulation(|core| core.current_node()) {
        Some(node) => node,
        None => no_runtime(),
    }
}

#[track_caller]
fn no_runtime() -> ! {
    sim_runtime::context::no_runtime()
}

/// Runs `f` on the disk of the current task's host (made on first use),
/// then records what the disk noted in the trace.
///
/// # Panics
/// Outside a simulation, with tokio's message for a missing runtime.
#[track_caller]
pub fn with_disk<R>(f: impl FnOnce(&mut Disk) -> R) -> R {
    with_disk_on(current_node(), f)
}

/// As [`with_disk`], on the disk of host `node` (a file opened on one host
/// stays on that host's disk, whichever task uses it).
///
/// # Panics
/// Outside a simulation.
#[track_caller]
pub fn with_disk_on<R>(node: u32, f: impl FnOnce(&mut Disk) -> R) -> R {
    let Some(fs) = sim_runtime::context::with_simulation(file_system) else {
        no_runtime()
    };
    let (result, notes) = {
        let mut disks = fs.disks.borrow_mut();
        let disk = disks.entry(node).or_insert_with(|| {
            let config = fs.configs.borrow().get(&node).cloned().unwrap_or_default();
            Disk::new(node, fs.seed, config, &fs.skeleton)
        });
        let result = f(disk);
        (result, disk.take_notes())
    };
    record(notes);
    result
}

/// Sets the disk configuration of host `node` (0 is the implicit host),
/// for a disk not made yet or already in use.
///
/// # Panics
/// Outside a simulation; on a configuration that does not validate.
pub fn set_disk_config(node: u32, config: DiskConfig) {
    config.validate();
    let fs = sim_runtime::context::with_simulation(file_system)
        .expect("sim: set_disk_config is called inside a simulation");
    if let Some(disk) = fs.disks.borrow_mut().get_mut(&node) {
        disk.set_config(config.clone());
    }
    fs.configs.borrow_mut().insert(node, config);
}

/// The latency of one disk operation: a wait in virtual time drawn from
/// the host's [`DiskConfig`]. Every `tokio::fs` operation awaits one before
/// it acts, so operations of different tasks interleave as the seed says.
pub fn delay() -> Delay {
    delay_on(current_node())
}

/// As [`delay`], for the disk of host `node`.
pub fn delay_on(node: u32) -> Delay {
    let latency_ns = with_disk_on(node, |disk| disk.draw_latency_ns());
    Delay {
        latency_ns,
        key: None,
    }
}

/// See [`delay`].
pub struct Delay {
    latency_ns: u64,
    key: Option<sim_runtime::EventKey>,
}

impl Future for Delay {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        sim_runtime::context::with_simulation(|core| match this.key {
            None => {
                let at_ns = core.now_ns() + this.latency_ns;
                this.key = Some(core.timer_insert(at_ns, Some(cx.waker())));
                Poll::Pending
            }
            Some(key) if core.event_pending(key) => {
                core.timer_set_waker(key, cx.waker());
                Poll::Pending
            }
            Some(_) => Poll::Ready(()),
        })
        .expect("a disk delay is polled inside its simulation")
    }
}

impl Drop for Delay {
    fn drop(&mut self) {
        if let Some(key) = self.key {
            sim_runtime::context::with_simulation(|core| core.event_cancel(key));
        }
    }
}
