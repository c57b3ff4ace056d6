//! An async reader-writer lock on the FIFO semaphore: a reader takes one
//! permit, a writer all `max_readers` of them, so readers and writers are
//! served in arrival order and a waiting writer is not starved by readers
//! that come after it.

mod owned_read_guard;
mod owned_write_guard;
mod owned_write_guard_mapped;
mod read_guard;
mod write_guard;
mod write_guard_mapped;

pub use owned_read_guard::OwnedRwLockReadGuard;
pub use owned_write_guard::OwnedRwLockWriteGuard;
pub use owned_write_guard_mapped::OwnedRwLockMappedWriteGuard;
pub use read_guard::RwLockReadGuard;
pub use write_guard::RwLockWriteGuard;
pub use write_guard_mapped::RwLockMappedWriteGuard;

use crate::sync::batch_semaphore::Semaphore;
use crate::sync::TryLockError;
use std::cell::UnsafeCell;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

const MAX_READS: u32 = u32::MAX >> 3;

/// An async reader-writer lock with FIFO fairness.
pub struct RwLock<T: ?Sized> {
    /// Auto traits as tokio's (see `crate::util::NoUnwindSafe`).
    _unwind: crate::util::NoUnwindSafe,
    mr: u32,
    s: Semaphore,
    c: UnsafeCell<T>,
}
// SAFETY: the lock owns its value: sending the lock sends the value, sound
// when `T: Send`.
unsafe impl<T> Send for RwLock<T> where T: ?Sized + Send {}
// SAFETY: through `&RwLock` tasks reach `&T` under a read permit (many at
// once: needs `T: Sync`) and `&mut T` under all permits (one at a time, a move
// between tasks: needs `T: Send`), as for `std::sync::RwLock`.
unsafe impl<T> Sync for RwLock<T> where T: ?Sized + Send + Sync {}

impl<T: ?Sized> RwLock<T> {
    /// A new, unlocked lock with the default number of readers.
    pub fn new(value: T) -> RwLock<T>
    where
        T: Sized,
    {
        RwLock {
            _unwind: std::marker::PhantomData,
            mr: MAX_READS,
            s: Semaphore::new_lock(MAX_READS as usize, "RwLock"),
            c: UnsafeCell::new(value),
        }
    }

    /// A new lock that admits at most `max_reads` readers at once.
    ///
    /// # Panics
    /// When `max_reads` exceeds `u32::MAX >> 3`.
    #[track_caller]
    pub fn with_max_readers(value: T, max_reads: u32) -> RwLock<T>
    where
        T: Sized,
    {
        assert_ne!(max_reads, 0, "a RwLock may not be created with 0 readers");
        assert!(
            max_reads <= MAX_READS,
            "a RwLock may not be created with more than {MAX_READS} readers"
        );
        RwLock {
            _unwind: std::marker::PhantomData,
            mr: max_reads,
            s: Semaphore::new_lock(max_reads as usize, "RwLock"),
            c: UnsafeCell::new(value),
        }
    }

    /// A new lock, in a `const` context.
    pub const fn const_new(value: T) -> RwLock<T>
    where
        T: Sized,
    {
        RwLock {
            _unwind: std::marker::PhantomData,
            mr: MAX_READS,
            s: Semaphore::new_lock(MAX_READS as usize, "RwLock"),
            c: UnsafeCell::new(value),
        }
    }

    /// A new lock with a reader limit, in a `const` context.
    pub const fn const_with_max_readers(value: T, max_reads: u32) -> RwLock<T>
    where
        T: Sized,
    {
        assert!(max_reads != 0, "a RwLock may not be created with 0 readers");
        let max_reads = if max_reads > MAX_READS {
            MAX_READS
        } else {
            max_reads
        };
        RwLock {
            _unwind: std::marker::PhantomData,
            mr: max_reads,
            s: Semaphore::new_lock(max_reads as usize, "RwLock"),
            c: UnsafeCell::new(value),
        }
    }

    async fn acquire(&self, permits: u32) {
        if self
            .s
            .acquire_as(permits as usize, std::any::type_name::<Self>())
            .await
            .is_err()
        {
            unreachable!("an RwLock's semaphore is never closed");
        }
    }

    /// Waits for shared access, in FIFO order with writers.
    pub async fn read(&self) -> RwLockReadGuard<'_, T> {
        self.acquire(1).await;
        RwLockReadGuard {
            _unwind: std::marker::PhantomData,
            s: &self.s,
            data: self.c.get(),
            marker: PhantomData,
        }
    }

    /// Shared access from outside an async context.
    ///
    /// # Panics
    /// Inside a runtime.
    #[track_caller]
    pub fn blocking_read(&self) -> RwLockReadGuard<'_, T> {
        crate::util::block_outside_runtime(self.read())
    }

    /// Waits for shared access through the `Arc`.
    pub async fn read_owned(self: Arc<Self>) -> OwnedRwLockReadGuard<T> {
        self.acquire(1).await;
        let data = self.c.get();
        OwnedRwLockReadGuard {
            lock: self,
            data,
            _p: PhantomData,
        }
    }

    /// Shared access if available now (and no writer waits).
    ///
    /// # Errors
    /// When a writer holds or waits for the lock.
    pub fn try_read(&self) -> Result<RwLockReadGuard<'_, T>, TryLockError> {
        match self.s.try_acquire(1) {
            Ok(()) => Ok(RwLockReadGuard {
                _unwind: std::marker::PhantomData,
                s: &self.s,
                data: self.c.get(),
                marker: PhantomData,
            }),
            Err(_) => Err(TryLockError(())),
        }
    }

    /// Shared access through the `Arc`, if available now.
    ///
    /// # Errors
    /// When a writer holds or waits for the lock.
    pub fn try_read_owned(self: Arc<Self>) -> Result<OwnedRwLockReadGuard<T>, TryLockError> {
        match self.s.try_acquire(1) {
            Ok(()) => {
                let data = self.c.get();
                Ok(OwnedRwLockReadGuard {
                    lock: self,
                    data,
                    _p: PhantomData,
                })
            }
            Err(_) => Err(TryLockError(())),
        }
    }

    /// Waits for exclusive access, in FIFO order.
    pub async fn write(&self) -> RwLockWriteGuard<'_, T> {
        self.acquire(self.mr).await;
        RwLockWriteGuard {
            _unwind: std::marker::PhantomData,
            permits_acquired: self.mr,
            s: &self.s,
            data: self.c.get(),
            marker: PhantomData,
        }
    }

    /// Exclusive access from outside an async context.
    ///
    /// # Panics
    /// Inside a runtime.
    #[track_caller]
    pub fn blocking_write(&self) -> RwLockWriteGuard<'_, T> {
        crate::util::block_outside_runtime(self.write())
    }

    /// Waits for exclusive access through the `Arc`.
    pub async fn write_owned(self: Arc<Self>) -> OwnedRwLockWriteGuard<T> {
        self.acquire(self.mr).await;
        let data = self.c.get();
        OwnedRwLockWriteGuard {
            permits_acquired: self.mr,
            lock: self,
            data,
            _p: PhantomData,
        }
    }

    /// Exclusive access if available now.
    ///
    /// # Errors
    /// When anyone holds or waits for the lock.
    pub fn try_write(&self) -> Result<RwLockWriteGuard<'_, T>, TryLockError> {
        match self.s.try_acquire(self.mr as usize) {
            Ok(()) => Ok(RwLockWriteGuard {
                _unwind: std::marker::PhantomData,
                permits_acquired: self.mr,
                s: &self.s,
                data: self.c.get(),
                marker: PhantomData,
            }),
            Err(_) => Err(TryLockError(())),
        }
    }

    /// Exclusive access through the `Arc`, if available now.
    ///
    /// # Errors
    /// When anyone holds or waits for the lock.
    pub fn try_write_owned(self: Arc<Self>) -> Result<OwnedRwLockWriteGuard<T>, TryLockError> {
        match self.s.try_acquire(self.mr as usize) {
            Ok(()) => {
                let data = self.c.get();
                Ok(OwnedRwLockWriteGuard {
                    permits_acquired: self.mr,
                    lock: self,
                    data,
                    _p: PhantomData,
                })
            }
            Err(_) => Err(TryLockError(())),
        }
    }

    /// The value, through a unique borrow.
    pub fn get_mut(&mut self) -> &mut T {
        self.c.get_mut()
    }

    /// The value inside.
    pub fn into_inner(self) -> T
    where
        T: Sized,
    {
        self.c.into_inner()
    }
}

impl<T> From<T> for RwLock<T> {
    fn from(s: T) -> Self {
        Self::new(s)
    }
}

impl<T> Default for RwLock<T>
where
    T: Default,
{
    fn default() -> Self {
        Self::new(T::default())
    }
}

impl<T: ?Sized> std::fmt::Debug for RwLock<T>
where
    T: std::fmt::Debug,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("RwLock");
        match self.try_read() {
            Ok(inner) => d.field("data", &&*inner),
            Err(_) => d.field("data", &format_args!("<locked>")),
        };
        d.finish()
    }
}

// ----- formatting ------------------------------------------------------------

macro_rules! forward_fmt {
    ($($guard:ty => [$($gen:tt)*] $target:ident;)*) => {$(
        impl<$($gen)*> fmt::Debug for $guard
        where
            $target: fmt::Debug,
        {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&**self, f)
            }
        }

        impl<$($gen)*> fmt::Display for $guard
        where
            $target: fmt::Display,
        {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&**self, f)
            }
        }
    )*};
}

forward_fmt! {
    RwLockReadGuard<'a, T> => ['a, T: ?Sized] T;
    RwLockWriteGuard<'a, T> => ['a, T: ?Sized] T;
    RwLockMappedWriteGuard<'a, T> => ['a, T: ?Sized] T;
    OwnedRwLockReadGuard<T, U> => [T: ?Sized, U: ?Sized] U;
    OwnedRwLockWriteGuard<T> => [T: ?Sized] T;
    OwnedRwLockMappedWriteGuard<T, U> => [T: ?Sized, U: ?Sized] U;
}
