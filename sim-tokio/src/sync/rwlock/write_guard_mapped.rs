//! The borrowed write guard narrowed to part of the value.

use crate::sync::batch_semaphore::Semaphore;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ops;

/// A write guard narrowed to part of the value.
#[clippy::has_significant_drop]
pub struct RwLockMappedWriteGuard<'a, T: ?Sized> {
    /// Auto traits as tokio's (see `crate::util::NoRefUnwindSafe`).
    pub(super) _unwind: crate::util::NoRefUnwindSafe,
    pub(super) permits_acquired: u32,
    pub(super) s: &'a Semaphore,
    pub(super) data: *mut T,
    pub(super) marker: PhantomData<&'a mut T>,
}

// SAFETY: `&RwLockMappedWriteGuard` derefs to `&T` only: sharing it needs `T:
// Sync`.
unsafe impl<T> Sync for RwLockMappedWriteGuard<'_, T> where T: ?Sized + Send + Sync {}
// SAFETY: the mapped write guard is an exclusive borrow of part of the value
// (its raw pointer came from the write guard's `&mut T`): sending it sends
// `&mut T`, sound when `T: Send`.
unsafe impl<T> Send for RwLockMappedWriteGuard<'_, T> where T: ?Sized + Send + Sync {}

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
