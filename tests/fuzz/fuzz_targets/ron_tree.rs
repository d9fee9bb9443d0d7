//! The lossless RON tree that carries old files through migrations: any text must parse or
//! be refused (deep nesting included, without overflowing the stack), and what parses must
//! print back to text that parses to the same tree.

#![no_main]

use libfuzzer_sys::fuzz_target;
use railyard::io::ron_tree::{parse, print};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(doc) = parse(text) else {
        return;
    };
    let printed = print(&doc);
    let again =
        parse(&printed).unwrap_or_else(|e| panic!("printed tree does not parse: {e}\n{printed}"));
    assert_eq!(again, doc, "print then parse changed the tree:\n{printed}");
});
