//! Topology templates: single node, star, fat-tree, rail-optimized, rail-only, direct cables
//! (ring, chain, mesh) and NVL72 racks. Switch and cable counts follow from the radix; a
//! template that cannot be built with the chosen parts says why.

mod builder;
mod clos;
mod direct;
mod fabric;
mod nvl72;
mod parts;
mod small;
mod upright;
mod wrap;

/// The templates' layout rules, for placing devices read from a file without positions
/// (`io::import`) the way a generated design is placed.
pub(crate) use builder::{SPACING, row_y, spread};

use crate::model::{Catalog, Design, PartId, Transport};

/// Which template to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Template {
    Single,
    Star,
    FatTree,
    RailOptimized,
    RailOnly,
    Ring,
    Chain,
    Mesh,
    Nvl72,
}

impl Template {
    pub const ALL: [Template; 9] = [
        Template::Single,
        Template::Star,
        Template::FatTree,
        Template::RailOptimized,
        Template::RailOnly,
        Template::Ring,
        Template::Chain,
        Template::Mesh,
        Template::Nvl72,
    ];

    /// Whether the template cables nodes to each other directly, with a cable part the user
    /// may choose (`TemplateSpec::link`).
    pub fn takes_a_cable(self) -> bool {
        matches!(self, Template::Ring | Template::Chain | Template::Mesh)
    }

    /// Whether the template builds switches (`TemplateSpec::switch`, oversubscription, tiers).
    pub fn builds_switches(self) -> bool {
        matches!(
            self,
            Template::Star
                | Template::FatTree
                | Template::RailOptimized
                | Template::RailOnly
                | Template::Nvl72
        )
    }

    /// The name used on the command line.
    pub fn cli_name(self) -> &'static str {
        match self {
            Template::Single => "single",
            Template::Star => "star",
            Template::FatTree => "fat-tree",
            Template::RailOptimized => "rail-optimized",
            Template::RailOnly => "rail-only",
            Template::Ring => "ring",
            Template::Chain => "chain",
            Template::Mesh => "mesh",
            Template::Nvl72 => "nvl72",
        }
    }

    pub fn from_cli_name(name: &str) -> Option<Template> {
        Template::ALL.into_iter().find(|t| t.cli_name() == name)
    }
}

/// Parameters of a template run; `None` means "the template's sensible default".
#[derive(Debug, Clone, PartialEq)]
pub struct TemplateSpec {
    pub template: Template,
    /// Number of GPU nodes (for `nvl72`: number of NVL72 racks).
    pub nodes: Option<u32>,
    /// Node part (for `nvl72`: the rack-scale domain part, such as `gb200-nvl72`).
    pub node: Option<PartId>,
    pub gpu: Option<PartId>,
    pub gpus_per_node: Option<u32>,
    pub pcie_generation: Option<u8>,
    pub nvlink_bridge: bool,
    pub nic: Option<PartId>,
    pub nics_per_node: Option<u32>,
    pub transport: Option<Transport>,
    pub switch: Option<PartId>,
    /// Cable or link part for direct-cable templates (`tb4`, `tb5`, a DAC id...).
    pub link: Option<PartId>,
    /// Downlink to uplink bandwidth ratio at the leaves (1.0 is non-blocking).
    pub oversubscription: f64,
    /// Switch tiers: 2 or 3 for fat-tree, rail-optimized and nvl72. For rail-only, 1 means
    /// one switch per rail or a refusal; 2 (the default) adds per-rail spines when a rail
    /// outgrows one switch.
    pub tiers: u8,
}

impl TemplateSpec {
    pub fn new(template: Template) -> Self {
        Self {
            template,
            nodes: None,
            node: None,
            gpu: None,
            gpus_per_node: None,
            pcie_generation: None,
            nvlink_bridge: false,
            nic: None,
            nics_per_node: None,
            transport: None,
            switch: None,
            link: None,
            oversubscription: 1.0,
            tiers: 2,
        }
    }
}

/// " (did you mean `a` or `b`?)", or nothing without candidates.
fn did_you_mean(like: &[String]) -> String {
    match like {
        [] => String::new(),
        [one] => format!(" (did you mean `{one}`?)"),
        [rest @ .., last] => format!(
            " (did you mean {} or `{last}`?)",
            rest.iter()
                .map(|id| format!("`{id}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

impl GenerateError {
    /// `id` is not in `catalog`: the error, with the ids that contain it.
    pub(crate) fn unknown_part(catalog: &Catalog, id: &PartId) -> GenerateError {
        GenerateError::UnknownPart {
            id: id.clone(),
            like: catalog
                .ids_like(id.as_str(), 4)
                .into_iter()
                .map(String::from)
                .collect(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GenerateError {
    #[error(
        "unknown part `{id}`{}: `railyard catalog` lists the parts; to add your own, write \
         them to a file (`railyard catalog --ron --part ID` prints one to start from) and pass \
         `--catalog FILE`",
        did_you_mean(like)
    )]
    UnknownPart {
        id: PartId,
        /// Catalog ids that contain the one given.
        like: Vec<String>,
    },
    #[error("part `{id}` is not a {expected}")]
    WrongKind { id: PartId, expected: &'static str },
    /// The template cannot be built with these parts; the message says why.
    #[error("{0}")]
    Infeasible(String),
}

/// Runs a template into a new design.
///
/// Devices are named for people ("node-07", "leaf-su2-r3", "spine-04") and laid out in
/// rows: core on top, then spines, leaves, and nodes at the bottom grouped by rack.
/// Switch ports are numbered from 0 per switch, down ports before up ports; a node's port
/// i is its NIC i, its built-in ports follow the NICs (Thunderbolt first, then Ethernet).
pub fn generate(spec: &TemplateSpec, catalog: &Catalog) -> Result<Design, GenerateError> {
    if let Some(link) = &spec.link
        && !spec.template.takes_a_cable()
    {
        return Err(GenerateError::Infeasible(format!(
            "a cable part (`{link}`) applies to the ring, chain and mesh templates; `{}` leaves \
             each cable to the bill of materials, which prices it by its reach (a DAC inside a \
             rack, two transceivers between racks)",
            spec.template.cli_name()
        )));
    }
    if spec.oversubscription != 1.0
        && !matches!(
            spec.template,
            Template::FatTree | Template::RailOptimized | Template::RailOnly
        )
    {
        return Err(GenerateError::Infeasible(format!(
            "oversubscription (leaf down:up) applies to fat-tree, rail-optimized and \
             rail-only; `{}` has no leaf uplinks to thin",
            spec.template.cli_name()
        )));
    }
    match spec.template {
        Template::Single => small::single(spec, catalog),
        Template::Star => small::star(spec, catalog),
        Template::FatTree => fabric::fat_tree(spec, catalog),
        Template::RailOptimized => fabric::rail_optimized(spec, catalog),
        Template::RailOnly => fabric::rail_only(spec, catalog),
        Template::Ring | Template::Chain | Template::Mesh => direct::direct(spec, catalog),
        Template::Nvl72 => nvl72::nvl72(spec, catalog),
    }
}
