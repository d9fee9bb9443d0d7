//! The command line as a user runs it: the built binary, its output captured.

use std::process::{Command, Output};

pub fn railyard(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_railyard"))
        .args(args)
        .output()
        .expect("the railyard binary runs")
}
