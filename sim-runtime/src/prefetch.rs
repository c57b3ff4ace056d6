//! Fetching memory before it is read: the uniform draw polls tasks that lie
//! anywhere in memory, and events fire in deadline order, not in the order
//! their memory was made, so the core asks for the next ones' memory while
//! it works on the current one. A hint only: it changes no result.

/// Asks the CPU to bring the cache line at `ptr` into its caches. Never
/// faults, whatever `ptr` is.
#[inline(always)]
pub fn line<T: ?Sized>(ptr: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it reads nothing and never faults, on
    // any address (SSE is part of x86_64's baseline).
    unsafe {
        std::arch::x86_64::_mm_prefetch(ptr.cast::<i8>(), std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = ptr;
}

/// [`line()`] for `count` consecutive lines from `ptr` (a value larger than
/// one line: a task's future, a message in flight).
#[inline(always)]
pub fn lines<T: ?Sized>(ptr: *const T, count: usize) {
    let start = ptr.cast::<u8>();
    for at in 0..count {
        line(start.wrapping_add(64 * at));
    }
}

/// [`line()`] for every line `value` spans, its last byte's included (a
/// value need not start on a line).
#[inline(always)]
pub fn value<T>(value: &T) {
    let start = (value as *const T).cast::<u8>();
    let size = std::mem::size_of::<T>();
    let mut at = 0;
    while at < size {
        line(start.wrapping_add(at));
        at += 64;
    }
    if size > 0 {
        line(start.wrapping_add(size - 1));
    }
}
