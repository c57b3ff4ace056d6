//! The owned write guard narrowed to part of the value.

use super::*;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ops;
use std::sync::Arc;

/// An owned write guard narrowed to part of the value.
#[clippy::has_significant_drop]
pub struct OwnedRwLockMappedWriteGuard<T: ?Sized, U: ?Sized = T> {
    pub(super) permits_acquired: u32,
    pub(super) lock: Arc<RwLock<T>>,
    pub(super) data: *mut U,
    pub(super) _p: PhantomData<T>,
}

// SAFETY: `&OwnedRwLockMappedWriteGuard` derefs to `&U` only (`U: Sync`) and
// shares the `Arc<RwLock<T>>` (`T: Send + Sync`).
unsafe impl<T, U> Sync for OwnedRwLockMappedWriteGuard<T, U>
where
    T: ?Sized + Send + Sync,
    U: ?Sized + Send + Sync,
{
}
// SAFETY: the owned mapped guard holds the `Arc<RwLock<T>>` (`Send` when `T:
// Send + Sync`) and exclusive access to the `U` inside it: sending it sends
// `&mut U`, sound when `U: Send`.
unsafe impl<T, U> Send for OwnedRwLockMappedWriteGuard<T, U>
where
    T: ?Sized + Send + Sync,
    U: ?Sized + Send + Sync,
{
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
