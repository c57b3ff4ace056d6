use super::batch_semaphore::Semaphore;
use std::cell::UnsafeCell;
use std::error::Error;
use std::fmt;
use std::future::Future;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, Ordering};

/// A cell written once, asynchronously: concurrent `get_or_init` callers
/// wait in FIFO order while the first runs the initializer; if it fails or
/// is cancelled, the next one tries.
pub struct OnceCell<T> {
    /// Auto traits as tokio's (see `crate::util::NoUnwindSafe`).
    _unwind: crate::util::NoUnwindSafe,
    value_set: AtomicBool,
    value: UnsafeCell<MaybeUninit<T>>,
    semaphore: Semaphore,
}

// SAFETY: the value is written once, by the caller that holds the semaphore's
// permit, before `value_set` is stored with release ordering; readers load it
// with acquire and then only read, so sharing the cell shares `&T` (needs `T:
// Sync`) and lets another thread set the value (needs `T: Send`).
unsafe impl<T: Sync + Send> Sync for OnceCell<T> {}
// SAFETY: the cell owns its value: sending the cell sends the value, sound
// when `T: Send`.
unsafe impl<T: Send> Send for OnceCell<T> {}

impl<T> Default for OnceCell<T> {
    fn default() -> OnceCell<T> {
        OnceCell::new()
    }
}

impl<T: fmt::Debug> fmt::Debug for OnceCell<T> {
    fn fmt(&self, fmt: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt.debug_struct("OnceCell")
            .field("value", &self.get())
            .finish()
    }
}

impl<T: Clone> Clone for OnceCell<T> {
    fn clone(&self) -> OnceCell<T> {
        OnceCell::new_with(self.get().cloned())
    }
}

impl<T: PartialEq> PartialEq for OnceCell<T> {
    fn eq(&self, other: &OnceCell<T>) -> bool {
        self.get() == other.get()
    }
}

impl<T: Eq> Eq for OnceCell<T> {}

impl<T> Drop for OnceCell<T> {
    fn drop(&mut self) {
        if self.initialized_mut() {
            // SAFETY: initialized, and dropped once.
            unsafe { self.value.get_mut().assume_init_drop() };
        }
    }
}

impl<T> From<T> for OnceCell<T> {
    fn from(value: T) -> Self {
        OnceCell::new_with(Some(value))
    }
}

impl<T> OnceCell<T> {
    /// An empty cell.
    pub fn new() -> Self {
        OnceCell::const_new()
    }

    /// An empty cell, in a `const` context.
    pub const fn const_new() -> Self {
        OnceCell {
            _unwind: std::marker::PhantomData,
            value_set: AtomicBool::new(false),
            value: UnsafeCell::new(MaybeUninit::uninit()),
            semaphore: Semaphore::new(1),
        }
    }

    /// A cell holding `value` if it is `Some`.
    pub fn new_with(value: Option<T>) -> Self {
        match value {
            Some(value) => OnceCell::const_new_with(value),
            None => OnceCell::new(),
        }
    }

    /// A full cell, in a `const` context.
    pub const fn const_new_with(value: T) -> Self {
        OnceCell {
            _unwind: std::marker::PhantomData,
            value_set: AtomicBool::new(true),
            value: UnsafeCell::new(MaybeUninit::new(value)),
            semaphore: Semaphore::new(0),
        }
    }

    /// Whether the value is set.
    pub fn initialized(&self) -> bool {
        self.value_set.load(Ordering::Acquire)
    }

    fn initialized_mut(&mut self) -> bool {
        *self.value_set.get_mut()
    }

    /// The value.
    ///
    /// # Safety
    /// The value is set (`initialized` said so, with its `Acquire`).
    unsafe fn get_unchecked(&self) -> &T {
        (*self.value.get()).assume_init_ref()
    }

    /// Stores the value; the caller holds the initialization permit, which
    /// is consumed: the semaphore is closed so every waiter sees the value.
    fn set_value(&self, value: T) -> &T {
        // SAFETY: the permit holder is the only writer, and readers only
        // read after `value_set`.
        unsafe { (*self.value.get()).write(value) };
        self.value_set.store(true, Ordering::Release);
        self.semaphore.close();
        // SAFETY: just written.
        unsafe { self.get_unchecked() }
    }

    /// The value, if set.
    pub fn get(&self) -> Option<&T> {
        if self.initialized() {
            // SAFETY: set, and never changed while shared.
            Some(unsafe { self.get_unchecked() })
        } else {
            None
        }
    }

    /// The value, mutably, if set.
    pub fn get_mut(&mut self) -> Option<&mut T> {
        if self.initialized_mut() {
            // SAFETY: set.
            Some(unsafe { self.value.get_mut().assume_init_mut() })
        } else {
            None
        }
    }

    /// Sets the value if the cell is empty and nobody is initializing it.
    ///
    /// # Errors
    /// `AlreadyInitializedError` or `InitializingError`, with the value.
    pub fn set(&self, value: T) -> Result<(), SetError<T>> {
        if self.initialized() {
            return Err(SetError::AlreadyInitializedError(value));
        }
        match self.semaphore.try_acquire(1) {
            Ok(()) => {
                self.set_value(value);
                Ok(())
            }
            Err(_) if self.initialized() => Err(SetError::AlreadyInitializedError(value)),
            Err(_) => Err(SetError::InitializingError(value)),
        }
    }

    /// The value, running `f` to set it if the cell is empty. Concurrent
    /// callers wait for the first; if its future is dropped, the next runs
    /// its own `f`.
    pub async fn get_or_init<F, Fut>(&self, f: F) -> &T
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = T>,
    {
        if let Some(value) = self.get() {
            return value;
        }
        match self.semaphore.acquire(1).await {
            Ok(()) => {
                let guard = PermitGuard(&self.semaphore);
                if let Some(value) = self.get() {
                    return value;
                }
                let value = f().await;
                std::mem::forget(guard);
                self.set_value(value)
            }
            // Closed: the value was set by someone else.
            Err(_) => self
                .get()
                .expect("a closed OnceCell semaphore means it is set"),
        }
    }

    /// As [`OnceCell::get_or_init`], with an initializer that can fail; on
    /// failure the cell stays empty and the next caller tries.
    ///
    /// # Errors
    /// The initializer's error.
    pub async fn get_or_try_init<E, F, Fut>(&self, f: F) -> Result<&T, E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        if let Some(value) = self.get() {
            return Ok(value);
        }
        match self.semaphore.acquire(1).await {
            Ok(()) => {
                let guard = PermitGuard(&self.semaphore);
                if let Some(value) = self.get() {
                    return Ok(value);
                }
                let value = f().await?;
                std::mem::forget(guard);
                Ok(self.set_value(value))
            }
            Err(_) => Ok(self
                .get()
                .expect("a closed OnceCell semaphore means it is set")),
        }
    }

    /// The value, consuming the cell.
    pub fn into_inner(mut self) -> Option<T> {
        self.take()
    }

    /// Takes the value out, leaving the cell empty.
    pub fn take(&mut self) -> Option<T> {
        if !self.initialized_mut() {
            return None;
        }
        *self.value_set.get_mut() = false;
        // SAFETY: it was set; the flag is cleared so it is not read again.
        let value = unsafe { self.value.get_mut().assume_init_read() };
        self.semaphore = Semaphore::new(1);
        Some(value)
    }
}

/// Gives the initialization permit back if the initializer fails or is
/// cancelled.
struct PermitGuard<'a>(&'a Semaphore);

impl Drop for PermitGuard<'_> {
    fn drop(&mut self) {
        self.0.release(1);
    }
}

/// Why [`OnceCell::set`] failed; the value comes back.
#[derive(Debug, PartialEq, Eq)]
pub enum SetError<T> {
    /// The cell was already set.
    AlreadyInitializedError(T),
    /// Another task is running the initializer.
    InitializingError(T),
}

impl<T> fmt::Display for SetError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SetError::AlreadyInitializedError(_) => write!(f, "AlreadyInitializedError"),
            SetError::InitializingError(_) => write!(f, "InitializingError"),
        }
    }
}

impl<T: fmt::Debug> Error for SetError<T> {}

impl<T> SetError<T> {
    /// Whether the cell was already set.
    pub fn is_already_init_err(&self) -> bool {
        matches!(self, SetError::AlreadyInitializedError(_))
    }

    /// Whether another task was initializing.
    pub fn is_initializing_err(&self) -> bool {
        matches!(self, SetError::InitializingError(_))
    }
}
