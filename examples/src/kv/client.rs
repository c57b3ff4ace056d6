//! A client of the store: it finds the leader (following `x-leader`
//! hints, or trying the next node) and retries a write until it is
//! acknowledged or its deadline passes.

use crate::kv::wire::PutResp;
use std::time::Duration;

/// An acknowledged write: the term and log position it committed at.
pub type Ack = PutResp;

/// How long one request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_millis(1_500);
/// The pause before another try.
const RETRY_PAUSE: Duration = Duration::from_millis(50);

/// A client of the cluster at `nodes` (`host:port` each).
pub struct Client {
    http: reqwest::Client,
    nodes: Vec<String>,
    leader: usize,
}

impl Client {
    /// A client of these nodes.
    pub fn new(nodes: &[String]) -> Client {
        Client {
            http: reqwest::Client::new(),
            nodes: nodes.to_vec(),
            leader: 0,
        }
    }

    /// Writes `value` to `key` as write `id` (above 0); `Ok` once the
    /// cluster acknowledged it, `Err` with the last error after `deadline`.
    pub async fn put(
        &mut self,
        id: u64,
        key: &str,
        value: &str,
        deadline: Duration,
    ) -> Result<Ack, String> {
        let until = tokio::time::Instant::now() + deadline;
        let mut last = String::from("no try");
        // Bounded by the deadline: each try takes at least RETRY_PAUSE.
        while tokio::time::Instant::now() < until {
            let url = format!("http://{}/kv/{key}", self.nodes[self.leader]);
            let sent = self
                .http
                .put(url)
                .header("x-op-id", id.to_string())
                .body(value.to_string())
                .timeout(REQUEST_TIMEOUT)
                .send()
                .await;
            match sent {
                Ok(answer) if answer.status().is_success() => {
                    let body = answer.bytes().await.map_err(|e| e.to_string())?;
                    return serde_json::from_slice(&body).map_err(|e| e.to_string());
                }
                Ok(answer) => {
                    let hint = answer
                        .headers()
                        .get("x-leader")
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| self.nodes.iter().position(|n| n == v));
                    last = format!("{} from {}", answer.status(), self.nodes[self.leader]);
                    self.leader = hint.unwrap_or((self.leader + 1) % self.nodes.len());
                }
                Err(e) => {
                    last = format!("{e} ({})", self.nodes[self.leader]);
                    self.leader = (self.leader + 1) % self.nodes.len();
                }
            }
            tokio::time::sleep(RETRY_PAUSE).await;
        }
        Err(last)
    }
}
