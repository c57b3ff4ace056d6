//! Processes: `posix_spawn`, `posix_spawnp` and `fork` are refused during a
//! run unless `SIM_ALLOW_PROCESSES=1`.

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

/// The signature `posix_spawn` and `posix_spawnp` share, as a `libc_fn!`
/// spells it.
macro_rules! posix_spawn_fn {
    ($name:literal) => {
        crate::symbols::libc_fn!(
            $name,
            fn(
                *mut libc::pid_t,
                *const libc::c_char,
                *const libc::posix_spawn_file_actions_t,
                *const libc::posix_spawnattr_t,
                *const *mut libc::c_char,
                *const *mut libc::c_char,
            ) -> libc::c_int
        )
    };
}

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
    spawn_or_refuse(
        "posix_spawn",
        posix_spawn_fn!(c"posix_spawn"),
        pid,
        path,
        actions,
        attrs,
        argv,
        envp,
    )
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
    spawn_or_refuse(
        "posix_spawnp",
        posix_spawn_fn!(c"posix_spawnp"),
        pid,
        file,
        actions,
        attrs,
        argv,
        envp,
    )
}

/// The type of libc's `posix_spawn` and `posix_spawnp`.
type PosixSpawn = unsafe extern "C" fn(
    *mut libc::pid_t,
    *const libc::c_char,
    *const libc::posix_spawn_file_actions_t,
    *const libc::posix_spawnattr_t,
    *const *mut libc::c_char,
    *const *mut libc::c_char,
) -> libc::c_int;

/// `posix_spawn` or `posix_spawnp` (`name`, libc's definition `next`):
/// refused during a run, libc's otherwise.
///
/// # Safety
/// The arguments are what `posix_spawn` takes (passed on as they are).
#[allow(clippy::too_many_arguments)] // posix_spawn's six, and which one
unsafe fn spawn_or_refuse(
    name: &str,
    next: Option<PosixSpawn>,
    pid: *mut libc::pid_t,
    file: *const libc::c_char,
    actions: *const libc::posix_spawn_file_actions_t,
    attrs: *const libc::posix_spawnattr_t,
    argv: *const *mut libc::c_char,
    envp: *const *mut libc::c_char,
) -> libc::c_int {
    if refuse(name) {
        return libc::EPERM;
    }
    match next {
        Some(f) => f(pid, file, actions, attrs, argv, envp),
        None => libc::ENOSYS,
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
    match crate::symbols::libc_fn!(c"fork", fn() -> libc::pid_t) {
        Some(f) => f(),
        None => {
            *libc::__errno_location() = libc::ENOSYS;
            -1
        }
    }
}
