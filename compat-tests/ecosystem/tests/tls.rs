//! TLS with tokio-rustls and certificates made by rcgen in the test: the
//! handshake works, and a certificate that does not cover the name the
//! client asked for is rejected.

mod common;

use common::{addr, bind_addr, Cluster};
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_rustls::rustls::pki_types::{
    CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName,
};
use tokio_rustls::rustls::{ClientConfig, RootCertStore, ServerConfig};
use tokio_rustls::{TlsAcceptor, TlsConnector};

const PORT: u16 = 18443;

/// A self-signed certificate for `server` (DER) and its PKCS#8 key.
fn certificate() -> (Vec<u8>, Vec<u8>) {
    let cert = rcgen::generate_simple_self_signed(vec!["server".to_string()]).unwrap();
    (cert.cert.der().to_vec(), cert.signing_key.serialize_der())
}

fn stored() -> (CertificateDer<'static>, PrivateKeyDer<'static>) {
    let (cert, key) = CERT
        .with(|c| c.borrow().clone())
        .expect("made before the run");
    (
        CertificateDer::from(cert),
        PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key)),
    )
}

/// rustls's ring provider: its randomness comes through getrandom, which a
/// simulation answers from the seed (aws-lc's does not: see the README).
fn provider() {
    let _ = tokio_rustls::rustls::crypto::ring::default_provider().install_default();
}

thread_local! {
    static CERT: std::cell::RefCell<Option<(Vec<u8>, Vec<u8>)>> =
        const { std::cell::RefCell::new(None) };
}

async fn server() {
    provider();
    // Made on the server at boot, inside the run: its key comes from the
    // seed (rustls and rcgen draw through getrandom, which the simulation
    // answers). Hosts boot before clients, so the client finds it.
    let made = certificate();
    CERT.with(|c| *c.borrow_mut() = Some(made));
    let (cert, key) = stored();
    let config = ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .unwrap();
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind(bind_addr(PORT))
        .await
        .unwrap();
    loop {
        let (stream, _) = listener.accept().await.unwrap();
        let acceptor = acceptor.clone();
        tokio::spawn(async move {
            // A failed handshake (the client's rejection) ends here.
            let Ok(mut tls) = acceptor.accept(stream).await else {
                return;
            };
            let mut buf = [0u8; 5];
            if tls.read_exact(&mut buf).await.is_ok() {
                let _ = tls.write_all(&buf).await;
                let _ = tls.shutdown().await;
            }
        });
    }
}

fn connector() -> TlsConnector {
    let (cert, _) = stored();
    let mut roots = RootCertStore::empty();
    roots.add(cert).unwrap();
    let config = ClientConfig::builder()
        .with_root_certificates(roots)
        .with_no_client_auth();
    TlsConnector::from(Arc::new(config))
}

async fn client_scenario() {
    provider();
    let stream = tokio::net::TcpStream::connect(addr("server", PORT))
        .await
        .unwrap();
    let mut tls = connector()
        .connect(ServerName::try_from("server").unwrap(), stream)
        .await
        .unwrap();
    tls.write_all(b"hello").await.unwrap();
    let mut back = [0u8; 5];
    tls.read_exact(&mut back).await.unwrap();
    assert_eq!(&back, b"hello");

    let stream = tokio::net::TcpStream::connect(addr("server", PORT))
        .await
        .unwrap();
    let rejected = connector()
        .connect(ServerName::try_from("not-the-server").unwrap(), stream)
        .await;
    let error = rejected.unwrap_err();
    assert!(error.to_string().contains("not valid for name"), "{error}");
}

#[test]
fn tls_handshake_and_name_check() {
    Cluster::new().host("server", server).run(client_scenario);
}

#[cfg(simulation)]
#[test]
fn tls_scenario_has_one_trace_per_seed_across_processes() {
    common::assert_same_trace_in_two_processes("tls_handshake_and_name_check");
}
