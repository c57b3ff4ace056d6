//! The story as the core and the hang watchdog share it, without a lock
//! on the core's side.
//!
//! The core tells the story a note at each message, fault or disk
//! operation: a mutex there cost two atomic read-modify-writes a note
//! (about 5% of a network-heavy run), for a reader that comes at most once
//! per process, when the watchdog reports a hang and then ends the
//! process. So the writer pays two plain stores and a load, and the one
//! reader pays for both sides:
//! - the writer marks itself `writing`, then reads `frozen`: once frozen,
//!   it writes nothing more;
//! - the watchdog sets `frozen`, makes every thread of the process pass a
//!   full memory barrier (`membarrier`), then waits until `writing` is
//!   clear, and from then on has the story to itself.
//!
//! Either the writer's mark came before the barrier, and the watchdog sees
//! it and waits, or the writer's read of `frozen` came after it, and the
//! writer sees the freeze (the asymmetric form of Dekker's handshake). The
//! writer's side is only ever the thread that holds the simulation's turn
//! (simulated threads hand the turn over through the futex handoff, which
//! orders their accesses), as for the rest of the core's state.

use super::Story;
use std::cell::UnsafeCell;
use std::sync::atomic::{compiler_fence, fence, AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

/// The story of one run, shared with the hang watchdog (see the module's
/// docs).
#[derive(Clone)]
pub struct SharedStory(Arc<StoryCell>);

/// A watchdog's handle on a run's story: it does not keep the story alive.
pub(crate) struct WatchedStory(Weak<StoryCell>);

struct StoryCell {
    story: UnsafeCell<Story>,
    /// The writer is inside [`SharedStory::with`].
    writing: AtomicBool,
    /// A watchdog read the story: nothing writes it any more.
    frozen: AtomicBool,
}

// SAFETY: the story is reached only through `SharedStory::with`, by the
// thread that holds the simulation's turn (one at a time, ordered by the
// turn's handoff), and through `WatchedStory::freeze_and_read`, which
// reads only after the handshake of the module's docs has stopped every
// write; `Story` itself is `Send`.
unsafe impl Sync for StoryCell {}

impl SharedStory {
    pub(crate) fn new(story: Story) -> SharedStory {
        SharedStory(Arc::new(StoryCell {
            story: UnsafeCell::new(story),
            writing: AtomicBool::new(false),
            frozen: AtomicBool::new(false),
        }))
    }

    /// Runs `f` on the story, on the simulation's side; `None` once a
    /// watchdog froze it (the process is about to end with its report),
    /// or from inside another `with` on this thread (a panic hook or the
    /// abort handler reporting a failure in the story's own code: a second
    /// `&mut` would alias the first, so that report goes without the story,
    /// as it did when a lock was held).
    #[inline]
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut Story) -> R) -> Option<R> {
        let cell = &*self.0;
        if cell.writing.load(Ordering::Relaxed) {
            return None;
        }
        cell.writing.store(true, Ordering::Relaxed);
        // The mark is made before `frozen` is read: only the compiler may
        // reorder them here, the watchdog's barrier orders them for the CPU.
        compiler_fence(Ordering::SeqCst);
        if cell.frozen.load(Ordering::Relaxed) {
            cell.writing.store(false, Ordering::Release);
            return None;
        }
        // Cleared however `f` ends (a panic inside it included).
        let _writing = Writing(&cell.writing);
        // SAFETY: not frozen and marked `writing`, so the watchdog does
        // not read; not nested (checked above), and only the thread with
        // the simulation's turn gets here: this is the only reference.
        Some(f(unsafe { &mut *cell.story.get() }))
    }

    /// A handle for the watchdog.
    pub(crate) fn watched(&self) -> WatchedStory {
        WatchedStory(Arc::downgrade(&self.0))
    }
}

/// Clears the writer's mark when dropped, with release ordering: what
/// the writer wrote is seen by a watchdog that sees the mark cleared.
struct Writing<'a>(&'a AtomicBool);

impl Drop for Writing<'_> {
    #[inline]
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

impl WatchedStory {
    /// Stops the story's writer for good and runs `f` on the story; `None`
    /// when the run is gone or its writer stays inside the story (a poll
    /// stuck in the story's own code: waited on for up to 100 ms).
    pub(crate) fn freeze_and_read<R>(&self, f: impl FnOnce(&Story) -> R) -> Option<R> {
        let cell = self.0.upgrade()?;
        cell.frozen.store(true, Ordering::SeqCst);
        process_wide_barrier();
        // Bounded: a hundred waits of 1 ms.
        for _ in 0..100 {
            if !cell.writing.load(Ordering::Acquire) {
                fence(Ordering::Acquire);
                // SAFETY: frozen, and the writer is out (its release
                // store, acquired above, ordered its writes before this
                // read): no write starts again (see the module's docs).
                return Some(f(unsafe { &*cell.story.get() }));
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        None
    }
}

/// Makes every running thread of the process pass a full memory barrier
/// (`membarrier(2)`'s process-wide command, registered on first use).
/// Where the kernel has none, waits 10 ms instead: the writer's mark sits
/// in its CPU's store buffer for nanoseconds, not milliseconds.
fn process_wide_barrier() {
    const MEMBARRIER_CMD_GLOBAL: libc::c_long = 1;
    const MEMBARRIER_CMD_PRIVATE_EXPEDITED: libc::c_long = 8;
    const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_long = 16;
    let call = |cmd: libc::c_long| {
        let (flags, cpu): (libc::c_long, libc::c_long) = (0, 0);
        // SAFETY: membarrier takes no pointers; an unknown command fails
        // with EINVAL.
        let result = unsafe { libc::syscall(libc::SYS_membarrier, cmd, flags, cpu) };
        result == 0
    };
    let done = (call(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED)
        && call(MEMBARRIER_CMD_PRIVATE_EXPEDITED))
        || call(MEMBARRIER_CMD_GLOBAL);
    if !done {
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frozen_story_is_read_and_no_longer_written() {
        let shared = SharedStory::new(Story::default());
        assert_eq!(shared.with(|s| s.name_node(1, "db")), Some(()));
        let watched = shared.watched();
        let name = watched.freeze_and_read(|s| s.node_name(1).to_string());
        assert_eq!(name.as_deref(), Some("db"));
        assert_eq!(shared.with(|s| s.name_node(2, "web")), None);
        drop(shared);
        assert!(watched.freeze_and_read(|_| ()).is_none(), "the run is gone");
    }

    #[test]
    fn a_nested_telling_gets_no_story() {
        let shared = SharedStory::new(Story::default());
        let inner = shared.with(|_| shared.with(|_| ()));
        assert_eq!(inner, Some(None));
        assert_eq!(shared.with(|_| 1), Some(1), "the outer telling ended");
    }

    #[test]
    fn a_writer_on_another_thread_is_stopped_between_notes() {
        let shared = SharedStory::new(Story::default());
        let watched = shared.watched();
        let writer = {
            let shared = shared.clone();
            std::thread::spawn(move || {
                let mut told = 0u64;
                // Bounded by the freeze below (or 10^9 notes).
                while told < 1_000_000_000 {
                    if shared
                        .with(|s| s.tell(told, 0, 0, super::super::Told::Text("x")))
                        .is_none()
                    {
                        return told;
                    }
                    told += 1;
                }
                told
            })
        };
        std::thread::sleep(Duration::from_millis(20));
        let seq = watched
            .freeze_and_read(|s| s.seq)
            .expect("the writer stops");
        let told = writer.join().unwrap();
        assert_eq!(
            seq, told,
            "every note told before the freeze is read, none after"
        );
    }
}
