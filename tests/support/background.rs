//! A tokio runtime on its own thread that outlives every test of the binary.
//!
//! `#[tokio::test]` gives each test its own runtime, which is shut down when the test ends;
//! a server shared by several tests (started once through a `OnceLock`) must therefore run
//! somewhere else. Everything spawned here lives until the test binary exits.

use std::net::SocketAddr;
use std::sync::OnceLock;

use tokio::runtime::{Builder, Handle};

/// The shared background runtime.
pub fn handle() -> Handle {
    static HANDLE: OnceLock<Handle> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::Builder::new()
                .name("test-servers".into())
                .spawn(move || {
                    let runtime = Builder::new_multi_thread()
                        .worker_threads(2)
                        .enable_all()
                        .build()
                        .expect("background runtime");
                    tx.send(runtime.handle().clone()).expect("send handle");
                    runtime.block_on(std::future::pending::<()>());
                })
                .expect("spawn background thread");
            rx.recv().expect("background runtime handle")
        })
        .clone()
}

/// Serves an axum router on a fresh 127.0.0.1 port in the background runtime.
pub fn serve(router: axum::Router) -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener
        .set_nonblocking(true)
        .expect("non-blocking listener");
    let addr = listener.local_addr().expect("local addr");
    handle().spawn(async move {
        let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
        let _ = axum::serve(listener, router).await;
    });
    addr
}
