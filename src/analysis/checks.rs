//! Design checks: wiring that cannot work (ports over capacity, speed mismatches,
//! incompatible ends, dangling or reused ports), GPUs cut off from the rest, rail
//! misalignment and parts missing from the catalog.
//!
//! A few passes over devices and links with dense indexes (device and port tables rather
//! than hash maps), and messages formatted only for the checks that fire, so a design of
//! 131,072 GPUs is checked in milliseconds. Problems that repeat on many links of one device are
//! reported once for that device, listing the links, so a miswired fabric gives a readable
//! list rather than thousands of lines.

use crate::analysis::cost::{CableChoice, FastMap, LinkCables};
use crate::analysis::graph::DeviceIndex;
use crate::model::catalog::{NetFamily, NicSpec, NodeSpec, SwitchSpec};
use crate::model::{
    Catalog, Design, Device, DeviceId, DeviceKind, Endpoint, LinkId, LinkState, LinkTech, Part,
    PartCategory, PartId, PartSpec, Port, Switch,
};
use serde::Serialize;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Severity {
    /// The design cannot be built or cannot work as drawn.
    Error,
    /// It works, but worse than it looks or with part of the bill missing.
    Warning,
    Info,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    pub severity: Severity,
    /// Stable kebab-case code (see [`codes`]).
    pub code: &'static str,
    /// Names the devices by name.
    pub message: String,
    pub devices: Vec<DeviceId>,
    pub links: Vec<LinkId>,
}

/// The stable check codes.
pub mod codes {
    pub const PORTS_OVER_CAPACITY: &str = "ports-over-capacity";
    pub const SPEED_MISMATCH: &str = "speed-mismatch";
    pub const GPU_ISOLATED: &str = "gpu-isolated";
    pub const RAIL_MISALIGNED: &str = "rail-misaligned";
    pub const UNKNOWN_PART: &str = "unknown-part";
    pub const WRONG_PART_KIND: &str = "wrong-part-kind";
    pub const UNPRICED_PART: &str = "unpriced-part";
    pub const DANGLING_LINK: &str = "dangling-link";
    pub const SELF_LOOP: &str = "self-loop";
    pub const PORT_REUSED: &str = "port-reused";
    pub const INCOMPATIBLE_LINK: &str = "incompatible-link";
    pub const INVALID_LINK: &str = "invalid-link";
    pub const DUPLICATE_ID: &str = "duplicate-id";
    pub const DANGLING_DOMAIN: &str = "dangling-domain";
    pub const DOMAIN_OVER_CAPACITY: &str = "domain-over-capacity";
    pub const BREAKOUT_UNSUPPORTED: &str = "breakout-unsupported";
}

use codes::*;

/// How many names or links a message lists before "and N more".
const LIST_LIMIT: usize = 3;

/// Runs every check. Sorted by severity (errors first), then code; stable within a code.
pub fn checks(design: &Design, catalog: &Catalog) -> Vec<Check> {
    let mut out = Vec::new();
    let ctx = Ctx::new(design, catalog, &mut out);
    check_parts(&ctx, &mut out);
    check_devices(&ctx, &mut out);
    check_links(&ctx, &mut out);
    check_isolation(&ctx, &mut out);
    out.sort_by(|x, y| x.severity.cmp(&y.severity).then(x.code.cmp(y.code)));
    out
}

struct Ctx<'a> {
    design: &'a Design,
    catalog: &'a Catalog,
    /// Device id to its position in `design.devices`.
    index: DeviceIndex,
    /// Catalog lookups by id, done once per distinct id.
    parts: RefCell<FastMap<&'a PartId, Option<&'a Part>>>,
    /// The last lookup: neighbouring devices mostly use the same parts.
    last_part: RefCell<Option<(&'a PartId, Option<&'a Part>)>>,
    /// Each device's parts, by position in `design.devices`.
    resolved: Vec<Resolved<'a>>,
}

/// A device's model part (node, switch, domain or host model) and its NIC parts.
struct Resolved<'a> {
    model: Option<&'a Part>,
    nics: Vec<Option<&'a Part>>,
}

fn as_node(part: &Part) -> Option<&NodeSpec> {
    match &part.spec {
        PartSpec::Node(spec) => Some(spec),
        _ => None,
    }
}

fn as_nic(part: &Part) -> Option<&NicSpec> {
    match &part.spec {
        PartSpec::Nic(spec) => Some(spec),
        _ => None,
    }
}

fn as_switch(part: &Part) -> Option<&SwitchSpec> {
    match &part.spec {
        PartSpec::Switch(spec) => Some(spec),
        _ => None,
    }
}

impl<'a> Ctx<'a> {
    fn new(design: &'a Design, catalog: &'a Catalog, out: &mut Vec<Check>) -> Self {
        let index = DeviceIndex::with_repeats(design, |i| {
            let device = &design.devices[i];
            out.push(Check {
                severity: Severity::Error,
                code: DUPLICATE_ID,
                message: format!(
                    "device id {} is used twice (one is `{}`)",
                    device.id, device.name
                ),
                devices: vec![device.id],
                links: vec![],
            });
        });
        let mut ctx = Ctx {
            design,
            catalog,
            index,
            parts: RefCell::new(FastMap::default()),
            last_part: RefCell::new(None),
            resolved: Vec::new(),
        };
        ctx.resolved = design.devices.iter().map(|d| ctx.resolve(d)).collect();
        ctx
    }

    fn resolve(&self, device: &'a Device) -> Resolved<'a> {
        let (model, nics) = match &device.kind {
            DeviceKind::GpuNode(n) => (Some(&n.model), &n.nics[..]),
            DeviceKind::Host(h) => (h.model.as_ref(), &h.nics[..]),
            DeviceKind::Switch(s) => (Some(&s.model), &[][..]),
            DeviceKind::NvSwitchDomain(d) => (Some(&d.model), &[][..]),
        };
        Resolved {
            model: model.and_then(|m| self.part(m)),
            nics: nics.iter().map(|slot| self.part(&slot.part)).collect(),
        }
    }

    fn part(&self, id: &'a PartId) -> Option<&'a Part> {
        if let Some((last, found)) = *self.last_part.borrow()
            && last == id
        {
            return found;
        }
        let found = *self
            .parts
            .borrow_mut()
            .entry(id)
            .or_insert_with(|| self.catalog.get(id));
        *self.last_part.borrow_mut() = Some((id, found));
        found
    }

    fn node_spec(&self, id: &'a PartId) -> Option<&'a NodeSpec> {
        self.part(id).and_then(as_node)
    }

    fn device(&self, id: DeviceId) -> Option<&'a Device> {
        self.index.get(id).map(|i| &self.design.devices[i])
    }

    fn name(&self, id: DeviceId) -> String {
        match self.device(id) {
            Some(d) if !d.name.is_empty() => d.name.clone(),
            _ => id.to_string(),
        }
    }

    /// "a, b, c and 4 more".
    fn names(&self, ids: &[DeviceId]) -> String {
        list_with_more(ids.iter().map(|&id| self.name(id)), ids.len())
    }
}

fn list_with_more(items: impl Iterator<Item = String>, count: usize) -> String {
    let shown: Vec<String> = items.take(LIST_LIMIT).collect();
    let mut text = shown.join(", ");
    if count > shown.len() {
        let _ = write!(text, " and {} more", count - shown.len());
    }
    text
}

// ---------------------------------------------------------------- parts

#[derive(Default)]
struct Missing {
    devices: Vec<DeviceId>,
    links: Vec<LinkId>,
}

/// Unknown ids, ids of the wrong kind, and parts without a price.
fn check_parts<'a>(ctx: &Ctx<'a>, out: &mut Vec<Check>) {
    let catalog = ctx.catalog;
    let mut missing: BTreeMap<PartId, Missing> = BTreeMap::new();
    let mut missing_cables: BTreeMap<PartId, Missing> = BTreeMap::new();
    let mut wrong_kind: BTreeMap<(PartId, PartCategory), Vec<DeviceId>> = BTreeMap::new();
    let mut unpriced: BTreeSet<&PartId> = BTreeSet::new();

    // `billed`: the BOM prices the part on its own (GPUs inside a node's price are not).
    let mut visit =
        |id: &'a PartId, expected: Option<PartCategory>, billed: bool, device| match ctx.part(id) {
            None => missing.entry(id.clone()).or_default().devices.push(device),
            Some(part) => {
                if let Some(expected) = expected
                    && part.category() != expected
                {
                    wrong_kind
                        .entry((id.clone(), expected))
                        .or_default()
                        .push(device);
                } else if billed && part.price.is_none() {
                    unpriced.insert(&part.id);
                }
            }
        };
    for device in &ctx.design.devices {
        let nics = match &device.kind {
            DeviceKind::GpuNode(n) => {
                let gpus_billed = ctx
                    .node_spec(&n.model)
                    .is_some_and(|spec| !spec.gpus_included_in_price);
                visit(&n.model, Some(PartCategory::Node), true, device.id);
                visit(&n.gpu, Some(PartCategory::Gpu), gpus_billed, device.id);
                &n.nics[..]
            }
            DeviceKind::NvSwitchDomain(d) => {
                visit(&d.model, Some(PartCategory::Domain), true, device.id);
                &[]
            }
            DeviceKind::Switch(s) => {
                visit(&s.model, Some(PartCategory::Switch), true, device.id);
                &[]
            }
            DeviceKind::Host(h) => {
                // A host's model may be any priced part (there is no host spec).
                if let Some(model) = &h.model {
                    visit(model, None, true, device.id);
                }
                &h.nics[..]
            }
        };
        for slot in nics {
            visit(&slot.part, Some(PartCategory::Nic), true, device.id);
        }
    }

    // Derived cable ids repeat across thousands of links: look each distinct one up once.
    let mut known: FastMap<CableChoice<'_>, bool> = FastMap::default();
    let mut last_known: Option<(CableChoice<'_>, bool)> = None;
    let mut needs = LinkCables::new(catalog);
    for link in &ctx.design.links {
        let Some(need) = needs.need(link) else {
            continue;
        };
        if let CableChoice::Named(id) = need.choice {
            match ctx.part(id) {
                None => missing_cables
                    .entry(id.clone())
                    .or_default()
                    .links
                    .push(link.id),
                Some(part) if part.category() != PartCategory::Cable => {
                    missing_cables
                        .entry(id.clone())
                        .or_default()
                        .links
                        .push(link.id);
                }
                Some(part) => {
                    if part.price.is_none() {
                        unpriced.insert(&part.id);
                    }
                }
            }
            continue;
        }
        let exists = match last_known {
            Some((choice, exists)) if choice == need.choice => exists,
            _ => {
                let exists = *known
                    .entry(need.choice)
                    .or_insert_with(|| catalog.get(&need.choice.part_id()).is_some());
                last_known = Some((need.choice, exists));
                exists
            }
        };
        if !exists {
            missing_cables
                .entry(need.choice.part_id())
                .or_default()
                .links
                .push(link.id);
        }
    }
    for choice in known.keys() {
        if let Some(part) = catalog.get(&choice.part_id())
            && part.price.is_none()
        {
            unpriced.insert(&part.id);
        }
    }

    for (id, users) in missing {
        out.push(Check {
            severity: Severity::Error,
            code: UNKNOWN_PART,
            message: format!(
                "part `{id}` is not in the catalog (used by {}); its cost, power and specs are unknown",
                ctx.names(&users.devices)
            ),
            devices: users.devices,
            links: users.links,
        });
    }
    for (id, users) in missing_cables {
        let what = match ctx.catalog.get(&id) {
            Some(part) => format!(
                "`{id}` is a {}, not a cable or optic",
                part.category().label()
            ),
            None => format!("no cable or optic `{id}` in the catalog"),
        };
        out.push(Check {
            severity: Severity::Warning,
            code: UNKNOWN_PART,
            message: format!(
                "{what} for {} link(s) ({}); the bill of materials leaves their cabling out",
                users.links.len(),
                list_with_more(
                    users.links.iter().map(ToString::to_string),
                    users.links.len()
                )
            ),
            devices: vec![],
            links: users.links,
        });
    }
    for ((id, expected), devices) in wrong_kind {
        let actual = ctx
            .catalog
            .get(&id)
            .map_or("unknown part", |p| p.category().label());
        out.push(Check {
            severity: Severity::Error,
            code: WRONG_PART_KIND,
            message: format!(
                "`{id}` is a {actual} part but is used as a {} part by {}",
                expected.label(),
                ctx.names(&devices)
            ),
            devices,
            links: vec![],
        });
    }
    for id in unpriced {
        out.push(Check {
            severity: Severity::Info,
            code: UNPRICED_PART,
            message: format!("part `{id}` has no price in the catalog; the cost counts it at $0"),
            devices: vec![],
            links: vec![],
        });
    }
}

// ---------------------------------------------------------------- devices

/// Switch breakouts and NVSwitch domain membership.
fn check_devices(ctx: &Ctx<'_>, out: &mut Vec<Check>) {
    let mut members: FastMap<DeviceId, Vec<DeviceId>> = FastMap::default();
    for device in &ctx.design.devices {
        match &device.kind {
            DeviceKind::Switch(switch) => {
                let max = ctx.catalog.switch(&switch.model).map(|s| s.max_breakout);
                let bad = switch.breakout == 0 || max.is_some_and(|m| switch.breakout > m);
                if bad {
                    out.push(Check {
                        severity: Severity::Error,
                        code: BREAKOUT_UNSUPPORTED,
                        message: format!(
                            "{}: breakout {} is not possible on `{}` (1 to {})",
                            ctx.name(device.id),
                            switch.breakout,
                            switch.model,
                            max.unwrap_or(1)
                        ),
                        devices: vec![device.id],
                        links: vec![],
                    });
                }
            }
            DeviceKind::GpuNode(node) => {
                let Some(domain_id) = node.domain else {
                    continue;
                };
                match ctx.device(domain_id).map(|d| &d.kind) {
                    Some(DeviceKind::NvSwitchDomain(_)) => {
                        members.entry(domain_id).or_default().push(device.id);
                    }
                    _ => out.push(Check {
                        severity: Severity::Error,
                        code: DANGLING_DOMAIN,
                        message: format!(
                            "{} belongs to NVSwitch domain {domain_id}, which does not exist or is not an NVSwitch domain",
                            ctx.name(device.id)
                        ),
                        devices: vec![device.id],
                        links: vec![],
                    }),
                }
            }
            DeviceKind::NvSwitchDomain(_) | DeviceKind::Host(_) => {}
        }
    }
    let mut domains: Vec<_> = members.into_iter().collect();
    domains.sort_by_key(|(id, _)| *id);
    for (domain_id, trays) in domains {
        let Some(DeviceKind::NvSwitchDomain(domain)) = ctx.device(domain_id).map(|d| &d.kind)
        else {
            continue;
        };
        let Some(spec) = ctx.catalog.domain(&domain.model) else {
            continue;
        };
        if trays.len() > spec.members as usize {
            let mut devices = vec![domain_id];
            devices.extend(&trays);
            out.push(Check {
                severity: Severity::Error,
                code: DOMAIN_OVER_CAPACITY,
                message: format!(
                    "{} holds {} compute trays; `{}` takes {}",
                    ctx.name(domain_id),
                    trays.len(),
                    domain.model,
                    spec.members
                ),
                devices,
                links: vec![],
            });
        }
    }
}

// ---------------------------------------------------------------- links

/// What a link end plugs into.
/// What a link end's port is on its device, with the parts that decide what it carries.
enum PortAt<'a> {
    /// NIC slot `slot` of a node or host.
    Nic {
        slot: u32,
        part: &'a PartId,
        spec: Option<&'a NicSpec>,
    },
    /// A built-in Thunderbolt or on-board Ethernet port (`spec` is the device's model).
    Builtin {
        port: Port,
        spec: Option<&'a NodeSpec>,
    },
    Switch {
        switch: &'a Switch,
        spec: Option<&'a SwitchSpec>,
    },
    Domain,
    /// A port the device cannot have: a NIC slot past its NICs, a switch port on a node.
    Missing(String),
}

/// What `port` of the device at position `at` is.
fn port_of<'a>(at: usize, port: Port, ctx: &Ctx<'a>) -> PortAt<'a> {
    let device = &ctx.design.devices[at];
    let resolved = &ctx.resolved[at];
    let nics = match &device.kind {
        DeviceKind::GpuNode(n) => &n.nics,
        DeviceKind::Host(h) => &h.nics,
        DeviceKind::Switch(switch) => {
            return match port {
                Port::Switch(_) => PortAt::Switch {
                    switch,
                    spec: resolved.model.and_then(as_switch),
                },
                other => PortAt::Missing(format!("a switch has no {other}, only numbered ports")),
            };
        }
        DeviceKind::NvSwitchDomain(_) => return PortAt::Domain,
    };
    match port {
        Port::Nic(slot) => match nics.get(slot as usize) {
            Some(nic) => PortAt::Nic {
                slot,
                part: &nic.part,
                spec: resolved
                    .nics
                    .get(slot as usize)
                    .copied()
                    .flatten()
                    .and_then(as_nic),
            },
            None => PortAt::Missing(format!(
                "NIC {slot} does not exist: it has {} NIC(s)",
                nics.len()
            )),
        },
        Port::Thunderbolt(_) | Port::Ethernet(_) | Port::NvLink => PortAt::Builtin {
            port,
            spec: resolved.model.and_then(as_node),
        },
        Port::Switch(_) | Port::Slot(_) => PortAt::Missing(format!(
            "it has no {port}: that is a switch's or domain's port"
        )),
        Port::Gpu(_) => PortAt::Missing(format!(
            "its {port} is inside the box: cables go on NICs and built-in ports"
        )),
    }
}

/// Ports in use on one device, summed over its links (lanes are parallel cables).
#[derive(Default, Clone, Copy)]
struct Usage {
    switch_lanes: u64,
    highest_switch_port: Option<u32>,
    thunderbolt_lanes: u64,
    builtin_ethernet_lanes: u64,
}

/// Problems found on many links of one device, reported once per device and reason.
#[derive(Default)]
struct Grouped {
    map: BTreeMap<GroupKey, (Severity, Vec<(LinkId, DeviceId)>)>,
}

/// The device a problem is reported at, the check code and the reason text.
type GroupKey = (DeviceId, &'static str, String);

impl Grouped {
    fn add(
        &mut self,
        at: DeviceId,
        severity: Severity,
        code: &'static str,
        reason: String,
        link: LinkId,
        far: DeviceId,
    ) {
        self.map
            .entry((at, code, reason))
            .or_insert_with(|| (severity, Vec::new()))
            .1
            .push((link, far));
    }

    fn finish(self, ctx: &Ctx<'_>, out: &mut Vec<Check>) {
        for ((at, code, reason), (severity, links)) in self.map {
            let described = list_with_more(
                links
                    .iter()
                    .map(|&(link, far)| format!("{link} to {}", ctx.name(far))),
                links.len(),
            );
            let mut devices: Vec<DeviceId> = links.iter().map(|&(_, far)| far).collect();
            devices.sort_unstable();
            devices.dedup();
            devices.retain(|&d| d != at);
            devices.insert(0, at);
            out.push(Check {
                severity,
                code,
                message: format!("{}: {reason} ({described})", ctx.name(at)),
                devices,
                links: links.into_iter().map(|(link, _)| link).collect(),
            });
        }
    }
}

fn thunderbolt_generation(tech: LinkTech) -> u8 {
    if tech == LinkTech::Thunderbolt5 { 5 } else { 4 }
}

/// Symmetric Thunderbolt rate per direction (TB5's 120 Gb/s boost is one-way only).
fn thunderbolt_gbit_s(generation: u8) -> f64 {
    if generation >= 5 { 80.0 } else { 40.0 }
}

/// Tolerance for comparing rates written as decimals.
fn faster(rate: f64, limit: f64) -> bool {
    rate > limit * (1.0 + 1e-9)
}

fn family_carries(family: NetFamily, tech: LinkTech) -> bool {
    if tech == LinkTech::InfiniBand {
        family.speaks_infiniband()
    } else {
        family.speaks_ethernet()
    }
}

fn family_label(family: NetFamily) -> &'static str {
    match family {
        NetFamily::InfiniBand => "InfiniBand-only",
        NetFamily::Ethernet => "Ethernet-only",
        NetFamily::Both => "InfiniBand/Ethernet",
    }
}

fn check_links(ctx: &Ctx<'_>, out: &mut Vec<Check>) {
    let design = ctx.design;
    let mut grouped = Grouped::default();
    let mut usage: Vec<Usage> = vec![Usage::default(); design.devices.len()];
    let mut port_owner = PortOwners::new(ctx);

    // Links are kept in id order, so sorting the ids is nearly free and shows repeats.
    let mut ids: Vec<LinkId> = design.links.iter().map(|l| l.id).collect();
    ids.sort_unstable();
    let mut repeated: Vec<LinkId> = ids
        .windows(2)
        .filter(|pair| pair[0] == pair[1])
        .map(|pair| pair[0])
        .collect();
    repeated.dedup();
    for id in repeated {
        out.push(link_check(
            ctx,
            id,
            &[],
            DUPLICATE_ID,
            format!("link id {id} is used by more than one link"),
        ));
    }

    for link in &design.links {
        let (Some(ia), Some(ib)) = (ctx.index.get(link.a.device), ctx.index.get(link.b.device))
        else {
            let missing: Vec<String> = [link.a.device, link.b.device]
                .into_iter()
                .filter(|d| ctx.device(*d).is_none())
                .map(|d| d.to_string())
                .collect();
            out.push(link_check(
                ctx,
                link.id,
                &[link.a.device, link.b.device],
                DANGLING_LINK,
                format!(
                    "link {} ends on device {}, which does not exist",
                    link.id,
                    missing.join(" and ")
                ),
            ));
            continue;
        };
        let rate = link.rate_gbit_s.gbit_s();
        let degraded_ok = match link.state {
            LinkState::Degraded { fraction } => fraction > 0.0 && fraction < 1.0,
            LinkState::Up | LinkState::Failed => true,
        };
        if !(rate.is_finite() && rate > 0.0) || link.lanes == 0 || !degraded_ok {
            out.push(link_check(
                ctx,
                link.id,
                &[link.a.device, link.b.device],
                INVALID_LINK,
                format!(
                    "link {} between {} and {} needs a positive rate, at least one lane and a degraded fraction between 0 and 1",
                    link.id,
                    ctx.name(link.a.device),
                    ctx.name(link.b.device)
                ),
            ));
            continue;
        }
        // An NVLink bridge joins two GPUs inside one node, so it may start and end there.
        let self_loop = if link.tech == LinkTech::NvLinkBridge {
            link.a == link.b
        } else {
            link.a.device == link.b.device
        };
        if self_loop {
            out.push(link_check(
                ctx,
                link.id,
                &[link.a.device],
                SELF_LOOP,
                format!(
                    "link {} ({}) starts and ends on {}",
                    link.id,
                    link.tech.label(),
                    ctx.name(link.a.device)
                ),
            ));
            continue;
        }

        // Port numbers only mean physical ports for cabled links; NVLink and PCIe have
        // their own lanes inside the box.
        let cabled = link.tech.is_network() || link.tech.is_thunderbolt();
        if cabled {
            for (end, at) in [(link.a, ia), (link.b, ib)] {
                if let Some(first) = port_owner.claim(at, end, link.id) {
                    out.push(Check {
                        severity: Severity::Error,
                        code: PORT_REUSED,
                        message: format!(
                            "{} {} carries both link {first} and link {}",
                            ctx.name(end.device),
                            end.port,
                            link.id
                        ),
                        devices: vec![end.device],
                        links: vec![first, link.id],
                    });
                }
            }
        }

        let device_a = &design.devices[ia];
        let device_b = &design.devices[ib];
        for (end, device, slot, far) in [
            (link.a, device_a, ia, device_b),
            (link.b, device_b, ib, device_a),
        ] {
            let port = port_of(slot, end.port, ctx);
            check_end(
                link,
                end,
                device,
                &port,
                far,
                rate,
                &mut usage[slot],
                &mut grouped,
            );
        }
    }
    grouped.finish(ctx, out);
    report_usage(ctx, &usage, out);
}

/// The link holding each cabled port: a flat table of every device's ports (sized by the
/// highest port its links use) when that table stays small, else a hash map for files
/// with stray port numbers.
enum PortOwners {
    Dense {
        /// Start of each device's ports in `owner`, by position in `design.devices`.
        first: Vec<usize>,
        owner: Vec<Option<LinkId>>,
    },
    Sparse(FastMap<Endpoint, LinkId>),
}

impl PortOwners {
    fn new(ctx: &Ctx<'_>) -> Self {
        let design = ctx.design;
        let mut ports = vec![0usize; design.devices.len()];
        for link in &design.links {
            if !(link.tech.is_network() || link.tech.is_thunderbolt()) {
                continue;
            }
            for end in [link.a, link.b] {
                if let Some(i) = ctx.index.get(end.device) {
                    let key = usize::try_from(end.port.dense_key()).unwrap_or(usize::MAX);
                    ports[i] = ports[i].max(key.saturating_add(1));
                }
            }
        }
        let mut first = Vec::with_capacity(ports.len() + 1);
        let mut sum = 0usize;
        for p in ports {
            first.push(sum);
            sum = sum.saturating_add(p);
        }
        first.push(sum);
        // Seven port kinds interleave in the keys (`Port::dense_key`), so a device's ports
        // spread over seven times their count.
        if sum <= 28 * (design.links.len() + design.devices.len()) + 1024 {
            PortOwners::Dense {
                first,
                owner: vec![None; sum],
            }
        } else {
            PortOwners::Sparse(FastMap::default())
        }
    }

    /// Records `link` on port `end` of the device at position `at`; returns the link that
    /// already holds it, if any.
    #[inline]
    fn claim(&mut self, at: usize, end: Endpoint, link: LinkId) -> Option<LinkId> {
        match self {
            PortOwners::Dense { first, owner } => {
                // In range: `new` sized the device's run past its highest key.
                let slot = &mut owner[first[at] + end.port.dense_key() as usize];
                match *slot {
                    Some(held) => Some(held),
                    None => {
                        *slot = Some(link);
                        None
                    }
                }
            }
            PortOwners::Sparse(map) => match map.get(&end) {
                Some(&held) => Some(held),
                None => {
                    map.insert(end, link);
                    None
                }
            },
        }
    }
}

fn link_check(
    ctx: &Ctx<'_>,
    link: LinkId,
    devices: &[DeviceId],
    code: &'static str,
    message: String,
) -> Check {
    let mut devices: Vec<DeviceId> = devices
        .iter()
        .copied()
        .filter(|d| ctx.device(*d).is_some())
        .collect();
    devices.dedup();
    Check {
        severity: Severity::Error,
        code,
        message,
        devices,
        links: vec![link],
    }
}

/// Compatibility, speed, rail and port counting for one end of a healthy-looking link.
#[allow(clippy::too_many_arguments)]
fn check_end(
    link: &crate::model::Link,
    end: Endpoint,
    device: &Device,
    port: &PortAt<'_>,
    far: &Device,
    rate: f64,
    usage: &mut Usage,
    grouped: &mut Grouped,
) {
    let tech = link.tech;
    let lanes = u64::from(link.lanes);
    let at = end.device;
    let mut flag = |severity, code, reason: String| {
        grouped.add(at, severity, code, reason, link.id, far.id);
    };
    let rate_text = crate::model::Bandwidth::from_gbit_s(rate);

    if tech.is_network() {
        match port {
            PortAt::Nic { slot, part, spec } => {
                let Some(nic) = spec else { return };
                if !family_carries(nic.family, tech) {
                    flag(
                        Severity::Error,
                        INCOMPATIBLE_LINK,
                        format!(
                            "NIC {slot} (`{part}`) is {} but carries a {} link",
                            family_label(nic.family),
                            tech.label()
                        ),
                    );
                }
                if faster(rate, nic.port_gbit_s.gbit_s()) {
                    flag(
                        Severity::Error,
                        SPEED_MISMATCH,
                        format!(
                            "NIC {slot} (`{part}`) runs at most {} per port but its link is set to {rate_text}",
                            nic.port_gbit_s
                        ),
                    );
                }
                if lanes > u64::from(nic.ports) {
                    flag(
                        Severity::Error,
                        PORTS_OVER_CAPACITY,
                        format!(
                            "NIC {slot} (`{part}`) has {} port(s) but its link bundles {lanes} cables",
                            nic.ports
                        ),
                    );
                }
                if let DeviceKind::Switch(sw) = &far.kind
                    && let Some(rail) = sw.rail
                    && rail != *slot
                {
                    // Reported at the leaf so a miswired rail reads as one line per leaf.
                    grouped.add(
                        far.id,
                        Severity::Warning,
                        RAIL_MISALIGNED,
                        format!("serves rail {rail} but is cabled to NIC {slot} (rail {slot}) of its nodes"),
                        link.id,
                        at,
                    );
                }
            }
            PortAt::Builtin { port, spec } => {
                let Some(node) = spec else { return };
                let Port::Ethernet(index) = *port else {
                    flag(
                        Severity::Error,
                        INCOMPATIBLE_LINK,
                        format!("its {port} cannot carry {}", tech.label()),
                    );
                    return;
                };
                if tech == LinkTech::InfiniBand {
                    flag(
                        Severity::Error,
                        INCOMPATIBLE_LINK,
                        format!(
                            "its {port} is on-board Ethernet but carries InfiniBand; InfiniBand needs a NIC"
                        ),
                    );
                    return;
                }
                if node.builtin_ethernet_ports == 0 {
                    flag(
                        Severity::Error,
                        INCOMPATIBLE_LINK,
                        format!("a link is on its {port} but it has no on-board Ethernet port"),
                    );
                    return;
                }
                if !port_exists(*port, index, node.builtin_ethernet_ports, &mut flag) {
                    return;
                }
                usage.builtin_ethernet_lanes += lanes;
                if let Some(speed) = node.builtin_ethernet_gbit_s
                    && faster(rate, speed.gbit_s())
                {
                    flag(
                        Severity::Error,
                        SPEED_MISMATCH,
                        format!(
                            "its built-in Ethernet runs at most {speed} but a link on it is set to {rate_text}"
                        ),
                    );
                }
            }
            PortAt::Switch { switch, spec } => {
                usage.switch_lanes += lanes;
                usage.highest_switch_port = usage.highest_switch_port.max(Some(end.port.index()));
                let Some(spec) = spec else { return };
                if !family_carries(spec.family, tech) {
                    flag(
                        Severity::Error,
                        INCOMPATIBLE_LINK,
                        format!(
                            "`{}` is {} but carries {} links",
                            switch.model,
                            family_label(spec.family),
                            tech.label()
                        ),
                    );
                }
                let per_port = spec.port_gbit_s / f64::from(switch.breakout.max(1));
                if faster(rate, per_port.gbit_s()) {
                    flag(
                        Severity::Error,
                        SPEED_MISMATCH,
                        format!(
                            "its ports run at most {per_port} (breakout {}) but links are set to {rate_text}",
                            switch.breakout
                        ),
                    );
                }
            }
            PortAt::Domain => flag(
                Severity::Error,
                INCOMPATIBLE_LINK,
                format!(
                    "an NVSwitch domain has no {} ports; cable its compute trays instead",
                    tech.label()
                ),
            ),
            PortAt::Missing(why) => flag(Severity::Error, PORTS_OVER_CAPACITY, why.clone()),
        }
    } else if tech.is_thunderbolt() {
        match port {
            PortAt::Nic { slot, .. } => flag(
                Severity::Error,
                INCOMPATIBLE_LINK,
                format!(
                    "NIC {slot} carries a {} link, which goes on a Thunderbolt port",
                    tech.label()
                ),
            ),
            PortAt::Builtin { port, spec } => {
                let Some(node) = spec else { return };
                if node.thunderbolt_ports == 0 {
                    flag(
                        Severity::Error,
                        INCOMPATIBLE_LINK,
                        format!("it has no Thunderbolt ports for a {} link", tech.label()),
                    );
                    return;
                }
                let Port::Thunderbolt(index) = *port else {
                    flag(
                        Severity::Error,
                        INCOMPATIBLE_LINK,
                        format!("its {port} cannot carry {}", tech.label()),
                    );
                    return;
                };
                if !port_exists(*port, index, node.thunderbolt_ports, &mut flag) {
                    return;
                }
                usage.thunderbolt_lanes += lanes;
                let machine = node.thunderbolt_generation.unwrap_or(4);
                let wanted = thunderbolt_generation(tech);
                if wanted > machine {
                    flag(
                        Severity::Error,
                        SPEED_MISMATCH,
                        format!(
                            "it has Thunderbolt {machine} ports but a {} link",
                            tech.label()
                        ),
                    );
                } else if faster(rate, thunderbolt_gbit_s(wanted)) {
                    flag(
                        Severity::Error,
                        SPEED_MISMATCH,
                        format!(
                            "{} runs at most {} but a link is set to {rate_text}",
                            tech.label(),
                            crate::model::Bandwidth::from_gbit_s(thunderbolt_gbit_s(wanted))
                        ),
                    );
                }
            }
            PortAt::Switch { .. } | PortAt::Domain => flag(
                Severity::Error,
                INCOMPATIBLE_LINK,
                format!("it has no Thunderbolt ports for a {} link", tech.label()),
            ),
            PortAt::Missing(why) => flag(Severity::Error, PORTS_OVER_CAPACITY, why.clone()),
        }
    } else if matches!(tech, LinkTech::NvLink | LinkTech::NvLinkBridge) {
        let what = match &device.kind {
            DeviceKind::Switch(_) => Some("a network switch"),
            DeviceKind::Host(_) => Some("a CPU or storage host"),
            DeviceKind::GpuNode(_) | DeviceKind::NvSwitchDomain(_) => None,
        };
        if let Some(what) = what {
            flag(
                Severity::Error,
                INCOMPATIBLE_LINK,
                format!("it is {what} and cannot carry {}", tech.label()),
            );
        }
    }
}

/// Built-in port `index` of a kind the model has `count` of; flags it if it does not exist.
fn port_exists(
    port: Port,
    index: u32,
    count: u32,
    flag: &mut impl FnMut(Severity, &'static str, String),
) -> bool {
    let exists = index < count;
    if !exists {
        flag(
            Severity::Error,
            PORTS_OVER_CAPACITY,
            format!(
                "its {port} does not exist: it has {count} ({})",
                match count {
                    0 => "none".to_string(),
                    1 => "number 0".to_string(),
                    _ => format!("0 to {}", count - 1),
                }
            ),
        );
    }
    exists
}

fn report_usage(ctx: &Ctx<'_>, usage: &[Usage], out: &mut Vec<Check>) {
    let mut over: BTreeMap<DeviceId, Vec<String>> = BTreeMap::new();
    for ((device, used), resolved) in ctx.design.devices.iter().zip(usage).zip(&ctx.resolved) {
        let mut problems = Vec::new();
        match &device.kind {
            DeviceKind::Switch(switch) => {
                let Some(spec) = resolved.model.and_then(as_switch) else {
                    continue;
                };
                let ports = u64::from(spec.ports) * u64::from(switch.breakout.max(1));
                if used.switch_lanes > ports {
                    problems.push(format!(
                        "{} cables on {ports} ports ({} × breakout {})",
                        used.switch_lanes,
                        spec.ports,
                        switch.breakout.max(1)
                    ));
                }
                if let Some(highest) = used.highest_switch_port
                    && u64::from(highest) >= ports
                {
                    problems.push(format!(
                        "port {highest} is used but ports are numbered 0 to {}",
                        ports - 1
                    ));
                }
            }
            DeviceKind::GpuNode(_) | DeviceKind::Host(_) => {
                // The node's model, or the host's.
                let Some(spec) = resolved.model.and_then(as_node) else {
                    continue;
                };
                if used.thunderbolt_lanes > u64::from(spec.thunderbolt_ports) {
                    problems.push(format!(
                        "{} Thunderbolt cables on {} Thunderbolt ports",
                        used.thunderbolt_lanes, spec.thunderbolt_ports
                    ));
                }
                if used.builtin_ethernet_lanes > u64::from(spec.builtin_ethernet_ports) {
                    problems.push(format!(
                        "{} cables on {} built-in Ethernet ports",
                        used.builtin_ethernet_lanes, spec.builtin_ethernet_ports
                    ));
                }
            }
            DeviceKind::NvSwitchDomain(_) => {}
        }
        if !problems.is_empty() {
            over.insert(device.id, problems);
        }
    }
    if over.is_empty() {
        return;
    }
    // One more pass over the links to list each crowded device's cabled links.
    let mut links_of: FastMap<DeviceId, Vec<LinkId>> = FastMap::default();
    for link in &ctx.design.links {
        if !(link.tech.is_network() || link.tech.is_thunderbolt()) {
            continue;
        }
        for device in [link.a.device, link.b.device] {
            if over.contains_key(&device) {
                links_of.entry(device).or_default().push(link.id);
            }
        }
    }
    for (device, problems) in over {
        let links = links_of.remove(&device).unwrap_or_default();
        for problem in problems {
            out.push(Check {
                severity: Severity::Error,
                code: PORTS_OVER_CAPACITY,
                message: format!("{}: {problem}", ctx.name(device)),
                devices: vec![device],
                links: links.clone(),
            });
        }
    }
}

// ---------------------------------------------------------------- connectivity

/// Union-find over device indexes, with path halving and union by size.
struct Components {
    parent: Vec<usize>,
    size: Vec<usize>,
}

impl Components {
    fn new(n: usize) -> Self {
        Self {
            parent: (0..n).collect(),
            size: vec![1; n],
        }
    }

    fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] != x {
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }

    fn union(&mut self, a: usize, b: usize) {
        let (mut a, mut b) = (self.find(a), self.find(b));
        if a == b {
            return;
        }
        if self.size[a] < self.size[b] {
            std::mem::swap(&mut a, &mut b);
        }
        self.parent[b] = a;
        self.size[a] += self.size[b];
    }
}

/// GPU nodes that cannot reach the rest of the GPUs over working links. The largest island
/// of GPUs counts as the cluster; every other island is reported (all of them when no
/// island is the largest outright).
fn check_isolation(ctx: &Ctx<'_>, out: &mut Vec<Check>) {
    let design = ctx.design;
    let mut components = Components::new(design.devices.len());
    for link in &design.links {
        if link.state == LinkState::Failed {
            continue;
        }
        if let (Some(a), Some(b)) = (ctx.index.get(link.a.device), ctx.index.get(link.b.device)) {
            components.union(a, b);
        }
    }
    // NVL72 trays reach each other through their domain's NVLink even when not drawn.
    for (i, device) in design.devices.iter().enumerate() {
        if let DeviceKind::GpuNode(node) = &device.kind
            && let Some(domain) = node.domain
            && let Some(d) = ctx.index.get(domain)
            && matches!(design.devices[d].kind, DeviceKind::NvSwitchDomain(_))
        {
            components.union(i, d);
        }
    }

    // Islands keyed by root, in order of first appearance so reports are stable.
    let mut islands: Vec<(u64, Vec<DeviceId>)> = Vec::new();
    let mut island_of_root = vec![usize::MAX; design.devices.len()];
    for (i, device) in design.devices.iter().enumerate() {
        let DeviceKind::GpuNode(node) = &device.kind else {
            continue;
        };
        if node.gpu_count == 0 {
            continue;
        }
        let root = components.find(i);
        if island_of_root[root] == usize::MAX {
            island_of_root[root] = islands.len();
            islands.push((0, Vec::new()));
        }
        let island = island_of_root[root];
        islands[island].0 += u64::from(node.gpu_count);
        islands[island].1.push(device.id);
    }
    if islands.len() < 2 {
        return;
    }
    let total: u64 = islands.iter().map(|(g, _)| g).sum();
    let largest = islands.iter().map(|(g, _)| *g).max().unwrap_or(0);
    let unique_largest = islands.iter().filter(|(g, _)| *g == largest).count() == 1;
    for (gpus, nodes) in islands {
        if unique_largest && gpus == largest {
            continue;
        }
        let message = if nodes.len() == 1 {
            format!(
                "{} ({gpus} GPU(s)) has no working path to any of the other {} GPU(s)",
                ctx.name(nodes[0]),
                total - gpus
            )
        } else {
            format!(
                "{} nodes ({}; {gpus} GPUs) have no working path to the other {} GPU(s)",
                nodes.len(),
                ctx.names(&nodes),
                total - gpus
            )
        };
        out.push(Check {
            severity: Severity::Error,
            code: GPU_ISOLATED,
            message,
            devices: nodes,
            links: vec![],
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lists_are_cut_short() {
        let items = ["a", "b", "c", "d", "e"].map(String::from);
        assert_eq!(
            list_with_more(items.iter().cloned(), 5),
            "a, b, c and 2 more"
        );
        assert_eq!(list_with_more(items[..2].iter().cloned(), 2), "a, b");
    }

    #[test]
    fn errors_sort_before_warnings_before_information() {
        assert!(Severity::Error < Severity::Warning && Severity::Warning < Severity::Info);
    }

    #[test]
    fn rates_compare_with_a_tolerance() {
        assert!(!faster(400.0, 400.0));
        assert!(!faster(100.0 * 4.0, 400.0));
        assert!(faster(400.1, 400.0));
        assert_eq!(
            thunderbolt_gbit_s(thunderbolt_generation(LinkTech::Thunderbolt5)),
            80.0
        );
        assert_eq!(
            thunderbolt_gbit_s(thunderbolt_generation(LinkTech::Thunderbolt4)),
            40.0
        );
    }
}
