//! The owned write guard: exclusive access through an `Arc<RwLock<T>>`.

use super::*;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ops;
use std::sync::Arc;

/// Exclusive access through an `Arc<RwLock<T>>`.
#[clippy::has_significant_drop]
pub struct OwnedRwLockWriteGuard<T: ?Sized> {
    pub(super) permits_acquired: u32,
    pub(super) lock: Arc<RwLock<T>>,
    pub(super) data: *mut T,
    pub(super) _p: PhantomData<T>,
}

// SAFETY: as for `RwLockWriteGuard`: sharing the owned guard shares `&T` and
// the `Arc<RwLock<T>>` (`Sync` when `T: Send + Sync`).
unsafe impl<T> Sync for OwnedRwLockWriteGuard<T> where T: ?Sized + Send + Sync {}
// SAFETY: as for `RwLockWriteGuard`, and the `Arc<RwLock<T>>` it holds is
// `Send` when `T: Send + Sync`.
unsafe impl<T> Send for OwnedRwLockWriteGuard<T> where T: ?Sized + Send + Sync {}

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
