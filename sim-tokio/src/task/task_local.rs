use std::cell::RefCell;
use std::error::Error;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A key for task-local storage, made by [`crate::task_local!`].
///
/// The value is set for the duration of a future ([`LocalKey::scope`]) or a
/// closure ([`LocalKey::sync_scope`]); each poll of the future swaps it in
/// and out, so every task sees its own.
pub struct LocalKey<T: 'static> {
    #[doc(hidden)]
    pub inner: std::thread::LocalKey<RefCell<Option<T>>>,
}

/// The error of reading a task-local that is not set.
#[derive(Clone, Copy, Eq, PartialEq)]
pub struct AccessError {
    _private: (),
}

impl fmt::Debug for AccessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AccessError").finish()
    }
}

impl fmt::Display for AccessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt("task-local value not set", f)
    }
}

impl Error for AccessError {}

/// Puts `slot`'s value into the key for the duration of `f`, then takes it
/// back, even if `f` panics.
#[track_caller]
fn scope_inner<T: 'static, R>(
    key: &'static std::thread::LocalKey<RefCell<Option<T>>>,
    slot: &mut Option<T>,
    f: impl FnOnce() -> R,
) -> R {
    struct Guard<'a, T: 'static> {
        key: &'static std::thread::LocalKey<RefCell<Option<T>>>,
        slot: &'a mut Option<T>,
    }
    impl<T: 'static> Drop for Guard<'_, T> {
        fn drop(&mut self) {
            self.key.with(|cell| {
                let mut value = cell.borrow_mut();
                std::mem::swap(self.slot, &mut *value);
            });
        }
    }
    // The panic is outside the closure, so it points at the caller.
    let entered = key.with(|cell| match cell.try_borrow_mut() {
        Ok(mut value) => {
            std::mem::swap(slot, &mut *value);
            true
        }
        Err(_) => false,
    });
    if !entered {
        panic!("cannot enter a task-local scope while the task-local storage is borrowed");
    }
    let _guard = Guard { key, slot };
    f()
}

impl<T: 'static> LocalKey<T> {
    /// Runs `f` with the key set to `value`.
    pub fn scope<F>(&'static self, value: T, f: F) -> TaskLocalFuture<T, F>
    where
        F: Future,
    {
        TaskLocalFuture {
            local: self,
            slot: Some(value),
            future: Some(f),
            _pinned: std::marker::PhantomPinned,
        }
    }

    /// Runs the closure `f` with the key set to `value`.
    #[track_caller]
    pub fn sync_scope<F, R>(&'static self, value: T, f: F) -> R
    where
        F: FnOnce() -> R,
    {
        let mut slot = Some(value);
        scope_inner(&self.inner, &mut slot, f)
    }

    /// Reads the value.
    ///
    /// # Panics
    /// When the key is not set.
    #[track_caller]
    pub fn with<F, R>(&'static self, f: F) -> R
    where
        F: FnOnce(&T) -> R,
    {
        match self.try_with(f) {
            Ok(r) => r,
            Err(_) => panic!("cannot access a task-local storage value without setting it first"),
        }
    }

    /// Reads the value, if set.
    ///
    /// # Errors
    /// When the key is not set.
    pub fn try_with<F, R>(&'static self, f: F) -> Result<R, AccessError>
    where
        F: FnOnce(&T) -> R,
    {
        let cell = self.inner.try_with(|cell| {
            let value = cell.borrow();
            value.as_ref().map(f)
        });
        match cell {
            Ok(Some(r)) => Ok(r),
            _ => Err(AccessError { _private: () }),
        }
    }
}

impl<T: Clone + 'static> LocalKey<T> {
    /// A copy of the value.
    ///
    /// # Panics
    /// When the key is not set.
    #[track_caller]
    pub fn get(&'static self) -> T {
        self.with(|v| v.clone())
    }

    /// A copy of the value, if set.
    ///
    /// # Errors
    /// When the key is not set.
    pub fn try_get(&'static self) -> Result<T, AccessError> {
        self.try_with(|v| v.clone())
    }
}

impl<T: 'static> fmt::Debug for LocalKey<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad("LocalKey { .. }")
    }
}

/// A future that runs with a task-local value set: see [`LocalKey::scope`].
pub struct TaskLocalFuture<T: 'static, F> {
    local: &'static LocalKey<T>,
    slot: Option<T>,
    future: Option<F>,
    /// Never `Unpin`, whatever the future, as tokio's is (its
    /// `async_send_sync` test holds it to that).
    _pinned: std::marker::PhantomPinned,
}

/// The type whose `Unpin` `TaskLocalFuture`'s impl below asks for: it never
/// is, for it holds a `PhantomPinned`. The lifetime keeps the bound from
/// being trivially false, which rustc would reject. Tokio declares the same
/// impl (its future is pin-projected), so code naming
/// `TaskLocalFuture: Unpin` in a bound sees the same API on both.
#[doc(hidden)]
pub struct NeverUnpin<'a, T, F>(
    std::marker::PhantomData<(&'a (), T, F)>,
    std::marker::PhantomPinned,
);

impl<'a, T: 'static, F> Unpin for TaskLocalFuture<T, F> where NeverUnpin<'a, T, F>: Unpin {}

impl<T: 'static, F> TaskLocalFuture<T, F> {
    /// Takes the value out; later polls run without it.
    pub fn take_value(self: Pin<&mut Self>) -> Option<T> {
        // SAFETY: `slot` is not structurally pinned.
        unsafe { self.get_unchecked_mut() }.slot.take()
    }
}

impl<T: 'static, F: Future> Future for TaskLocalFuture<T, F> {
    type Output = F::Output;

    #[track_caller]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: `future` is pinned in place and never moved out while
        // `Some`; `slot` and `local` are not structurally pinned.
        let this = unsafe { self.get_unchecked_mut() };
        let local = this.local;
        let future = &mut this.future;
        let polled = scope_inner(&local.inner, &mut this.slot, || {
            let fut = future
                .as_mut()
                .expect("`TaskLocalFuture` polled after completion");
            // SAFETY: `fut` is a field of the pinned `self`, never moved
            // out: it is dropped in place (set to `None`) once ready.
            let result = unsafe { Pin::new_unchecked(fut) }.poll(cx);
            if result.is_ready() {
                *future = None;
            }
            result
        });
        polled
    }
}

impl<T: 'static, F> Drop for TaskLocalFuture<T, F> {
    fn drop(&mut self) {
        // Drop the future inside the scope, so its destructors see the
        // value, as tokio does.
        if self.future.is_some()
            && self.local.inner.try_with(|c| c.try_borrow_mut().is_ok()) == Ok(true)
        {
            let future = &mut self.future;
            scope_inner(&self.local.inner, &mut self.slot, || {
                *future = None;
            });
        }
    }
}

impl<T: 'static, F> fmt::Debug for TaskLocalFuture<T, F>
where
    T: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskLocalFuture")
            .field("value", &self.slot)
            .finish()
    }
}
