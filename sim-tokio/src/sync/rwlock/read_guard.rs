//! The borrowed read guard: shared access to the value.

use crate::sync::batch_semaphore::Semaphore;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ops;

/// Shared access to an [`RwLock`](super::RwLock)'s value.
#[clippy::has_significant_drop]
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct RwLockReadGuard<'a, T: ?Sized> {
    /// Auto traits as tokio's (see `crate::util::NoUnwindSafety`).
    pub(super) _unwind: crate::util::NoUnwindSafety,
    pub(super) s: &'a Semaphore,
    pub(super) data: *const T,
    pub(super) marker: PhantomData<&'a T>,
}

// SAFETY: a read guard is a shared borrow of the value: sending it sends `&T`,
// sound when `T: Sync`.
unsafe impl<T> Send for RwLockReadGuard<'_, T> where T: ?Sized + Sync {}
// SAFETY: `&RwLockReadGuard` derefs to `&T` only: sharing it needs `T: Sync`
// (`Send` asked as tokio does).
unsafe impl<T> Sync for RwLockReadGuard<'_, T> where T: ?Sized + Send + Sync {}

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
