//! A store of lists over TCP, with transactions: each request is a list
//! of steps (read a list, append to a list), answered with what each read
//! saw. With `check_conflicts` off, a transaction reads from the state as
//! it found it, works a little, then applies its appends to the state as
//! it is by then: two transactions that read a list and both append to it
//! each miss the other's append (a read-modify-write anomaly, G-single).
//! With it on, one transaction runs at a time.
//!
//! Plain tokio: `tests/txn_store.rs` runs it on the simulator and checks
//! its clients' history for transactional anomalies.
//!
//! The protocol, a line each way: `TXN r x;append x 5;r y` ->
//! `OK r x 1,2;append x 5;r y -` (a read's elements, `-` for none).

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// The port the store listens on.
pub const PORT: u16 = 7100;

/// One step of a transaction, and (in a reply) what a read saw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Reads a list: its elements once done.
    Read(String, Vec<i64>),
    /// Appends a value to a list.
    Append(String, i64),
}

type Lists = Arc<Mutex<HashMap<String, Vec<i64>>>>;

/// Serves transactions until the host stops.
pub async fn serve(check_conflicts: bool) -> io::Result<()> {
    let listener = TcpListener::bind(("0.0.0.0", PORT)).await?;
    let lists: Lists = Arc::default();
    let one_at_a_time = Arc::new(tokio::sync::Mutex::new(()));
    loop {
        let (stream, _) = listener.accept().await?;
        let (lists, one_at_a_time) = (lists.clone(), one_at_a_time.clone());
        tokio::spawn(async move {
            let (read, mut write) = stream.into_split();
            let mut lines = BufReader::new(read).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let Some(steps) = line.strip_prefix("TXN ").and_then(parse_steps) else {
                    let _ = write.write_all(b"ERR bad request\n").await;
                    continue;
                };
                let _turn = match check_conflicts {
                    true => Some(one_at_a_time.lock().await),
                    false => None,
                };
                let done = run(&lists, steps).await;
                if write
                    .write_all(format!("OK {}\n", format_steps(&done)).as_bytes())
                    .await
                    .is_err()
                {
                    return;
                }
            }
        });
    }
}

/// Runs a transaction: reads from the state as found (and its own
/// appends), then, after its work, the appends onto the state as it is.
async fn run(lists: &Lists, steps: Vec<Step>) -> Vec<Step> {
    let snapshot = lists.lock().unwrap().clone();
    let mut own: HashMap<String, Vec<i64>> = HashMap::new();
    let done: Vec<Step> = steps
        .into_iter()
        .map(|step| match step {
            Step::Read(key, _) => {
                let mut seen = snapshot.get(&key).cloned().unwrap_or_default();
                seen.extend(own.get(&key).into_iter().flatten());
                Step::Read(key, seen)
            }
            Step::Append(key, value) => {
                own.entry(key.clone()).or_default().push(value);
                Step::Append(key, value)
            }
        })
        .collect();
    // The work a transaction does between its reads and its writes.
    tokio::time::sleep(Duration::from_millis(1)).await;
    let mut lists = lists.lock().unwrap();
    for step in &done {
        if let Step::Append(key, value) = step {
            lists.entry(key.clone()).or_default().push(*value);
        }
    }
    done
}

fn parse_steps(text: &str) -> Option<Vec<Step>> {
    text.split(';')
        .map(|step| {
            let words: Vec<&str> = step.split(' ').collect();
            match words.as_slice() {
                ["r", key] => Some(Step::Read(key.to_string(), Vec::new())),
                ["r", key, seen] => Some(Step::Read(key.to_string(), parse_list(seen)?)),
                ["append", key, value] => Some(Step::Append(key.to_string(), value.parse().ok()?)),
                _ => None,
            }
        })
        .collect()
}

fn parse_list(text: &str) -> Option<Vec<i64>> {
    if text == "-" {
        return Some(Vec::new());
    }
    text.split(',').map(|n| n.parse().ok()).collect()
}

fn format_steps(steps: &[Step]) -> String {
    let step = |s: &Step| match s {
        Step::Read(key, seen) if seen.is_empty() => format!("r {key} -"),
        Step::Read(key, seen) => {
            let seen: Vec<String> = seen.iter().map(i64::to_string).collect();
            format!("r {key} {}", seen.join(","))
        }
        Step::Append(key, value) => format!("append {key} {value}"),
    };
    steps.iter().map(step).collect::<Vec<_>>().join(";")
}

/// A client of the store: one connection.
pub struct Client {
    lines: tokio::io::Lines<BufReader<tokio::net::tcp::OwnedReadHalf>>,
    write: tokio::net::tcp::OwnedWriteHalf,
}

impl Client {
    /// Connects to the store on `host`.
    pub async fn connect(host: &str) -> io::Result<Client> {
        let (read, write) = TcpStream::connect((host, PORT)).await?.into_split();
        Ok(Client {
            lines: BufReader::new(read).lines(),
            write,
        })
    }

    /// Runs a transaction: its steps, each read with what it saw.
    pub async fn txn(&mut self, steps: &[Step]) -> io::Result<Vec<Step>> {
        self.write
            .write_all(format!("TXN {}\n", format_steps(steps)).as_bytes())
            .await?;
        let reply = self.lines.next_line().await?.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the store closed the connection",
            )
        })?;
        reply
            .strip_prefix("OK ")
            .and_then(parse_steps)
            .ok_or_else(|| io::Error::other(format!("the store answered {reply}")))
    }
}
