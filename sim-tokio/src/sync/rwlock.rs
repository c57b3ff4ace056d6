//! An async reader-writer lock on the FIFO semaphore: a reader takes one
//! permit, a writer all `max_readers` of them, so readers and writers are
//! served in arrival order and a waiting writer is not starved by readers
//! that come after it.

use super::batch_semaphore::Semaphore;
use super::TryLockError;
use std::cell::UnsafeCell;
use std::fmt;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ops;
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
// SAFETY: a read guard is a shared borrow of the value: sending it sends `&T`,
// sound when `T: Sync`.
unsafe impl<T> Send for RwLockReadGuard<'_, T> where T: ?Sized + Sync {}
// SAFETY: `&RwLockReadGuard` derefs to `&T` only: sharing it needs `T: Sync`
// (`Send` asked as tokio does).
unsafe impl<T> Sync for RwLockReadGuard<'_, T> where T: ?Sized + Send + Sync {}
// SAFETY: the owned read guard holds an `Arc<RwLock<T>>` (`Send` when `T: Send
// + Sync`) and a shared borrow of the `U` inside it: sending it sends `&U`,
// sound when `U: Sync`.
unsafe impl<T, U> Send for OwnedRwLockReadGuard<T, U>
where
    T: ?Sized + Send + Sync,
    U: ?Sized + Sync,
{
}
// SAFETY: `&OwnedRwLockReadGuard` derefs to `&U` only, and shares the
// `Arc<RwLock<T>>`: sound when `U: Sync` and `RwLock<T>: Sync`, that is `T:
// Send + Sync`.
unsafe impl<T, U> Sync for OwnedRwLockReadGuard<T, U>
where
    T: ?Sized + Send + Sync,
    U: ?Sized + Send + Sync,
{
}
// SAFETY: `&RwLockWriteGuard` derefs to `&T` only: sharing it needs `T: Sync`.
unsafe impl<T> Sync for RwLockWriteGuard<'_, T> where T: ?Sized + Send + Sync {}
// SAFETY: as for `RwLockWriteGuard`: sharing the owned guard shares `&T` and
// the `Arc<RwLock<T>>` (`Sync` when `T: Send + Sync`).
unsafe impl<T> Sync for OwnedRwLockWriteGuard<T> where T: ?Sized + Send + Sync {}
// SAFETY: `&RwLockMappedWriteGuard` derefs to `&T` only: sharing it needs `T:
// Sync`.
unsafe impl<T> Sync for RwLockMappedWriteGuard<'_, T> where T: ?Sized + Send + Sync {}
// SAFETY: `&OwnedRwLockMappedWriteGuard` derefs to `&U` only (`U: Sync`) and
// shares the `Arc<RwLock<T>>` (`T: Send + Sync`).
unsafe impl<T, U> Sync for OwnedRwLockMappedWriteGuard<T, U>
where
    T: ?Sized + Send + Sync,
    U: ?Sized + Send + Sync,
{
}
// SAFETY: a write guard is an exclusive borrow of the value: sending it sends
// `&mut T`, sound when `T: Send`; the permits it releases on drop belong to no
// thread.
unsafe impl<T> Send for RwLockWriteGuard<'_, T> where T: ?Sized + Send + Sync {}
// SAFETY: as for `RwLockWriteGuard`, and the `Arc<RwLock<T>>` it holds is
// `Send` when `T: Send + Sync`.
unsafe impl<T> Send for OwnedRwLockWriteGuard<T> where T: ?Sized + Send + Sync {}
// SAFETY: the mapped write guard is an exclusive borrow of part of the value
// (its raw pointer came from the write guard's `&mut T`): sending it sends
// `&mut T`, sound when `T: Send`.
unsafe impl<T> Send for RwLockMappedWriteGuard<'_, T> where T: ?Sized + Send + Sync {}
// SAFETY: the owned mapped guard holds the `Arc<RwLock<T>>` (`Send` when `T:
// Send + Sync`) and exclusive access to the `U` inside it: sending it sends
// `&mut U`, sound when `U: Send`.
unsafe impl<T, U> Send for OwnedRwLockMappedWriteGuard<T, U>
where
    T: ?Sized + Send + Sync,
    U: ?Sized + Send + Sync,
{
}

/// Shared access to an [`RwLock`]'s value.
#[clippy::has_significant_drop]
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct RwLockReadGuard<'a, T: ?Sized> {
    /// Auto traits as tokio's (see `crate::util::NoUnwindSafety`).
    _unwind: crate::util::NoUnwindSafety,
    s: &'a Semaphore,
    data: *const T,
    marker: PhantomData<&'a T>,
}

/// Shared access through an `Arc<RwLock<T>>`, possibly narrowed to `U`.
#[clippy::has_significant_drop]
pub struct OwnedRwLockReadGuard<T: ?Sized, U: ?Sized = T> {
    lock: Arc<RwLock<T>>,
    data: *const U,
    _p: PhantomData<T>,
}

/// Exclusive access to an [`RwLock`]'s value.
#[clippy::has_significant_drop]
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct RwLockWriteGuard<'a, T: ?Sized> {
    /// Auto traits as tokio's (see `crate::util::NoRefUnwindSafe`).
    _unwind: crate::util::NoRefUnwindSafe,
    permits_acquired: u32,
    s: &'a Semaphore,
    data: *mut T,
    marker: PhantomData<&'a mut T>,
}

/// Exclusive access through an `Arc<RwLock<T>>`.
#[clippy::has_significant_drop]
pub struct OwnedRwLockWriteGuard<T: ?Sized> {
    permits_acquired: u32,
    lock: Arc<RwLock<T>>,
    data: *mut T,
    _p: PhantomData<T>,
}

/// A write guard narrowed to part of the value.
#[clippy::has_significant_drop]
pub struct RwLockMappedWriteGuard<'a, T: ?Sized> {
    /// Auto traits as tokio's (see `crate::util::NoRefUnwindSafe`).
    _unwind: crate::util::NoRefUnwindSafe,
    permits_acquired: u32,
    s: &'a Semaphore,
    data: *mut T,
    marker: PhantomData<&'a mut T>,
}

/// An owned write guard narrowed to part of the value.
#[clippy::has_significant_drop]
pub struct OwnedRwLockMappedWriteGuard<T: ?Sized, U: ?Sized = T> {
    permits_acquired: u32,
    lock: Arc<RwLock<T>>,
    data: *mut U,
    _p: PhantomData<T>,
}

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

// ----- borrowed read guard -------------------------------------------------

impl<'a, T: ?Sized> RwLockReadGuard<'a, T> {
    fn skip_drop(self) -> &'a Semaphore {
        let this = ManuallyDrop::new(self);
        this.s
    }

    /// Narrows the guard to a part of the value.
    #[inline]
    pub fn map<F, U: ?Sized>(this: Self, f: F) -> RwLockReadGuard<'a, U>
    where
        F: FnOnce(&T) -> &U,
    {
        let data = f(&*this) as *const U;
        let s = this.skip_drop();
        RwLockReadGuard {
            _unwind: std::marker::PhantomData,
            s,
            data,
            marker: PhantomData,
        }
    }

    /// Narrows the guard if `f` returns `Some`.
    ///
    /// # Errors
    /// The original guard, when `f` returns `None`.
    #[inline]
    pub fn try_map<F, U: ?Sized>(this: Self, f: F) -> Result<RwLockReadGuard<'a, U>, Self>
    where
        F: FnOnce(&T) -> Option<&U>,
    {
        let data = match f(&*this) {
            Some(data) => data as *const U,
            None => return Err(this),
        };
        let s = this.skip_drop();
        Ok(RwLockReadGuard {
            _unwind: std::marker::PhantomData,
            s,
            data,
            marker: PhantomData,
        })
    }
}

impl<T: ?Sized> ops::Deref for RwLockReadGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: a read permit is held.
        unsafe { &*self.data }
    }
}

impl<'a, T: ?Sized> Drop for RwLockReadGuard<'a, T> {
    fn drop(&mut self) {
        self.s.release(1);
    }
}

// ----- owned read guard ----------------------------------------------------

impl<T: ?Sized, U: ?Sized> OwnedRwLockReadGuard<T, U> {
    fn skip_drop(self) -> Arc<RwLock<T>> {
        let this = ManuallyDrop::new(self);
        // SAFETY: the guard is never used or dropped again.
        unsafe { std::ptr::read(&this.lock) }
    }

    /// Narrows the guard to a part of the value.
    #[inline]
    pub fn map<F, V: ?Sized>(this: Self, f: F) -> OwnedRwLockReadGuard<T, V>
    where
        F: FnOnce(&U) -> &V,
    {
        let data = f(&*this) as *const V;
        let lock = this.skip_drop();
        OwnedRwLockReadGuard {
            lock,
            data,
            _p: PhantomData,
        }
    }

    /// Narrows the guard if `f` returns `Some`.
    ///
    /// # Errors
    /// The original guard, when `f` returns `None`.
    #[inline]
    pub fn try_map<F, V: ?Sized>(this: Self, f: F) -> Result<OwnedRwLockReadGuard<T, V>, Self>
    where
        F: FnOnce(&U) -> Option<&V>,
    {
        let data = match f(&*this) {
            Some(data) => data as *const V,
            None => return Err(this),
        };
        let lock = this.skip_drop();
        Ok(OwnedRwLockReadGuard {
            lock,
            data,
            _p: PhantomData,
        })
    }

    /// The lock this guard reads.
    pub fn rwlock(this: &Self) -> &Arc<RwLock<T>> {
        &this.lock
    }
}

impl<T: ?Sized, U: ?Sized> ops::Deref for OwnedRwLockReadGuard<T, U> {
    type Target = U;

    fn deref(&self) -> &U {
        // SAFETY: a read permit is held.
        unsafe { &*self.data }
    }
}

impl<T: ?Sized, U: ?Sized> Drop for OwnedRwLockReadGuard<T, U> {
    fn drop(&mut self) {
        self.lock.s.release(1);
    }
}

// ----- borrowed write guard ------------------------------------------------

impl<'a, T: ?Sized> RwLockWriteGuard<'a, T> {
    fn skip_drop(self) -> (&'a Semaphore, u32) {
        let this = ManuallyDrop::new(self);
        (this.s, this.permits_acquired)
    }

    /// Narrows the guard to a part of the value.
    #[inline]
    pub fn map<F, U: ?Sized>(mut this: Self, f: F) -> RwLockMappedWriteGuard<'a, U>
    where
        F: FnOnce(&mut T) -> &mut U,
    {
        let data = f(&mut *this) as *mut U;
        let (s, permits_acquired) = this.skip_drop();
        RwLockMappedWriteGuard {
            _unwind: std::marker::PhantomData,
            permits_acquired,
            s,
            data,
            marker: PhantomData,
        }
    }

    /// Narrows to a part of the value and downgrades to shared access.
    #[inline]
    pub fn downgrade_map<F, U: ?Sized>(this: Self, f: F) -> RwLockReadGuard<'a, U>
    where
        F: FnOnce(&T) -> &U,
    {
        let data = f(&*this) as *const U;
        let (s, permits_acquired) = this.skip_drop();
        // Keep one permit for the read guard; give the rest back.
        s.release(permits_acquired as usize - 1);
        RwLockReadGuard {
            _unwind: std::marker::PhantomData,
            s,
            data,
            marker: PhantomData,
        }
    }

    /// Narrows the guard if `f` returns `Some`.
    ///
    /// # Errors
    /// The original guard, when `f` returns `None`.
    #[inline]
    pub fn try_map<F, U: ?Sized>(
        mut this: Self,
        f: F,
    ) -> Result<RwLockMappedWriteGuard<'a, U>, Self>
    where
        F: FnOnce(&mut T) -> Option<&mut U>,
    {
        let data = match f(&mut *this) {
            Some(data) => data as *mut U,
            None => return Err(this),
        };
        let (s, permits_acquired) = this.skip_drop();
        Ok(RwLockMappedWriteGuard {
            _unwind: std::marker::PhantomData,
            permits_acquired,
            s,
            data,
            marker: PhantomData,
        })
    }

    /// Narrows and downgrades if `f` returns `Some`.
    ///
    /// # Errors
    /// The original guard, when `f` returns `None`.
    #[inline]
    pub fn try_downgrade_map<F, U: ?Sized>(this: Self, f: F) -> Result<RwLockReadGuard<'a, U>, Self>
    where
        F: FnOnce(&T) -> Option<&U>,
    {
        let data = match f(&*this) {
            Some(data) => data as *const U,
            None => return Err(this),
        };
        let (s, permits_acquired) = this.skip_drop();
        s.release(permits_acquired as usize - 1);
        Ok(RwLockReadGuard {
            _unwind: std::marker::PhantomData,
            s,
            data,
            marker: PhantomData,
        })
    }

    /// Turns this into a mapped guard of the whole value.
    pub fn into_mapped(this: Self) -> RwLockMappedWriteGuard<'a, T> {
        RwLockWriteGuard::map(this, |me| me)
    }

    /// Downgrades to shared access without letting a writer in between.
    pub fn downgrade(self) -> RwLockReadGuard<'a, T> {
        let data = self.data;
        let (s, permits_acquired) = self.skip_drop();
        s.release(permits_acquired as usize - 1);
        RwLockReadGuard {
            _unwind: std::marker::PhantomData,
            s,
            data,
            marker: PhantomData,
        }
    }
}

impl<T: ?Sized> ops::Deref for RwLockWriteGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: every permit is held.
        unsafe { &*self.data }
    }
}

impl<T: ?Sized> ops::DerefMut for RwLockWriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: every permit is held.
        unsafe { &mut *self.data }
    }
}

impl<'a, T: ?Sized> Drop for RwLockWriteGuard<'a, T> {
    fn drop(&mut self) {
        self.s.release(self.permits_acquired as usize);
    }
}

// ----- owned write guard ---------------------------------------------------

impl<T: ?Sized> OwnedRwLockWriteGuard<T> {
    fn skip_drop(self) -> (Arc<RwLock<T>>, u32) {
        let this = ManuallyDrop::new(self);
        // SAFETY: the guard is never used or dropped again.
        (unsafe { std::ptr::read(&this.lock) }, this.permits_acquired)
    }

    /// Narrows the guard to a part of the value.
    #[inline]
    pub fn map<F, U: ?Sized>(mut this: Self, f: F) -> OwnedRwLockMappedWriteGuard<T, U>
    where
        F: FnOnce(&mut T) -> &mut U,
    {
        let data = f(&mut *this) as *mut U;
        let (lock, permits_acquired) = this.skip_drop();
        OwnedRwLockMappedWriteGuard {
            permits_acquired,
            lock,
            data,
            _p: PhantomData,
        }
    }

    /// Narrows and downgrades to shared access.
    #[inline]
    pub fn downgrade_map<F, U: ?Sized>(this: Self, f: F) -> OwnedRwLockReadGuard<T, U>
    where
        F: FnOnce(&T) -> &U,
    {
        let data = f(&*this) as *const U;
        let (lock, permits_acquired) = this.skip_drop();
        lock.s.release(permits_acquired as usize - 1);
        OwnedRwLockReadGuard {
            lock,
            data,
            _p: PhantomData,
        }
    }

    /// Narrows the guard if `f` returns `Some`.
    ///
    /// # Errors
    /// The original guard, when `f` returns `None`.
    #[inline]
    pub fn try_map<F, U: ?Sized>(
        mut this: Self,
        f: F,
    ) -> Result<OwnedRwLockMappedWriteGuard<T, U>, Self>
    where
        F: FnOnce(&mut T) -> Option<&mut U>,
    {
        let data = match f(&mut *this) {
            Some(data) => data as *mut U,
            None => return Err(this),
        };
        let (lock, permits_acquired) = this.skip_drop();
        Ok(OwnedRwLockMappedWriteGuard {
            permits_acquired,
            lock,
            data,
            _p: PhantomData,
        })
    }

    /// Narrows and downgrades if `f` returns `Some`.
    ///
    /// # Errors
    /// The original guard, when `f` returns `None`.
    #[inline]
    pub fn try_downgrade_map<F, U: ?Sized>(
        this: Self,
        f: F,
    ) -> Result<OwnedRwLockReadGuard<T, U>, Self>
    where
        F: FnOnce(&T) -> Option<&U>,
    {
        let data = match f(&*this) {
            Some(data) => data as *const U,
            None => return Err(this),
        };
        let (lock, permits_acquired) = this.skip_drop();
        lock.s.release(permits_acquired as usize - 1);
        Ok(OwnedRwLockReadGuard {
            lock,
            data,
            _p: PhantomData,
        })
    }

    /// Turns this into a mapped guard of the whole value.
    pub fn into_mapped(this: Self) -> OwnedRwLockMappedWriteGuard<T> {
        Self::map(this, |me| me)
    }

    /// Downgrades to shared access without letting a writer in between.
    pub fn downgrade(self) -> OwnedRwLockReadGuard<T> {
        let data = self.data as *const T;
        let (lock, permits_acquired) = self.skip_drop();
        lock.s.release(permits_acquired as usize - 1);
        OwnedRwLockReadGuard {
            lock,
            data,
            _p: PhantomData,
        }
    }

    /// The lock this guard writes.
    pub fn rwlock(this: &Self) -> &Arc<RwLock<T>> {
        &this.lock
    }
}

impl<T: ?Sized> ops::Deref for OwnedRwLockWriteGuard<T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: every permit is held.
        unsafe { &*self.data }
    }
}

impl<T: ?Sized> ops::DerefMut for OwnedRwLockWriteGuard<T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: every permit is held.
        unsafe { &mut *self.data }
    }
}

impl<T: ?Sized> Drop for OwnedRwLockWriteGuard<T> {
    fn drop(&mut self) {
        self.lock.s.release(self.permits_acquired as usize);
    }
}

// ----- mapped write guards -------------------------------------------------

impl<'a, T: ?Sized> RwLockMappedWriteGuard<'a, T> {
    fn skip_drop(self) -> (&'a Semaphore, u32) {
        let this = ManuallyDrop::new(self);
        (this.s, this.permits_acquired)
    }

    /// Narrows the guard further.
    #[inline]
    pub fn map<F, U: ?Sized>(mut this: Self, f: F) -> RwLockMappedWriteGuard<'a, U>
    where
        F: FnOnce(&mut T) -> &mut U,
    {
        let data = f(&mut *this) as *mut U;
        let (s, permits_acquired) = this.skip_drop();
        RwLockMappedWriteGuard {
            _unwind: std::marker::PhantomData,
            permits_acquired,
            s,
            data,
            marker: PhantomData,
        }
    }

    /// Narrows the guard further if `f` returns `Some`.
    ///
    /// # Errors
    /// The original guard, when `f` returns `None`.
    #[inline]
    pub fn try_map<F, U: ?Sized>(
        mut this: Self,
        f: F,
    ) -> Result<RwLockMappedWriteGuard<'a, U>, Self>
    where
        F: FnOnce(&mut T) -> Option<&mut U>,
    {
        let data = match f(&mut *this) {
            Some(data) => data as *mut U,
            None => return Err(this),
        };
        let (s, permits_acquired) = this.skip_drop();
        Ok(RwLockMappedWriteGuard {
            _unwind: std::marker::PhantomData,
            permits_acquired,
            s,
            data,
            marker: PhantomData,
        })
    }
}

impl<T: ?Sized> ops::Deref for RwLockMappedWriteGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: every permit is held.
        unsafe { &*self.data }
    }
}

impl<T: ?Sized> ops::DerefMut for RwLockMappedWriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: every permit is held.
        unsafe { &mut *self.data }
    }
}

impl<'a, T: ?Sized> Drop for RwLockMappedWriteGuard<'a, T> {
    fn drop(&mut self) {
        self.s.release(self.permits_acquired as usize);
    }
}

impl<T: ?Sized, U: ?Sized> OwnedRwLockMappedWriteGuard<T, U> {
    fn skip_drop(self) -> (Arc<RwLock<T>>, u32) {
        let this = ManuallyDrop::new(self);
        // SAFETY: the guard is never used or dropped again.
        (unsafe { std::ptr::read(&this.lock) }, this.permits_acquired)
    }

    /// Narrows the guard further.
    #[inline]
    pub fn map<F, V: ?Sized>(mut this: Self, f: F) -> OwnedRwLockMappedWriteGuard<T, V>
    where
        F: FnOnce(&mut U) -> &mut V,
    {
        let data = f(&mut *this) as *mut V;
        let (lock, permits_acquired) = this.skip_drop();
        OwnedRwLockMappedWriteGuard {
            permits_acquired,
            lock,
            data,
            _p: PhantomData,
        }
    }

    /// Narrows the guard further if `f` returns `Some`.
    ///
    /// # Errors
    /// The original guard, when `f` returns `None`.
    #[inline]
    pub fn try_map<F, V: ?Sized>(
        mut this: Self,
        f: F,
    ) -> Result<OwnedRwLockMappedWriteGuard<T, V>, Self>
    where
        F: FnOnce(&mut U) -> Option<&mut V>,
    {
        let data = match f(&mut *this) {
            Some(data) => data as *mut V,
            None => return Err(this),
        };
        let (lock, permits_acquired) = this.skip_drop();
        Ok(OwnedRwLockMappedWriteGuard {
            permits_acquired,
            lock,
            data,
            _p: PhantomData,
        })
    }

    /// The lock this guard writes.
    pub fn rwlock(this: &Self) -> &Arc<RwLock<T>> {
        &this.lock
    }
}

impl<T: ?Sized, U: ?Sized> ops::Deref for OwnedRwLockMappedWriteGuard<T, U> {
    type Target = U;

    fn deref(&self) -> &U {
        // SAFETY: every permit is held.
        unsafe { &*self.data }
    }
}

impl<T: ?Sized, U: ?Sized> ops::DerefMut for OwnedRwLockMappedWriteGuard<T, U> {
    fn deref_mut(&mut self) -> &mut U {
        // SAFETY: every permit is held.
        unsafe { &mut *self.data }
    }
}

impl<T: ?Sized, U: ?Sized> Drop for OwnedRwLockMappedWriteGuard<T, U> {
    fn drop(&mut self) {
        self.lock.s.release(self.permits_acquired as usize);
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
