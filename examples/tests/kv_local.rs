//! The showcase store as an ordinary tokio service: three nodes in one
//! process on loopback ports, a client that writes and is acknowledged.
//! The same test in both builds: on real tokio (real sockets, real files,
//! real time: an election takes 0.3 to 0.6 s) and on the simulator.

use sim_examples::kv;
use std::time::Duration;

#[tokio::test]
async fn three_local_nodes_elect_a_leader_and_acknowledge_writes() {
    // Free loopback ports, one per node.
    let mut peers = Vec::new();
    for _ in 0..3 {
        let probe = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        peers.push(probe.local_addr().unwrap().to_string());
    }
    let dir = std::env::temp_dir().join(format!("kv-local-{}", std::process::id()));
    tokio::fs::create_dir_all(&dir).await.unwrap();
    let mut nodes = Vec::new();
    for id in 0..3 {
        let config = kv::Config {
            id,
            peers: peers.clone(),
            wal_path: dir.join(format!("node-{id}.wal")),
            planted_bug: false,
        };
        nodes.push(tokio::spawn(kv::serve(config)));
    }
    let mut client = kv::Client::new(&peers);
    let mut last_index = 0;
    for id in 1..=5u64 {
        let ack = client
            .put(id, &format!("k{id}"), "v", Duration::from_secs(10))
            .await
            .unwrap_or_else(|e| panic!("write {id} was not acknowledged: {e}"));
        assert!(
            ack.index > last_index || id == 1,
            "{ack:?} after {last_index}"
        );
        last_index = ack.index;
    }
    for node in nodes {
        node.abort();
    }
    let _ = tokio::fs::remove_dir_all(&dir).await;
}
