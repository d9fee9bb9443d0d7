//! Design files are data from anyone. Any bytes must either be refused with an error or
//! load into a design that evaluates without a panic, keeps every figure finite, and saves
//! and loads again unchanged.

#![no_main]

use libfuzzer_sys::fuzz_target;
use railyard::analysis::collective::{CollectiveQuery, Op, collective};
use railyard::analysis::evaluate;
use railyard::io::design_file::{design_to_string, load_design, parse_design};
use railyard::model::{Bytes, Catalog};
use std::sync::OnceLock;

fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(Catalog::builtin)
}

/// Bytes that are not UTF-8 go through the file loader, which reports where the bad byte is.
fn load_bytes(data: &[u8]) {
    static FILE: OnceLock<std::path::PathBuf> = OnceLock::new();
    let path = FILE.get_or_init(|| {
        std::env::temp_dir().join(format!("railyard-fuzz-{}.ron", std::process::id()))
    });
    if std::fs::write(path, data).is_ok() {
        let result = load_design(path);
        assert!(result.is_err(), "non-UTF-8 bytes loaded as a design");
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        load_bytes(data);
        return;
    };
    let design = match parse_design(text, "fuzz.ron") {
        Ok(d) => d,
        Err(e) => {
            // A refusal is one line for the status bar and the terminal.
            let message = e.to_string();
            assert!(!message.is_empty());
            assert!(!message.contains('\n'), "multi-line error: {message}");
            return;
        }
    };

    let m = evaluate(&design, catalog());
    for v in [
        m.bisection.value.gbit_s(),
        m.bisection.full.gbit_s(),
        m.cost.total.0,
        m.power.0,
    ] {
        assert!(v.is_finite(), "non-finite metric {v}: {m:?}");
    }
    for share in [m.bisection.ratio, m.switch_cost_share, m.network_cost_share]
        .into_iter()
        .flatten()
    {
        assert!(share.is_finite(), "non-finite share {share}");
    }

    // Small designs also get a collective; its numbers must be finite or it must refuse.
    if design.devices.len() <= 64 && design.links.len() <= 256 {
        let q = CollectiveQuery::new(Op::AllReduce, Bytes(1 << 20));
        if let Ok(r) = collective(&design, catalog(), &q) {
            for v in [
                r.time_us,
                r.algbw_gbyte_s,
                r.busbw_gbyte_s,
                r.busbw_bound_gbyte_s,
            ] {
                assert!(v.is_finite(), "non-finite collective figure {v}: {r:?}");
            }
        }
    }

    // What loads must save and load back to the same design.
    let saved = design_to_string(&design).expect("a loaded design encodes");
    let again = parse_design(&saved, "resaved.ron")
        .unwrap_or_else(|e| panic!("a saved design does not load: {e}\n{saved}"));
    assert_eq!(again, design, "save then load changed the design");
});
