//! A collection of tasks, joined in the order they finish.

use super::{AbortHandle, Id, JoinError, JoinHandle, LocalSet};
use crate::runtime::Handle;
use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

/// Which entries may have finished, and who waits for the next one.
#[derive(Default)]
struct Notified {
    keys: VecDeque<usize>,
    waker: Option<Waker>,
}

struct EntryWaker {
    notified: Arc<Mutex<Notified>>,
    key: usize,
}

impl Wake for EntryWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let waker = {
            let mut n = self.notified.lock().unwrap_or_else(|e| e.into_inner());
            n.keys.push_back(self.key);
            n.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

struct Entry<T> {
    handle: JoinHandle<T>,
    waker: Waker,
}

/// A set of tasks spawned on a runtime, joined in the order they finish.
///
/// Dropping the set aborts every task in it.
pub struct JoinSet<T> {
    /// Auto traits as tokio's (see `crate::util::NoUnwindSafety`).
    _unwind: crate::util::NoUnwindSafety,
    entries: Vec<Option<Entry<T>>>,
    free: Vec<usize>,
    len: usize,
    notified: Arc<Mutex<Notified>>,
}

impl<T> JoinSet<T> {
    /// An empty set.
    pub fn new() -> Self {
        JoinSet {
            _unwind: std::marker::PhantomData,
            entries: Vec::new(),
            free: Vec::new(),
            len: 0,
            notified: Arc::new(Mutex::new(Notified::default())),
        }
    }

    /// How many tasks are in the set.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<T: 'static> JoinSet<T> {
    /// A builder to name the next task.
    pub fn build_task(&mut self) -> Builder<'_, T> {
        Builder {
            builder: super::Builder::new(),
            joinset: self,
        }
    }

    fn insert(&mut self, handle: JoinHandle<T>) -> AbortHandle {
        let abort = handle.abort_handle();
        let key = self.free.pop().unwrap_or_else(|| {
            self.entries.push(None);
            self.entries.len() - 1
        });
        let waker = Waker::from(Arc::new(EntryWaker {
            notified: self.notified.clone(),
            key,
        }));
        self.entries[key] = Some(Entry { handle, waker });
        self.len += 1;
        // Check it once, which registers its waker.
        self.notified
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .keys
            .push_back(key);
        abort
    }

    /// Spawns a task into the set.
    #[track_caller]
    pub fn spawn<F>(&mut self, task: F) -> AbortHandle
    where
        F: Future<Output = T> + Send + 'static,
        T: Send,
    {
        self.insert(crate::spawn(task))
    }

    /// Spawns a task onto `handle`'s runtime, into the set.
    #[track_caller]
    pub fn spawn_on<F>(&mut self, task: F, handle: &Handle) -> AbortHandle
    where
        F: Future<Output = T> + Send + 'static,
        T: Send,
    {
        self.insert(handle.spawn(task))
    }

    /// Spawns a `!Send` task onto the current local set, into the set.
    #[track_caller]
    pub fn spawn_local<F>(&mut self, task: F) -> AbortHandle
    where
        F: Future<Output = T> + 'static,
    {
        self.insert(super::spawn_local(task))
    }

    /// Spawns a `!Send` task onto `local_set`, into the set.
    #[track_caller]
    pub fn spawn_local_on<F>(&mut self, task: F, local_set: &LocalSet) -> AbortHandle
    where
        F: Future<Output = T> + 'static,
    {
        self.insert(local_set.spawn_local(task))
    }

    /// Runs a blocking closure as a scheduled step, into the set.
    #[track_caller]
    pub fn spawn_blocking<F>(&mut self, f: F) -> AbortHandle
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send,
    {
        self.insert(super::spawn_blocking(f))
    }

    /// Runs a blocking closure on `handle`'s runtime, into the set.
    #[track_caller]
    pub fn spawn_blocking_on<F>(&mut self, f: F, handle: &Handle) -> AbortHandle
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send,
    {
        self.insert(handle.spawn_blocking(f))
    }

    /// Waits for the next task to finish; `None` when the set is empty.
    pub async fn join_next(&mut self) -> Option<Result<T, JoinError>> {
        std::future::poll_fn(|cx| self.poll_join_next(cx)).await
    }

    /// As [`JoinSet::join_next`], with the task's id.
    pub async fn join_next_with_id(&mut self) -> Option<Result<(Id, T), JoinError>> {
        std::future::poll_fn(|cx| self.poll_join_next_with_id(cx)).await
    }

    /// A task that has already finished, without waiting.
    pub fn try_join_next(&mut self) -> Option<Result<T, JoinError>> {
        self.try_join_next_with_id().map(|r| r.map(|(_, v)| v))
    }

    /// As [`JoinSet::try_join_next`], with the task's id.
    pub fn try_join_next_with_id(&mut self) -> Option<Result<(Id, T), JoinError>> {
        // Check every entry once, in key order: finished tasks first come
        // first. Bounded by the number of entries.
        let noop = Waker::noop();
        let mut cx = Context::from_waker(noop);
        for key in 0..self.entries.len() {
            let finished = match &self.entries[key] {
                Some(entry) => entry.handle.is_finished(),
                None => false,
            };
            if finished {
                if let Poll::Ready(result) = self.poll_entry(key, &mut cx) {
                    return Some(result);
                }
            }
        }
        None
    }

    /// Aborts every task and waits for all of them to finish.
    pub async fn shutdown(&mut self) {
        self.abort_all();
        while self.join_next().await.is_some() {}
    }

    /// Waits for every task and returns their outputs in the order they
    /// finished.
    ///
    /// # Panics
    /// If a task panicked, the panic resumes here; the other tasks are
    /// aborted when the set drops.
    pub async fn join_all(mut self) -> Vec<T> {
        let mut output = Vec::with_capacity(self.len());
        while let Some(result) = self.join_next().await {
            match result {
                Ok(value) => output.push(value),
                Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
                Err(error) => panic!("{error}"),
            }
        }
        output
    }

    /// Aborts every task in the set; they stay in it until joined.
    pub fn abort_all(&mut self) {
        for entry in self.entries.iter().flatten() {
            entry.handle.abort();
        }
    }

    /// Removes every task from the set without aborting them.
    pub fn detach_all(&mut self) {
        self.entries.clear();
        self.free.clear();
        self.len = 0;
        self.notified
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .keys
            .clear();
    }

    /// Polls for the next finished task.
    pub fn poll_join_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<T, JoinError>>> {
        self.poll_join_next_with_id(cx)
            .map(|r| r.map(|r| r.map(|(_, v)| v)))
    }

    /// Polls for the next finished task, with its id.
    pub fn poll_join_next_with_id(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<(Id, T), JoinError>>> {
        if self.len == 0 {
            return Poll::Ready(None);
        }
        let spent = sim_runtime::context::with_current(|core| core.poll_budget(cx));
        if let Some(Poll::Pending) = spent {
            return Poll::Pending;
        }
        // Each queued key is checked at most once per call.
        let queued = {
            let mut n = self.notified.lock().unwrap_or_else(|e| e.into_inner());
            n.waker = Some(cx.waker().clone());
            n.keys.len()
        };
        for _ in 0..queued {
            let key = self
                .notified
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .keys
                .pop_front();
            let Some(key) = key else { break };
            if let Poll::Ready(result) = self.poll_entry(key, cx) {
                return Poll::Ready(Some(result));
            }
        }
        Poll::Pending
    }

    fn poll_entry(
        &mut self,
        key: usize,
        _cx: &mut Context<'_>,
    ) -> Poll<Result<(Id, T), JoinError>> {
        let Some(entry) = self.entries.get_mut(key).and_then(Option::as_mut) else {
            return Poll::Pending;
        };
        let waker = entry.waker.clone();
        let mut entry_cx = Context::from_waker(&waker);
        match entry.handle.poll_unbudgeted(&mut entry_cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(result) => {
                let entry = self.entries[key].take().expect("checked above");
                let id = entry.handle.id();
                self.free.push(key);
                self.len -= 1;
                Poll::Ready(result.map(|v| (id, v)))
            }
        }
    }
}

impl<T> Drop for JoinSet<T> {
    fn drop(&mut self) {
        for entry in self.entries.iter().flatten() {
            entry.handle.abort();
        }
    }
}

impl<T> fmt::Debug for JoinSet<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinSet").field("len", &self.len).finish()
    }
}

impl<T> Default for JoinSet<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T, F> std::iter::FromIterator<F> for JoinSet<T>
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    #[track_caller]
    fn from_iter<I: IntoIterator<Item = F>>(iter: I) -> Self {
        let mut set = Self::new();
        set.extend(iter);
        set
    }
}

impl<T, F> std::iter::Extend<F> for JoinSet<T>
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    #[track_caller]
    fn extend<I: IntoIterator<Item = F>>(&mut self, iter: I) {
        for task in iter {
            self.spawn(task);
        }
    }
}

/// Names a task before spawning it into a [`JoinSet`].
#[must_use = "builders do nothing unless used to spawn a task"]
pub struct Builder<'a, T> {
    joinset: &'a mut JoinSet<T>,
    builder: super::Builder<'a>,
}

impl<'a, T: 'static> Builder<'a, T> {
    /// Names the task.
    pub fn name(self, name: &'a str) -> Self {
        let builder = self.builder.name(name);
        Self { builder, ..self }
    }

    /// Spawns onto the current runtime.
    ///
    /// # Errors
    /// Never in a simulation.
    #[track_caller]
    pub fn spawn<F>(self, future: F) -> std::io::Result<AbortHandle>
    where
        F: Future<Output = T> + Send + 'static,
        T: Send,
    {
        Ok(self.joinset.insert(self.builder.spawn(future)?))
    }

    /// Spawns onto `handle`'s runtime.
    ///
    /// # Errors
    /// Never in a simulation.
    #[track_caller]
    pub fn spawn_on<F>(self, future: F, handle: &Handle) -> std::io::Result<AbortHandle>
    where
        F: Future<Output = T> + Send + 'static,
        T: Send,
    {
        Ok(self.joinset.insert(self.builder.spawn_on(future, handle)?))
    }

    /// Runs a blocking closure as a scheduled step.
    ///
    /// # Errors
    /// Never in a simulation.
    #[track_caller]
    pub fn spawn_blocking<F>(self, f: F) -> std::io::Result<AbortHandle>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send,
    {
        Ok(self.joinset.insert(self.builder.spawn_blocking(f)?))
    }

    /// Runs a blocking closure on `handle`'s runtime.
    ///
    /// # Errors
    /// Never in a simulation.
    #[track_caller]
    pub fn spawn_blocking_on<F>(self, f: F, handle: &Handle) -> std::io::Result<AbortHandle>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send,
    {
        Ok(self
            .joinset
            .insert(self.builder.spawn_blocking_on(f, handle)?))
    }

    /// Spawns a `!Send` task onto the current local set.
    ///
    /// # Errors
    /// Never in a simulation.
    #[track_caller]
    pub fn spawn_local<F>(self, future: F) -> std::io::Result<AbortHandle>
    where
        F: Future<Output = T> + 'static,
    {
        Ok(self.joinset.insert(self.builder.spawn_local(future)?))
    }

    /// Spawns a `!Send` task onto `local_set`.
    ///
    /// # Errors
    /// Never in a simulation.
    #[track_caller]
    pub fn spawn_local_on<F>(self, future: F, local_set: &LocalSet) -> std::io::Result<AbortHandle>
    where
        F: Future<Output = T> + 'static,
    {
        Ok(self
            .joinset
            .insert(self.builder.spawn_local_on(future, local_set)?))
    }
}

impl<T> fmt::Debug for Builder<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("join_set::Builder")
            .field("joinset", &self.joinset)
            .field("builder", &self.builder)
            .finish()
    }
}
