//! tokio-util (Framed with LinesCodec and LengthDelimitedCodec,
//! CancellationToken) and tokio-stream (TcpListenerStream, IntervalStream)
//! over TCP between hosts.

mod common;

use common::{addr, bind_addr, Cluster};
use futures::{SinkExt, StreamExt};
use std::time::Duration;
use tokio_stream::wrappers::{IntervalStream, TcpListenerStream};
use tokio_util::codec::{Framed, LengthDelimitedCodec, LinesCodec};
use tokio_util::sync::CancellationToken;

const LINES_PORT: u16 = 19001;
const FRAMES_PORT: u16 = 19002;

async fn server() {
    // Lines: every line comes back upper-cased.
    let lines = tokio::net::TcpListener::bind(bind_addr(LINES_PORT))
        .await
        .unwrap();
    tokio::spawn(async move {
        let mut incoming = TcpListenerStream::new(lines);
        while let Some(stream) = incoming.next().await {
            let mut framed = Framed::new(stream.unwrap(), LinesCodec::new());
            tokio::spawn(async move {
                while let Some(Ok(line)) = framed.next().await {
                    framed.send(line.to_uppercase()).await.unwrap();
                }
            });
        }
    });
    // Length-delimited frames: each frame comes back reversed.
    let frames = tokio::net::TcpListener::bind(bind_addr(FRAMES_PORT))
        .await
        .unwrap();
    loop {
        let (stream, _) = frames.accept().await.unwrap();
        let mut framed = Framed::new(stream, LengthDelimitedCodec::new());
        tokio::spawn(async move {
            while let Some(Ok(frame)) = framed.next().await {
                let mut reversed = frame.to_vec();
                reversed.reverse();
                framed
                    .send(tokio_util::bytes::Bytes::from(reversed))
                    .await
                    .unwrap();
            }
        });
    }
}

async fn client_scenario() {
    let stream = tokio::net::TcpStream::connect(addr("server", LINES_PORT))
        .await
        .unwrap();
    let mut lines = Framed::new(stream, LinesCodec::new());
    for word in ["alpha", "beta", "gamma"] {
        lines.send(word).await.unwrap();
        assert_eq!(lines.next().await.unwrap().unwrap(), word.to_uppercase());
    }

    let stream = tokio::net::TcpStream::connect(addr("server", FRAMES_PORT))
        .await
        .unwrap();
    let mut frames = Framed::new(stream, LengthDelimitedCodec::new());
    for frame in [&b"abc"[..], b"", &[9u8; 40_000]] {
        frames
            .send(tokio_util::bytes::Bytes::copy_from_slice(frame))
            .await
            .unwrap();
        let back = frames.next().await.unwrap().unwrap();
        let mut expected = frame.to_vec();
        expected.reverse();
        assert_eq!(back.to_vec(), expected);
    }

    // A cancelled token stops a ticking worker; the ticks came from an
    // IntervalStream.
    let token = CancellationToken::new();
    let child = token.child_token();
    let worker = tokio::spawn(async move {
        let mut ticks = IntervalStream::new(tokio::time::interval(Duration::from_millis(100)));
        let mut count = 0u32;
        loop {
            tokio::select! {
                _ = child.cancelled() => return count,
                _ = ticks.next() => count += 1,
            }
        }
    });
    tokio::time::sleep(Duration::from_millis(350)).await;
    token.cancel();
    let count = worker.await.unwrap();
    assert!((3..=5).contains(&count), "ticked {count} times in 350 ms");
}

#[test]
fn codecs_tokens_and_streams_over_tcp() {
    Cluster::new().host("server", server).run(client_scenario);
}

#[cfg(simulation)]
#[test]
fn util_stream_scenario_has_one_trace_per_seed_across_processes() {
    common::assert_same_trace_in_two_processes("codecs_tokens_and_streams_over_tcp");
}
