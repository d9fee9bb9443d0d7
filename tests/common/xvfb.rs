//! A virtual X server for the tests that start the real binary under a display.

use std::ops::Range;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Kills the child on drop so a failed assertion never leaves a process behind.
pub struct Reaped(pub Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
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

/// Starts Xvfb on the first display number in `displays` whose lock file and socket are both
/// free, and waits for its socket rather than sleeping a fixed time. Each test file passes
/// its own range so files running at the same time cannot pick the same number.
pub fn start_xvfb(displays: Range<u32>) -> (Reaped, u32) {
    let display = displays
        .clone()
        .find(|n| {
            !PathBuf::from(format!("/tmp/.X{n}-lock")).exists()
                && !PathBuf::from(format!("/tmp/.X11-unix/X{n}")).exists()
        })
        .unwrap_or_else(|| panic!("a free X display number in {displays:?}"));
    let child = Command::new("Xvfb")
        .arg(format!(":{display}"))
        .args(["-screen", "0", "1280x800x24", "-nolisten", "tcp"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("Xvfb starts");
    let xvfb = Reaped(child);
    let socket = PathBuf::from(format!("/tmp/.X11-unix/X{display}"));
    let start = Instant::now();
    while !socket.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "Xvfb :{display} did not come up"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    (xvfb, display)
}
