//! The ASTRA-sim system layer configuration (`system.json`) to go with the analytical
//! network (`astra_sim.rs`): per dimension, the collective implementation railyard's model
//! chose for the design, so a packet-level run starts from the same algorithms.
//!
//! Each of all-reduce, all-gather, reduce-scatter and all-to-all is evaluated at 1 GiB (the
//! sidebar's default size) and its algorithm becomes one implementation per dimension, by
//! the names astra-sim's `Sys` parses (`ring`, `direct`, `doubleBinaryTree`):
//! - ring, MLX's two-way ring and hierarchical: `ring` in every dimension (astra-sim runs a
//!   multi-dimensional collective as one ring per dimension, railyard's hierarchical);
//! - NCCL's tree: `ring` inside the domain (its chains), `doubleBinaryTree` across domains;
//! - NVLS: `direct` inside the domain (each GPU reduces its share through the switch in
//!   one step), `doubleBinaryTree` across domains for NVLS-tree;
//! - SHARP: astra-sim has no in-network reduction; `ring`, what NCCL runs without it;
//! - direct (all-to-all): `direct`.
//!
//! The other settings are those of astra-sim's own examples
//! (`examples/system/native_collectives/Ring_4chunks.json`, `HGX-H100-validated.json`):
//! LIFO, an endpoint delay of 10 cycles, one active chunk per dimension, 4 dataset splits,
//! local-bandwidth-aware collectives, no boost mode. `local-mem-bw` is the GPU's memory
//! bandwidth (GB/s) from the catalog, left out when the catalog does not know it or the
//! nodes' GPUs differ. A `railyard` object records what was chosen and why; astra-sim reads
//! only the keys it knows.

use super::astra_sim::dimensions;
use super::{ExportError, ExportFormat};
use crate::analysis::collective::{Algorithm, CollectiveQuery, Op, collective};
use crate::model::{Bytes, Catalog, Design, DeviceKind};
use serde_json::{Map, Value, json};

/// The size each collective is chosen at: 1 GiB, as the sidebar asks by default.
const CHOSEN_AT: Bytes = Bytes(1 << 30);

/// The collectives astra-sim configures, with its key for each.
const KEYS: [(Op, &str); 4] = [
    (Op::AllReduce, "all-reduce-implementation"),
    (Op::AllGather, "all-gather-implementation"),
    (Op::ReduceScatter, "reduce-scatter-implementation"),
    (Op::AllToAll, "all-to-all-implementation"),
];

/// astra-sim's implementation of `algorithm` in each of `dims` dimensions (1 or 2).
pub fn implementations(algorithm: Algorithm, dims: usize) -> Vec<&'static str> {
    let (inside, across) = match algorithm {
        Algorithm::Ring
        | Algorithm::BidirectionalRing
        | Algorithm::Hierarchical
        | Algorithm::Sharp => ("ring", "ring"),
        Algorithm::Tree => ("ring", "doubleBinaryTree"),
        Algorithm::Nvls | Algorithm::NvlsTree => ("direct", "doubleBinaryTree"),
        Algorithm::Direct | Algorithm::Mesh => ("direct", "direct"),
    };
    let mut out = vec![inside];
    out.extend(std::iter::repeat_n(across, dims.saturating_sub(1)));
    out
}

pub fn design_to_astra_sim_system(
    design: &Design,
    catalog: &Catalog,
) -> Result<String, ExportError> {
    // The network file's refusals hold here too: the dimensions are the same.
    let dims = dimensions(design)
        .map_err(|e| match e {
            ExportError::Unsupported { reason, .. } => ExportError::Unsupported {
                format: ExportFormat::AstraSimSystem,
                reason,
            },
            other => other,
        })?
        .dims
        .len();
    let mut config = Map::new();
    config.insert("scheduling-policy".into(), json!("LIFO"));
    config.insert("endpoint-delay".into(), json!(10));
    config.insert("active-chunks-per-dimension".into(), json!(1));
    config.insert("preferred-dataset-splits".into(), json!(4));
    let mut chosen = Map::new();
    for (op, key) in KEYS {
        let r = collective(design, catalog, &CollectiveQuery::new(op, CHOSEN_AT)).map_err(|e| {
            ExportError::Unsupported {
                format: ExportFormat::AstraSimSystem,
                reason: format!("the model cannot run {op} on the design: {e}"),
            }
        })?;
        config.insert(key.into(), json!(implementations(r.algorithm, dims)));
        chosen.insert(
            op.cli_name().into(),
            json!(format!(
                "{}/{} at 1 GiB: {}",
                r.algorithm,
                r.protocol.label(),
                r.why
            )),
        );
    }
    config.insert("collective-optimization".into(), json!("localBWAware"));
    if let Some(bw) = memory_gbyte_s(design, catalog) {
        config.insert("local-mem-bw".into(), json!(bw));
    }
    config.insert("boost-mode".into(), json!(0));
    config.insert(
        "railyard".into(),
        json!({
            "design": design.name,
            "chosen": Value::Object(chosen),
            "note": "implementations per dimension (1: scale-up domain, 2: network) from \
                     railyard's choice at 1 GiB; SHARP has no astra-sim equivalent and is \
                     written as ring",
        }),
    );
    let mut text = serde_json::to_string_pretty(&Value::Object(config))
        .map_err(|_| ExportError::NotText(ExportFormat::AstraSimSystem))?;
    text.push('\n');
    Ok(text)
}

/// The GPUs' memory bandwidth (GB/s) when every node has the same GPU and the catalog
/// knows it.
fn memory_gbyte_s(design: &Design, catalog: &Catalog) -> Option<f64> {
    let mut gpus = design.devices.iter().filter_map(|d| match &d.kind {
        DeviceKind::GpuNode(n) => Some(&n.gpu),
        _ => None,
    });
    let first = gpus.next()?;
    if gpus.any(|g| g != first) {
        return None;
    }
    catalog.gpu(first)?.memory_gbyte_s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_algorithm_maps_to_one_implementation_per_dimension() {
        assert_eq!(implementations(Algorithm::Ring, 2), ["ring", "ring"]);
        assert_eq!(
            implementations(Algorithm::Tree, 2),
            ["ring", "doubleBinaryTree"]
        );
        assert_eq!(implementations(Algorithm::Nvls, 1), ["direct"]);
        assert_eq!(
            implementations(Algorithm::NvlsTree, 2),
            ["direct", "doubleBinaryTree"]
        );
        assert_eq!(implementations(Algorithm::Sharp, 2), ["ring", "ring"]);
        assert_eq!(implementations(Algorithm::Direct, 2), ["direct", "direct"]);
    }
}
