//! The validation sets as the model reads them: measured rows grouped by the system (and the
//! design standing for it) that ran them, with the NCCL release and harness each system ran,
//! and the public sets shipped in `assets/validation/` (what `railyard validate` runs without
//! a file, and what the sidebar's and `eval`'s "published measurements" line draws on).

use super::measured::{
    MeasuredError, SystemsList, ValidationSystem, parse_measured_csv, parse_systems_csv,
};
use super::{DesignFileError, parse_design};
use crate::analysis::accuracy::{Published, PublishedSet, SystemClass};
use crate::analysis::validate::{MeasuredRow, predict_rows, set_aside_out_of_order};
use crate::model::{Catalog, Design};
use std::sync::OnceLock;

/// The public sets: measured rows, the systems list and the designs it names.
pub const PUBLIC_MEASURED: &str = include_str!("../../assets/validation/measured.csv");
pub const PUBLIC_SYSTEMS: &str = include_str!("../../assets/validation/systems.csv");
pub const PUBLIC_DESIGNS: &[(&str, &str)] = &[
    (
        "mac-mini-m4-pro-pair-jaccl.ron",
        include_str!("../../assets/validation/mac-mini-m4-pro-pair-jaccl.ron"),
    ),
    (
        "dgx-h100.ron",
        include_str!("../../assets/validation/dgx-h100.ron"),
    ),
    (
        "hgx-a100.ron",
        include_str!("../../assets/validation/hgx-a100.ron"),
    ),
    (
        "rtx2080ti-pair-no-p2p.ron",
        include_str!("../../assets/validation/rtx2080ti-pair-no-p2p.ron"),
    ),
    (
        "rtx2080ti-pair-nvlink.ron",
        include_str!("../../assets/validation/rtx2080ti-pair-nvlink.ron"),
    ),
    (
        "h100-pcie-pair-nvlink.ron",
        include_str!("../../assets/validation/h100-pcie-pair-nvlink.ron"),
    ),
    (
        "hgx-a100-2node-roce.ron",
        include_str!("../../assets/validation/hgx-a100-2node-roce.ron"),
    ),
    (
        "v100-2node-tcp.ron",
        include_str!("../../assets/validation/v100-2node-tcp.ron"),
    ),
    (
        "dgx-b200.ron",
        include_str!("../../assets/validation/dgx-b200.ron"),
    ),
    (
        "rtx4090-x4.ron",
        include_str!("../../assets/validation/rtx4090-x4.ron"),
    ),
    (
        "mac-studio-m2-ultra-x4-ring.ron",
        include_str!("../../assets/validation/mac-studio-m2-ultra-x4-ring.ron"),
    ),
    (
        "hgx-h20-2node-ib.ron",
        include_str!("../../assets/validation/hgx-h20-2node-ib.ron"),
    ),
    (
        "aws-p5-2node-efa.ron",
        include_str!("../../assets/validation/aws-p5-2node-efa.ron"),
    ),
    (
        "aws-p4de-2node-efa.ron",
        include_str!("../../assets/validation/aws-p4de-2node-efa.ron"),
    ),
    (
        "gb200-nvl72-rack.ron",
        include_str!("../../assets/validation/gb200-nvl72-rack.ron"),
    ),
    (
        "hgx-h100-2node-ib.ron",
        include_str!("../../assets/validation/hgx-h100-2node-ib.ron"),
    ),
    (
        "hgx-h100-4node-ib.ron",
        include_str!("../../assets/validation/hgx-h100-4node-ib.ron"),
    ),
    (
        "hgx-h100-8node-ib.ron",
        include_str!("../../assets/validation/hgx-h100-8node-ib.ron"),
    ),
];

/// The rows of one system, on its design (which runs the release the system ran).
#[derive(Debug, Clone)]
pub struct SystemRows {
    pub system: ValidationSystem,
    pub design: Design,
    pub rows: Vec<MeasuredRow>,
}

/// A measured file read against a systems list.
#[derive(Debug, Clone, Default)]
pub struct GroupedRows {
    /// Systems with at least one row, in the list's order.
    pub systems: Vec<SystemRows>,
    /// Rows that could not be read as one measurement (id, why).
    pub unreadable: Vec<(String, String)>,
    /// Rows of no listed system.
    pub unmatched: Vec<String>,
    /// Rows of a set the list names without a design (id, why it is not drawn).
    pub undrawn: Vec<(String, String)>,
}

/// Reads `measured`, gives each row to the system whose prefix it carries (its harness, and
/// the system's reason not to count it), sets aside rows out of order in their sweep, and
/// loads each system's design with `design_of`, running the release the list names for it or,
/// failing that, the one every row of it names.
pub fn group_rows<E: From<MeasuredError>>(
    measured: &str,
    list: &SystemsList,
    design_of: impl Fn(&ValidationSystem) -> Result<Design, E>,
) -> Result<GroupedRows, E> {
    let systems = &list.drawn;
    let mut grouped = GroupedRows::default();
    let mut by_system: Vec<Vec<MeasuredRow>> = vec![Vec::new(); systems.len()];
    for row in parse_measured_csv(measured)? {
        match row {
            Err(why) => grouped.unreadable.push(why),
            Ok(mut row) => match list.of(&row.id) {
                Some(Err(undrawn)) => grouped.undrawn.push((row.id, undrawn.why.clone())),
                Some(Ok(s)) => {
                    let i = systems
                        .iter()
                        .position(|x| std::ptr::eq(x, s))
                        .unwrap_or_default();
                    if row.excluded.is_none() {
                        row.excluded.clone_from(&s.not_counted);
                    }
                    row.harness = s.harness;
                    by_system[i].push(row);
                }
                None => grouped.unmatched.push(row.id),
            },
        }
    }
    for (system, mut rows) in systems.iter().zip(by_system) {
        if rows.is_empty() {
            continue;
        }
        set_aside_out_of_order(&mut rows);
        let mut design = design_of(system)?;
        let nccl = system.nccl.or_else(|| {
            let first = rows[0].nccl?;
            rows.iter().all(|r| r.nccl == Some(first)).then_some(first)
        });
        if nccl.is_some() {
            design.nccl_release = nccl;
        }
        grouped.systems.push(SystemRows {
            system: system.clone(),
            design,
            rows,
        });
    }
    Ok(grouped)
}

#[derive(Debug, thiserror::Error)]
pub enum PublicSetError {
    #[error("the public data sets: {0}")]
    Measured(#[from] MeasuredError),
    #[error("the public design {name}: {source}")]
    Design {
        name: String,
        source: Box<DesignFileError>,
    },
    #[error("the public systems list names {0}, which is not shipped")]
    Missing(String),
}

/// The public sets, grouped by system.
pub fn public_rows() -> Result<GroupedRows, PublicSetError> {
    let systems = parse_systems_csv(PUBLIC_SYSTEMS)?;
    group_rows(PUBLIC_MEASURED, &systems, |s| {
        let name = s.design.display().to_string();
        let text = PUBLIC_DESIGNS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| *t)
            .ok_or_else(|| PublicSetError::Missing(name.clone()))?;
        parse_design(text, &name).map_err(|e| PublicSetError::Design {
            name,
            source: Box::new(e),
        })
    })
}

/// The public sets predicted on their designs with the built-in catalog, each with its kind of
/// system: what a design's collective is checked against. Computed once (about 50 ms); empty
/// if the shipped sets could not be read, which the validation tests would catch first.
pub fn published() -> &'static Published {
    static PUBLISHED: OnceLock<Published> = OnceLock::new();
    PUBLISHED.get_or_init(|| {
        let catalog = Catalog::builtin();
        let Ok(grouped) = public_rows() else {
            return Published::default();
        };
        let sets = grouped
            .systems
            .into_iter()
            .filter_map(|s| {
                let class = SystemClass::of(&s.design, &catalog)?;
                let (rows, _) = predict_rows(&s.design, &catalog, &s.rows);
                Some(PublishedSet {
                    prefix: s.system.prefix,
                    class,
                    rows,
                })
            })
            .collect();
        Published { sets }
    })
}
