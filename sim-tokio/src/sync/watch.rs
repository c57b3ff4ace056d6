//! A single-value channel: receivers see the latest value and whether it
//! changed since they last looked.
//!
//! Every change bumps a version. A receiver remembers the version it last
//! saw: `changed()` waits for a newer one, `borrow_and_update()` marks the
//! current one seen, and `borrow()` reads without marking.

use std::collections::BTreeMap;
use std::fmt;
use std::ops;
use std::sync::{Arc, Mutex as StdMutex, RwLock as StdRwLock, RwLockReadGuard};
use std::task::{Poll, Waker};

/// Error types.
pub mod error {
    use std::fmt;

    /// No receiver is alive; the value comes back.
    #[derive(PartialEq, Eq, Clone, Copy)]
    pub struct SendError<T>(pub T);

    impl<T> fmt::Debug for SendError<T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.debug_struct("SendError").finish_non_exhaustive()
        }
    }

    impl<T> fmt::Display for SendError<T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "channel closed")
        }
    }

    impl<T> std::error::Error for SendError<T> {}

    /// Every sender is gone.
    #[derive(Debug, Clone)]
    pub struct RecvError(pub(super) ());

    impl fmt::Display for RecvError {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "channel closed")
        }
    }

    impl std::error::Error for RecvError {}
}

struct State {
    version: u64,
    senders: usize,
    receivers: usize,
    rx_wakers: BTreeMap<u64, Waker>,
    closed_wakers: Vec<Waker>,
    next_rx_id: u64,
}

struct Shared<T> {
    /// Auto traits as tokio's (see `crate::util::NoUnwindSafety`).
    _unwind: crate::util::NoUnwindSafety,
    value: StdRwLock<T>,
    state: StdMutex<State>,
}

impl<T: fmt::Debug> fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = super::lock(&self.state);
        f.debug_struct("Shared")
            .field("value", &self.value)
            .field("version", &st.version)
            .finish()
    }
}

impl<T> Shared<T> {
    fn read(&self) -> RwLockReadGuard<'_, T> {
        self.value.read().unwrap_or_else(|e| e.into_inner())
    }

    fn bump_and_wake(&self) {
        let wakers: Vec<Waker> = {
            let mut st = super::lock(&self.state);
            st.version += 1;
            std::mem::take(&mut st.rx_wakers).into_values().collect()
        };
        for w in wakers {
            w.wake();
        }
    }
}

/// Reads the latest value.
#[derive(Debug)]
pub struct Receiver<T> {
    shared: Arc<Shared<T>>,
    version: u64,
    id: u64,
}

/// Sets the value.
#[derive(Debug)]
pub struct Sender<T> {
    shared: Arc<Shared<T>>,
}

/// A read lock on the value; hold it briefly (a send waits for it).
pub struct Ref<'a, T> {
    /// Auto traits as tokio's (see `crate::util::NoUnwindSafety`).
    _unwind: crate::util::NoUnwindSafety,
    inner: RwLockReadGuard<'a, T>,
    has_changed: bool,
}

impl<'a, T> Ref<'a, T> {
    /// Whether this value was new to the receiver when it borrowed it.
    pub fn has_changed(&self) -> bool {
        self.has_changed
    }
}

impl<T> ops::Deref for Ref<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.inner
    }
}

impl<T: fmt::Debug> fmt::Debug for Ref<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

/// A channel holding `init`.
pub fn channel<T>(init: T) -> (Sender<T>, Receiver<T>) {
    let tx = Sender::new(init);
    let rx = tx.subscribe();
    (tx, rx)
}

fn new_receiver<T>(shared: &Arc<Shared<T>>, version: Option<u64>) -> Receiver<T> {
    let mut st = super::lock(&shared.state);
    st.receivers += 1;
    let id = st.next_rx_id;
    st.next_rx_id += 1;
    Receiver {
        shared: shared.clone(),
        version: version.unwrap_or(st.version),
        id,
    }
}

impl<T> Receiver<T> {
    /// The latest value, without marking it seen.
    pub fn borrow(&self) -> Ref<'_, T> {
        let inner = self.shared.read();
        let version = super::lock(&self.shared.state).version;
        Ref {
            _unwind: std::marker::PhantomData,
            inner,
            has_changed: self.version != version,
        }
    }

    /// The latest value, marking it seen.
    pub fn borrow_and_update(&mut self) -> Ref<'_, T> {
        let inner = self.shared.read();
        let version = super::lock(&self.shared.state).version;
        let has_changed = self.version != version;
        self.version = version;
        Ref {
            _unwind: std::marker::PhantomData,
            inner,
            has_changed,
        }
    }

    /// Whether a value newer than the last seen exists.
    ///
    /// # Errors
    /// When every sender is gone.
    pub fn has_changed(&self) -> Result<bool, error::RecvError> {
        let st = super::lock(&self.shared.state);
        if st.senders == 0 {
            return Err(error::RecvError(()));
        }
        Ok(self.version != st.version)
    }

    /// Whether every sender is gone.
    pub fn is_closed(&self) -> bool {
        super::lock(&self.shared.state).senders == 0
    }

    /// Marks the current value unseen.
    pub fn mark_changed(&mut self) {
        // Versions only grow, so this one is never current again.
        self.version = self.version.wrapping_sub(1);
    }

    /// Marks the current value seen.
    pub fn mark_unchanged(&mut self) {
        self.version = super::lock(&self.shared.state).version;
    }

    async fn changed_inner(&mut self) -> Result<(), error::RecvError> {
        std::future::poll_fn(|cx| {
            if super::budget(cx).is_pending() {
                return Poll::Pending;
            }
            let mut st = super::lock(&self.shared.state);
            if st.version != self.version {
                self.version = st.version;
                return Poll::Ready(Ok(()));
            }
            if st.senders == 0 {
                return Poll::Ready(Err(error::RecvError(())));
            }
            st.rx_wakers.insert(self.id, cx.waker().clone());
            crate::util::note_wait(
                "watch::Receiver::changed",
                sim_runtime::WaitDetail::None,
                None,
            );
            Poll::Pending
        })
        .await
    }

    /// Waits for a value newer than the last seen, and marks it seen.
    /// Cancel-safe.
    ///
    /// # Errors
    /// When every sender is gone and nothing new remains.
    pub async fn changed(&mut self) -> Result<(), error::RecvError> {
        self.changed_inner().await
    }

    /// Waits until the value satisfies `f` (checking the current value
    /// first), marks it seen and returns it.
    ///
    /// # Errors
    /// When every sender is gone before a value satisfies `f`.
    pub async fn wait_for(
        &mut self,
        mut f: impl FnMut(&T) -> bool,
    ) -> Result<Ref<'_, T>, error::RecvError> {
        // A unit of budget, so a loop around it still yields.
        crate::task::consume_budget().await;
        let mut closed = false;
        // Bounded by the changes of the value: each turn sees a new version
        // or ends.
        let has_changed = loop {
            {
                let inner = self.shared.read();
                let version = super::lock(&self.shared.state).version;
                let has_changed = self.version != version;
                self.version = version;
                if (!closed || has_changed) && f(&inner) {
                    break has_changed;
                }
            }
            if closed {
                return Err(error::RecvError(()));
            }
            closed = self.changed_inner().await.is_err();
        };
        // Nothing runs between the check and this read: it is the same value.
        Ok(Ref {
            _unwind: std::marker::PhantomData,
            inner: self.shared.read(),
            has_changed,
        })
    }

    /// Whether both receivers read the same channel.
    pub fn same_channel(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }
}

impl<T> Clone for Receiver<T> {
    fn clone(&self) -> Self {
        new_receiver(&self.shared, Some(self.version))
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let wakers = {
            let mut st = super::lock(&self.shared.state);
            st.rx_wakers.remove(&self.id);
            st.receivers -= 1;
            if st.receivers == 0 {
                std::mem::take(&mut st.closed_wakers)
            } else {
                Vec::new()
            }
        };
        for w in wakers {
            w.wake();
        }
    }
}

impl<T> Sender<T> {
    /// A sender holding `init`, with no receiver yet.
    pub fn new(init: T) -> Self {
        Sender {
            shared: Arc::new(Shared {
                _unwind: std::marker::PhantomData,
                value: StdRwLock::new(init),
                state: StdMutex::new(State {
                    version: 0,
                    senders: 1,
                    receivers: 0,
                    rx_wakers: BTreeMap::new(),
                    closed_wakers: Vec::new(),
                    next_rx_id: 1,
                }),
            }),
        }
    }

    /// Sets the value and notifies receivers.
    ///
    /// # Errors
    /// The value, when no receiver is alive.
    pub fn send(&self, value: T) -> Result<(), error::SendError<T>> {
        if super::lock(&self.shared.state).receivers == 0 {
            return Err(error::SendError(value));
        }
        self.send_replace(value);
        Ok(())
    }

    /// Changes the value in place and notifies receivers, even with none
    /// alive.
    pub fn send_modify<F>(&self, modify: F)
    where
        F: FnOnce(&mut T),
    {
        self.send_if_modified(|value| {
            modify(value);
            true
        });
    }

    /// Changes the value in place; notifies receivers only if `modify`
    /// returns true. Returns what `modify` returned.
    pub fn send_if_modified<F>(&self, modify: F) -> bool
    where
        F: FnOnce(&mut T) -> bool,
    {
        let modified = {
            let mut value = self.shared.value.write().unwrap_or_else(|e| e.into_inner());
            modify(&mut value)
        };
        if modified {
            self.shared.bump_and_wake();
        }
        modified
    }

    /// Replaces the value, notifies receivers (even with none alive), and
    /// returns the old value.
    pub fn send_replace(&self, mut value: T) -> T {
        {
            let mut current = self.shared.value.write().unwrap_or_else(|e| e.into_inner());
            std::mem::swap(&mut *current, &mut value);
        }
        self.shared.bump_and_wake();
        value
    }

    /// The current value.
    pub fn borrow(&self) -> Ref<'_, T> {
        Ref {
            _unwind: std::marker::PhantomData,
            inner: self.shared.read(),
            has_changed: false,
        }
    }

    /// Whether no receiver is alive.
    pub fn is_closed(&self) -> bool {
        self.receiver_count() == 0
    }

    /// Waits until no receiver is alive.
    pub async fn closed(&self) {
        std::future::poll_fn(|cx| {
            // A unit of budget, so a loop around it still yields.
            std::task::ready!(super::budget(cx));
            let mut st = super::lock(&self.shared.state);
            if st.receivers == 0 {
                Poll::Ready(())
            } else {
                st.closed_wakers.push(cx.waker().clone());
                crate::util::note_wait(
                    "watch::Sender::closed",
                    sim_runtime::WaitDetail::None,
                    None,
                );
                Poll::Pending
            }
        })
        .await
    }

    /// A new receiver; the current value counts as seen.
    pub fn subscribe(&self) -> Receiver<T> {
        new_receiver(&self.shared, None)
    }

    /// How many receivers are alive.
    pub fn receiver_count(&self) -> usize {
        super::lock(&self.shared.state).receivers
    }

    /// How many senders are alive.
    pub fn sender_count(&self) -> usize {
        super::lock(&self.shared.state).senders
    }

    /// Whether both senders feed the same channel.
    pub fn same_channel(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        super::lock(&self.shared.state).senders += 1;
        Sender {
            shared: self.shared.clone(),
        }
    }
}

impl<T: Default> Default for Sender<T> {
    fn default() -> Self {
        Self::new(T::default())
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let wakers: Vec<Waker> = {
            let mut st = super::lock(&self.shared.state);
            st.senders -= 1;
            if st.senders > 0 {
                return;
            }
            std::mem::take(&mut st.rx_wakers).into_values().collect()
        };
        for w in wakers {
            w.wake();
        }
    }
}
