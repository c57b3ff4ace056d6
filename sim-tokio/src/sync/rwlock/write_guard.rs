//! The borrowed write guard: exclusive access to the value.

use super::*;
use crate::sync::batch_semaphore::Semaphore;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ops;

/// Exclusive access to an [`RwLock`]'s value.
#[clippy::has_significant_drop]
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct RwLockWriteGuard<'a, T: ?Sized> {
    /// Auto traits as tokio's (see `crate::util::NoRefUnwindSafe`).
    pub(super) _unwind: crate::util::NoRefUnwindSafe,
    pub(super) permits_acquired: u32,
    pub(super) s: &'a Semaphore,
    pub(super) data: *mut T,
    pub(super) marker: PhantomData<&'a mut T>,
}

// SAFETY: `&RwLockWriteGuard` derefs to `&T` only: sharing it needs `T: Sync`.
unsafe impl<T> Sync for RwLockWriteGuard<'_, T> where T: ?Sized + Send + Sync {}
// SAFETY: a write guard is an exclusive borrow of the value: sending it sends
// `&mut T`, sound when `T: Send`; the permits it releases on drop belong to no
// thread.
unsafe impl<T> Send for RwLockWriteGuard<'_, T> where T: ?Sized + Send + Sync {}

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
