//! A tonic gRPC server and client: unary and server-streaming calls.

mod common;

use common::{addr, bind_addr, Cluster};
use futures::StreamExt;
use std::pin::Pin;
use tonic::{Request, Response, Status};

// tonic-build's generated code, not ours: its server's `call` is one long
// function, as the generator writes it.
#[allow(clippy::too_many_lines)]
pub mod echo {
    tonic::include_proto!("echo");
}

use echo::echo_client::EchoClient;
use echo::echo_server::{Echo, EchoServer};
use echo::{EchoReply, EchoRequest};

const PORT: u16 = 50051;

#[derive(Default)]
struct EchoService;

type ReplyStream = Pin<Box<dyn futures::Stream<Item = Result<EchoReply, Status>> + Send>>;

#[tonic::async_trait]
impl Echo for EchoService {
    async fn unary(&self, request: Request<EchoRequest>) -> Result<Response<EchoReply>, Status> {
        Ok(Response::new(EchoReply {
            message: format!("echo: {}", request.into_inner().message),
        }))
    }

    type ServerStreamStream = ReplyStream;

    async fn server_stream(
        &self,
        request: Request<EchoRequest>,
    ) -> Result<Response<Self::ServerStreamStream>, Status> {
        let request = request.into_inner();
        let replies = (0..request.count).map(move |i| {
            Ok(EchoReply {
                message: format!("{} #{i}", request.message),
            })
        });
        let stream = futures::stream::iter(replies).then(|reply| async move {
            // Each reply waits a little, in virtual time under the simulator.
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            reply
        });
        Ok(Response::new(Box::pin(stream)))
    }
}

async fn server() {
    let listener = tokio::net::TcpListener::bind(bind_addr(PORT))
        .await
        .unwrap();
    tonic::transport::Server::builder()
        .add_service(EchoServer::new(EchoService))
        .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener))
        .await
        .unwrap();
}

async fn client_scenario() {
    let mut client = EchoClient::connect(format!("http://{}", addr("server", PORT)))
        .await
        .unwrap();
    let reply = client
        .unary(EchoRequest {
            message: "hi".into(),
            count: 0,
        })
        .await
        .unwrap();
    assert_eq!(reply.into_inner().message, "echo: hi");

    let mut stream = client
        .server_stream(EchoRequest {
            message: "tick".into(),
            count: 5,
        })
        .await
        .unwrap()
        .into_inner();
    let mut got = Vec::new();
    while let Some(reply) = stream.next().await {
        got.push(reply.unwrap().message);
    }
    assert_eq!(
        got,
        (0..5).map(|i| format!("tick #{i}")).collect::<Vec<_>>()
    );
}

#[test]
fn tonic_unary_and_server_streaming() {
    Cluster::new().host("server", server).run(client_scenario);
}

#[cfg(simulation)]
#[test]
fn tonic_scenario_has_one_trace_per_seed_across_processes() {
    common::assert_same_trace_in_two_processes("tonic_unary_and_server_streaming");
}
