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

use std::sync::atomic::{AtomicUsize, Ordering};

type ClockGettime = unsafe extern "C" fn(libc::clockid_t, *mut libc::timespec) -> libc::c_int;
static REAL_CLOCK_GETTIME: AtomicUsize = AtomicUsize::new(0);

/// libc's own `clock_gettime` (the vDSO-backed one), found past our
/// definition with `dlsym(RTLD_NEXT)`; a raw syscall if that fails.
unsafe fn real_clock_gettime(clock: libc::clockid_t, tp: *mut libc::timespec) -> libc::c_int {
    let mut f = REAL_CLOCK_GETTIME.load(Ordering::Relaxed);
    if f == 0 {
        f = libc::dlsym(libc::RTLD_NEXT, c"clock_gettime".as_ptr()) as usize;
        if f == 0 || f == clock_gettime_address() {
            f = 1;
        }
        REAL_CLOCK_GETTIME.store(f, Ordering::Relaxed);
    }
    if f > 1 {
        let f: ClockGettime = std::mem::transmute(f);
        f(clock, tp)
    } else {
        libc::syscall(libc::SYS_clock_gettime, clock, tp) as libc::c_int
    }
}

#[cfg(simulation)]
fn clock_gettime_address() -> usize {
    clock_gettime as *const () as usize
}

#[cfg(not(simulation))]
fn clock_gettime_address() -> usize {
    usize::MAX
}

/// The real clock, in ns.
pub fn real_clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write.
    unsafe { real_clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Which virtual clock a clock id maps to.
#[cfg_attr(not(simulation), allow(dead_code))]
enum Virtual {
    Monotonic,
    Realtime,
    Real,
}

#[cfg_attr(not(simulation), allow(dead_code))]
fn classify(clock: libc::clockid_t) -> Virtual {
    match clock {
        libc::CLOCK_REALTIME | libc::CLOCK_REALTIME_COARSE | libc::CLOCK_TAI | 8 => {
            Virtual::Realtime
        }
        libc::CLOCK_MONOTONIC
        | libc::CLOCK_MONOTONIC_RAW
        | libc::CLOCK_MONOTONIC_COARSE
        | libc::CLOCK_BOOTTIME
        | 9 => Virtual::Monotonic,
        _ => Virtual::Real,
    }
}

/// The virtual reading of `clock` if a run is current: `None` otherwise.
#[cfg_attr(not(simulation), allow(dead_code))]
fn virtual_ns(clock: libc::clockid_t) -> Option<u64> {
    let kind = classify(clock);
    if let Virtual::Real = kind {
        return None;
    }
    sim_runtime::context::with_simulation(|core| match kind {
        Virtual::Monotonic => crate::raw::MONOTONIC_ORIGIN_NS + core.local_now_ns(),
        _ => (core.config().epoch_unix_ns + core.now_ns())
            .saturating_add_signed(core.wall_offset_ns()),
    })
}

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
            crate::real_sockets::listen as *const () as usize,
        ];
        std::hint::black_box(symbols).iter().fold(0, |a, b| a ^ b)
    }
    #[cfg(not(simulation))]
    {
        0
    }
}

#[cfg(simulation)]
pub use overrides::*;

#[cfg(simulation)]
mod overrides {
    use super::*;

    /// libc's `clock_gettime`, virtual during a run.
    ///
    /// # Safety
    /// As libc's: `tp` must be valid to write.
    #[no_mangle]
    pub unsafe extern "C" fn clock_gettime(
        clock: libc::clockid_t,
        tp: *mut libc::timespec,
    ) -> libc::c_int {
        match virtual_ns(clock) {
            Some(ns) => {
                if tp.is_null() {
                    return -1;
                }
                (*tp).tv_sec = (ns / 1_000_000_000) as libc::time_t;
                (*tp).tv_nsec = (ns % 1_000_000_000) as libc::c_long;
                0
            }
            None => real_clock_gettime(clock, tp),
        }
    }

    /// libc's `gettimeofday`, virtual during a run.
    ///
    /// # Safety
    /// As libc's: `tv` must be valid to write or null.
    #[no_mangle]
    pub unsafe extern "C" fn gettimeofday(
        tv: *mut libc::timeval,
        _tz: *mut libc::c_void,
    ) -> libc::c_int {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        clock_gettime(libc::CLOCK_REALTIME, &mut ts);
        if !tv.is_null() {
            (*tv).tv_sec = ts.tv_sec;
            (*tv).tv_usec = (ts.tv_nsec / 1000) as libc::suseconds_t;
        }
        0
    }

    /// libc's `time`, virtual during a run.
    ///
    /// # Safety
    /// As libc's: `t` must be valid to write or null.
    #[no_mangle]
    pub unsafe extern "C" fn time(t: *mut libc::time_t) -> libc::time_t {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        clock_gettime(libc::CLOCK_REALTIME, &mut ts);
        if !t.is_null() {
            *t = ts.tv_sec;
        }
        ts.tv_sec
    }

    pub(super) fn fill_from_run(buf: *mut libc::c_void, len: libc::size_t) -> bool {
        if len == 0 {
            return true;
        }
        // SAFETY: the caller gave a buffer valid for `len` bytes.
        let slice = unsafe { std::slice::from_raw_parts_mut(buf as *mut u8, len) };
        sim_runtime::context::with_simulation(|core| core.fill_random(slice)).is_some()
            || sim_runtime::sweep::fill_before_run(slice)
    }

    /// libc's `getrandom`, seeded during a run.
    ///
    /// # Safety
    /// As libc's: `buf` must be valid for `len` bytes.
    #[no_mangle]
    pub unsafe extern "C" fn getrandom(
        buf: *mut libc::c_void,
        len: libc::size_t,
        flags: libc::c_uint,
    ) -> libc::ssize_t {
        if fill_from_run(buf, len) {
            return len as libc::ssize_t;
        }
        libc::syscall(libc::SYS_getrandom, buf, len, flags) as libc::ssize_t
    }

    /// libc's `getentropy`, seeded during a run.
    ///
    /// # Safety
    /// As libc's: `buf` must be valid for `len` bytes.
    #[no_mangle]
    pub unsafe extern "C" fn getentropy(buf: *mut libc::c_void, len: libc::size_t) -> libc::c_int {
        if len > 256 {
            *libc::__errno_location() = libc::EIO;
            return -1;
        }
        if fill_from_run(buf, len) {
            return 0;
        }
        let n = libc::syscall(libc::SYS_getrandom, buf, len, 0);
        if n == len as libc::c_long {
            0
        } else {
            -1
        }
    }

    type PthreadCreate = unsafe extern "C" fn(
        *mut libc::pthread_t,
        *const libc::pthread_attr_t,
        extern "C" fn(*mut libc::c_void) -> *mut libc::c_void,
        *mut libc::c_void,
    ) -> libc::c_int;

    /// libc's `pthread_create`: during a run, a simulated thread (see
    /// `threads/`), real with `SIM_ALLOW_THREADS=1`.
    ///
    /// # Safety
    /// As libc's.
    #[no_mangle]
    pub unsafe extern "C" fn pthread_create(
        thread: *mut libc::pthread_t,
        attr: *const libc::pthread_attr_t,
        start: extern "C" fn(*mut libc::c_void) -> *mut libc::c_void,
        arg: *mut libc::c_void,
    ) -> libc::c_int {
        // During a run, a thread runs one at a time with the simulation
        // (`threads/`), unless real, parallel threads were asked for.
        let simulated = sim_runtime::context::with_simulation(|core| {
            (!core.config().allow_threads)
                .then(|| crate::threads::spawn(core, thread, attr, start, arg))
        })
        .flatten();
        if let Some(rc) = simulated {
            return rc;
        }
        let real = libc::dlsym(libc::RTLD_NEXT, c"pthread_create".as_ptr());
        if real.is_null() {
            return libc::EAGAIN;
        }
        let real: PthreadCreate = std::mem::transmute(real);
        real(thread, attr, start, arg)
    }

    /// libc's `pthread_join`: a simulated thread is waited for in the run.
    ///
    /// # Safety
    /// As libc's.
    #[no_mangle]
    pub unsafe extern "C" fn pthread_join(
        thread: libc::pthread_t,
        retval: *mut *mut libc::c_void,
    ) -> libc::c_int {
        if let Some(rc) = crate::threads::join(thread, retval) {
            return rc;
        }
        let real = libc::dlsym(libc::RTLD_NEXT, c"pthread_join".as_ptr());
        if real.is_null() {
            return libc::ESRCH;
        }
        let real: unsafe extern "C" fn(libc::pthread_t, *mut *mut libc::c_void) -> libc::c_int =
            std::mem::transmute(real);
        real(thread, retval)
    }

    /// libc's `pthread_detach`: a simulated thread's handle is let go.
    ///
    /// # Safety
    /// As libc's.
    #[no_mangle]
    pub unsafe extern "C" fn pthread_detach(thread: libc::pthread_t) -> libc::c_int {
        if let Some(rc) = crate::threads::detach(thread) {
            return rc;
        }
        let real = libc::dlsym(libc::RTLD_NEXT, c"pthread_detach".as_ptr());
        if real.is_null() {
            return libc::ESRCH;
        }
        let real: unsafe extern "C" fn(libc::pthread_t) -> libc::c_int = std::mem::transmute(real);
        real(thread)
    }

    /// libc's `nanosleep`: virtual time on a simulated thread.
    ///
    /// # Safety
    /// As libc's.
    #[no_mangle]
    pub unsafe extern "C" fn nanosleep(
        request: *const libc::timespec,
        remain: *mut libc::timespec,
    ) -> libc::c_int {
        if !request.is_null() {
            let r = &*request;
            let ns = r.tv_sec as u64 * 1_000_000_000 + r.tv_nsec as u64;
            if crate::threads::sleep_until(|core| core.now_ns() + ns).is_some()
                || crate::threads::simulator_sleep(|core| core.now_ns() + ns).is_some()
            {
                if !remain.is_null() {
                    (*remain).tv_sec = 0;
                    (*remain).tv_nsec = 0;
                }
                return 0;
            }
        }
        let real = libc::dlsym(libc::RTLD_NEXT, c"nanosleep".as_ptr());
        let real: unsafe extern "C" fn(*const libc::timespec, *mut libc::timespec) -> libc::c_int =
            std::mem::transmute(real);
        real(request, remain)
    }

    /// libc's `clock_nanosleep`: virtual time on a simulated thread.
    ///
    /// # Safety
    /// As libc's.
    #[no_mangle]
    pub unsafe extern "C" fn clock_nanosleep(
        clock: libc::clockid_t,
        flags: libc::c_int,
        request: *const libc::timespec,
        remain: *mut libc::timespec,
    ) -> libc::c_int {
        if !request.is_null() {
            let r = &*request;
            let ns = r.tv_sec as u64 * 1_000_000_000 + r.tv_nsec as u64;
            let absolute = flags & libc::TIMER_ABSTIME != 0;
            let deadline = |core: &sim_runtime::Core| {
                if !absolute {
                    core.now_ns() + ns
                } else if matches!(classify(clock), Virtual::Monotonic) {
                    ns.saturating_sub(crate::raw::MONOTONIC_ORIGIN_NS)
                } else {
                    ns.saturating_sub(core.config().epoch_unix_ns)
                }
            };
            let slept = crate::threads::sleep_until(deadline)
                .or_else(|| crate::threads::simulator_sleep(deadline));
            if slept.is_some() {
                return 0;
            }
        }
        let real = libc::dlsym(libc::RTLD_NEXT, c"clock_nanosleep".as_ptr());
        let real: unsafe extern "C" fn(
            libc::clockid_t,
            libc::c_int,
            *const libc::timespec,
            *mut libc::timespec,
        ) -> libc::c_int = std::mem::transmute(real);
        real(clock, flags, request, remain)
    }

    /// libc's `pthread_setname_np`: a simulated thread's name, for reports.
    ///
    /// # Safety
    /// As libc's.
    #[no_mangle]
    pub unsafe extern "C" fn pthread_setname_np(
        thread: libc::pthread_t,
        name: *const libc::c_char,
    ) -> libc::c_int {
        if !name.is_null() && thread == libc::pthread_self() {
            crate::threads::set_name(&std::ffi::CStr::from_ptr(name).to_string_lossy());
        }
        let real = libc::dlsym(libc::RTLD_NEXT, c"pthread_setname_np".as_ptr());
        if real.is_null() {
            return 0;
        }
        let real: unsafe extern "C" fn(libc::pthread_t, *const libc::c_char) -> libc::c_int =
            std::mem::transmute(real);
        real(thread, name)
    }

    /// libc's `sched_yield`: a scheduling point on a simulated thread.
    ///
    /// # Safety
    /// As libc's.
    #[no_mangle]
    pub unsafe extern "C" fn sched_yield() -> libc::c_int {
        if crate::threads::yield_now() {
            return 0;
        }
        let real = libc::dlsym(libc::RTLD_NEXT, c"sched_yield".as_ptr());
        let real: unsafe extern "C" fn() -> libc::c_int = std::mem::transmute(real);
        real()
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

#[cfg(simulation)]
mod processes {
    /// Whether the current run refuses real processes: true during a run
    /// without `SIM_ALLOW_PROCESSES=1`, after noting the escape.
    fn refuse(call: &str) -> bool {
        let refused = sim_runtime::context::with_simulation(|core| !core.config().allow_processes)
            .unwrap_or(false);
        if refused {
            let message = format!(
                "sim: escape refused: a real process was started during a simulation run \
                 (std::process::Command, or a library calling {call}). Its timing and output \
                 are outside the simulation. Start a simulated program with \
                 tokio::process::Command instead (register it first with \
                 tokio::sim::process::register), or set SIM_ALLOW_PROCESSES=1 to allow real \
                 processes and give up determinism."
            );
            eprintln!("{message}");
            sim_runtime::sweep::note_escape(&message);
        }
        refused
    }

    unsafe fn real(name: &std::ffi::CStr) -> usize {
        libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) as usize
    }

    type PosixSpawn = unsafe extern "C" fn(
        *mut libc::pid_t,
        *const libc::c_char,
        *const libc::posix_spawn_file_actions_t,
        *const libc::posix_spawnattr_t,
        *const *mut libc::c_char,
        *const *mut libc::c_char,
    ) -> libc::c_int;

    /// libc's `posix_spawn`, refused during a run (see the module docs).
    ///
    /// # Safety
    /// As libc's.
    #[no_mangle]
    pub unsafe extern "C" fn posix_spawn(
        pid: *mut libc::pid_t,
        path: *const libc::c_char,
        actions: *const libc::posix_spawn_file_actions_t,
        attrs: *const libc::posix_spawnattr_t,
        argv: *const *mut libc::c_char,
        envp: *const *mut libc::c_char,
    ) -> libc::c_int {
        spawn_or_refuse(c"posix_spawn", pid, path, actions, attrs, argv, envp)
    }

    /// libc's `posix_spawnp`, refused during a run (see the module docs).
    ///
    /// # Safety
    /// As libc's.
    #[no_mangle]
    pub unsafe extern "C" fn posix_spawnp(
        pid: *mut libc::pid_t,
        file: *const libc::c_char,
        actions: *const libc::posix_spawn_file_actions_t,
        attrs: *const libc::posix_spawnattr_t,
        argv: *const *mut libc::c_char,
        envp: *const *mut libc::c_char,
    ) -> libc::c_int {
        spawn_or_refuse(c"posix_spawnp", pid, file, actions, attrs, argv, envp)
    }

    /// `posix_spawn` or `posix_spawnp` (`name`): refused during a run,
    /// libc's otherwise.
    unsafe fn spawn_or_refuse(
        name: &std::ffi::CStr,
        pid: *mut libc::pid_t,
        file: *const libc::c_char,
        actions: *const libc::posix_spawn_file_actions_t,
        attrs: *const libc::posix_spawnattr_t,
        argv: *const *mut libc::c_char,
        envp: *const *mut libc::c_char,
    ) -> libc::c_int {
        if refuse(&name.to_string_lossy()) {
            return libc::EPERM;
        }
        match real(name) {
            0 => libc::ENOSYS,
            f => std::mem::transmute::<usize, PosixSpawn>(f)(pid, file, actions, attrs, argv, envp),
        }
    }

    /// libc's `fork`, refused during a run (see the module docs).
    ///
    /// # Safety
    /// As libc's.
    #[no_mangle]
    pub unsafe extern "C" fn fork() -> libc::pid_t {
        if refuse("fork") {
            *libc::__errno_location() = libc::EPERM;
            return -1;
        }
        match real(c"fork") {
            0 => {
                *libc::__errno_location() = libc::ENOSYS;
                -1
            }
            f => std::mem::transmute::<usize, unsafe extern "C" fn() -> libc::pid_t>(f)(),
        }
    }
}

#[cfg(simulation)]
mod signals {
    use super::{PROCESS_SIGNALLER, SIGNALLER, SIMULATED_PID_MIN};

    /// Signals a test may send itself to reach its own handlers. The
    /// others (an abort, a fault, KILL, STOP) stay real.
    fn simulated(sig: libc::c_int) -> bool {
        matches!(
            sig,
            libc::SIGHUP
                | libc::SIGINT
                | libc::SIGQUIT
                | libc::SIGUSR1
                | libc::SIGUSR2
                | libc::SIGPIPE
                | libc::SIGALRM
                | libc::SIGTERM
                | libc::SIGCHLD
                | libc::SIGWINCH
        )
    }

    fn deliver(sig: libc::c_int) -> bool {
        simulated(sig)
            && sim_runtime::context::with_simulation(|_| ()).is_some()
            && SIGNALLER.get().is_some_and(|f| f(sig))
    }

    unsafe fn real(name: &std::ffi::CStr) -> usize {
        libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) as usize
    }

    /// libc's `kill`: a signal the process sends itself during a run goes
    /// to the current simulated host (its `tokio::signal` handlers);
    /// everything else is libc's.
    ///
    /// # Safety
    /// As libc's.
    #[no_mangle]
    pub unsafe extern "C" fn kill(pid: libc::pid_t, sig: libc::c_int) -> libc::c_int {
        if (pid == 0 || pid == libc::getpid()) && deliver(sig) {
            return 0;
        }
        if pid > 0
            && pid as u32 >= SIMULATED_PID_MIN
            && sim_runtime::context::with_simulation(|_| ()).is_some()
        {
            if let Some(f) = PROCESS_SIGNALLER.get() {
                return match f(pid as u32, sig) {
                    Ok(()) => 0,
                    Err(errno) => {
                        *libc::__errno_location() = errno;
                        -1
                    }
                };
            }
        }
        let f = real(c"kill");
        if f == 0 {
            return libc::syscall(libc::SYS_kill, pid, sig) as libc::c_int;
        }
        let f: unsafe extern "C" fn(libc::pid_t, libc::c_int) -> libc::c_int =
            std::mem::transmute(f);
        f(pid, sig)
    }

    /// libc's `raise`: as [`kill`] of the process itself.
    ///
    /// # Safety
    /// As libc's.
    #[no_mangle]
    pub unsafe extern "C" fn raise(sig: libc::c_int) -> libc::c_int {
        if deliver(sig) {
            return 0;
        }
        let f = real(c"raise");
        if f == 0 {
            return libc::syscall(libc::SYS_tgkill, libc::getpid(), libc::gettid(), sig)
                as libc::c_int;
        }
        let f: unsafe extern "C" fn(libc::c_int) -> libc::c_int = std::mem::transmute(f);
        f(sig)
    }
}

/// Installs the resolver used by the interposed `getaddrinfo` (once per
/// process; later calls are ignored).
pub fn set_resolver(resolver: Resolver) {
    let _ = RESOLVER.set(resolver);
}

#[cfg(simulation)]
mod resolve {
    use super::RESOLVER;
    use std::collections::BTreeSet;
    use std::ffi::CStr;
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
    use std::sync::Mutex;

    /// The lists this module allocated, so `freeaddrinfo` frees them itself
    /// and hands everything else to libc.
    static OURS: Mutex<BTreeSet<usize>> = Mutex::new(BTreeSet::new());

    type GetAddrInfo = unsafe extern "C" fn(
        *const libc::c_char,
        *const libc::c_char,
        *const libc::addrinfo,
        *mut *mut libc::addrinfo,
    ) -> libc::c_int;
    type FreeAddrInfo = unsafe extern "C" fn(*mut libc::addrinfo);

    unsafe fn real<T>(name: &CStr) -> Option<T> {
        let f = libc::dlsym(libc::RTLD_NEXT, name.as_ptr());
        (!f.is_null()).then(|| std::mem::transmute_copy(&f))
    }

    /// One `addrinfo` and its address in one allocation.
    #[repr(C)]
    struct Node {
        info: libc::addrinfo,
        addr: libc::sockaddr_in6,
    }

    unsafe fn build(
        ips: &[IpAddr],
        port: u16,
        hints: Option<&libc::addrinfo>,
    ) -> *mut libc::addrinfo {
        let family = hints.map_or(libc::AF_UNSPEC, |h| h.ai_family);
        let socktypes: Vec<libc::c_int> = match hints.map_or(0, |h| h.ai_socktype) {
            0 => vec![libc::SOCK_STREAM, libc::SOCK_DGRAM],
            t => vec![t],
        };
        let mut head: *mut libc::addrinfo = std::ptr::null_mut();
        let mut tail: *mut *mut libc::addrinfo = &mut head;
        for ip in ips {
            let ip_family = if ip.is_ipv4() {
                libc::AF_INET
            } else {
                libc::AF_INET6
            };
            if family != libc::AF_UNSPEC && family != ip_family {
                continue;
            }
            for socktype in &socktypes {
                let node = libc::calloc(1, std::mem::size_of::<Node>()) as *mut Node;
                if node.is_null() {
                    return head;
                }
                let (addr_len, proto) = match ip {
                    IpAddr::V4(v4) => {
                        let sin =
                            &mut *(std::ptr::addr_of_mut!((*node).addr) as *mut libc::sockaddr_in);
                        sin.sin_family = libc::AF_INET as libc::sa_family_t;
                        sin.sin_port = port.to_be();
                        sin.sin_addr.s_addr = u32::from_ne_bytes(v4.octets());
                        (std::mem::size_of::<libc::sockaddr_in>(), *socktype)
                    }
                    IpAddr::V6(v6) => {
                        let sin6 = &mut (*node).addr;
                        sin6.sin6_family = libc::AF_INET6 as libc::sa_family_t;
                        sin6.sin6_port = port.to_be();
                        sin6.sin6_addr.s6_addr = v6.octets();
                        (std::mem::size_of::<libc::sockaddr_in6>(), *socktype)
                    }
                };
                let info = &mut (*node).info;
                info.ai_family = ip_family;
                info.ai_socktype = proto;
                info.ai_protocol = if proto == libc::SOCK_DGRAM {
                    libc::IPPROTO_UDP
                } else {
                    libc::IPPROTO_TCP
                };
                info.ai_addrlen = addr_len as libc::socklen_t;
                info.ai_addr = std::ptr::addr_of_mut!((*node).addr) as *mut libc::sockaddr;
                *tail = node as *mut libc::addrinfo;
                tail = &mut info.ai_next;
            }
        }
        head
    }

    /// libc's `getaddrinfo`: during a run, names are the simulation's hosts
    /// (never DNS); outside a run, libc's own.
    ///
    /// # Safety
    /// As libc's.
    #[no_mangle]
    pub unsafe extern "C" fn getaddrinfo(
        node: *const libc::c_char,
        service: *const libc::c_char,
        hints: *const libc::addrinfo,
        res: *mut *mut libc::addrinfo,
    ) -> libc::c_int {
        let in_run = sim_runtime::context::with_simulation(|_| ()).is_some();
        let resolver = RESOLVER.get().copied();
        if in_run {
            if let Some(resolver) = resolver {
                let hints_ref = hints.as_ref();
                let port = if service.is_null() {
                    0
                } else {
                    match CStr::from_ptr(service)
                        .to_str()
                        .ok()
                        .and_then(|s| s.parse::<u16>().ok())
                    {
                        Some(port) => port,
                        // Named services would need /etc/services: outside
                        // the simulation.
                        None => return libc::EAI_SERVICE,
                    }
                };
                let ips: Vec<IpAddr> = if node.is_null() {
                    let passive = hints_ref.is_some_and(|h| h.ai_flags & libc::AI_PASSIVE != 0);
                    if passive {
                        vec![
                            IpAddr::V4(Ipv4Addr::UNSPECIFIED),
                            IpAddr::V6(Ipv6Addr::UNSPECIFIED),
                        ]
                    } else {
                        vec![
                            IpAddr::V4(Ipv4Addr::LOCALHOST),
                            IpAddr::V6(Ipv6Addr::LOCALHOST),
                        ]
                    }
                } else {
                    let Ok(name) = CStr::from_ptr(node).to_str() else {
                        return libc::EAI_NONAME;
                    };
                    match resolver(name) {
                        Some(Ok(ips)) => ips,
                        Some(Err(_)) => return libc::EAI_NONAME,
                        None => return real_getaddrinfo(node, service, hints, res),
                    }
                };
                let list = build(&ips, port, hints_ref);
                if list.is_null() {
                    return libc::EAI_NONAME;
                }
                OURS.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(list as usize);
                *res = list;
                return 0;
            }
        }
        real_getaddrinfo(node, service, hints, res)
    }

    unsafe fn real_getaddrinfo(
        node: *const libc::c_char,
        service: *const libc::c_char,
        hints: *const libc::addrinfo,
        res: *mut *mut libc::addrinfo,
    ) -> libc::c_int {
        match real::<GetAddrInfo>(c"getaddrinfo") {
            Some(f) => f(node, service, hints, res),
            None => libc::EAI_FAIL,
        }
    }

    /// libc's `freeaddrinfo`, freeing this module's lists itself.
    ///
    /// # Safety
    /// As libc's.
    #[no_mangle]
    pub unsafe extern "C" fn freeaddrinfo(res: *mut libc::addrinfo) {
        if res.is_null() {
            return;
        }
        let ours = OURS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&(res as usize));
        if ours {
            let mut node = res;
            // Bounded by the list this module built.
            while !node.is_null() {
                let next = (*node).ai_next;
                libc::free(node as *mut libc::c_void);
                node = next;
            }
        } else if let Some(f) = real::<FreeAddrInfo>(c"freeaddrinfo") {
            f(res);
        }
    }
}

#[cfg(simulation)]
pub use resolve::{freeaddrinfo, getaddrinfo};

/// libc's `syscall`, for the two calls some libraries make directly:
/// `SYS_getrandom` (the `getrandom` crate, aws-lc's fallback) and
/// `SYS_clock_gettime`. During a run they are answered like the functions
/// above; everything else goes to the real `syscall`.
///
/// `syscall` is variadic in C. On the 64-bit Linux ABIs (x86-64, AArch64)
/// variadic integer arguments travel in the same registers as fixed ones,
/// so a definition with six `long` parameters receives them all; extra
/// ones passed on are ignored by the kernel.
#[cfg(all(
    simulation,
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod raw_syscall {
    use crate::raw::real_syscall;

    /// libc's `syscall`, seeded and virtual for getrandom and clock_gettime
    /// during a run, and the futex a simulated thread blocks on.
    ///
    /// # Safety
    /// As libc's.
    #[no_mangle]
    pub unsafe extern "C" fn syscall(
        number: libc::c_long,
        a1: libc::c_long,
        a2: libc::c_long,
        a3: libc::c_long,
        a4: libc::c_long,
        a5: libc::c_long,
        a6: libc::c_long,
    ) -> libc::c_long {
        if number == libc::SYS_futex {
            if let Some(r) = crate::threads::futex(
                a1 as *const std::sync::atomic::AtomicU32,
                a2 as i32,
                a3 as u32,
                a4 as *const libc::timespec,
            ) {
                return r;
            }
        } else if number == libc::SYS_getrandom {
            let buf = a1 as *mut libc::c_void;
            let len = a2 as libc::size_t;
            if super::overrides::fill_from_run(buf, len) {
                return len as libc::c_long;
            }
        } else if number == libc::SYS_clock_gettime
            && sim_runtime::context::with_simulation(|_| ()).is_some()
        {
            return super::clock_gettime(a1 as libc::clockid_t, a2 as *mut libc::timespec)
                as libc::c_long;
        }
        real_syscall(number, a1, a2, a3, a4, a5, a6)
    }
}

#[cfg(all(
    simulation,
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
pub use raw_syscall::syscall;

pub use crate::files::FakeStat;

/// The path `fabricate_metadata` asks std to stat; the `statx` override
/// answers it from a thread-local instead of the disk. A control character
/// keeps it away from any real path.
#[cfg(simulation)]
const FAKE_STAT_PATH: &str = "/\u{1}sim-fs-stat";

#[cfg(simulation)]
thread_local! {
    static FAKE_STAT: std::cell::Cell<Option<FakeStat>> = const { std::cell::Cell::new(None) };
}

/// A `std::fs::Metadata` that reports `stat`. std has no constructor for
/// one, so this asks std to stat a reserved path and answers that `statx`
/// call itself (simulation builds only).
///
/// # Panics
/// If std did not ask `statx` (a platform where it stats another way): the
/// simulated filesystem cannot report metadata there, and says so.
#[cfg(simulation)]
pub fn fabricate_metadata(stat: FakeStat) -> std::fs::Metadata {
    FAKE_STAT.with(|slot| slot.set(Some(stat)));
    let result = std::fs::symlink_metadata(FAKE_STAT_PATH);
    let leftover = FAKE_STAT.with(|slot| slot.take());
    match result {
        Ok(metadata) if leftover.is_none() => metadata,
        _ => panic!(
            "sim: could not build a std::fs::Metadata for a simulated file: std did not call \
             the interposed statx. Simulated tokio::fs needs Linux with glibc's statx."
        ),
    }
}

/// Outside simulation builds nothing answers the reserved path: simulated
/// files exist only in simulations.
///
/// # Panics
/// Always, saying so.
#[cfg(not(simulation))]
pub fn fabricate_metadata(stat: FakeStat) -> std::fs::Metadata {
    panic!(
        "sim: metadata of a simulated file (inode {}) outside a simulation build: build with \
         `cargo sim`",
        stat.ino
    )
}

#[cfg(simulation)]
mod stat {
    use super::{FAKE_STAT, FAKE_STAT_PATH};

    fn timestamp(ns: u64) -> libc::statx_timestamp {
        // SAFETY: a plain C struct, valid when zeroed.
        let mut t: libc::statx_timestamp = unsafe { std::mem::zeroed() };
        t.tv_sec = (ns / 1_000_000_000) as i64;
        t.tv_nsec = (ns % 1_000_000_000) as u32;
        t
    }

    /// `statx`: answers the reserved path from the thread-local a
    /// `fabricate_metadata` call put there; everything else goes to the
    /// kernel.
    ///
    /// # Safety
    /// libc's contract for `statx`.
    #[no_mangle]
    pub unsafe extern "C" fn statx(
        dirfd: libc::c_int,
        path: *const libc::c_char,
        flags: libc::c_int,
        mask: libc::c_uint,
        buf: *mut libc::statx,
    ) -> libc::c_int {
        if !path.is_null() && !buf.is_null() {
            // SAFETY: libc's contract: a NUL-terminated path.
            let name = unsafe { std::ffi::CStr::from_ptr(path) };
            if name.to_bytes() == FAKE_STAT_PATH.as_bytes() {
                if let Some(s) = FAKE_STAT.with(|slot| slot.take()) {
                    // SAFETY: a plain C struct, valid when zeroed.
                    let mut out: libc::statx = unsafe { std::mem::zeroed() };
                    out.stx_mask = libc::STATX_BASIC_STATS | libc::STATX_BTIME;
                    out.stx_blksize = 4096;
                    out.stx_nlink = s.nlink;
                    out.stx_uid = s.uid;
                    out.stx_gid = s.gid;
                    out.stx_mode = s.mode as u16;
                    out.stx_ino = s.ino;
                    out.stx_size = s.size;
                    out.stx_blocks = s.size.div_ceil(512);
                    out.stx_atime = timestamp(s.atime_ns);
                    out.stx_btime = timestamp(s.btime_ns);
                    out.stx_ctime = timestamp(s.ctime_ns);
                    out.stx_mtime = timestamp(s.mtime_ns);
                    out.stx_dev_major = (s.dev >> 32) as u32;
                    out.stx_dev_minor = s.dev as u32;
                    // SAFETY: the caller's buffer.
                    unsafe { *buf = out };
                    return 0;
                }
            }
        }
        // A simulated file (std::fs under the temporary directory).
        // SAFETY: the caller's NUL-terminated path.
        if let Some(result) = unsafe { crate::files::statx_simulated(dirfd, path, flags) } {
            return match result {
                Ok(s) => {
                    FAKE_STAT.with(|slot| slot.set(Some(s)));
                    // SAFETY: the reserved path, answered from the slot.
                    let reserved = std::ffi::CString::new(FAKE_STAT_PATH).expect("no NUL");
                    unsafe { statx(libc::AT_FDCWD, reserved.as_ptr(), flags, mask, buf) }
                }
                Err(e) => {
                    // SAFETY: errno is thread-local.
                    unsafe { *libc::__errno_location() = e };
                    -1
                }
            };
        }
        // SAFETY: the same arguments, to the kernel.
        unsafe { libc::syscall(libc::SYS_statx, dirfd, path, flags, mask, buf) as libc::c_int }
    }
}
