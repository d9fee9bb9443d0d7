//! Command-line arguments: bytes split at NUL into argv. The real `Cli` of src/cli.rs
//! parses them (value parsers for node counts, ratios and sizes included) and any error
//! renders; each argument also goes through the size and name parsers on its own.

#![no_main]

use libfuzzer_sys::fuzz_target;
use railyard::analysis::collective::{AlgoChoice, Op, Routing, parse_size};
use railyard::generate::Template;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;

// `crate::…` paths inside src/cli.rs resolve to the library through these.
pub use railyard::{analysis, app, generate, io, model};

#[allow(dead_code, unused_imports, clippy::all)]
mod cli {
    include!(concat!(env!("OUT_DIR"), "/cli.rs"));

    /// Parses as the binary does; an error must render to text.
    pub fn parse(args: &[std::ffi::OsString]) -> bool {
        match <Cli as clap::Parser>::try_parse_from(args) {
            Ok(_) => true,
            Err(e) => {
                assert!(!e.render().to_string().trim().is_empty());
                false
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut args: Vec<OsString> = vec!["railyard".into()];
    args.extend(
        data.split(|&b| b == 0)
            .take(64)
            .map(|a| OsStr::from_bytes(a).to_os_string()),
    );
    for arg in &args[1..] {
        if let Some(s) = arg.to_str() {
            if let Ok(size) = parse_size(s) {
                // A size that parses reads back the same number when written plainly.
                assert_eq!(parse_size(&size.0.to_string()), Ok(size));
            }
            let _ = Op::from_cli_name(s);
            let _ = AlgoChoice::from_cli_name(s);
            let _ = Routing::from_cli_name(s);
            let _ = Template::from_cli_name(s);
        }
    }
    cli::parse(&args);
});
