use super::Notify;
use std::cell::UnsafeCell;
use std::error::Error;
use std::fmt;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex as StdMutex;

/// A value set at most once, which tasks can wait for.
pub struct SetOnce<T> {
    value_set: AtomicBool,
    value: UnsafeCell<MaybeUninit<T>>,
    notify: Notify,
    // Serializes `set`, so two callers cannot both write.
    lock: StdMutex<()>,
}

// SAFETY: the value is written once, under `lock`, before `value_set` is
// stored with release ordering; readers load it with acquire and then only
// read: sharing shares `&T` (needs `T: Sync`) and lets another thread set it
// (needs `T: Send`).
unsafe impl<T: Sync + Send> Sync for SetOnce<T> {}
// SAFETY: the cell owns its value: sending the cell sends the value, sound
// when `T: Send`.
unsafe impl<T: Send> Send for SetOnce<T> {}

impl<T> Default for SetOnce<T> {
    fn default() -> SetOnce<T> {
        SetOnce::new()
    }
}

impl<T: fmt::Debug> fmt::Debug for SetOnce<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SetOnce")
            .field("value", &self.get())
            .finish()
    }
}

impl<T: Clone> Clone for SetOnce<T> {
    fn clone(&self) -> SetOnce<T> {
        SetOnce::new_with(self.get().cloned())
    }
}

impl<T: PartialEq> PartialEq for SetOnce<T> {
    fn eq(&self, other: &SetOnce<T>) -> bool {
        self.get() == other.get()
    }
}

impl<T: Eq> Eq for SetOnce<T> {}

impl<T> Drop for SetOnce<T> {
    fn drop(&mut self) {
        if *self.value_set.get_mut() {
            // SAFETY: set, and dropped once.
            unsafe { self.value.get_mut().assume_init_drop() };
        }
    }
}

impl<T> From<T> for SetOnce<T> {
    fn from(value: T) -> Self {
        SetOnce::new_with(Some(value))
    }
}

impl<T> SetOnce<T> {
    /// An empty `SetOnce`.
    pub fn new() -> Self {
        SetOnce::const_new()
    }

    /// An empty `SetOnce`, in a `const` context.
    pub const fn const_new() -> Self {
        SetOnce {
            value_set: AtomicBool::new(false),
            value: UnsafeCell::new(MaybeUninit::uninit()),
            notify: Notify::const_new(),
            lock: StdMutex::new(()),
        }
    }

    /// A `SetOnce` holding `value` if it is `Some`.
    pub fn new_with(value: Option<T>) -> Self {
        match value {
            Some(value) => SetOnce::const_new_with(value),
            None => SetOnce::new(),
        }
    }

    /// A set `SetOnce`, in a `const` context.
    pub const fn const_new_with(value: T) -> Self {
        SetOnce {
            value_set: AtomicBool::new(true),
            value: UnsafeCell::new(MaybeUninit::new(value)),
            notify: Notify::const_new(),
            lock: StdMutex::new(()),
        }
    }

    /// Whether the value is set.
    pub fn initialized(&self) -> bool {
        self.value_set.load(Ordering::Acquire)
    }

    /// The value, if set.
    pub fn get(&self) -> Option<&T> {
        if self.initialized() {
            // SAFETY: set, and never changed while shared.
            Some(unsafe { (*self.value.get()).assume_init_ref() })
        } else {
            None
        }
    }

    /// Sets the value and wakes every waiter.
    ///
    /// # Errors
    /// The value, when it was already set.
    pub fn set(&self, value: T) -> Result<(), SetOnceError<T>> {
        {
            let _guard = super::lock(&self.lock);
            if self.initialized() {
                return Err(SetOnceError(value));
            }
            // SAFETY: the lock makes this the only writer; readers read only
            // after the flag.
            unsafe { (*self.value.get()).write(value) };
            self.value_set.store(true, Ordering::Release);
        }
        self.notify.notify_waiters();
        Ok(())
    }

    /// The value, consuming the `SetOnce`.
    pub fn into_inner(mut self) -> Option<T> {
        if !*self.value_set.get_mut() {
            return None;
        }
        *self.value_set.get_mut() = false;
        // SAFETY: it was set; the flag is cleared so Drop skips it.
        Some(unsafe { self.value.get_mut().assume_init_read() })
    }

    /// Waits until the value is set.
    pub async fn wait(&self) -> &T {
        loop {
            let notified = self.notify.notified();
            if let Some(value) = self.get() {
                return value;
            }
            notified.await;
        }
    }
}

/// The error of setting a `SetOnce` that was already set; the value comes
/// back.
#[derive(Debug, PartialEq, Eq)]
pub struct SetOnceError<T>(pub T);

impl<T> fmt::Display for SetOnceError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SetOnceError")
    }
}

impl<T: fmt::Debug> Error for SetOnceError<T> {}
