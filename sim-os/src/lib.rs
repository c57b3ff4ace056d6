//! `sim-os`: the OS layer, the simulator as seen from code that never heard
//! of it. It depends on the core (`sim-runtime`) and never the other way:
//! the core calls out through its seam (`sim_runtime::seams::OsLayer`),
//! which [`install`] fills.
//!
//! - [`interpose`]: libc's clocks, randomness, thread and process creation,
//!   signals and name resolution, virtual during a run (simulation builds).
//! - [`files`]: `std::fs` during a run goes to the simulated disk wherever
//!   `tokio::fs` would (through [`files::FileHooks`], which `sim-fs`
//!   installs).
//! - `threads`: deterministic OS threads (`std::thread::spawn` during a
//!   run), each a task of the run that holds the turn in the seed's order.
//! - [`sockets`]: `std::net` during a run is the simulated network (through
//!   [`sockets::SocketHooks`], which `sim-net` installs).
//! - [`logs`]: the service's `tracing` events in the trace file
//!   (`SIM_TRACE_LOGS`).
//! - `raw`: the real libc beneath the interposition, and `symbols`: the one
//!   place that finds libc's own definitions past ours.
//! - `real_threads`: the real threads alive, which may wake a run's task.

#![warn(missing_docs)]

pub mod files;
pub mod interpose;
pub mod logs;
mod raw;
pub mod real_sockets;
mod real_threads;
pub mod reserved;
pub mod sockets;
mod symbols;
#[cfg(all(
    simulation,
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod threads;

use sim_runtime::seams::OsLayer;
use std::any::Any;
use std::future::Future;
use std::pin::Pin;

/// The OS layer, as the core sees it.
struct Layer;

impl OsLayer for Layer {
    fn run_started(&self, trace_file: bool) -> Option<Box<dyn Any>> {
        // The service's logs go into the trace file, when there is one.
        if !trace_file {
            return None;
        }
        let level = logs::level_from_env()?;
        Some(Box::new(logs::install(level)))
    }

    fn on_sim_thread(&self) -> bool {
        #[cfg(all(
            simulation,
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "aarch64")
        ))]
        return threads::on_sim_thread();
        #[cfg(not(all(
            simulation,
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "aarch64")
        )))]
        false
    }

    fn block_on_thread(&self, core: u16, future: Pin<&mut dyn Future<Output = ()>>) {
        #[cfg(all(
            simulation,
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "aarch64")
        ))]
        {
            let core = sim_runtime::context::lookup(core)
                .expect("a simulated thread blocks on a runtime of its simulation");
            threads::block_on(&core, future);
        }
        #[cfg(not(all(
            simulation,
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "aarch64")
        )))]
        {
            let _ = (core, future);
            unreachable!("no simulated threads outside a simulation build");
        }
    }

    fn current_thread(&self) -> Option<u64> {
        #[cfg(all(
            simulation,
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "aarch64")
        ))]
        return threads::current_token();
        #[cfg(not(all(
            simulation,
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "aarch64")
        )))]
        None
    }

    fn other_real_threads(&self) -> usize {
        real_threads::others()
    }

    fn wait_uncounted(&self, wait: &mut dyn FnMut()) {
        real_threads::uncounted(wait)
    }

    fn start_plain_thread(&self, start: &mut dyn FnMut()) {
        #[cfg(all(
            simulation,
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "aarch64")
        ))]
        threads::plain_thread(start);
        // Without simulated threads every thread is a plain one.
        #[cfg(not(all(
            simulation,
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "aarch64")
        )))]
        start();
    }

    fn real_fork(&self) -> libc::pid_t {
        match crate::symbols::libc_fn!(c"fork", fn() -> libc::pid_t) {
            // SAFETY: libc's fork; the caller (sim-runtime's fork server)
            // forks only where no other thread is busy.
            Some(fork) => unsafe { fork() },
            None => -1,
        }
    }

    fn real_sleep(&self, duration: std::time::Duration) {
        let request = libc::timespec {
            tv_sec: duration.as_secs() as libc::time_t,
            tv_nsec: libc::c_long::from(duration.subsec_nanos() as i32),
        };
        if let Some(sleep) = symbols::libc_fn!(
            c"nanosleep",
            fn(*const libc::timespec, *mut libc::timespec) -> libc::c_int
        ) {
            // SAFETY: a valid request, no remainder wanted: libc's own
            // nanosleep, past the interposed (virtual) one.
            unsafe { sleep(&request, std::ptr::null_mut()) };
        }
    }

    fn block_in_background(
        &self,
        future: Pin<&mut dyn Future<Output = ()>>,
    ) -> Option<Result<(), String>> {
        #[cfg(all(
            simulation,
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "aarch64")
        ))]
        return threads::block_in_background(future);
        #[cfg(not(all(
            simulation,
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "aarch64")
        )))]
        {
            // Never polled: no simulation runs without the interposition.
            let _unpolled: Pin<&mut dyn Future<Output = ()>> = future;
            None
        }
    }

    fn run_on_thread(&self, thread: u64, call: &mut dyn FnMut()) -> bool {
        #[cfg(all(
            simulation,
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "aarch64")
        ))]
        return threads::run_on_thread(thread, call);
        #[cfg(not(all(
            simulation,
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "aarch64")
        )))]
        {
            let _ = (thread, call);
            false
        }
    }
}

/// Installs the OS layer under the core, once per process, and keeps the
/// interposed libc symbols in the link. Call it before building a
/// simulation (`tokio`'s runtime builder and the harness do).
pub fn install() {
    static LAYER: Layer = Layer;
    interpose::keep_linked();
    sim_runtime::seams::install_os_layer(&LAYER);
}
