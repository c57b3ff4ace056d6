use super::{gid_t, pid_t, uid_t};

/// The credentials of a Unix socket's peer: the real user and group of the
/// process, and a simulated process id (the same in every run).
#[derive(Copy, Clone, Eq, PartialEq, Hash, Debug)]
pub struct UCred {
    pub(crate) pid: Option<pid_t>,
    pub(crate) uid: uid_t,
    pub(crate) gid: gid_t,
}

impl UCred {
    /// The user id.
    pub fn uid(&self) -> uid_t {
        self.uid
    }

    /// The group id.
    pub fn gid(&self) -> gid_t {
        self.gid
    }

    /// The process id: the process's own, as in tokio (both ends of a
    /// simulated Unix socket are in it), so it equals `std::process::id()`.
    pub fn pid(&self) -> Option<pid_t> {
        self.pid
    }
}

pub(crate) fn current() -> UCred {
    // SAFETY: getuid and getgid cannot fail.
    let (uid, gid) = unsafe { (libc_dep::getuid(), libc_dep::getgid()) };
    UCred {
        pid: Some(std::process::id() as pid_t),
        uid,
        gid,
    }
}
