use super::JoinHandle;
use crate::runtime::Handle;
use std::future::Future;
use std::io;

/// Configures a task before spawning it (its name shows in the trace and in
/// deadlock reports).
#[derive(Default, Debug)]
pub struct Builder<'a> {
    name: Option<&'a str>,
}

impl<'a> Builder<'a> {
    /// A builder with no name.
    pub fn new() -> Builder<'a> {
        Builder::default()
    }

    /// Names the task.
    pub fn name(&self, name: &'a str) -> Builder<'a> {
        Builder { name: Some(name) }
    }

    /// Spawns onto the current runtime.
    ///
    /// # Errors
    /// Never in a simulation; the signature is tokio's.
    #[track_caller]
    pub fn spawn<Fut>(self, future: Fut) -> io::Result<JoinHandle<Fut::Output>>
    where
        Fut: Future + Send + 'static,
        Fut::Output: Send + 'static,
    {
        let location = std::panic::Location::caller();
        Ok(crate::util::with_runtime(|core| {
            super::spawn::spawn_at(core, future, self.name, "task", 0, location)
        }))
    }

    /// Spawns onto `handle`'s runtime.
    ///
    /// # Errors
    /// Never in a simulation.
    #[track_caller]
    pub fn spawn_on<Fut>(self, future: Fut, handle: &Handle) -> io::Result<JoinHandle<Fut::Output>>
    where
        Fut: Future + Send + 'static,
        Fut::Output: Send + 'static,
    {
        let location = std::panic::Location::caller();
        let core = handle.core();
        Ok(super::spawn::spawn_at(
            &core, future, self.name, "task", 0, location,
        ))
    }

    /// Spawns onto the current local set.
    ///
    /// # Errors
    /// Never in a simulation.
    ///
    /// # Panics
    /// Outside a local set.
    #[track_caller]
    pub fn spawn_local<Fut>(self, future: Fut) -> io::Result<JoinHandle<Fut::Output>>
    where
        Fut: Future + 'static,
        Fut::Output: 'static,
    {
        Ok(super::local::spawn_local_named(
            future,
            self.name,
            std::panic::Location::caller(),
        ))
    }

    /// Spawns onto a local set.
    ///
    /// # Errors
    /// Never in a simulation.
    #[track_caller]
    pub fn spawn_local_on<Fut>(
        self,
        future: Fut,
        local_set: &super::LocalSet,
    ) -> io::Result<JoinHandle<Fut::Output>>
    where
        Fut: Future + 'static,
        Fut::Output: 'static,
    {
        Ok(local_set.spawn_named(future, self.name, std::panic::Location::caller()))
    }

    /// Runs a blocking closure as a scheduled step.
    ///
    /// # Errors
    /// Never in a simulation.
    #[track_caller]
    pub fn spawn_blocking<Function, Output>(
        self,
        function: Function,
    ) -> io::Result<JoinHandle<Output>>
    where
        Function: FnOnce() -> Output + Send + 'static,
        Output: Send + 'static,
    {
        let location = std::panic::Location::caller();
        Ok(crate::util::with_runtime(|core| {
            super::spawn::spawn_at(
                core,
                super::BlockingTask::new(function),
                self.name,
                "blocking",
                0,
                location,
            )
        }))
    }

    /// Runs a blocking closure as a scheduled step of `handle`'s runtime.
    ///
    /// # Errors
    /// Never in a simulation.
    #[track_caller]
    pub fn spawn_blocking_on<Function, Output>(
        self,
        function: Function,
        handle: &Handle,
    ) -> io::Result<JoinHandle<Output>>
    where
        Function: FnOnce() -> Output + Send + 'static,
        Output: Send + 'static,
    {
        let location = std::panic::Location::caller();
        let core = handle.core();
        Ok(super::spawn::spawn_at(
            &core,
            super::BlockingTask::new(function),
            self.name,
            "blocking",
            0,
            location,
        ))
    }
}
