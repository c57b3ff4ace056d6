//! libc's own definitions of the functions this crate interposes. A
//! simulation build defines `read`, `clock_gettime`, `pthread_create` and
//! the rest itself; when a call is not the simulation's to answer, it goes
//! on to the definition after ours in the link order, which
//! `dlsym(RTLD_NEXT)` finds. This module is the one place that looks those
//! up, and it caches each address in a static of the call site's own.

use std::ffi::CStr;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A slot not yet looked up.
const UNRESOLVED: usize = 0;
/// A slot whose name libc does not define (no function lives at address 1).
const MISSING: usize = 1;

/// The address of libc's definition of `name`, cached in `slot`: `None`
/// if libc has none.
pub(crate) fn lookup(slot: &AtomicUsize, name: &CStr) -> Option<usize> {
    let mut address = slot.load(Ordering::Relaxed);
    if address == UNRESOLVED {
        // SAFETY: dlsym reads a NUL-terminated name and returns an address
        // or null; RTLD_NEXT is a handle every object may pass.
        let found = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) } as usize;
        address = if found == UNRESOLVED { MISSING } else { found };
        // Two threads racing here store the same answer.
        slot.store(address, Ordering::Relaxed);
    }
    (address != MISSING).then_some(address)
}

/// libc's function `$name` as a typed function pointer, or `None` if libc
/// does not define it: `libc_fn!(c"listen", fn(i32, i32) -> i32)`.
macro_rules! libc_fn {
    ($name:literal, fn($($ty:ty),* $(,)?) -> $ret:ty) => {{
        static SLOT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        $crate::symbols::lookup(&SLOT, $name).map(|address| {
            // SAFETY: the address is of libc's function of that name, whose
            // C signature the call site spells out.
            unsafe {
                std::mem::transmute::<usize, unsafe extern "C" fn($($ty),*) -> $ret>(address)
            }
        })
    }};
}

#[cfg(simulation)]
/// Calls libc's `$name` with the named arguments: what an interposed
/// function does when the call is not the simulation's. Panics if libc
/// does not define it (only names every libc defines are passed).
macro_rules! real {
    ($name:literal, fn($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty) => {{
        let f = $crate::symbols::libc_fn!($name, fn($($ty),*) -> $ret)
            .unwrap_or_else(|| panic!("sim: libc has no {:?}", $name));
        // SAFETY: the caller's arguments, under libc's contract for this
        // call, passed on unchanged.
        unsafe { f($($arg),*) }
    }};
}

pub(crate) use libc_fn;
#[cfg(simulation)]
pub(crate) use real;

/// libc's own `pthread_create`, past ours.
#[cfg(simulation)]
pub(crate) type PthreadCreate = unsafe extern "C" fn(
    *mut libc::pthread_t,
    *const libc::pthread_attr_t,
    extern "C" fn(*mut libc::c_void) -> *mut libc::c_void,
    *mut libc::c_void,
) -> libc::c_int;

/// libc's own `pthread_create` (`None` if libc has none), for the threads
/// this layer starts itself: real ones, simulated ones, the driver.
#[cfg(simulation)]
pub(crate) fn real_pthread_create() -> Option<PthreadCreate> {
    libc_fn!(
        c"pthread_create",
        fn(
            *mut libc::pthread_t,
            *const libc::pthread_attr_t,
            extern "C" fn(*mut libc::c_void) -> *mut libc::c_void,
            *mut libc::c_void,
        ) -> libc::c_int
    )
}
