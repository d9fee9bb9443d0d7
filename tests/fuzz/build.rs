//! The `cli_args` target fuzzes the real command-line definition in `src/cli.rs`, whose
//! `Cli` struct is private. This copies that file into OUT_DIR without its inner doc
//! comments and attributes (which `include!` cannot take), so the target can compile it as
//! a module of its own and call `Cli::try_parse_from` from inside that module.

use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("manifest dir"));
    let source = manifest.join("../../src/cli.rs");
    println!("cargo::rerun-if-changed={}", source.display());
    let text = std::fs::read_to_string(&source).expect("read src/cli.rs");
    let body: String = text
        .lines()
        .filter(|line| {
            let t = line.trim_start();
            !(t.starts_with("//!") || t.starts_with("#!["))
        })
        .map(|line| format!("{line}\n"))
        .collect();
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("out dir")).join("cli.rs");
    std::fs::write(out, body).expect("write cli.rs copy");
}
