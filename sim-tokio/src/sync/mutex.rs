use super::batch_semaphore::Semaphore;
use std::cell::UnsafeCell;
use std::error::Error;
use std::fmt;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

/// An async mutex. Waiters take it in FIFO order, and a `lock` future
/// dropped while waiting gives up its place without blocking the others.
pub struct Mutex<T: ?Sized> {
    /// Auto traits as tokio's (see `crate::util::NoUnwindSafe`).
    _unwind: crate::util::NoUnwindSafe,
    s: Semaphore,
    c: UnsafeCell<T>,
}

/// Holds a [`Mutex`]; releases it when dropped.
#[clippy::has_significant_drop]
#[must_use = "if unused the Mutex will immediately unlock"]
pub struct MutexGuard<'a, T: ?Sized> {
    lock: &'a Mutex<T>,
}

/// Holds a [`Mutex`] through an `Arc`; releases it when dropped.
#[clippy::has_significant_drop]
pub struct OwnedMutexGuard<T: ?Sized> {
    lock: Arc<Mutex<T>>,
}

/// A [`MutexGuard`] narrowed to part of the value.
#[clippy::has_significant_drop]
#[must_use = "if unused the Mutex will immediately unlock"]
pub struct MappedMutexGuard<'a, T: ?Sized> {
    /// Auto traits as tokio's (see `crate::util::NoRefUnwindSafe`).
    _unwind: crate::util::NoRefUnwindSafe,
    s: &'a Semaphore,
    data: *mut T,
    marker: PhantomData<&'a mut T>,
}

/// An [`OwnedMutexGuard`] narrowed to part of the value.
#[clippy::has_significant_drop]
pub struct OwnedMappedMutexGuard<T: ?Sized, U: ?Sized = T> {
    data: *mut U,
    lock: Arc<Mutex<T>>,
}

// As tokio's: the value moves between tasks only through a guard, and one
// guard exists at a time.
// SAFETY: the mutex owns its value: sending the mutex sends the value, sound
// when `T: Send`.
unsafe impl<T> Send for Mutex<T> where T: ?Sized + Send {}
// SAFETY: through `&Mutex` a task reaches `&mut T` only while it holds the one
// permit of the mutex's semaphore, so one task at a time has the value:
// sharing the mutex is sending the value between tasks, sound when `T: Send`
// (no `Sync` needed, as for `std::sync::Mutex`).
unsafe impl<T> Sync for Mutex<T> where T: ?Sized + Send {}
// SAFETY: `&MutexGuard` derefs to `&T` only: sharing the guard shares `&T`,
// which needs `T: Sync`; `T: Send` as for the mutex itself.
unsafe impl<T> Sync for MutexGuard<'_, T> where T: ?Sized + Send + Sync {}
// SAFETY: as for `MutexGuard`: sharing the owned guard shares `&T` only.
unsafe impl<T> Sync for OwnedMutexGuard<T> where T: ?Sized + Send + Sync {}
// SAFETY: `&MappedMutexGuard` derefs to `&T` only (its raw pointer came from
// the guard's exclusive borrow), so sharing it needs `T: Sync`.
unsafe impl<'a, T> Sync for MappedMutexGuard<'a, T> where T: ?Sized + Sync + 'a {}
// SAFETY: the mapped guard is an exclusive borrow of part of the value (`&'a
// mut T` in all but type): sending it is sending `&mut T`, sound when `T:
// Send`; the permit it releases on drop belongs to no thread.
unsafe impl<'a, T> Send for MappedMutexGuard<'a, T> where T: ?Sized + Send + 'a {}
// SAFETY: `&OwnedMappedMutexGuard` derefs to `&U` only, so sharing it needs
// `U: Sync`; it also shares the `Arc<Mutex<T>>`, which needs `Mutex<T>: Send +
// Sync`, that is `T: Send` (`Sync` asked as tokio does).
unsafe impl<T, U> Sync for OwnedMappedMutexGuard<T, U>
where
    T: ?Sized + Send + Sync,
    U: ?Sized + Send + Sync,
{
}
// SAFETY: the owned mapped guard holds the lock (an `Arc<Mutex<T>>`, `Send`
// when `T: Send`) and exclusive access to the `U` inside it through its
// pointer: sending it sends `&mut U`, sound when `U: Send`.
unsafe impl<T, U> Send for OwnedMappedMutexGuard<T, U>
where
    T: ?Sized + Send,
    U: ?Sized + Send,
{
}

/// The error of `try_lock`: the lock is held (or others wait for it).
#[derive(Debug)]
pub struct TryLockError(pub(super) ());

impl fmt::Display for TryLockError {
    fn fmt(&self, fmt: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(fmt, "operation would block")
    }
}

impl Error for TryLockError {}

impl<T: ?Sized> Mutex<T> {
    /// A new, unlocked mutex.
    pub fn new(t: T) -> Self
    where
        T: Sized,
    {
        Mutex {
            _unwind: std::marker::PhantomData,
            s: Semaphore::new_lock(1, "Mutex"),
            c: UnsafeCell::new(t),
        }
    }

    /// A new, unlocked mutex, in a `const` context.
    pub const fn const_new(t: T) -> Self
    where
        T: Sized,
    {
        Mutex {
            _unwind: std::marker::PhantomData,
            s: Semaphore::new_lock(1, "Mutex"),
            c: UnsafeCell::new(t),
        }
    }

    async fn acquire(&self) {
        if self
            .s
            .acquire_as(1, std::any::type_name::<Self>())
            .await
            .is_err()
        {
            unreachable!("a mutex's semaphore is never closed");
        }
    }

    /// Waits for the lock, in FIFO order. Cancel-safe: dropping the future
    /// gives up the place in line.
    pub async fn lock(&self) -> MutexGuard<'_, T> {
        self.acquire().await;
        MutexGuard { lock: self }
    }

    /// Locks from outside an async context.
    ///
    /// # Panics
    /// Inside a runtime, as in tokio.
    #[track_caller]
    pub fn blocking_lock(&self) -> MutexGuard<'_, T> {
        crate::util::block_outside_runtime(self.lock())
    }

    /// As [`Mutex::lock_owned`], from outside an async context.
    ///
    /// # Panics
    /// Inside a runtime, as in tokio.
    #[track_caller]
    pub fn blocking_lock_owned(self: Arc<Self>) -> OwnedMutexGuard<T> {
        crate::util::block_outside_runtime(self.lock_owned())
    }

    /// Waits for the lock, held through the `Arc`.
    pub async fn lock_owned(self: Arc<Self>) -> OwnedMutexGuard<T> {
        self.acquire().await;
        OwnedMutexGuard { lock: self }
    }

    /// Takes the lock if it is free and nobody waits.
    ///
    /// # Errors
    /// When it is held, or others wait for it.
    pub fn try_lock(&self) -> Result<MutexGuard<'_, T>, TryLockError> {
        match self.s.try_acquire(1) {
            Ok(()) => Ok(MutexGuard { lock: self }),
            Err(_) => Err(TryLockError(())),
        }
    }

    /// The value, through a unique borrow (no locking needed).
    pub fn get_mut(&mut self) -> &mut T {
        self.c.get_mut()
    }

    /// Takes the lock through the `Arc` if it is free and nobody waits.
    ///
    /// # Errors
    /// When it is held, or others wait for it.
    pub fn try_lock_owned(self: Arc<Self>) -> Result<OwnedMutexGuard<T>, TryLockError> {
        match self.s.try_acquire(1) {
            Ok(()) => Ok(OwnedMutexGuard { lock: self }),
            Err(_) => Err(TryLockError(())),
        }
    }

    /// The value inside.
    pub fn into_inner(self) -> T
    where
        T: Sized,
    {
        self.c.into_inner()
    }
}

impl<T> From<T> for Mutex<T> {
    fn from(s: T) -> Self {
        Self::new(s)
    }
}

impl<T> Default for Mutex<T>
where
    T: Default,
{
    fn default() -> Self {
        Self::new(T::default())
    }
}

impl<T: ?Sized> std::fmt::Debug for Mutex<T>
where
    T: std::fmt::Debug,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("Mutex");
        match self.try_lock() {
            Ok(inner) => d.field("data", &&*inner),
            Err(_) => d.field("data", &format_args!("<locked>")),
        };
        d.finish()
    }
}

impl<'a, T: ?Sized> MutexGuard<'a, T> {
    fn skip_drop(self) -> &'a Mutex<T> {
        let this = ManuallyDrop::new(self);
        this.lock
    }

    /// Narrows the guard to a part of the value.
    #[inline]
    pub fn map<U, F>(mut this: Self, f: F) -> MappedMutexGuard<'a, U>
    where
        U: ?Sized,
        F: FnOnce(&mut T) -> &mut U,
    {
        let data = f(&mut *this) as *mut U;
        let lock = this.skip_drop();
        MappedMutexGuard {
            _unwind: std::marker::PhantomData,
            s: &lock.s,
            data,
            marker: PhantomData,
        }
    }

    /// Narrows the guard if `f` returns `Some`; gives it back otherwise.
    ///
    /// # Errors
    /// The original guard, when `f` returns `None`.
    #[inline]
    pub fn try_map<U, F>(mut this: Self, f: F) -> Result<MappedMutexGuard<'a, U>, Self>
    where
        U: ?Sized,
        F: FnOnce(&mut T) -> Option<&mut U>,
    {
        let data = match f(&mut *this) {
            Some(data) => data as *mut U,
            None => return Err(this),
        };
        let lock = this.skip_drop();
        Ok(MappedMutexGuard {
            _unwind: std::marker::PhantomData,
            s: &lock.s,
            data,
            marker: PhantomData,
        })
    }

    /// The mutex this guard holds.
    pub fn mutex(this: &Self) -> &'a Mutex<T> {
        this.lock
    }
}

impl<T: ?Sized> Drop for MutexGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.s.release(1);
    }
}

impl<T: ?Sized> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &Self::Target {
        // SAFETY: the guard holds the lock.
        unsafe { &*self.lock.c.get() }
    }
}

impl<T: ?Sized> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        // SAFETY: the guard holds the lock, uniquely.
        unsafe { &mut *self.lock.c.get() }
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

impl<T: ?Sized> OwnedMutexGuard<T> {
    fn skip_drop(self) -> Arc<Mutex<T>> {
        let this = ManuallyDrop::new(self);
        // SAFETY: the guard is never used or dropped again.
        unsafe { std::ptr::read(&this.lock) }
    }

    /// Narrows the guard to a part of the value.
    #[inline]
    pub fn map<U, F>(mut this: Self, f: F) -> OwnedMappedMutexGuard<T, U>
    where
        U: ?Sized,
        F: FnOnce(&mut T) -> &mut U,
    {
        let data = f(&mut *this) as *mut U;
        let lock = this.skip_drop();
        OwnedMappedMutexGuard { data, lock }
    }

    /// Narrows the guard if `f` returns `Some`; gives it back otherwise.
    ///
    /// # Errors
    /// The original guard, when `f` returns `None`.
    #[inline]
    pub fn try_map<U, F>(mut this: Self, f: F) -> Result<OwnedMappedMutexGuard<T, U>, Self>
    where
        U: ?Sized,
        F: FnOnce(&mut T) -> Option<&mut U>,
    {
        let data = match f(&mut *this) {
            Some(data) => data as *mut U,
            None => return Err(this),
        };
        let lock = this.skip_drop();
        Ok(OwnedMappedMutexGuard { data, lock })
    }

    /// The mutex this guard holds.
    pub fn mutex(this: &Self) -> &Arc<Mutex<T>> {
        &this.lock
    }
}

impl<T: ?Sized> Drop for OwnedMutexGuard<T> {
    fn drop(&mut self) {
        self.lock.s.release(1);
    }
}

impl<T: ?Sized> Deref for OwnedMutexGuard<T> {
    type Target = T;
    fn deref(&self) -> &Self::Target {
        // SAFETY: the guard holds the lock.
        unsafe { &*self.lock.c.get() }
    }
}

impl<T: ?Sized> DerefMut for OwnedMutexGuard<T> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        // SAFETY: the guard holds the lock, uniquely.
        unsafe { &mut *self.lock.c.get() }
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for OwnedMutexGuard<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized + fmt::Display> fmt::Display for OwnedMutexGuard<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}

impl<'a, T: ?Sized> MappedMutexGuard<'a, T> {
    fn skip_drop(self) -> &'a Semaphore {
        let this = ManuallyDrop::new(self);
        this.s
    }

    /// Narrows the guard further.
    #[inline]
    pub fn map<U, F>(mut this: Self, f: F) -> MappedMutexGuard<'a, U>
    where
        F: FnOnce(&mut T) -> &mut U,
        U: ?Sized,
    {
        let data = f(&mut *this) as *mut U;
        let s = this.skip_drop();
        MappedMutexGuard {
            _unwind: std::marker::PhantomData,
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
    pub fn try_map<U, F>(mut this: Self, f: F) -> Result<MappedMutexGuard<'a, U>, Self>
    where
        F: FnOnce(&mut T) -> Option<&mut U>,
        U: ?Sized,
    {
        let data = match f(&mut *this) {
            Some(data) => data as *mut U,
            None => return Err(this),
        };
        let s = this.skip_drop();
        Ok(MappedMutexGuard {
            _unwind: std::marker::PhantomData,
            s,
            data,
            marker: PhantomData,
        })
    }
}

impl<'a, T: ?Sized> Drop for MappedMutexGuard<'a, T> {
    fn drop(&mut self) {
        self.s.release(1);
    }
}

impl<'a, T: ?Sized> Deref for MappedMutexGuard<'a, T> {
    type Target = T;
    fn deref(&self) -> &Self::Target {
        // SAFETY: the guard holds the lock; `data` points into the value.
        unsafe { &*self.data }
    }
}

impl<'a, T: ?Sized> DerefMut for MappedMutexGuard<'a, T> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        // SAFETY: as above, uniquely.
        unsafe { &mut *self.data }
    }
}

impl<'a, T: ?Sized + fmt::Debug> fmt::Debug for MappedMutexGuard<'a, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<'a, T: ?Sized + fmt::Display> fmt::Display for MappedMutexGuard<'a, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}

impl<T: ?Sized, U: ?Sized> OwnedMappedMutexGuard<T, U> {
    fn skip_drop(self) -> Arc<Mutex<T>> {
        let this = ManuallyDrop::new(self);
        // SAFETY: the guard is never used or dropped again.
        unsafe { std::ptr::read(&this.lock) }
    }

    /// Narrows the guard further.
    #[inline]
    pub fn map<S, F>(mut this: Self, f: F) -> OwnedMappedMutexGuard<T, S>
    where
        F: FnOnce(&mut U) -> &mut S,
        S: ?Sized,
    {
        let data = f(&mut *this) as *mut S;
        let lock = this.skip_drop();
        OwnedMappedMutexGuard { data, lock }
    }

    /// Narrows the guard further if `f` returns `Some`.
    ///
    /// # Errors
    /// The original guard, when `f` returns `None`.
    #[inline]
    pub fn try_map<S, F>(mut this: Self, f: F) -> Result<OwnedMappedMutexGuard<T, S>, Self>
    where
        F: FnOnce(&mut U) -> Option<&mut S>,
        S: ?Sized,
    {
        let data = match f(&mut *this) {
            Some(data) => data as *mut S,
            None => return Err(this),
        };
        let lock = this.skip_drop();
        Ok(OwnedMappedMutexGuard { data, lock })
    }
}

impl<T: ?Sized, U: ?Sized> Drop for OwnedMappedMutexGuard<T, U> {
    fn drop(&mut self) {
        self.lock.s.release(1);
    }
}

impl<T: ?Sized, U: ?Sized> Deref for OwnedMappedMutexGuard<T, U> {
    type Target = U;
    fn deref(&self) -> &Self::Target {
        // SAFETY: the guard holds the lock; `data` points into the value.
        unsafe { &*self.data }
    }
}

impl<T: ?Sized, U: ?Sized> DerefMut for OwnedMappedMutexGuard<T, U> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        // SAFETY: as above, uniquely.
        unsafe { &mut *self.data }
    }
}

impl<T: ?Sized, U: ?Sized + fmt::Debug> fmt::Debug for OwnedMappedMutexGuard<T, U> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized, U: ?Sized + fmt::Display> fmt::Display for OwnedMappedMutexGuard<T, U> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}
