//! TLS to targets: bundled roots only, certificate checks always on, SNI and `Host` keep the
//! real name while the connection goes to the pinned address.
//!
//! The server is a rustls listener on 127.0.0.1 presenting a certificate for `mcp.test`, issued
//! by a test CA that only [`Client::with_extra_root_for_tests`] trusts. The certificates were
//! generated once with `openssl` (valid for 100 years) and are embedded as hex-encoded DER.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code may panic on setup failures

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::http::{HeaderMap, header};
use axum::routing::get;
use mcp_surface_ledger::net::{Client, NetConfig, TableLookup};
use mcp_surface_ledger::reason::ReasonCode;
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::server::TlsStream;
use url::Url;

/// The test CA (self-signed, CN "mcp-surface-ledger test CA").
const CA_DER_HEX: &[&str] = &[
    "308201b230820157a003020102021411c25ae831ae1fe5cf62146f5f2d26f658562dcc300a06082a8648ce3d04030230",
    "253123302106035504030c1a6d63702d737572666163652d6c656467657220746573742043413020170d323631313239",
    "3139333732305a180f32313236313130353139333732305a30253123302106035504030c1a6d63702d73757266616365",
    "2d6c656467657220746573742043413059301306072a8648ce3d020106082a8648ce3d030107034200046501317b2c0b",
    "18887048b330fc6c796b9652642460e7e9913a8b1a9223b06f39bafd98f31d6c39e107b7cc410c41b6a7177f6d9f61f8",
    "d1eef674ac34acf1716ba3633061301d0603551d0e0416041484516209222b745b10bba19b55ec0803fe1b4640301f06",
    "03551d2304183016801484516209222b745b10bba19b55ec0803fe1b4640300f0603551d130101ff040530030101ff30",
    "0e0603551d0f0101ff040403020106300a06082a8648ce3d0403020349003046022100a3f94bc49bbadd7a0e1bfad58d",
    "4725d804f66ef27293aa02e8f272614cebb398022100d75108ae1be51d1c21acbb808fec9ff927be6a1679a36ccf6d7a",
    "14edc250ba42",
];

/// The server certificate for DNS name `mcp.test`, signed by the test CA.
const LEAF_DER_HEX: &[&str] = &[
    "308201c43082016ba003020102021450bc66d958d552e4f505388a3d28dab902b6b8fe300a06082a8648ce3d04030230",
    "253123302106035504030c1a6d63702d737572666163652d6c656467657220746573742043413020170d323631313239",
    "3139333732305a180f32313236313130353139333732305a30133111300f06035504030c086d63702e74657374305930",
    "1306072a8648ce3d020106082a8648ce3d03010703420004e59236799039536b28e9d77d8309aabf3272d12938b34327",
    "4399da509fc9aba9650dc70bc20f824a4db586d3efeec7733caabf957615d3bc8a0ec6370594972fa381883081853013",
    "0603551d11040c300a82086d63702e7465737430090603551d130402300030130603551d25040c300a06082b06010505",
    "070301300e0603551d0f0101ff040403020780301d0603551d0e04160414ae5c534a4f95824ccbd23c10b409eb650893",
    "1ab5301f0603551d2304183016801484516209222b745b10bba19b55ec0803fe1b4640300a06082a8648ce3d04030203",
    "47003044022042adc048812c7370293299da66e10d767fb853eabf6dd5ea4571f28a5d70a203022055c906a014e2d8cf",
    "1bbfa95349918c8b8c6810fea820f53efb991ee5f3b52d56",
];

/// The server key (PKCS#8, P-256).
const KEY_DER_HEX: &[&str] = &[
    "308187020100301306072a8648ce3d020106082a8648ce3d030107046d306b020101042005b2466b6eeebc6afa14a1bc",
    "f17417620e9172a01b0e0d7c9934c45c19388adda14403420004e59236799039536b28e9d77d8309aabf3272d12938b3",
    "43274399da509fc9aba9650dc70bc20f824a4db586d3efeec7733caabf957615d3bc8a0ec6370594972f",
];

fn der(parts: &[&str]) -> Vec<u8> {
    hex::decode(parts.concat()).unwrap()
}

/// A TLS listener that records the SNI name of every completed handshake.
struct TlsListener {
    tcp: TcpListener,
    acceptor: TlsAcceptor,
    names: Arc<Mutex<Vec<String>>>,
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Ok((stream, peer)) = self.tcp.accept().await else {
                continue;
            };
            // A client that rejects the certificate fails the handshake; wait for the next one.
            if let Ok(tls) = self.acceptor.accept(stream).await {
                let name = tls.get_ref().1.server_name().unwrap_or("-").to_string();
                self.names.lock().unwrap().push(name);
                return (tls, peer);
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}

async fn tls_server() -> (u16, Arc<Mutex<Vec<String>>>) {
    let leaf = CertificateDer::from(der(LEAF_DER_HEX));
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(der(KEY_DER_HEX)));
    let config = ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(vec![leaf], key)
        .unwrap();
    let tcp = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = tcp.local_addr().unwrap().port();
    let names = Arc::new(Mutex::new(Vec::new()));
    let listener = TlsListener {
        tcp,
        acceptor: TlsAcceptor::from(Arc::new(config)),
        names: names.clone(),
    };
    let app = Router::new().route(
        "/host",
        get(|headers: HeaderMap| async move {
            headers
                .get(header::HOST)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("-")
                .to_string()
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    (port, names)
}

fn names() -> Arc<TableLookup> {
    let loopback: IpAddr = "127.0.0.1".parse().unwrap();
    Arc::new(
        TableLookup::new()
            .with("mcp.test", &[loopback])
            .with("other.test", &[loopback]),
    )
}

fn config() -> NetConfig {
    // Loopback needs the operator override; nothing else about the policy changes.
    NetConfig::new(Duration::from_secs(5), 3, 10_000).allow_private(true)
}

fn url(text: &str) -> Url {
    Url::parse(text).unwrap()
}

#[tokio::test]
async fn pinned_connection_keeps_the_real_name_for_sni_host_and_certificate() {
    let (port, seen_names) = tls_server().await;
    let client = Client::with_extra_root_for_tests(config(), names(), &der(CA_DER_HEX)).unwrap();
    let response = client
        .get(
            &url(&format!("https://mcp.test:{port}/host")),
            HeaderMap::new(),
        )
        .await
        .unwrap();
    assert_eq!(response.status, 200);
    assert_eq!(
        response.body.as_ref(),
        format!("mcp.test:{port}").as_bytes()
    );
    assert_eq!(*seen_names.lock().unwrap(), vec!["mcp.test".to_string()]);
}

#[tokio::test]
async fn unknown_issuer_is_refused_with_the_bundled_roots_alone() {
    let (port, seen_names) = tls_server().await;
    let client = Client::with_lookup(config(), names()).unwrap();
    let error = client
        .get(
            &url(&format!("https://mcp.test:{port}/host")),
            HeaderMap::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(error.reason_code(), ReasonCode::ConnectFail, "{error}");
    assert!(
        error.to_string().to_lowercase().contains("certificate"),
        "{error}"
    );
    assert!(seen_names.lock().unwrap().is_empty());
}

#[tokio::test]
async fn certificate_for_another_name_is_refused() {
    let (port, _) = tls_server().await;
    let client = Client::with_extra_root_for_tests(config(), names(), &der(CA_DER_HEX)).unwrap();
    let error = client
        .get(
            &url(&format!("https://other.test:{port}/host")),
            HeaderMap::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(error.reason_code(), ReasonCode::ConnectFail, "{error}");
    assert!(error.to_string().contains("other.test"), "{error}");
}
