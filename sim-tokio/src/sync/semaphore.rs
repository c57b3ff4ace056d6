use super::batch_semaphore::{self as ll, AcquireError, TryAcquireError};
use std::fmt;
use std::sync::Arc;

/// A counting semaphore. Waiters are served in FIFO order (a large
/// `acquire_many` at the head is not overtaken by small ones), and a
/// dropped `acquire` future gives its place back without blocking others.
#[derive(Debug)]
pub struct Semaphore {
    /// Auto traits as tokio's (see `crate::util::NoUnwindSafety`).
    _unwind: crate::util::NoUnwindSafety,
    ll: ll::Semaphore,
}

/// Permits held from a [`Semaphore`]; released when dropped.
#[must_use]
#[clippy::has_significant_drop]
pub struct SemaphorePermit<'a> {
    sem: &'a Semaphore,
    permits: usize,
}

/// Permits held from an `Arc<Semaphore>`; released when dropped.
#[must_use]
#[clippy::has_significant_drop]
pub struct OwnedSemaphorePermit {
    sem: Arc<Semaphore>,
    permits: usize,
}

impl Semaphore {
    /// The most permits a semaphore can hold.
    pub const MAX_PERMITS: usize = ll::Semaphore::MAX_PERMITS;

    /// A semaphore with `permits` permits.
    ///
    /// # Panics
    /// When `permits` exceeds [`Semaphore::MAX_PERMITS`].
    #[track_caller]
    pub fn new(permits: usize) -> Self {
        assert!(
            permits <= Self::MAX_PERMITS,
            "a semaphore may not have more than MAX_PERMITS permits ({})",
            Self::MAX_PERMITS
        );
        Semaphore {
            _unwind: std::marker::PhantomData,
            ll: ll::Semaphore::new(permits),
        }
    }

    /// A semaphore with `permits` permits, in a `const` context.
    pub const fn const_new(permits: usize) -> Self {
        Semaphore {
            _unwind: std::marker::PhantomData,
            ll: ll::Semaphore::new(permits),
        }
    }

    /// Free permits now.
    pub fn available_permits(&self) -> usize {
        self.ll.available_permits()
    }

    /// Adds `n` permits, serving waiters in order.
    ///
    /// # Panics
    /// When the total would exceed [`Semaphore::MAX_PERMITS`].
    #[track_caller]
    pub fn add_permits(&self, n: usize) {
        self.ll.release(n);
    }

    /// Removes up to `n` free permits; returns how many were removed.
    pub fn forget_permits(&self, n: usize) -> usize {
        self.ll.forget_permits(n)
    }

    /// Waits for one permit.
    ///
    /// # Errors
    /// When the semaphore is closed.
    pub async fn acquire(&self) -> Result<SemaphorePermit<'_>, AcquireError> {
        self.ll.acquire(1).await?;
        Ok(SemaphorePermit {
            sem: self,
            permits: 1,
        })
    }

    /// Waits for `n` permits at once.
    ///
    /// # Errors
    /// When the semaphore is closed.
    pub async fn acquire_many(&self, n: u32) -> Result<SemaphorePermit<'_>, AcquireError> {
        self.ll.acquire(n as usize).await?;
        Ok(SemaphorePermit {
            sem: self,
            permits: n as usize,
        })
    }

    /// Takes one permit if free now.
    ///
    /// # Errors
    /// `NoPermits`, or `Closed`.
    pub fn try_acquire(&self) -> Result<SemaphorePermit<'_>, TryAcquireError> {
        self.try_acquire_many(1)
    }

    /// Takes `n` permits if free now.
    ///
    /// # Errors
    /// `NoPermits`, or `Closed`.
    pub fn try_acquire_many(&self, n: u32) -> Result<SemaphorePermit<'_>, TryAcquireError> {
        self.ll.try_acquire(n as usize)?;
        Ok(SemaphorePermit {
            sem: self,
            permits: n as usize,
        })
    }

    /// Waits for one permit from outside an async context.
    ///
    /// # Errors
    /// When the semaphore is closed.
    ///
    /// # Panics
    /// Inside a runtime.
    #[track_caller]
    pub fn blocking_acquire(&self) -> Result<SemaphorePermit<'_>, AcquireError> {
        crate::util::block_outside_runtime(self.acquire())
    }

    /// Waits for `n` permits from outside an async context.
    ///
    /// # Errors
    /// When the semaphore is closed.
    ///
    /// # Panics
    /// Inside a runtime.
    #[track_caller]
    pub fn blocking_acquire_many(&self, n: u32) -> Result<SemaphorePermit<'_>, AcquireError> {
        crate::util::block_outside_runtime(self.acquire_many(n))
    }

    /// Waits for one permit, held through the `Arc`.
    ///
    /// # Errors
    /// When the semaphore is closed.
    pub async fn acquire_owned(self: Arc<Self>) -> Result<OwnedSemaphorePermit, AcquireError> {
        self.ll.acquire(1).await?;
        Ok(OwnedSemaphorePermit {
            sem: self,
            permits: 1,
        })
    }

    /// Waits for `n` permits, held through the `Arc`.
    ///
    /// # Errors
    /// When the semaphore is closed.
    pub async fn acquire_many_owned(
        self: Arc<Self>,
        n: u32,
    ) -> Result<OwnedSemaphorePermit, AcquireError> {
        self.ll.acquire(n as usize).await?;
        Ok(OwnedSemaphorePermit {
            sem: self,
            permits: n as usize,
        })
    }

    /// Takes one permit if free now, held through the `Arc`.
    ///
    /// # Errors
    /// `NoPermits`, or `Closed`.
    pub fn try_acquire_owned(self: Arc<Self>) -> Result<OwnedSemaphorePermit, TryAcquireError> {
        self.try_acquire_many_owned(1)
    }

    /// Takes `n` permits if free now, held through the `Arc`.
    ///
    /// # Errors
    /// `NoPermits`, or `Closed`.
    pub fn try_acquire_many_owned(
        self: Arc<Self>,
        n: u32,
    ) -> Result<OwnedSemaphorePermit, TryAcquireError> {
        self.ll.try_acquire(n as usize)?;
        Ok(OwnedSemaphorePermit {
            sem: self,
            permits: n as usize,
        })
    }

    /// As [`Semaphore::acquire_owned`], from outside an async context.
    ///
    /// # Errors
    /// When the semaphore is closed.
    ///
    /// # Panics
    /// Inside a runtime.
    #[track_caller]
    pub fn blocking_acquire_owned(self: Arc<Self>) -> Result<OwnedSemaphorePermit, AcquireError> {
        crate::util::block_outside_runtime(self.acquire_owned())
    }

    /// As [`Semaphore::acquire_many_owned`], from outside an async context.
    ///
    /// # Errors
    /// When the semaphore is closed.
    ///
    /// # Panics
    /// Inside a runtime.
    #[track_caller]
    pub fn blocking_acquire_many_owned(
        self: Arc<Self>,
        n: u32,
    ) -> Result<OwnedSemaphorePermit, AcquireError> {
        crate::util::block_outside_runtime(self.acquire_many_owned(n))
    }

    /// Closes the semaphore: waiters and later acquires fail. Held permits
    /// stay valid.
    pub fn close(&self) {
        self.ll.close();
    }

    /// Whether the semaphore is closed.
    pub fn is_closed(&self) -> bool {
        self.ll.is_closed()
    }
}

impl<'a> SemaphorePermit<'a> {
    /// Drops the permits without returning them to the semaphore.
    pub fn forget(mut self) {
        self.permits = 0;
    }

    /// Takes `other`'s permits into this one.
    ///
    /// # Panics
    /// When they come from different semaphores.
    #[track_caller]
    pub fn merge(&mut self, mut other: Self) {
        assert!(
            std::ptr::eq(self.sem, other.sem),
            "merging permits from different semaphore instances"
        );
        self.permits += other.permits;
        other.permits = 0;
    }

    /// Splits `n` permits off into a new permit, if this one holds that
    /// many.
    pub fn split(&mut self, n: usize) -> Option<Self> {
        if n > self.permits {
            return None;
        }
        self.permits -= n;
        Some(Self {
            sem: self.sem,
            permits: n,
        })
    }

    /// The semaphore the permits came from.
    pub fn semaphore(&self) -> &Semaphore {
        self.sem
    }

    /// How many permits this holds.
    pub fn num_permits(&self) -> usize {
        self.permits
    }
}

impl OwnedSemaphorePermit {
    /// Drops the permits without returning them to the semaphore.
    pub fn forget(mut self) {
        self.permits = 0;
    }

    /// Takes `other`'s permits into this one.
    ///
    /// # Panics
    /// When they come from different semaphores.
    #[track_caller]
    pub fn merge(&mut self, mut other: Self) {
        assert!(
            Arc::ptr_eq(&self.sem, &other.sem),
            "merging permits from different semaphore instances"
        );
        self.permits += other.permits;
        other.permits = 0;
    }

    /// Splits `n` permits off into a new permit, if this one holds that
    /// many.
    pub fn split(&mut self, n: usize) -> Option<Self> {
        if n > self.permits {
            return None;
        }
        self.permits -= n;
        Some(Self {
            sem: self.sem.clone(),
            permits: n,
        })
    }

    /// The semaphore the permits came from.
    pub fn semaphore(&self) -> &Arc<Semaphore> {
        &self.sem
    }

    /// How many permits this holds.
    pub fn num_permits(&self) -> usize {
        self.permits
    }
}

impl Drop for SemaphorePermit<'_> {
    fn drop(&mut self) {
        self.sem.add_permits(self.permits);
    }
}

impl Drop for OwnedSemaphorePermit {
    fn drop(&mut self) {
        self.sem.add_permits(self.permits);
    }
}

impl fmt::Debug for SemaphorePermit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SemaphorePermit")
            .field("permits", &self.permits)
            .finish()
    }
}

impl fmt::Debug for OwnedSemaphorePermit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedSemaphorePermit")
            .field("permits", &self.permits)
            .finish()
    }
}
