//! What nodes and clients send each other, as JSON: the Raft messages and
//! a write's answer.

use crate::kv::store::Entry;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct VoteReq {
    pub(crate) term: u64,
    pub(crate) candidate: usize,
    pub(crate) last_index: usize,
    pub(crate) last_term: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct VoteResp {
    pub(crate) term: u64,
    pub(crate) granted: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct AppendReq {
    pub(crate) term: u64,
    pub(crate) leader: usize,
    pub(crate) prev_index: usize,
    pub(crate) prev_term: u64,
    pub(crate) entries: Vec<Entry>,
    pub(crate) commit: usize,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct AppendResp {
    pub(crate) term: u64,
    pub(crate) success: bool,
    pub(crate) matched: usize,
}

/// What an acknowledged write answers: where it is in the log.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PutResp {
    /// The term of the leader that committed it.
    pub term: u64,
    /// Its position in the log.
    pub index: usize,
}
