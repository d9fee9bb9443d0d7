//! A virtual X server for the tests that start the real binary under a display.

use std::ops::Range;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Kills the child on drop so a failed assertion never leaves a process behind.
pub struct Reaped(pub Child);

impl Drop for Reaped {
    /// Asks the child to end first (SIGTERM), then kills it: a SIGKILLed Xvfb leaves its lock
    /// file and socket in /tmp, and display numbers would run out run by run.
    fn drop(&mut self) {
        // Already reaped: its number may belong to another process by now.
        if let Ok(Some(_)) = self.0.try_wait() {
            return;
        }
        let asked = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        let start = Instant::now();
        while asked && start.elapsed() < Duration::from_secs(3) {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Whether display `n` is taken: its lock file names a live process, or its socket exists
/// without a lock file. A lock whose process is gone (a server killed outright) is stale,
/// and Xvfb takes such a display over.
fn display_taken(n: u32) -> bool {
    let lock = PathBuf::from(format!("/tmp/.X{n}-lock"));
    match std::fs::read_to_string(&lock) {
        Ok(text) => text
            .trim()
            .parse::<u32>()
            .map_or(true, |pid| PathBuf::from(format!("/proc/{pid}")).exists()),
        Err(_) => PathBuf::from(format!("/tmp/.X11-unix/X{n}")).exists(),
    }
}

/// Whether `name` runs at all (`arg` is something it answers without side effects).
pub fn tool_available(name: &str, arg: &str) -> bool {
    Command::new(name)
        .arg(arg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// Starts Xvfb on the first display number in `displays` that is free, and waits until it
/// accepts connections rather than sleeping a fixed time. Each test file passes its own range
/// so files running at the same time cannot pick the same number.
pub fn start_xvfb(displays: Range<u32>) -> (Reaped, u32) {
    let display = displays
        .clone()
        .find(|&n| !display_taken(n))
        .unwrap_or_else(|| panic!("a free X display number in {displays:?}"));
    let child = Command::new("Xvfb")
        .arg(format!(":{display}"))
        // No reset when the last client leaves: the tests' probes (xdotool, the readiness
        // check below) come and go, and a client connecting during a reset is refused.
        .args([
            "-screen",
            "0",
            "1280x800x24",
            "-nolisten",
            "tcp",
            "-noreset",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("Xvfb starts");
    let xvfb = Reaped(child);
    // Ready once it accepts a connection, not when its socket file appears: the file comes
    // before the server listens, and a stale one from a killed server is there all along.
    let socket = PathBuf::from(format!("/tmp/.X11-unix/X{display}"));
    let start = Instant::now();
    while std::os::unix::net::UnixStream::connect(&socket).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "Xvfb :{display} did not come up"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    (xvfb, display)
}
