//! Headless Chromium (`/usr/bin/chromium`, installed by `.ci/run`) for the page tests: the
//! rendered DOM of a URL (`--dump-dom`) and screenshots (`--screenshot`) at a window size.
//! Tests skip with a note when the browser is absent.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Where Debian's Chromium lives.
pub const CHROMIUM: &str = "/usr/bin/chromium";

/// How long one browser invocation may take before the test fails.
const BROWSER_DEADLINE: Duration = Duration::from_secs(90);

/// A window: its size in CSS pixels and how many device pixels make one.
#[derive(Debug, Clone, Copy)]
pub struct Viewport {
    /// Width in CSS pixels.
    pub width: u32,
    /// Height in CSS pixels.
    pub height: u32,
    /// Device pixels per CSS pixel.
    pub scale: u32,
}

/// A desktop window.
pub const DESKTOP: Viewport = Viewport {
    width: 1400,
    height: 1000,
    scale: 1,
};
/// A phone: a common phone's CSS width, at twice the density. Chromium's windows are never
/// narrower than 500 pixels, so a 390-pixel layout is measured in a frame of that width.
pub const PHONE: Viewport = Viewport {
    width: 390,
    height: 844,
    scale: 2,
};

/// Whether the browser is installed.
pub fn available() -> bool {
    Path::new(CHROMIUM).exists()
}

/// `target/` of the checkout (created: with CARGO_TARGET_DIR elsewhere it may not exist).
pub fn target_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    std::fs::create_dir_all(&dir).expect("create target/");
    dir
}

/// Runs headless Chromium on `url` in a window of `viewport` with `extra` (e.g. `--dump-dom`)
/// and returns its standard output. Stdout goes to a file, so a large DOM cannot fill a pipe
/// while we wait.
pub fn chromium(url: &str, viewport: Viewport, extra: &str) -> String {
    let profile = tempfile::tempdir().expect("browser profile dir");
    let stdout_path = profile.path().join("stdout.txt");
    let stdout = std::fs::File::create(&stdout_path).expect("stdout file");
    let mut child = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--no-proxy-server",
        ])
        .arg(format!(
            "--window-size={},{}",
            viewport.width, viewport.height
        ))
        .arg(format!(
            "--screen-info={{{}x{} devicePixelRatio={}}}",
            viewport.width, viewport.height, viewport.scale
        ))
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(extra)
        .arg(url)
        .stdout(stdout)
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    let started = Instant::now();
    loop {
        if child.try_wait().expect("wait for chromium").is_some() {
            break;
        }
        if started.elapsed() > BROWSER_DEADLINE {
            let _ = child.kill();
            panic!("chromium did not finish with {url}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    String::from_utf8_lossy(&std::fs::read(&stdout_path).expect("read stdout")).into_owned()
}

/// Writes a screenshot of `url` in `viewport` to `path` and checks it is an image.
pub fn screenshot(url: &str, viewport: Viewport, path: &Path) {
    let _ = std::fs::remove_file(path);
    chromium(url, viewport, &format!("--screenshot={}", path.display()));
    let bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    assert!(bytes > 1000, "no screenshot of {url} at {path:?}");
}

/// `url` of a local file.
pub fn file_url(path: &Path) -> String {
    format!("file://{}", path.display())
}
