//! Child processes that serve MCP on 127.0.0.1 (the Python SDK, server-everything).
//!
//! Each child gets a piped stdin that the test process never writes to. When the test process
//! goes away, for whatever reason, the pipe closes and the child (or the small shell guard in
//! front of it) exits: no server outlives its test binary, even one held in a `OnceLock`,
//! whose destructor never runs. Dropping a [`PeerProcess`] closes the pipe and reaps the child.

use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use url::Url;

/// How long a peer may take to start listening.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// A running peer process.
pub struct PeerProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    /// The port it listens on (127.0.0.1).
    pub port: u16,
    /// Where its stderr goes.
    pub log: PathBuf,
}

impl PeerProcess {
    /// The URL of its MCP endpoint (`/mcp`).
    pub fn url(&self) -> Url {
        Url::parse(&format!("http://127.0.0.1:{}/mcp", self.port)).expect("peer url")
    }
}

impl Drop for PeerProcess {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The directory `tests/peers/install.sh` installs into (`MCP_TEST_PEERS_DIR` overrides it).
pub fn peers_dir() -> PathBuf {
    std::env::var_os("MCP_TEST_PEERS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/peers"))
}

/// The directory of the peer scripts in the source tree.
pub fn scripts_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers")
}

fn log_file(name: &str) -> (PathBuf, std::fs::File) {
    let dir = peers_dir().join("logs");
    std::fs::create_dir_all(&dir).expect("create peer log dir");
    let path = dir.join(format!("{name}-{}.log", std::process::id()));
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .expect("open peer log");
    (path, file)
}

/// Spawns a peer that prints `READY <port>` on stdout once it listens.
pub fn spawn_announcing(name: &str, mut command: Command) -> PeerProcess {
    let (log, file) = log_file(name);
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(file))
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {name}: {e}"));
    let stdin = child.stdin.take();
    let stdout = child.stdout.take().expect("piped stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        for line in lines.by_ref() {
            let Ok(line) = line else { break };
            if let Some(port) = line.strip_prefix("READY ") {
                let _ = tx.send(port.trim().parse::<u16>().ok());
                break;
            }
        }
        // Keep draining so the child never blocks on a full pipe.
        for _ in lines {}
    });
    let port = match rx.recv_timeout(START_TIMEOUT) {
        Ok(Some(port)) => port,
        _ => {
            let _ = child.kill();
            panic!("{name} did not announce its port; see {}", log.display());
        }
    };
    let peer = PeerProcess {
        child,
        stdin,
        port,
        log,
    };
    wait_listening(name, &peer);
    peer
}

/// Spawns a peer that listens on `port` (chosen by us) and prints nothing useful. The command
/// runs behind a shell guard that kills it when our stdin pipe closes.
pub fn spawn_on_port(
    name: &str,
    program: &Path,
    args: &[&str],
    envs: &[(&str, String)],
    port: u16,
) -> PeerProcess {
    let (log, file) = log_file(name);
    let mut command = Command::new("bash");
    command
        .arg("-c")
        .arg(r#""$@" & child=$!; cat > /dev/null; kill "$child" 2>/dev/null; wait "$child""#)
        .arg("peer-guard")
        .arg(program)
        .args(args)
        .envs(envs.iter().map(|(k, v)| (*k, v.as_str())))
        .stdin(Stdio::piped())
        .stdout(Stdio::from(file.try_clone().expect("clone log")))
        .stderr(Stdio::from(file));
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {name}: {e}"));
    let stdin = child.stdin.take();
    let peer = PeerProcess {
        child,
        stdin,
        port,
        log,
    };
    wait_listening(name, &peer);
    peer
}

/// A port that was free a moment ago (for peers that cannot bind port 0 and report it).
/// Another process may take it before the peer binds it: prefer [`spawn_serving`] for the
/// binary's own server and [`closed_port`] for a port where nothing may listen.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .expect("find a free port")
}

fn wait_listening(name: &str, peer: &PeerProcess) {
    let addr = SocketAddr::from(([127, 0, 0, 1], peer.port));
    let deadline = Instant::now() + START_TIMEOUT;
    while Instant::now() < deadline {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!(
        "{name} is not listening on {addr}; see {}",
        peer.log.display()
    );
}

/// A loopback port where nothing listens, for "connection refused": bound by this test
/// process and never listened on, for as long as the process lives, so a connection to it is
/// refused and no other process can take the port in the meantime.
pub fn closed_port() -> u16 {
    static HELD: std::sync::OnceLock<(tokio::net::TcpSocket, u16)> = std::sync::OnceLock::new();
    HELD.get_or_init(|| {
        let socket = tokio::net::TcpSocket::new_v4().expect("a TCP socket");
        socket
            .bind(SocketAddr::from(([127, 0, 0, 1], 0)))
            .expect("bind 127.0.0.1:0");
        let port = socket.local_addr().expect("the bound port").port();
        (socket, port)
    })
    .1
}

/// The binary serving (`serve --port 0`, or a Standby start with its port variable set to
/// 0), with the address it announced. No port is picked before the server binds it, so no
/// other process can take it in between. Everything the server prints on standard error is
/// copied to `log`; dropping the value stops the server and finishes that copy.
pub struct Serving {
    child: Child,
    copier: Option<std::thread::JoinHandle<()>>,
    /// Where the server listens.
    pub addr: SocketAddr,
}

impl Serving {
    /// Starts `command` (its standard error is taken over) and waits for the line saying
    /// where it serves.
    pub fn spawn(mut command: Command, log: &Path) -> Serving {
        use std::io::Write;
        let mut file = std::fs::File::create(log).expect("create the server log");
        let mut child = command
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the binary");
        let stderr = child.stderr.take().expect("piped stderr");
        let (tx, rx) = mpsc::channel();
        let copier = std::thread::spawn(move || {
            let mut announced = Some(tx);
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let _ = writeln!(file, "{line}");
                if let Some(addr) = served_address(&line)
                    && let Some(tx) = announced.take()
                {
                    let _ = tx.send(addr);
                }
            }
        });
        let mut serving = Serving {
            child,
            copier: Some(copier),
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
        };
        match rx.recv_timeout(START_TIMEOUT) {
            Ok(addr) => serving.addr = addr,
            Err(_) => {
                drop(serving);
                let printed = std::fs::read_to_string(log).unwrap_or_default();
                panic!("the server did not say where it listens: {printed}");
            }
        }
        serving
    }
}

/// The address in the binary's "serving the ledger read-only on http://ADDR" line.
fn served_address(line: &str) -> Option<SocketAddr> {
    let (_, rest) = line.split_once("serving the ledger read-only on http://")?;
    rest.split_whitespace().next()?.parse().ok()
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(copier) = self.copier.take() {
            let _ = copier.join();
        }
    }
}
