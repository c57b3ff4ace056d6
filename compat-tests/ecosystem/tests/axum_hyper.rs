//! An axum server, reached by hyper-util's legacy client and by a hyper
//! client connection, with tower middleware (timeout, retry, concurrency
//! limit) on the client's path.

mod common;

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::Router;
use common::{addr, bind_addr, Cluster};
use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tower::{Service, ServiceBuilder, ServiceExt};

const PORT: u16 = 18080;

#[derive(Clone, Default)]
struct Counters {
    flaky_calls: Arc<AtomicUsize>,
    in_flight: Arc<AtomicUsize>,
    max_in_flight: Arc<AtomicUsize>,
}

async fn flaky(State(c): State<Counters>) -> (StatusCode, &'static str) {
    // Fails twice, then works: a retry policy gets through.
    if c.flaky_calls.fetch_add(1, Ordering::SeqCst) < 2 {
        (StatusCode::SERVICE_UNAVAILABLE, "try again")
    } else {
        (StatusCode::OK, "finally")
    }
}

async fn busy(State(c): State<Counters>) -> &'static str {
    let now = c.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    c.max_in_flight.fetch_max(now, Ordering::SeqCst);
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
    c.in_flight.fetch_sub(1, Ordering::SeqCst);
    "done"
}

async fn server() {
    let app = Router::new()
        .route("/hello", get(|| async { "hello from axum" }))
        .route("/never", get(std::future::pending::<&'static str>))
        .route("/flaky", get(flaky))
        .route("/busy", get(busy))
        .route(
            "/max-in-flight",
            get(|State(c): State<Counters>| async move {
                c.max_in_flight.load(Ordering::SeqCst).to_string()
            }),
        )
        .with_state(Counters::default());
    let listener = tokio::net::TcpListener::bind(bind_addr(PORT))
        .await
        .unwrap();
    axum::serve(listener, app).await.unwrap();
}

fn url(path: &str) -> hyper::Uri {
    format!("http://{}{path}", addr("server", PORT))
        .parse()
        .unwrap()
}

async fn body_text(response: hyper::Response<hyper::body::Incoming>) -> String {
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// Retries requests that failed or came back 5xx, up to `left` more times.
#[derive(Clone)]
struct RetryServerErrors {
    left: usize,
}

impl<B: Clone>
    tower::retry::Policy<
        hyper::Request<B>,
        hyper::Response<hyper::body::Incoming>,
        hyper_util::client::legacy::Error,
    > for RetryServerErrors
{
    type Future = std::future::Ready<()>;

    fn retry(
        &mut self,
        _req: &mut hyper::Request<B>,
        result: &mut Result<
            hyper::Response<hyper::body::Incoming>,
            hyper_util::client::legacy::Error,
        >,
    ) -> Option<Self::Future> {
        let failed = match result {
            Ok(response) => response.status().is_server_error(),
            Err(_) => true,
        };
        if failed && self.left > 0 {
            self.left -= 1;
            Some(std::future::ready(()))
        } else {
            None
        }
    }

    fn clone_request(&mut self, req: &hyper::Request<B>) -> Option<hyper::Request<B>> {
        let mut clone = hyper::Request::builder()
            .method(req.method().clone())
            .uri(req.uri().clone())
            .body(req.body().clone())
            .ok()?;
        *clone.headers_mut() = req.headers().clone();
        Some(clone)
    }
}

async fn client_scenario() {
    let client: Client<_, Empty<Bytes>> = Client::builder(TokioExecutor::new()).build_http();

    // hyper-util's legacy client.
    let response = client.get(url("/hello")).await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(
        response.headers().contains_key("date"),
        "axum stamps a Date header"
    );
    assert_eq!(body_text(response).await, "hello from axum");

    // A hyper client connection on a stream we opened ourselves.
    let stream = tokio::net::TcpStream::connect(addr("server", PORT))
        .await
        .unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    let request = hyper::Request::get("/hello")
        .header("host", "server")
        .body(Empty::<Bytes>::new())
        .unwrap();
    let response = sender.send_request(request).await.unwrap();
    assert_eq!(body_text(response).await, "hello from axum");

    // Tower middleware on the client: retry through two 503s.
    let mut retrying = ServiceBuilder::new()
        .retry(RetryServerErrors { left: 3 })
        .service(client.clone());
    let request = hyper::Request::get(url("/flaky"))
        .body(Empty::<Bytes>::new())
        .unwrap();
    let response = retrying.ready().await.unwrap().call(request).await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(body_text(response).await, "finally");

    // A timeout that fires (in virtual time under the simulator).
    let mut timed = ServiceBuilder::new()
        .timeout(Duration::from_millis(200))
        .service(client.clone());
    let request = hyper::Request::get(url("/never"))
        .body(Empty::<Bytes>::new())
        .unwrap();
    let error = timed
        .ready()
        .await
        .unwrap()
        .call(request)
        .await
        .unwrap_err();
    assert!(error.is::<tower::timeout::error::Elapsed>(), "{error}");

    // A concurrency limit of one: the server never sees two at once.
    let limited = ServiceBuilder::new()
        .concurrency_limit(1)
        .service(client.clone());
    let calls: Vec<_> = (0..4)
        .map(|_| {
            let mut svc = limited.clone();
            tokio::spawn(async move {
                let request = hyper::Request::get(url("/busy"))
                    .body(Empty::<Bytes>::new())
                    .unwrap();
                let response = svc.ready().await.unwrap().call(request).await.unwrap();
                body_text(response).await
            })
        })
        .collect();
    for call in calls {
        assert_eq!(call.await.unwrap(), "done");
    }
    let max = body_text(client.get(url("/max-in-flight")).await.unwrap()).await;
    assert_eq!(max, "1", "the limit kept requests one at a time");
}

#[test]
fn axum_serves_hyper_clients_through_tower() {
    let hashes = Cluster::new().host("server", server).run(client_scenario);
    if cfg!(simulation) {
        assert!(hashes.len() as u64 >= 1);
    }
}

#[cfg(simulation)]
#[test]
fn axum_scenario_has_one_trace_per_seed_across_processes() {
    common::assert_same_trace_in_two_processes("axum_serves_hyper_clients_through_tower");
}
