//! A replicated key-value store over TCP: one leader, followers that it
//! replicates to in the background. A write is acknowledged once the
//! leader has it; a follower catches up a little later. With
//! `followers_serve_reads`, a follower answers reads from what it has,
//! which may be behind the leader: a client can read an old value after a
//! newer write was acknowledged (a stale read, not linearizable). Without
//! it, a follower passes reads to the leader.
//!
//! Plain tokio: `tests/follower_reads.rs` runs it on the simulator and
//! checks its clients' history for linearizability.
//!
//! The protocol, a line each way: `PUT key value` -> `OK`; `GET key` ->
//! `VAL value` or `NONE`; from the leader to a follower, `REPL key value`
//! (no answer).

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// The port every node listens on.
pub const PORT: u16 = 7000;

/// How the cluster is laid out, and the choice under test.
#[derive(Clone, Debug)]
pub struct Config {
    /// The leader's host name.
    pub leader: String,
    /// The followers' host names.
    pub followers: Vec<String>,
    /// Followers answer reads from their own copy (fast, maybe stale).
    pub followers_serve_reads: bool,
}

type Store = Arc<Mutex<HashMap<String, String>>>;

/// Runs the node named `name` until its host stops.
pub async fn serve(name: String, config: Config) -> io::Result<()> {
    let listener = TcpListener::bind(("0.0.0.0", PORT)).await?;
    let store: Store = Arc::default();
    let is_leader = name == config.leader;
    // The leader's replication: a queue and a connection per follower, so
    // each follower applies the writes in order.
    let mut replicas = Vec::new();
    if is_leader {
        for follower in &config.followers {
            let (tx, rx) = mpsc::unbounded_channel();
            tokio::spawn(replicate(follower.clone(), rx));
            replicas.push(tx);
        }
    }
    let node = Arc::new(Node {
        store,
        config,
        is_leader,
        replicas,
    });
    loop {
        let (stream, _) = listener.accept().await?;
        let node = node.clone();
        tokio::spawn(async move {
            let _ = node.session(stream).await;
        });
    }
}

struct Node {
    store: Store,
    config: Config,
    is_leader: bool,
    replicas: Vec<mpsc::UnboundedSender<(String, String)>>,
}

impl Node {
    /// Answers one connection's requests, a line each.
    async fn session(&self, stream: TcpStream) -> io::Result<()> {
        let (read, mut write) = stream.into_split();
        let mut lines = BufReader::new(read).lines();
        while let Some(line) = lines.next_line().await? {
            let words: Vec<&str> = line.splitn(3, ' ').collect();
            let reply = match words.as_slice() {
                ["PUT", key, value] => self.put(key, value).await?,
                ["GET", key] => self.get(key).await?,
                ["REPL", key, value] => {
                    self.store
                        .lock()
                        .unwrap()
                        .insert(key.to_string(), value.to_string());
                    continue;
                }
                _ => "ERR bad request".to_string(),
            };
            write.write_all(format!("{reply}\n").as_bytes()).await?;
        }
        Ok(())
    }

    async fn put(&self, key: &str, value: &str) -> io::Result<String> {
        if !self.is_leader {
            return forward(&self.config.leader, &format!("PUT {key} {value}")).await;
        }
        self.store
            .lock()
            .unwrap()
            .insert(key.to_string(), value.to_string());
        for replica in &self.replicas {
            let _ = replica.send((key.to_string(), value.to_string()));
        }
        Ok("OK".to_string())
    }

    async fn get(&self, key: &str) -> io::Result<String> {
        if !self.is_leader && !self.config.followers_serve_reads {
            return forward(&self.config.leader, &format!("GET {key}")).await;
        }
        Ok(match self.store.lock().unwrap().get(key) {
            Some(value) => format!("VAL {value}"),
            None => "NONE".to_string(),
        })
    }
}

/// Sends the leader's writes to one follower, in order, on one connection.
async fn replicate(follower: String, mut writes: mpsc::UnboundedReceiver<(String, String)>) {
    let Ok(mut stream) = TcpStream::connect((follower.as_str(), PORT)).await else {
        return;
    };
    while let Some((key, value)) = writes.recv().await {
        if stream
            .write_all(format!("REPL {key} {value}\n").as_bytes())
            .await
            .is_err()
        {
            return;
        }
    }
}

/// One request to another node, on a connection of its own.
async fn forward(node: &str, request: &str) -> io::Result<String> {
    let mut client = Client::connect(node).await?;
    client.request(request).await
}

/// A client of the store: one connection to one node.
pub struct Client {
    lines: tokio::io::Lines<BufReader<tokio::net::tcp::OwnedReadHalf>>,
    write: tokio::net::tcp::OwnedWriteHalf,
}

impl Client {
    /// Connects to the node on `host`.
    pub async fn connect(host: &str) -> io::Result<Client> {
        let stream = TcpStream::connect((host, PORT)).await?;
        let (read, write) = stream.into_split();
        Ok(Client {
            lines: BufReader::new(read).lines(),
            write,
        })
    }

    async fn request(&mut self, request: &str) -> io::Result<String> {
        self.write
            .write_all(format!("{request}\n").as_bytes())
            .await?;
        self.lines.next_line().await?.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the node closed the connection",
            )
        })
    }

    /// Writes `value` under `key`.
    pub async fn put(&mut self, key: &str, value: &str) -> io::Result<()> {
        match self.request(&format!("PUT {key} {value}")).await?.as_str() {
            "OK" => Ok(()),
            other => Err(io::Error::other(format!("PUT answered {other}"))),
        }
    }

    /// Reads `key`: its value, or `None` if it was never written.
    pub async fn get(&mut self, key: &str) -> io::Result<Option<String>> {
        let reply = self.request(&format!("GET {key}")).await?;
        match reply.split_once(' ') {
            Some(("VAL", value)) => Ok(Some(value.to_string())),
            None if reply == "NONE" => Ok(None),
            _ => Err(io::Error::other(format!("GET answered {reply}"))),
        }
    }
}
