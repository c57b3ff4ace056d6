//! The HTTP API. Between nodes: `POST /raft/vote` and `POST /raft/append`
//! (JSON). For clients: `PUT /kv/{key}` (the value as the body, the write's
//! id in `x-op-id`) and `GET /kv/{key}`. A node that does not lead answers
//! 421 with the leader it knows in `x-leader`; one that cannot commit in
//! time answers 503.

use crate::kv::node::{self, Config, Node, Refusal};
use crate::kv::wire::{AppendReq, VoteReq};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{post, put};
use axum::{Json, Router};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::sync::Arc;
use std::time::Duration;

/// How long a node waits for another's answer.
const RPC_TIMEOUT: Duration = Duration::from_millis(300);

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        match self {
            Refusal::NotLeader(leader) => {
                let mut headers = HeaderMap::new();
                if let Some(leader) = leader.and_then(|l| l.parse().ok()) {
                    headers.insert("x-leader", leader);
                }
                (StatusCode::MISDIRECTED_REQUEST, headers, "not the leader").into_response()
            }
            Refusal::Unavailable => {
                (StatusCode::SERVICE_UNAVAILABLE, "not committed").into_response()
            }
            Refusal::Disk => (StatusCode::INTERNAL_SERVER_ERROR, "disk failed").into_response(),
        }
    }
}

/// Runs a node until its disk fails (or forever).
///
/// # Errors
/// The disk's errors, and a port that cannot be bound.
pub async fn serve(config: Config) -> std::io::Result<()> {
    let (node, listener) = node::start(config).await?;
    let app = router(node.clone());
    tokio::select! {
        served = axum::serve(listener, app) => served,
        stopped = node.stopped() => Err(stopped),
    }
}

pub(crate) fn router(node: Arc<Node>) -> Router {
    Router::new()
        .route("/raft/vote", post(vote))
        .route("/raft/append", post(append))
        .route("/kv/{key}", put(write).get(read))
        .with_state(node)
}

async fn vote(State(node): State<Arc<Node>>, Json(request): Json<VoteReq>) -> Response {
    node.vote(request).await.map(Json).into_response()
}

async fn append(State(node): State<Arc<Node>>, Json(request): Json<AppendReq>) -> Response {
    node.append(request).await.map(Json).into_response()
}

async fn write(
    State(node): State<Arc<Node>>,
    Path(key): Path<String>,
    headers: HeaderMap,
    value: String,
) -> Response {
    let Some(id) = headers
        .get("x-op-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|&id| id != 0)
    else {
        return (StatusCode::BAD_REQUEST, "x-op-id: a write's id, above 0").into_response();
    };
    node.put(id, key, value).await.map(Json).into_response()
}

async fn read(State(node): State<Arc<Node>>, Path(key): Path<String>) -> Response {
    match node.get(&key).await {
        Ok(Some(value)) => value.into_response(),
        Ok(None) => StatusCode::NOT_FOUND.into_response(),
        Err(refusal) => refusal.into_response(),
    }
}

impl Node {
    /// Calls another node; `None` for no answer in time, or a refusal.
    pub(crate) async fn call<Req: Serialize, Resp: DeserializeOwned>(
        &self,
        peer: usize,
        path: &str,
        request: &Req,
    ) -> Option<Resp> {
        let url = format!("http://{}{path}", self.config.peers[peer]);
        let body = serde_json::to_vec(request).ok()?;
        let answer = self
            .http
            .post(url)
            .header("content-type", "application/json")
            .body(body)
            .timeout(RPC_TIMEOUT)
            .send()
            .await
            .ok()?;
        if !answer.status().is_success() {
            return None;
        }
        serde_json::from_slice(&answer.bytes().await.ok()?).ok()
    }
}
