//! Command-line arguments: bytes split at NUL into argv. The real `Cli` of src/cli/args.rs parses
//! them through `railyard::cli::check_args` (value parsers for node counts, ratios and sizes
//! included) and any error renders; each argument also goes through the size and name
//! parsers on its own.

#![no_main]

use libfuzzer_sys::fuzz_target;
use railyard::analysis::collective::{AlgoChoice, Op, Routing, parse_size};
use railyard::generate::Template;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;

/// Parses as the binary does; an error must render to text.
fn parse(args: &[OsString]) -> bool {
    match railyard::cli::check_args(args) {
        Ok(()) => true,
        Err(e) => {
            assert!(!e.render().to_string().trim().is_empty());
            false
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
    parse(&args);
});
