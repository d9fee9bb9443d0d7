//! Starts the real binary under a virtual X server and checks that the window comes up and
//! the program exits cleanly: `RAILYARD_EXIT_AFTER_FIRST_FRAME=1` makes it close itself after
//! drawing its first frame.
//!
//! Needs `Xvfb` (package `xvfb`). Without it the test prints why and passes, unless `CI` is
//! set: on CI a missing Xvfb is a failure.

mod common;

use common::xvfb::{Reaped, start_xvfb, tool_available};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const EXIT_TIMEOUT: Duration = Duration::from_secs(120);

/// One X server at a time: two tests picking a free display number at once could collide.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn wait_with_timeout(child: &mut Child, timeout: Duration) -> Option<std::process::ExitStatus> {
    let start = Instant::now();
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        if start.elapsed() > timeout {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn run_binary(display: u32, args: &[&str]) -> (std::process::ExitStatus, String) {
    let config_home = tempfile::tempdir().expect("temp dir");
    let child = Command::new(env!("CARGO_BIN_EXE_railyard"))
        .args(args)
        .env("DISPLAY", format!(":{display}"))
        .env_remove("WAYLAND_DISPLAY")
        .env("RAILYARD_EXIT_AFTER_FIRST_FRAME", "1")
        // Keep the user's saved preferences out of it, and theirs out of ours.
        .env("XDG_DATA_HOME", config_home.path())
        .env("XDG_CONFIG_HOME", config_home.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the railyard binary starts");
    let mut app = Reaped(child);
    let status = wait_with_timeout(&mut app.0, EXIT_TIMEOUT);
    let mut stderr = String::new();
    if let Some(mut pipe) = app.0.stderr.take() {
        use std::io::Read;
        let _ = pipe.read_to_string(&mut stderr);
    }
    let status = status.unwrap_or_else(|| {
        panic!("railyard did not exit within {EXIT_TIMEOUT:?}; stderr:\n{stderr}")
    });
    (status, stderr)
}

fn skip_without_xvfb() -> bool {
    if tool_available("Xvfb", "-help") {
        return false;
    }
    if std::env::var_os("CI").is_some() {
        panic!("Xvfb is not installed, and CI is set: install the `xvfb` package");
    }
    println!("skipping the window smoke test: Xvfb is not installed (apt-get install xvfb)");
    true
}

#[test]
fn window_opens_draws_and_exits_cleanly() {
    if skip_without_xvfb() {
        return;
    }
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (_xvfb, display) = start_xvfb(90..200);
    let (status, stderr) = run_binary(display, &[]);
    assert!(status.success(), "exit status {status}; stderr:\n{stderr}");
    assert!(
        stderr.contains("first frame drawn"),
        "the app never drew a frame; stderr:\n{stderr}"
    );
}

#[test]
fn window_opens_a_file_given_on_the_command_line() {
    if skip_without_xvfb() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tiny.ron");
    let design = railyard::model::Design::new("tiny");
    railyard::io::save_design(&path, &design).expect("writes a design file");
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (_xvfb, display) = start_xvfb(90..200);
    let path_text = path.to_string_lossy().into_owned();
    let (status, stderr) = run_binary(display, &[&path_text]);
    assert!(status.success(), "exit status {status}; stderr:\n{stderr}");
    assert!(stderr.contains("first frame drawn"), "stderr:\n{stderr}");
    assert!(
        !stderr.contains("tiny.ron"),
        "the file did not open; stderr:\n{stderr}"
    );

    // A broken file still opens the window, and the terminal names file, line and column.
    let broken = dir.path().join("broken.ron");
    std::fs::write(&broken, "(\n  version: 1,\n  design: (name: ,\n)").expect("writes");
    let broken_text = broken.to_string_lossy().into_owned();
    let (status, stderr) = run_binary(display, &[&broken_text]);
    assert!(status.success(), "exit status {status}; stderr:\n{stderr}");
    assert!(
        stderr.contains(&format!("{broken_text}:3:")),
        "no file:line:column for the broken file; stderr:\n{stderr}"
    );
}
