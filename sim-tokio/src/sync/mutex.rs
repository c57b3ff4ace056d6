use super::waiters::Waiters;
use std::cell::UnsafeCell;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::Mutex as StdMutex;
use std::task::Poll;

/// An async mutex. Waiters acquire it in FIFO order; a `lock` future
/// dropped while waiting gives up its place without blocking the others.
pub struct Mutex<T: ?Sized> {
    state: StdMutex<LockState>,
    data: UnsafeCell<T>,
}

#[derive(Debug)]
struct LockState {
    locked: bool,
    waiters: Waiters,
}

// The data is only reached through a guard, and one guard exists at a time.
unsafe impl<T: ?Sized + Send> Send for Mutex<T> {}
unsafe impl<T: ?Sized + Send> Sync for Mutex<T> {}

/// The error of [`Mutex::try_lock`]: it is held.
#[derive(Debug)]
pub struct TryLockError(());

impl fmt::Display for TryLockError {
    fn fmt(&self, fmt: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(fmt, "operation would block")
    }
}

impl std::error::Error for TryLockError {}

/// Holds a [`Mutex`]; releases it when dropped.
#[must_use = "if unused the Mutex will immediately unlock"]
pub struct MutexGuard<'a, T: ?Sized> {
    lock: &'a Mutex<T>,
}

unsafe impl<T: ?Sized + Sync> Sync for MutexGuard<'_, T> {}

impl<T> Mutex<T> {
    /// A new, unlocked mutex.
    pub const fn new(t: T) -> Mutex<T> {
        Mutex {
            state: StdMutex::new(LockState {
                locked: false,
                waiters: Waiters::new(),
            }),
            data: UnsafeCell::new(t),
        }
    }

    /// A new, unlocked mutex, in a `const` context.
    pub const fn const_new(t: T) -> Mutex<T> {
        Mutex::new(t)
    }

    /// The value inside.
    pub fn into_inner(self) -> T {
        self.data.into_inner()
    }
}

impl<T: ?Sized> Mutex<T> {
    /// Waits for the lock, in FIFO order.
    pub async fn lock(&self) -> MutexGuard<'_, T> {
        struct Waiting<'a> {
            state: &'a StdMutex<LockState>,
            id: u64,
        }
        impl Drop for Waiting<'_> {
            fn drop(&mut self) {
                if self.id != 0 {
                    let waker = {
                        let mut st = super::lock(self.state);
                        let was_first = st.waiters.is_first(self.id);
                        st.waiters.remove(self.id);
                        if was_first && !st.locked {
                            st.waiters.front_waker()
                        } else {
                            None
                        }
                    };
                    if let Some(w) = waker {
                        w.wake();
                    }
                }
            }
        }
        let mut waiting = Waiting {
            state: &self.state,
            id: 0,
        };
        std::future::poll_fn(|cx| {
            if super::budget(cx).is_pending() {
                return Poll::Pending;
            }
            let mut st = super::lock(waiting.state);
            if !st.locked && st.waiters.is_first(waiting.id) {
                if waiting.id != 0 {
                    st.waiters.remove(waiting.id);
                    waiting.id = 0;
                }
                st.locked = true;
                return Poll::Ready(());
            }
            if waiting.id == 0 {
                waiting.id = st.waiters.push(cx.waker());
            } else {
                st.waiters.update(waiting.id, cx.waker());
            }
            Poll::Pending
        })
        .await;
        MutexGuard { lock: self }
    }

    /// Takes the lock if it is free and nobody waits.
    ///
    /// # Errors
    /// When it is held (or others wait for it).
    pub fn try_lock(&self) -> Result<MutexGuard<'_, T>, TryLockError> {
        let mut st = super::lock(&self.state);
        if st.locked || !st.waiters.is_empty() {
            return Err(TryLockError(()));
        }
        st.locked = true;
        Ok(MutexGuard { lock: self })
    }

    /// Locks from outside an async context.
    ///
    /// # Panics
    /// Inside a runtime, as in tokio.
    #[track_caller]
    pub fn blocking_lock(&self) -> MutexGuard<'_, T> {
        crate::util::block_outside_runtime(self.lock())
    }

    /// The value, through a unique borrow (no locking needed).
    pub fn get_mut(&mut self) -> &mut T {
        self.data.get_mut()
    }

    fn unlock(&self) {
        let waker = {
            let mut st = super::lock(&self.state);
            st.locked = false;
            st.waiters.front_waker()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }
}

impl<T: Default> Default for Mutex<T> {
    fn default() -> Self {
        Mutex::new(T::default())
    }
}

impl<T> From<T> for Mutex<T> {
    fn from(s: T) -> Self {
        Mutex::new(s)
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for Mutex<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Mutex");
        match self.try_lock() {
            Ok(inner) => d.field("data", &&*inner),
            Err(_) => d.field("data", &format_args!("<locked>")),
        };
        d.finish()
    }
}

impl<T: ?Sized> Deref for MutexGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // Safety: the guard holds the lock.
        unsafe { &*self.lock.data.get() }
    }
}

impl<T: ?Sized> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // Safety: the guard holds the lock, uniquely.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<T: ?Sized> Drop for MutexGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.unlock();
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for MutexGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized + fmt::Display> fmt::Display for MutexGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}
