//! The auto traits of tokio's public types, checked at compile time: each
//! type is `Send`, `Sync`, `Unpin`, `UnwindSafe` and `RefUnwindSafe` exactly
//! where tokio's is (in the plain build, this is tokio's own), so code that
//! moves a value across threads or through `catch_unwind` compiles against
//! the facade exactly when it does against tokio. Generic types are taken at
//! `u8` and `'static`.
#![allow(dead_code)]

use std::panic::{RefUnwindSafe, UnwindSafe};

/// Compiles only if `$t` implements each trait.
macro_rules! is {
    ($t:ty: $($tr:path),+) => {
        const _: fn() = || {
            fn check<T: ?Sized $(+ $tr)+>() {}
            check::<$t>();
        };
    };
}

/// Compiles only if `$t` does not implement `$tr`: with the impl, the call
/// would be ambiguous between the two blanket impls.
macro_rules! is_not {
    ($t:ty: $tr:path) => {
        const _: fn() = || {
            trait Ambiguous<A> {
                fn item() {}
            }
            impl<T: ?Sized> Ambiguous<()> for T {}
            struct Invalid;
            impl<T: ?Sized + $tr> Ambiguous<Invalid> for T {}
            let _ = <$t as Ambiguous<_>>::item;
        };
    };
}

// tokio::fs::File
is!(tokio::fs::File: Send, Sync, Unpin);
is_not!(tokio::fs::File: UnwindSafe);
is_not!(tokio::fs::File: RefUnwindSafe);
// tokio::fs::ReadDir
is!(tokio::fs::ReadDir: Send, Sync, Unpin);
is_not!(tokio::fs::ReadDir: UnwindSafe);
is_not!(tokio::fs::ReadDir: RefUnwindSafe);
// tokio::io::DuplexStream
is!(tokio::io::DuplexStream: Send, Sync, Unpin);
is_not!(tokio::io::DuplexStream: UnwindSafe);
is_not!(tokio::io::DuplexStream: RefUnwindSafe);
// tokio::io::unix::AsyncFd
is!(tokio::io::unix::AsyncFd<std::os::unix::io::RawFd>: Send, Sync, Unpin);
is_not!(tokio::io::unix::AsyncFd<std::os::unix::io::RawFd>: UnwindSafe);
is_not!(tokio::io::unix::AsyncFd<std::os::unix::io::RawFd>: RefUnwindSafe);
// tokio::io::unix::AsyncFdReadyGuard
is!(tokio::io::unix::AsyncFdReadyGuard<'static, std::os::unix::io::RawFd>: Send, Sync, Unpin);
is_not!(tokio::io::unix::AsyncFdReadyGuard<'static, std::os::unix::io::RawFd>: UnwindSafe);
is_not!(tokio::io::unix::AsyncFdReadyGuard<'static, std::os::unix::io::RawFd>: RefUnwindSafe);
// tokio::io::unix::AsyncFdReadyMutGuard
is!(tokio::io::unix::AsyncFdReadyMutGuard<'static, std::os::unix::io::RawFd>: Send, Sync, Unpin);
is_not!(tokio::io::unix::AsyncFdReadyMutGuard<'static, std::os::unix::io::RawFd>: UnwindSafe);
is_not!(tokio::io::unix::AsyncFdReadyMutGuard<'static, std::os::unix::io::RawFd>: RefUnwindSafe);
// tokio::process::Child
is!(tokio::process::Child: Send, Sync, Unpin);
is_not!(tokio::process::Child: UnwindSafe);
is_not!(tokio::process::Child: RefUnwindSafe);
// tokio::runtime::EnterGuard
is!(tokio::runtime::EnterGuard<'static>: Sync, Unpin);
is_not!(tokio::runtime::EnterGuard<'static>: Send);
is_not!(tokio::runtime::EnterGuard<'static>: UnwindSafe);
is_not!(tokio::runtime::EnterGuard<'static>: RefUnwindSafe);
// tokio::signal::unix::Signal
is!(tokio::signal::unix::Signal: Send, Sync, Unpin);
is_not!(tokio::signal::unix::Signal: UnwindSafe);
is_not!(tokio::signal::unix::Signal: RefUnwindSafe);
// tokio::sync::Barrier
is!(tokio::sync::Barrier: Send, Sync, Unpin);
is_not!(tokio::sync::Barrier: UnwindSafe);
is_not!(tokio::sync::Barrier: RefUnwindSafe);
// tokio::sync::MappedMutexGuard
is!(tokio::sync::MappedMutexGuard<'static, u8>: Send, Sync, Unpin);
is_not!(tokio::sync::MappedMutexGuard<'static, u8>: UnwindSafe);
is_not!(tokio::sync::MappedMutexGuard<'static, u8>: RefUnwindSafe);
// tokio::sync::Mutex
is!(tokio::sync::Mutex<u8>: Send, Sync, Unpin);
is_not!(tokio::sync::Mutex<u8>: UnwindSafe);
is_not!(tokio::sync::Mutex<u8>: RefUnwindSafe);
// tokio::sync::MutexGuard
is!(tokio::sync::MutexGuard<'static, u8>: Send, Sync, Unpin);
is_not!(tokio::sync::MutexGuard<'static, u8>: UnwindSafe);
is_not!(tokio::sync::MutexGuard<'static, u8>: RefUnwindSafe);
// tokio::sync::OnceCell
is!(tokio::sync::OnceCell<u8>: Send, Sync, Unpin);
is_not!(tokio::sync::OnceCell<u8>: UnwindSafe);
is_not!(tokio::sync::OnceCell<u8>: RefUnwindSafe);
// tokio::sync::OwnedSemaphorePermit
is!(tokio::sync::OwnedSemaphorePermit: Send, Sync, Unpin);
is_not!(tokio::sync::OwnedSemaphorePermit: UnwindSafe);
is_not!(tokio::sync::OwnedSemaphorePermit: RefUnwindSafe);
// tokio::sync::RwLock
is!(tokio::sync::RwLock<u8>: Send, Sync, Unpin);
is_not!(tokio::sync::RwLock<u8>: UnwindSafe);
is_not!(tokio::sync::RwLock<u8>: RefUnwindSafe);
// tokio::sync::RwLockMappedWriteGuard
is!(tokio::sync::RwLockMappedWriteGuard<'static, u8>: Send, Sync, Unpin);
is_not!(tokio::sync::RwLockMappedWriteGuard<'static, u8>: UnwindSafe);
is_not!(tokio::sync::RwLockMappedWriteGuard<'static, u8>: RefUnwindSafe);
// tokio::sync::RwLockReadGuard
is!(tokio::sync::RwLockReadGuard<'static, u8>: Send, Sync, Unpin);
is_not!(tokio::sync::RwLockReadGuard<'static, u8>: UnwindSafe);
is_not!(tokio::sync::RwLockReadGuard<'static, u8>: RefUnwindSafe);
// tokio::sync::RwLockWriteGuard
is!(tokio::sync::RwLockWriteGuard<'static, u8>: Send, Sync, Unpin);
is_not!(tokio::sync::RwLockWriteGuard<'static, u8>: UnwindSafe);
is_not!(tokio::sync::RwLockWriteGuard<'static, u8>: RefUnwindSafe);
// tokio::sync::Semaphore
is!(tokio::sync::Semaphore: Send, Sync, Unpin);
is_not!(tokio::sync::Semaphore: UnwindSafe);
is_not!(tokio::sync::Semaphore: RefUnwindSafe);
// tokio::sync::SemaphorePermit
is!(tokio::sync::SemaphorePermit<'static>: Send, Sync, Unpin);
is_not!(tokio::sync::SemaphorePermit<'static>: UnwindSafe);
is_not!(tokio::sync::SemaphorePermit<'static>: RefUnwindSafe);
// tokio::sync::Notify
is!(tokio::sync::Notify: Send, Sync, Unpin, UnwindSafe, RefUnwindSafe);
// tokio::sync::broadcast::Receiver
is!(tokio::sync::broadcast::Receiver<u8>: Send, Sync, Unpin);
is_not!(tokio::sync::broadcast::Receiver<u8>: UnwindSafe);
is_not!(tokio::sync::broadcast::Receiver<u8>: RefUnwindSafe);
// tokio::sync::broadcast::Sender
is!(tokio::sync::broadcast::Sender<u8>: Send, Sync, Unpin);
is_not!(tokio::sync::broadcast::Sender<u8>: UnwindSafe);
is_not!(tokio::sync::broadcast::Sender<u8>: RefUnwindSafe);
// tokio::sync::broadcast::WeakSender
is!(tokio::sync::broadcast::WeakSender<u8>: Send, Sync, Unpin);
is_not!(tokio::sync::broadcast::WeakSender<u8>: UnwindSafe);
is_not!(tokio::sync::broadcast::WeakSender<u8>: RefUnwindSafe);
// tokio::task::futures::TaskLocalFuture: never Unpin, whatever the future
is!(tokio::task::futures::TaskLocalFuture<u8, std::future::Ready<u8>>: Send, Sync);
is_not!(tokio::task::futures::TaskLocalFuture<u8, std::future::Ready<u8>>: Unpin);
// tokio::sync::futures::Notified
is!(tokio::sync::futures::Notified<'static>: Send, Sync);
is_not!(tokio::sync::futures::Notified<'static>: Unpin);
is_not!(tokio::sync::futures::Notified<'static>: UnwindSafe);
is_not!(tokio::sync::futures::Notified<'static>: RefUnwindSafe);
// tokio::sync::futures::OwnedNotified
is!(tokio::sync::futures::OwnedNotified: Send, Sync);
is_not!(tokio::sync::futures::OwnedNotified: Unpin);
is_not!(tokio::sync::futures::OwnedNotified: UnwindSafe);
is_not!(tokio::sync::futures::OwnedNotified: RefUnwindSafe);
// tokio::sync::oneshot::Receiver
is!(tokio::sync::oneshot::Receiver<u8>: Send, Sync, Unpin);
is_not!(tokio::sync::oneshot::Receiver<u8>: UnwindSafe);
is_not!(tokio::sync::oneshot::Receiver<u8>: RefUnwindSafe);
// tokio::sync::oneshot::Sender
is!(tokio::sync::oneshot::Sender<u8>: Send, Sync, Unpin);
is_not!(tokio::sync::oneshot::Sender<u8>: UnwindSafe);
is_not!(tokio::sync::oneshot::Sender<u8>: RefUnwindSafe);
// tokio::sync::watch::Receiver
is!(tokio::sync::watch::Receiver<u8>: Send, Sync, Unpin);
is_not!(tokio::sync::watch::Receiver<u8>: UnwindSafe);
is_not!(tokio::sync::watch::Receiver<u8>: RefUnwindSafe);
// tokio::sync::watch::Ref
is!(tokio::sync::watch::Ref<'static, u8>: Sync, Unpin);
is_not!(tokio::sync::watch::Ref<'static, u8>: Send);
is_not!(tokio::sync::watch::Ref<'static, u8>: UnwindSafe);
is_not!(tokio::sync::watch::Ref<'static, u8>: RefUnwindSafe);
// tokio::sync::watch::Sender
is!(tokio::sync::watch::Sender<u8>: Send, Sync, Unpin);
is_not!(tokio::sync::watch::Sender<u8>: UnwindSafe);
is_not!(tokio::sync::watch::Sender<u8>: RefUnwindSafe);
// tokio::sync::mpsc::Sender
is!(tokio::sync::mpsc::Sender<u8>: Send, Sync, Unpin, UnwindSafe, RefUnwindSafe);
// tokio::sync::mpsc::Receiver
is!(tokio::sync::mpsc::Receiver<u8>: Send, Sync, Unpin, UnwindSafe, RefUnwindSafe);
// tokio::task::JoinError
is!(tokio::task::JoinError: Send, Sync, Unpin);
is_not!(tokio::task::JoinError: UnwindSafe);
is_not!(tokio::task::JoinError: RefUnwindSafe);
// tokio::task::JoinSet
is!(tokio::task::JoinSet<u8>: Send, Sync, Unpin);
is_not!(tokio::task::JoinSet<u8>: UnwindSafe);
is_not!(tokio::task::JoinSet<u8>: RefUnwindSafe);
// tokio::task::JoinHandle
is!(tokio::task::JoinHandle<u8>: Send, Sync, Unpin, UnwindSafe, RefUnwindSafe);
// tokio::task::LocalSet
is!(tokio::task::LocalSet: Unpin);
is_not!(tokio::task::LocalSet: Send);
is_not!(tokio::task::LocalSet: Sync);
is_not!(tokio::task::LocalSet: UnwindSafe);
is_not!(tokio::task::LocalSet: RefUnwindSafe);
// tokio::time::Interval
is!(tokio::time::Interval: Send, Sync, Unpin);
is_not!(tokio::time::Interval: UnwindSafe);
is_not!(tokio::time::Interval: RefUnwindSafe);
// tokio::time::Sleep
is!(tokio::time::Sleep: Send, Sync);
is_not!(tokio::time::Sleep: Unpin);
is_not!(tokio::time::Sleep: UnwindSafe);
is_not!(tokio::time::Sleep: RefUnwindSafe);
// tokio::time::Timeout
is!(tokio::time::Timeout<std::future::Ready<u8>>: Send, Sync);
// It holds a `Sleep`, which is `!Unpin`.
is_not!(tokio::time::Timeout<std::future::Ready<u8>>: Unpin);
is_not!(tokio::time::Timeout<std::future::Ready<u8>>: UnwindSafe);
is_not!(tokio::time::Timeout<std::future::Ready<u8>>: RefUnwindSafe);
// tokio::runtime::Runtime
is!(tokio::runtime::Runtime: Send, Sync, Unpin, UnwindSafe, RefUnwindSafe);
// tokio::net::TcpStream
is!(tokio::net::TcpStream: Send, Sync, Unpin, UnwindSafe, RefUnwindSafe);

/// The assertions above are checked when this file compiles; one test so
/// the target runs in both builds.
#[test]
fn auto_traits_are_tokios() {}

/// A descriptor type that is `Send` but not `Sync` (as tokio's own
/// `async_send_sync` test's `YN`). The `_mut` futures of `AsyncFd` borrow
/// the `AsyncFd` uniquely, so they are `Send` exactly when it is, whether
/// or not it is `Sync`.
struct SendNotSync(std::cell::Cell<std::os::unix::io::RawFd>);

impl std::os::unix::io::AsRawFd for SendNotSync {
    fn as_raw_fd(&self) -> std::os::unix::io::RawFd {
        self.0.get()
    }
}

/// Compiles only if the value is `Send`.
fn require_send<T: Send>(_: &T) {}

fn async_fd_mut_futures_are_send(fd: &mut tokio::io::unix::AsyncFd<SendNotSync>) {
    require_send(&fd.readable_mut());
    require_send(&fd.writable_mut());
    require_send(&fd.ready_mut(tokio::io::Interest::READABLE));
}
