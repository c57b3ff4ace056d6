//! reqwest (HTTP/1 and 2, proxies from the environment) against an axum
//! server, by host name
//! in the simulation. Under the simulator, a request times out through a
//! partition (in virtual time) and the same request succeeds after heal.

mod common;

use axum::routing::get;
use axum::Router;
use common::{addr, bind_addr, Cluster};
use std::time::Duration;

const PORT: u16 = 18081;

async fn server() {
    let app = Router::new().route("/greet", get(|| async { "hi from the server" }));
    let listener = tokio::net::TcpListener::bind(bind_addr(PORT))
        .await
        .unwrap();
    axum::serve(listener, app).await.unwrap();
}

async fn client_scenario() {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(2))
        .build()
        .unwrap();
    let url = format!("http://{}/greet", addr("server", PORT));
    let text = client.get(&url).send().await.unwrap().text().await.unwrap();
    assert_eq!(text, "hi from the server");

    #[cfg(simulation)]
    {
        use tokio::sim::Fault;
        use tokio::time::Instant;
        // A fresh client, so no pooled connection outlives the cut.
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(2))
            .build()
            .unwrap();
        Fault::Partition("client".into(), "server".into()).apply();
        let start = Instant::now();
        let error = client.get(&url).send().await.unwrap_err();
        assert!(error.is_timeout(), "{error}");
        // reqwest starts its clock after its own setup: a few link
        // latencies after ours, never a wall-clock wait.
        let waited = start.elapsed();
        assert!(
            waited >= Duration::from_secs(2) && waited < Duration::from_millis(2100),
            "reqwest's timeout fired in virtual time after {waited:?}"
        );
        Fault::Heal("client".into(), "server".into()).apply();
        let text = client.get(&url).send().await.unwrap().text().await.unwrap();
        assert_eq!(text, "hi from the server");
    }
}

#[test]
fn reqwest_reaches_the_server_by_name() {
    Cluster::new().host("server", server).run(client_scenario);
}

#[cfg(simulation)]
#[test]
fn reqwest_scenario_has_one_trace_per_seed_across_processes() {
    common::assert_same_trace_in_two_processes("reqwest_reaches_the_server_by_name");
}
