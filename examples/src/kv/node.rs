//! A node: follower, candidate or leader, by Raft's rules.
//!
//! - A follower that hears from no leader for its election timeout (drawn
//!   in 300..600 ms) becomes a candidate: it votes for itself in a new term
//!   and asks the others. A majority of votes makes it leader.
//! - A vote is granted once per term, and only to a candidate whose log is
//!   at least as up to date (last term, then length) as the voter's.
//! - The leader appends a no-op, then sends each follower the entries it
//!   lacks (or a heartbeat) every 100 ms and on each new write. An entry is
//!   committed once a majority holds it and it is of the leader's term;
//!   only then is its write acknowledged.
//! - A higher term seen anywhere turns a node back into a follower.
//!
//! The durable state changes only under the node's lock, and each change
//! is on disk before the node acts on it. An error of the disk stops the
//! node (`serve` returns it): a node that cannot persist must not vote.

use crate::kv::observe;
use crate::kv::store::{Entry, Store};
use crate::kv::wire::{AppendReq, AppendResp, PutResp, VoteReq, VoteResp};
use std::collections::BTreeMap;
use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;
use tokio::sync::{watch, Mutex, Notify};
use tokio::task::JoinSet;
use tokio::time::Instant;

/// A node's configuration.
#[derive(Clone, Debug)]
pub struct Config {
    /// This node's index in `peers`.
    pub id: usize,
    /// Every node's `host:port`, this one's included, in the same order on
    /// every node.
    pub peers: Vec<String>,
    /// The node's write-ahead log.
    pub wal_path: PathBuf,
    /// Plants the bug: votes are granted without the log up-to-date check.
    pub planted_bug: bool,
}

/// How often the election timer looks.
const TICK: Duration = Duration::from_millis(20);
/// How often a leader sends heartbeats.
pub(crate) const HEARTBEAT: Duration = Duration::from_millis(100);
/// How long a write waits to commit before it is refused.
const COMMIT_WAIT: Duration = Duration::from_secs(1);
/// The most entries one append carries.
const BATCH_MAX: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Follower,
    Candidate,
    Leader,
}

pub(crate) struct Inner {
    store: Store,
    role: Role,
    leader: Option<usize>,
    commit: usize,
    applied: usize,
    data: BTreeMap<String, String>,
    heard: Instant,
    timeout: Duration,
    /// The leader's view of each follower: the next entry to send, and the
    /// length of log it is known to hold.
    next: Vec<usize>,
    matched: Vec<usize>,
}

/// Why a write or a read was not served.
pub(crate) enum Refusal {
    /// Not the leader; the leader it knows of, if any.
    NotLeader(Option<String>),
    /// The write did not commit in time, or the node lost its leadership.
    Unavailable,
    /// The disk failed: the node stops.
    Disk,
}

pub(crate) struct Node {
    pub(crate) config: Config,
    inner: Mutex<Inner>,
    commit_tx: watch::Sender<usize>,
    kick: Notify,
    fatal: StdMutex<Option<io::Error>>,
    fatal_notify: Notify,
    pub(crate) http: reqwest::Client,
}

fn election_timeout() -> Duration {
    Duration::from_millis(rand::random_range(300..600))
}

/// Opens a node's store, binds its port and starts its elections; the
/// HTTP service (`serve`, in the HTTP module) serves it.
///
/// # Errors
/// The disk's errors, and a port that cannot be bound.
pub(crate) async fn start(config: Config) -> io::Result<(Arc<Node>, tokio::net::TcpListener)> {
    let store = Store::open(&config.wal_path).await?;
    let port = config.peers[config.id]
        .rsplit_once(':')
        .and_then(|(_, port)| port.parse::<u16>().ok())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "peers are host:port"))?;
    let listener = tokio::net::TcpListener::bind(("0.0.0.0", port)).await?;
    let node = Arc::new(Node {
        http: reqwest::Client::new(),
        inner: Mutex::new(Inner {
            store,
            role: Role::Follower,
            leader: None,
            commit: 0,
            applied: 0,
            data: BTreeMap::new(),
            heard: Instant::now(),
            timeout: election_timeout(),
            next: Vec::new(),
            matched: Vec::new(),
        }),
        commit_tx: watch::channel(0).0,
        kick: Notify::new(),
        fatal: StdMutex::new(None),
        fatal_notify: Notify::new(),
        config,
    });
    node.publish_role(&*node.inner.lock().await);
    tokio::spawn(node.clone().elections());
    Ok((node, listener))
}

impl Node {
    /// Waits for the node to stop (its disk failed): why.
    pub(crate) async fn stopped(&self) -> io::Error {
        self.fatal_notify.notified().await;
        self.fatal
            .lock()
            .unwrap()
            .take()
            .unwrap_or_else(|| io::Error::other("stopped"))
    }

    fn majority(&self) -> usize {
        self.config.peers.len() / 2 + 1
    }

    fn others(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.config.peers.len()).filter(move |&p| p != self.config.id)
    }

    /// The disk failed: the node stops (it must not act on state it could
    /// not make durable).
    fn die(&self, error: io::Error) -> Refusal {
        self.fatal.lock().unwrap().get_or_insert(error);
        self.fatal_notify.notify_one();
        Refusal::Disk
    }

    fn publish_role(&self, inner: &Inner) {
        let role = match inner.role {
            Role::Follower => "follower",
            Role::Candidate => "candidate",
            Role::Leader => "leader",
        };
        observe!("role", format!("{role} {}", inner.store.term));
    }

    /// Turns to a follower of `term` (a higher term was seen).
    async fn step_down(&self, inner: &mut Inner, term: u64) -> Result<(), Refusal> {
        if term > inner.store.term {
            if let Err(e) = inner.store.set_vote(term, None).await {
                return Err(self.die(e));
            }
            inner.leader = None;
        }
        if inner.role != Role::Follower {
            inner.role = Role::Follower;
            inner.heard = Instant::now();
        }
        self.publish_role(inner);
        Ok(())
    }

    /// The election timer: a candidacy when no leader was heard in time.
    async fn elections(self: Arc<Self>) {
        loop {
            tokio::time::sleep(TICK).await;
            let due = {
                let inner = self.inner.lock().await;
                inner.role != Role::Leader && inner.heard.elapsed() >= inner.timeout
            };
            if due {
                self.clone().stand().await;
            }
        }
    }

    async fn stand(self: Arc<Self>) {
        let request = {
            let mut inner = self.inner.lock().await;
            let term = inner.store.term + 1;
            if let Err(e) = inner.store.set_vote(term, Some(self.config.id)).await {
                self.die(e);
                return;
            }
            inner.role = Role::Candidate;
            inner.leader = None;
            inner.heard = Instant::now();
            inner.timeout = election_timeout();
            self.publish_role(&inner);
            let (last_term, last_index) = inner.store.last();
            VoteReq {
                term,
                candidate: self.config.id,
                last_index,
                last_term,
            }
        };
        let mut calls = JoinSet::new();
        for peer in self.others() {
            let node = self.clone();
            let request = request.clone();
            calls
                .spawn(async move { node.call::<_, VoteResp>(peer, "/raft/vote", &request).await });
        }
        let mut votes = 1;
        while let Some(answer) = calls.join_next().await {
            let Ok(Some(answer)) = answer else { continue };
            if answer.term > request.term {
                let mut inner = self.inner.lock().await;
                let _ = self.step_down(&mut inner, answer.term).await;
                return;
            }
            if answer.granted {
                votes += 1;
                if votes >= self.majority() {
                    self.lead(request.term).await;
                    return;
                }
            }
        }
    }

    /// Won the election of `term`: leads, if still a candidate in it.
    async fn lead(self: Arc<Self>, term: u64) {
        {
            let mut inner = self.inner.lock().await;
            if inner.role != Role::Candidate || inner.store.term != term {
                return;
            }
            // A no-op of the new term, so that earlier entries commit.
            let index = inner.store.log.len();
            let noop = Entry {
                term,
                id: 0,
                key: String::new(),
                value: String::new(),
            };
            if let Err(e) = inner.store.put(index, noop).await {
                self.die(e);
                return;
            }
            let n = self.config.peers.len();
            let len = inner.store.log.len();
            inner.role = Role::Leader;
            inner.leader = Some(self.config.id);
            inner.next = vec![len; n];
            inner.matched = vec![0; n];
            inner.matched[self.config.id] = len;
            let ids: Vec<String> = inner
                .store
                .log
                .iter()
                .filter(|e| e.id != 0)
                .map(|e| e.id.to_string())
                .collect();
            observe!("leader", format!("{term} {}", ids.join(",")));
            self.publish_role(&inner);
        }
        for peer in self.others() {
            tokio::spawn(self.clone().replicate(peer, term));
        }
    }

    /// Sends `peer` what it lacks, while this node leads `term`.
    async fn replicate(self: Arc<Self>, peer: usize, term: u64) {
        loop {
            let request = {
                let inner = self.inner.lock().await;
                if inner.role != Role::Leader || inner.store.term != term {
                    return;
                }
                let next = inner.next[peer];
                AppendReq {
                    term,
                    leader: self.config.id,
                    prev_index: next,
                    prev_term: if next == 0 {
                        0
                    } else {
                        inner.store.log[next - 1].term
                    },
                    entries: inner.store.log[next..]
                        .iter()
                        .take(BATCH_MAX)
                        .cloned()
                        .collect(),
                    commit: inner.commit,
                }
            };
            let mut more = false;
            if let Some(answer) = self
                .call::<_, AppendResp>(peer, "/raft/append", &request)
                .await
            {
                let mut inner = self.inner.lock().await;
                if answer.term > inner.store.term {
                    let _ = self.step_down(&mut inner, answer.term).await;
                    return;
                }
                if inner.role != Role::Leader || inner.store.term != term {
                    return;
                }
                if answer.success {
                    inner.matched[peer] = inner.matched[peer].max(answer.matched);
                    inner.next[peer] = answer.matched;
                    self.advance_commit(&mut inner);
                } else {
                    inner.next[peer] = (inner.next[peer].saturating_sub(1)).min(answer.matched);
                }
                more = inner.next[peer] < inner.store.log.len();
            }
            if !more {
                let _ = tokio::time::timeout(HEARTBEAT, self.kick.notified()).await;
            }
        }
    }

    /// Commits what a majority holds, of the leader's own term.
    fn advance_commit(&self, inner: &mut Inner) {
        let term = inner.store.term;
        for n in (inner.commit + 1..=inner.store.log.len()).rev() {
            let holders = inner.matched.iter().filter(|&&m| m >= n).count();
            if holders >= self.majority() && inner.store.log[n - 1].term == term {
                inner.commit = n;
                break;
            }
        }
        self.apply(inner);
    }

    fn apply(&self, inner: &mut Inner) {
        while inner.applied < inner.commit {
            let entry = &inner.store.log[inner.applied];
            if entry.id != 0 {
                inner.data.insert(entry.key.clone(), entry.value.clone());
            }
            inner.applied += 1;
        }
        self.commit_tx.send_replace(inner.commit);
    }

    /// A candidate asks for this node's vote.
    pub(crate) async fn vote(&self, request: VoteReq) -> Result<VoteResp, Refusal> {
        let mut inner = self.inner.lock().await;
        if request.term > inner.store.term {
            self.step_down(&mut inner, request.term).await?;
        }
        let (last_term, last_index) = inner.store.last();
        let up_to_date = (request.last_term, request.last_index) >= (last_term, last_index);
        let free = inner.store.voted_for.is_none_or(|v| v == request.candidate);
        let granted =
            request.term == inner.store.term && free && (up_to_date || self.config.planted_bug);
        if granted {
            if let Err(e) = inner
                .store
                .set_vote(request.term, Some(request.candidate))
                .await
            {
                return Err(self.die(e));
            }
            inner.heard = Instant::now();
        }
        Ok(VoteResp {
            term: inner.store.term,
            granted,
        })
    }

    /// The leader sends entries (or a heartbeat).
    pub(crate) async fn append(&self, request: AppendReq) -> Result<AppendResp, Refusal> {
        let mut inner = self.inner.lock().await;
        if request.term < inner.store.term {
            return Ok(AppendResp {
                term: inner.store.term,
                success: false,
                matched: 0,
            });
        }
        if request.term > inner.store.term || inner.role != Role::Follower {
            self.step_down(&mut inner, request.term).await?;
        }
        inner.leader = Some(request.leader);
        inner.heard = Instant::now();
        let prev = request.prev_index;
        let log_len = inner.store.log.len();
        if prev > log_len || (prev > 0 && inner.store.log[prev - 1].term != request.prev_term) {
            return Ok(AppendResp {
                term: inner.store.term,
                success: false,
                matched: log_len.min(prev.saturating_sub(1)),
            });
        }
        let count = request.entries.len();
        for (offset, entry) in request.entries.into_iter().enumerate() {
            let index = prev + offset;
            if inner
                .store
                .log
                .get(index)
                .is_some_and(|e| e.term == entry.term)
            {
                continue;
            }
            if let Err(e) = inner.store.put(index, entry).await {
                return Err(self.die(e));
            }
        }
        let last = prev + count;
        if request.commit > inner.commit {
            inner.commit = request.commit.min(last).max(inner.commit);
            self.apply(&mut inner);
        }
        Ok(AppendResp {
            term: inner.store.term,
            success: true,
            matched: last,
        })
    }

    /// A client's write: acknowledged once committed.
    pub(crate) async fn put(
        &self,
        id: u64,
        key: String,
        value: String,
    ) -> Result<PutResp, Refusal> {
        let (index, term, mut committed) = {
            let mut inner = self.inner.lock().await;
            if inner.role != Role::Leader {
                return Err(Refusal::NotLeader(
                    inner.leader.map(|l| self.config.peers[l].clone()),
                ));
            }
            let term = inner.store.term;
            let index = inner.store.log.len();
            let entry = Entry {
                term,
                id,
                key,
                value,
            };
            if let Err(e) = inner.store.put(index, entry).await {
                return Err(self.die(e));
            }
            inner.matched[self.config.id] = index + 1;
            self.advance_commit(&mut inner);
            (index, term, self.commit_tx.subscribe())
        };
        self.kick.notify_waiters();
        // (The watch's guard is not held across the await below.)
        let waited = tokio::time::timeout(COMMIT_WAIT, committed.wait_for(|c| *c > index))
            .await
            .is_ok_and(|r| r.is_ok());
        if !waited {
            return Err(Refusal::Unavailable);
        }
        // Committed at `index`: ours only if the entry there is still ours.
        let inner = self.inner.lock().await;
        match inner.store.log.get(index) {
            Some(e) if e.id == id && e.term == term => Ok(PutResp { term, index }),
            _ => Err(Refusal::Unavailable),
        }
    }

    /// A read, served by the leader from what is committed.
    pub(crate) async fn get(&self, key: &str) -> Result<Option<String>, Refusal> {
        let inner = self.inner.lock().await;
        if inner.role != Role::Leader {
            return Err(Refusal::NotLeader(
                inner.leader.map(|l| self.config.peers[l].clone()),
            ));
        }
        Ok(inner.data.get(key).cloned())
    }
}
