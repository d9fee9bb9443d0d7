//! RJ-45 ports: the built-in 10 GbE of a workstation, a Mac Studio or a DGX Spark is
//! 10GBASE-T, so the bill of materials cables it with twisted pair and puts a 10GBASE-T SFP+
//! module in each SFP+ cage at the other end. Counts and prices worked out from the built-in
//! catalog: `cat6a` $8, `sfp-10gbase-t` $60 and 3 W.

mod common;

use common::design::preset;
use railyard::analysis::checks::checks;
use railyard::analysis::cost::{bom_lines, cost_summary};
use railyard::analysis::optic_cages::automatic_parts_text;
use railyard::generate::{Template, TemplateSpec, generate};
use railyard::io::export::cables::write_cable_plan;
use railyard::model::{Catalog, Design, PartId};

fn quantity(design: &Design, catalog: &Catalog, part: &str) -> u64 {
    bom_lines(design, catalog)
        .iter()
        .filter(|l| l.part.as_str() == part)
        .map(|l| l.quantity)
        .sum()
}

#[test]
fn a_workstation_star_on_an_sfp_switch_takes_cat6a_and_an_rj45_module_per_switch_port() {
    let catalog = Catalog::builtin();
    let design = preset("workstation-star-10gbe.ron");
    // Four workstations' on-board 10GBASE-T into four SFP+ ports of the CRS317.
    assert_eq!(quantity(&design, &catalog, "cat6a"), 4);
    assert_eq!(quantity(&design, &catalog, "sfp-10gbase-t"), 4);
    assert_eq!(quantity(&design, &catalog, "dac-10g"), 0);
    let lines = bom_lines(&design, &catalog);
    let summary = cost_summary(&lines);
    // 4 × $8 + 4 × $60.
    assert_eq!(summary.cables_optics.0, 272.0);
    let modules_w: f64 = lines
        .iter()
        .filter(|l| l.part.as_str() == "sfp-10gbase-t")
        .map(|l| l.total_power.0)
        .sum();
    assert_eq!(modules_w, 12.0);

    // The cut sheet: the cable at both ends, the module at the switch's end only.
    let mut csv = Vec::new();
    write_cable_plan(&design, &catalog, &mut csv).expect("cable plan");
    let text = String::from_utf8(csv).expect("utf-8");
    let row = text.lines().nth(1).expect("a cable row");
    assert!(row.contains(",cat6a,"), "{row}");
    assert!(row.ends_with(",,sfp-10gbase-t"), "{row}");

    // The inspector says what "automatic" buys.
    let text = automatic_parts_text(&design, &catalog, &design.links[0]).expect("a cable");
    assert_eq!(
        text,
        "cat6a, sfp-10gbase-t at switch-01 (RJ-45 in its SFP+ cage)"
    );
}

fn mac_pair(link: &str) -> Result<Design, railyard::generate::GenerateError> {
    let mut spec = TemplateSpec::new(Template::Chain);
    spec.nodes = Some(2);
    spec.node = Some(PartId::new("mac-studio-m3-ultra"));
    spec.link = Some(PartId::new(link));
    generate(&spec, &Catalog::builtin())
}

#[test]
fn two_macs_back_to_back_on_10gbe_take_one_cat6a_and_no_module() {
    let catalog = Catalog::builtin();
    let design = mac_pair("cat6a").expect("a pair on twisted pair");
    assert_eq!(design.links.len(), 1);
    assert_eq!(design.links[0].rate_gbit_s.gbit_s(), 10.0);
    assert_eq!(quantity(&design, &catalog, "cat6a"), 1);
    assert_eq!(quantity(&design, &catalog, "sfp-10gbase-t"), 0);
    assert!(
        checks(&design, &catalog)
            .iter()
            .all(|f| f.code != "connector-mismatch")
    );
}

#[test]
fn an_sfp_dac_is_refused_for_rj45_jacks_and_flagged_when_named_by_hand() {
    let catalog = Catalog::builtin();
    let err = mac_pair("dac-10g").expect_err("a DAC does not fit an RJ-45 jack");
    assert!(err.to_string().contains("RJ-45"), "{err}");

    // Drawn by hand: the twisted-pair pair with its cable swapped for the SFP+ DAC.
    let mut design = mac_pair("cat6a").expect("a pair");
    design.links[0].cable = Some(PartId::new("dac-10g"));
    let findings = checks(&design, &catalog);
    let misfit = findings
        .iter()
        .find(|f| f.code == "connector-mismatch")
        .expect("the DAC is flagged");
    assert!(misfit.message.contains("RJ-45"), "{}", misfit.message);
    assert_eq!(misfit.links, vec![design.links[0].id]);
}

#[test]
fn nic_ports_keep_their_dacs() {
    // The 25 GbE pair runs between ConnectX-4 Lx SFP28 cages: no RJ-45 end, so its DAC stays.
    let catalog = Catalog::builtin();
    let design = preset("rtx4090-pair-25gbe.ron");
    assert_eq!(quantity(&design, &catalog, "dac-25g"), 1);
    assert_eq!(quantity(&design, &catalog, "cat6a"), 0);
}
