//! What a pending task waits on, as the primitive it waits in notes it
//! (`Core::note_wait`): kept per task for the deadlock, time-limit,
//! step-limit and hang reports. Plain data: noting costs a few stores.

/// What a pending task waits on.
#[derive(Clone, Copy, Debug)]
pub struct WaitNote {
    /// The primitive and the call (`oneshot::Receiver`, `sleep`,
    /// `mpsc::Receiver::recv`, `TcpStream read`).
    pub what: &'static str,
    /// What it is about.
    pub detail: WaitDetail,
    /// Where the primitive was made or the call was written (a channel's
    /// `channel()`, a `sleep(...)`, a `notified()`), when known.
    pub site: Option<&'static std::panic::Location<'static>>,
}

/// The detail of a [`WaitNote`].
#[derive(Clone, Copy, Debug)]
pub enum WaitDetail {
    /// Nothing more.
    None,
    /// A deadline, in ns of true virtual time.
    UntilNs(u64),
    /// Another task, by id (a `JoinHandle`).
    Task(u64),
    /// A connection or socket: its local and peer addresses (the peer is
    /// the local one for a listener or an unconnected socket).
    Conn {
        /// The local address.
        local: std::net::SocketAddr,
        /// The peer's.
        peer: std::net::SocketAddr,
    },
}

impl WaitNote {
    /// "on `what` detail (site)", and how many other waits the same poll
    /// noted (`more`), for reports.
    pub fn describe(&self, more: u32) -> String {
        let detail = match self.detail {
            WaitDetail::None => String::new(),
            WaitDetail::UntilNs(ns) => {
                format!(" until {}.{:09}s", ns / 1_000_000_000, ns % 1_000_000_000)
            }
            WaitDetail::Task(id) => format!(" of task {id}"),
            WaitDetail::Conn { local, peer } if local == peer => format!(" on {local}"),
            WaitDetail::Conn { local, peer } => format!(" on {local}>{peer}"),
        };
        let site = self.site.map_or(String::new(), |l| {
            format!(" ({}:{}:{})", l.file(), l.line(), l.column())
        });
        let more = match more {
            0 => String::new(),
            1 => " (and 1 other wait, as in a select!)".to_string(),
            n => format!(" (and {n} other waits, as in a select!)"),
        };
        format!("on {}{detail}{site}{more}", self.what)
    }
}
