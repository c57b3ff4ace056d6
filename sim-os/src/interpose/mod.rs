//! Determinism below tokio: in a simulation build (`--cfg simulation`), this
//! module defines libc's clock, randomness and thread-creation entry points,
//! so that code which never heard of the simulator still reads the virtual
//! clock and the seed.
//!
//! While a runtime is current on the calling thread:
//! - `clock_gettime` on the monotonic clocks reads `MONOTONIC_ORIGIN` plus
//!   the virtual time, and on the real-time clocks the run's epoch plus the
//!   virtual time; `gettimeofday` and `time` follow the real-time clock. So
//!   `std::time::Instant::now()` and `SystemTime::now()` are virtual.
//! - `getrandom` and `getentropy` draw from the seed, so `HashMap`'s random
//!   state, `rand::random` and v4 UUIDs repeat per seed.
//! - `pthread_create` (what `std::thread::spawn` calls) starts a simulated
//!   thread (`crate::threads`): one runs at a time, in the seed's order;
//!   `pthread_join`, `pthread_detach`, `nanosleep`, `clock_nanosleep`,
//!   `sched_yield` and `syscall(SYS_futex)` are its scheduling points.
//!   `SIM_ALLOW_THREADS=1` starts real, parallel threads instead.
//! - `syscall(SYS_getrandom)` and `syscall(SYS_clock_gettime)`, which some
//!   libraries call directly (the `getrandom` crate, ring), are answered
//!   the same way.
//! - `posix_spawn`, `posix_spawnp` and `fork` (what `std::process::Command`
//!   calls) are refused with an error that names the escape, unless
//!   `SIM_ALLOW_PROCESSES=1`; `tokio::process` runs simulated programs.
//! - `kill` and `raise` of the process itself reach the current host's
//!   signal handlers (see `set_signaller`), and `kill` of a simulated
//!   process's pid reaches that process (see `set_process_signaller`).
//! - `getaddrinfo` answers with the simulation's hosts (see `set_resolver`).
//! - `statx` answers one reserved path with attributes the simulated
//!   filesystem supplies (see `fabricate_metadata`), so `tokio::fs` can
//!   return real `std::fs::Metadata` values; every other call goes to the
//!   kernel.
//!
//! Not reachable from here: entropy from CPU instructions (RDRAND, timing
//! jitter). aws-lc seeds itself that way, so crypto on aws-lc-rs is not
//! reproducible; use rustls's `ring` provider in simulations.
//!
//! Outside a run every call goes to the real libc. The process CPU-time
//! clocks are always real.

mod clock;
mod metadata;
#[cfg(simulation)]
mod processes;
#[cfg(simulation)]
mod pthreads;
#[cfg(simulation)]
mod random;
#[cfg(simulation)]
mod resolve;
#[cfg(simulation)]
mod signals;
#[cfg(all(
    simulation,
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod syscall;

pub use clock::real_clock_ns;
#[cfg(simulation)]
pub use clock::{clock_gettime, clock_nanosleep, gettimeofday, nanosleep, time};
#[cfg(simulation)]
pub use metadata::statx;
pub use metadata::{fabricate_metadata, FakeStat};
#[cfg(simulation)]
pub use processes::{fork, posix_spawn, posix_spawnp};
#[cfg(simulation)]
pub use pthreads::{pthread_create, pthread_detach, pthread_join, pthread_setname_np, sched_yield};
#[cfg(simulation)]
pub use random::{getentropy, getrandom};
#[cfg(simulation)]
pub use resolve::{freeaddrinfo, getaddrinfo};
#[cfg(simulation)]
pub use signals::{kill, raise};
#[cfg(all(
    simulation,
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
pub use syscall::syscall;

/// Keeps the interposed symbols in the link: the linker only pulls objects
/// from a library archive for symbols it is looking for, and libc's
/// definitions would otherwise win. Called when a runtime is built.
#[inline(never)]
pub fn keep_linked() -> usize {
    #[cfg(simulation)]
    {
        let symbols = [
            clock_gettime as *const () as usize,
            gettimeofday as *const () as usize,
            time as *const () as usize,
            getrandom as *const () as usize,
            getentropy as *const () as usize,
            pthread_create as *const () as usize,
            getaddrinfo as *const () as usize,
            freeaddrinfo as *const () as usize,
            syscall as *const () as usize,
            crate::sockets::socket as *const () as usize,
            crate::sockets::listen as *const () as usize,
        ];
        std::hint::black_box(symbols).iter().fold(0, |a, b| a ^ b)
    }
    #[cfg(not(simulation))]
    {
        0
    }
}

/// How a subsystem above the runtime (the network) resolves host names for
/// libc's `getaddrinfo` during a run: `None` when it has no answer to give
/// (no network in this run), `Some(Err)` for an unknown name.
pub type Resolver = fn(&str) -> Option<std::io::Result<Vec<std::net::IpAddr>>>;

static RESOLVER: std::sync::OnceLock<Resolver> = std::sync::OnceLock::new();

/// Delivers a signal the process sends itself during a run (`kill` of its
/// own pid, `raise`) to the simulation: true if it did (then the real
/// signal is not sent).
pub type Signaller = fn(i32) -> bool;

static SIGNALLER: std::sync::OnceLock<Signaller> = std::sync::OnceLock::new();

/// Installs the signaller used by the interposed `kill` and `raise` (once
/// per process; later calls are ignored).
pub fn set_signaller(signaller: Signaller) {
    let _ = SIGNALLER.set(signaller);
}

/// The lowest pid a simulated process gets. Above Linux's largest possible
/// pid (`PID_MAX_LIMIT`, 2^22), so it never names a real process.
pub const SIMULATED_PID_MIN: u32 = 5_000_000;

/// Delivers a signal sent with `kill` to a simulated process's pid (see
/// [`SIMULATED_PID_MIN`]): `Ok` if it was, or the errno (`ESRCH` for a pid
/// the run never gave out).
pub type ProcessSignaller = fn(u32, i32) -> Result<(), i32>;

static PROCESS_SIGNALLER: std::sync::OnceLock<ProcessSignaller> = std::sync::OnceLock::new();

/// Installs the signaller used by the interposed `kill` for simulated
/// processes (once per process; later calls are ignored).
pub fn set_process_signaller(signaller: ProcessSignaller) {
    let _ = PROCESS_SIGNALLER.set(signaller);
}

/// Installs the resolver used by the interposed `getaddrinfo` (once per
/// process; later calls are ignored).
pub fn set_resolver(resolver: Resolver) {
    let _ = RESOLVER.set(resolver);
}
