//! The BOM CSV opened by a real spreadsheet program: LibreOffice Calc, headless.
//!
//! Ignored by default because CI does not install LibreOffice (hundreds of megabytes for one
//! check). Run it by hand after changing the CSV writer:
//!
//! ```sh
//! apt-get install libreoffice-calc-nogui
//! cargo test --test libreoffice -- --ignored
//! ```
//!
//! Every preset's BOM is imported as UTF-8 CSV, saved as an OpenDocument spreadsheet, and
//! exported back to CSV from that spreadsheet; the cells that come back must be the cells
//! railyard wrote (same rows, same columns, same text, prices equal as numbers).

use std::path::Path;
use std::process::Command;

/// Comma separator (44), double quote (34), UTF-8 (76), data from line 1.
const CSV_FILTER_OPTIONS: &str = "44,34,76,1";

fn soffice(args: &[&str], dir: &Path) {
    let output = Command::new("soffice")
        .args(["--headless", "--norestore", "--nologo"])
        .arg(format!(
            "-env:UserInstallation=file://{}",
            dir.join("lo-profile").display()
        ))
        .args(args)
        .arg("--outdir")
        .arg(dir)
        .output()
        .expect("`soffice` runs (install libreoffice-calc-nogui)");
    assert!(
        output.status.success(),
        "soffice {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn read_rows(path: &Path) -> Vec<Vec<String>> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_path(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    reader
        .records()
        .map(|r| r.expect("a CSV record").iter().map(str::to_owned).collect())
        .collect()
}

fn same_cell(written: &str, read_back: &str) -> bool {
    if written == read_back {
        return true;
    }
    // Calc reads `true`/`false` as booleans and prints them as TRUE/FALSE.
    if matches!(written, "true" | "false") {
        return written.eq_ignore_ascii_case(read_back);
    }
    // Calc prints numbers its own way (1200.50 comes back as 1200.5).
    match (written.parse::<f64>(), read_back.parse::<f64>()) {
        (Ok(a), Ok(b)) => (a - b).abs() <= 1e-9 * a.abs().max(1.0),
        _ => false,
    }
}

#[test]
#[ignore = "needs LibreOffice (soffice) installed; run by hand"]
fn every_preset_bom_survives_a_round_trip_through_libreoffice_calc() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let presets = Path::new(env!("CARGO_MANIFEST_DIR")).join("presets");
    let mut checked = 0;
    for entry in std::fs::read_dir(&presets).expect("presets/") {
        let preset = entry.expect("a directory entry").path();
        let stem = preset.file_stem().and_then(|s| s.to_str()).expect("a name");
        let csv_path = dir.path().join(format!("{stem}.csv"));
        let status = Command::new(env!("CARGO_BIN_EXE_railyard"))
            .arg("bom")
            .arg(&preset)
            .arg("-o")
            .arg(&csv_path)
            .status()
            .expect("railyard runs");
        assert!(status.success(), "railyard bom {}", preset.display());

        let infilter = format!("--infilter=CSV:{CSV_FILTER_OPTIONS}");
        soffice(
            &[&infilter, "--convert-to", "ods", csv_path.to_str().unwrap()],
            dir.path(),
        );
        let ods_path = dir.path().join(format!("{stem}.ods"));
        assert!(ods_path.exists(), "Calc wrote {}", ods_path.display());

        // Back to CSV from the spreadsheet; under another name so it cannot be the original.
        let copy = dir.path().join(format!("{stem}-calc.ods"));
        std::fs::rename(&ods_path, &copy).expect("rename");
        let export = format!("csv:Text - txt - csv (StarCalc):{CSV_FILTER_OPTIONS}");
        soffice(
            &["--convert-to", &export, copy.to_str().unwrap()],
            dir.path(),
        );
        let back = dir.path().join(format!("{stem}-calc.csv"));

        let written = read_rows(&csv_path);
        let read_back = read_rows(&back);
        assert!(written.len() > 1, "{stem}: a header and parts");
        assert_eq!(written.len(), read_back.len(), "{stem}: row count");
        for (row, (w, r)) in written.iter().zip(&read_back).enumerate() {
            assert_eq!(w.len(), r.len(), "{stem} row {row}: column count");
            for (col, (a, b)) in w.iter().zip(r).enumerate() {
                assert!(
                    same_cell(a, b),
                    "{stem} row {row} column {col}: wrote {a:?}, Calc gave back {b:?}"
                );
            }
        }
        checked += 1;
    }
    assert!(checked >= 6, "the presets were found ({checked})");
}
