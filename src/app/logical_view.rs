//! View > Logical view: how a collective runs on the drawn GPUs, three ways. The ring, as a
//! circle of GPUs in ring order, each hop coloured by what it goes over (the canvas's
//! technology colours), each node's GPUs in its own colour. NCCL's double binary trees
//! between domains, as two layered trees. The in-switch groups: NVSwitch domains that
//! reduce with NVLS, switches that reduce with SHARP. Drawn with the painter only while the
//! window is open, so an idle designer still repaints nothing (egui_graphs would ask for a
//! frame every frame); worked out on the UI thread once per design revision and view:
//! building the fabric is milliseconds even for large designs.

use egui::{Color32, Pos2, RichText, Sense, Stroke, Ui, Vec2};
use std::collections::HashMap;

use crate::analysis::collective::CollectiveError;
use crate::analysis::collective::logical::{
    DoubleTree, InSwitchGroups, RingHop, RingOrder, ScaleUpPath, double_trees, in_switch_groups,
    ring_order,
};
use crate::io::link_colors::{Background, Rgb, rail_color, tech_color};
use crate::model::{Catalog, Design, DeviceId, LinkTech};

/// Above this many GPUs the circle shows one dot per node (its GPUs run one after another).
const MAX_GPU_DOTS: usize = 512;
/// Up to this many domains the trees carry their names.
const MAX_TREE_NAMES: usize = 24;

/// Which view the window shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Shape {
    #[default]
    Ring,
    Trees,
    InSwitch,
}

/// A view's figures and the design revision (tab id, revision) they were worked out for.
type Cached<T> = Option<((u64, u64), Result<T, String>)>;

#[derive(Default)]
pub struct LogicalView {
    pub open: bool,
    shape: Shape,
    ring: Cached<RingOrder>,
    trees: Cached<DoubleTree>,
    groups: Cached<InSwitchGroups>,
}

/// The figures of `slot`, worked out again when the design changed.
fn cached<T>(
    slot: &mut Cached<T>,
    key: (u64, u64),
    work: impl FnOnce() -> Result<T, CollectiveError>,
) -> &Result<T, String> {
    if slot.as_ref().is_none_or(|(k, _)| *k != key) {
        *slot = Some((key, work().map_err(|e| e.to_string())));
    }
    &slot.as_ref().expect("just filled").1
}

impl LogicalView {
    pub fn window(
        &mut self,
        ctx: &egui::Context,
        key: (u64, u64),
        design: &Design,
        catalog: &Catalog,
    ) {
        if !self.open {
            return;
        }
        let dark = ctx.global_style().visuals.dark_mode;
        let mut open = self.open;
        egui::Window::new("Logical view")
            .open(&mut open)
            .default_size([560.0, 680.0])
            .show(ctx, |ui| {
                ui.horizontal(|ui| {
                    ui.selectable_value(&mut self.shape, Shape::Ring, "Ring");
                    ui.selectable_value(&mut self.shape, Shape::Trees, "Trees");
                    ui.selectable_value(&mut self.shape, Shape::InSwitch, "In-switch reduction");
                });
                ui.separator();
                match self.shape {
                    Shape::Ring => {
                        match cached(&mut self.ring, key, || ring_order(design, catalog)) {
                            Ok(ring) if !ring.stops.is_empty() => ring_ui(ui, ring, design, dark),
                            Ok(_) => {
                                ui.label("The design has no GPUs.");
                            }
                            Err(e) => {
                                ui.label(format!("No ring: {e}"));
                            }
                        }
                    }
                    Shape::Trees => {
                        match cached(&mut self.trees, key, || double_trees(design, catalog)) {
                            Ok(trees) if !trees.domains.is_empty() => {
                                trees_ui(ui, trees, design, dark);
                            }
                            Ok(_) => {
                                ui.label("The design has no GPUs.");
                            }
                            Err(e) => {
                                ui.label(format!("No trees: {e}"));
                            }
                        }
                    }
                    Shape::InSwitch => {
                        match cached(&mut self.groups, key, || in_switch_groups(design, catalog)) {
                            Ok(groups) => in_switch_ui(ui, groups, design),
                            Err(e) => {
                                ui.label(format!("No groups: {e}"));
                            }
                        }
                    }
                }
            });
        self.open = open;
    }
}

fn color32(Rgb(r, g, b): Rgb) -> Color32 {
    Color32::from_rgb(r, g, b)
}

fn hop_color(hop: RingHop) -> Color32 {
    color32(tech_color(match hop {
        RingHop::ScaleUp(ScaleUpPath::NvSwitch) => LinkTech::NvLink,
        RingHop::ScaleUp(ScaleUpPath::NvLinkBridge) => LinkTech::NvLinkBridge,
        RingHop::ScaleUp(_) => LinkTech::Pcie,
        RingHop::Network(tech) => tech.unwrap_or(LinkTech::Ethernet),
    }))
}

fn hop_label(hop: RingHop) -> String {
    match hop {
        RingHop::ScaleUp(path) => path.label().to_string(),
        RingHop::Network(Some(tech)) => tech.label().to_string(),
        RingHop::Network(None) => "network (no link drawn on the NIC)".to_string(),
    }
}

fn ring_ui(ui: &mut Ui, ring: &RingOrder, design: &Design, dark: bool) {
    let name = |id: DeviceId| design.device(id).map_or("?", |d| d.name.as_str());
    let nodes: Vec<DeviceId> = {
        let mut seen = Vec::new();
        for s in &ring.stops {
            if seen.last() != Some(&s.node) {
                seen.push(s.node);
            }
        }
        seen
    };
    ui.label(format!(
        "{} GPUs on {} node{}; {}",
        ring.stops.len(),
        nodes.len(),
        if nodes.len() == 1 { "" } else { "s" },
        if ring.rings > 1 {
            format!(
                "{} rings side by side, one per NIC: this is ring 0, the others enter each node at the GPU of their NIC",
                ring.rings
            )
        } else {
            "one ring".to_string()
        }
    ));
    ui.label(
        RichText::new(
            "The ring NCCL's ring algorithm (and MLX's ring backend) runs over these GPUs, as the cost model plans it; the sidebar names the algorithm chosen for the size.",
        )
        .weak(),
    );
    // Legend: one row per kind of hop, with its count.
    let mut kinds: Vec<(RingHop, usize)> = Vec::new();
    for &h in &ring.hops {
        match kinds.iter_mut().find(|(k, _)| *k == h) {
            Some((_, n)) => *n += 1,
            None => kinds.push((h, 1)),
        }
    }
    for (hop, count) in &kinds {
        legend_row(
            ui,
            hop_color(*hop),
            &format!("{} × {}", count, hop_label(*hop)),
        );
    }
    // The dots are coloured by node, not by link: say so, or they read as more link kinds.
    ui.weak("Dots: each node's GPUs in a colour of their own.");
    ui.separator();

    let node_color: HashMap<DeviceId, Color32> = nodes
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let bg = if dark {
                Background::Dark
            } else {
                Background::Light
            };
            (n, color32(rail_color(i as u32, bg)))
        })
        .collect();
    // One dot per GPU, or per node on big rings (a node's GPUs are consecutive on the ring).
    let per_node = ring.stops.len() > MAX_GPU_DOTS;
    let dots: Vec<(DeviceId, Option<u32>)> = if per_node {
        nodes.iter().map(|&n| (n, None)).collect()
    } else {
        ring.stops.iter().map(|s| (s.node, Some(s.gpu))).collect()
    };
    // The hop leaving dot i: for per-node dots, the hop that leaves the node's last GPU.
    let hops: Vec<RingHop> = if per_node {
        (0..ring.stops.len())
            .filter(|&i| ring.stops[(i + 1) % ring.stops.len()].node != ring.stops[i].node)
            .map(|i| ring.hops[i])
            .collect()
    } else {
        ring.hops.clone()
    };

    let side = ui.available_width().min(ui.available_height()).max(240.0);
    let (rect, response) = ui.allocate_exact_size(Vec2::splat(side), Sense::hover());
    let painter = ui.painter_at(rect);
    let center = rect.center();
    // Room outside the circle for node names.
    let radius = (side * 0.5 - 72.0).max(60.0);
    let n = dots.len();
    let angle_of =
        |i: usize| std::f32::consts::TAU * i as f32 / n.max(1) as f32 - std::f32::consts::FRAC_PI_2;
    let positions: Vec<Pos2> = (0..n)
        .map(|i| center + Vec2::angled(angle_of(i)) * radius)
        .collect();
    let width = if n > 128 { 1.5 } else { 3.0 };
    if n > 1 {
        for (i, &hop) in hops.iter().enumerate().take(n) {
            painter.line_segment(
                [positions[i], positions[(i + 1) % n]],
                Stroke::new(width, hop_color(hop)),
            );
        }
    }
    let dot = if n > 128 { 3.0 } else { 6.0 };
    let text_color = ui.visuals().text_color();
    let font = egui::FontId::proportional(11.0);
    for (i, &(node, gpu)) in dots.iter().enumerate() {
        painter.circle_filled(positions[i], dot, node_color[&node]);
        let out = Vec2::angled(angle_of(i));
        // Node names outside the circle at each node's first GPU, where there are few
        // enough to read; GPU indices inside it on small rings.
        let first_of_node = i == 0 || dots[i - 1].0 != node;
        if first_of_node && nodes.len() <= 48 {
            let align = if out.x >= 0.0 {
                egui::Align2::LEFT_CENTER
            } else {
                egui::Align2::RIGHT_CENTER
            };
            painter.text(
                positions[i] + out * (dot + 6.0),
                align,
                name(node),
                font.clone(),
                text_color,
            );
        }
        if let Some(g) = gpu.filter(|_| n <= 64 && nodes.len() < n) {
            painter.text(
                positions[i] - out * (dot + 8.0),
                egui::Align2::CENTER_CENTER,
                g.to_string(),
                egui::FontId::proportional(10.0),
                ui.visuals().weak_text_color(),
            );
        }
    }
    // Full names on hover, as on the canvas.
    if let Some(p) = response.hover_pos()
        && let Some(i) = (0..n).min_by(|&a, &b| {
            positions[a]
                .distance(p)
                .total_cmp(&positions[b].distance(p))
        })
        && positions[i].distance(p) < 12.0
    {
        let (node, gpu) = dots[i];
        let hop = hops
            .get(i)
            .map_or(String::new(), |&h| format!("\nnext hop: {}", hop_label(h)));
        let text = match gpu {
            Some(g) => format!("{} · GPU {g}{hop}", name(node)),
            None => format!("{}{hop}", name(node)),
        };
        response.on_hover_text_at_pointer(text);
    }
}

fn chain_color(path: ScaleUpPath) -> Color32 {
    hop_color(RingHop::ScaleUp(path))
}

/// A domain's name: its first node's, with how many more it holds.
fn domain_name(design: &Design, nodes: &[DeviceId]) -> String {
    let first = nodes
        .first()
        .and_then(|&n| design.device(n))
        .map_or("?", |d| d.name.as_str());
    match nodes.len() {
        0 | 1 => first.to_string(),
        n => format!("{first} +{}", n - 1),
    }
}

fn trees_ui(ui: &mut Ui, trees: &DoubleTree, design: &Design, dark: bool) {
    let m = trees.domains.len();
    let gpus: u32 = trees.domains.iter().map(|d| d.gpus).sum();
    let chain = trees.domains.iter().find_map(|d| d.chain);
    if m < 2 {
        ui.label(format!(
            "{gpus} GPUs in one domain: no tree between domains. NCCL's tree algorithm runs \
             between nodes; inside one it chains the GPUs{}.",
            chain.map_or(String::new(), |c| format!(" over {}", c.label()))
        ));
        return;
    }
    ui.label(format!(
        "{gpus} GPUs in {m} domains; {} pair{} of trees side by side, one per NIC",
        trees.channels,
        if trees.channels == 1 { "" } else { "s" }
    ));
    ui.label(
        RichText::new(
            "NCCL's double binary tree, as the cost model plans it: tree 1 is tree 0 shifted \
             by one domain, so a leaf of one is inside the other and every domain sends and \
             receives in full. Each half of the data goes up one tree and down again; inside \
             a domain the GPUs form a chain to the one on the tree.",
        )
        .weak(),
    );
    // Legend: what edges and chains go over.
    let mut network: Vec<Option<LinkTech>> = Vec::new();
    for d in &trees.domains {
        if !network.contains(&d.network) {
            network.push(d.network);
        }
    }
    for tech in &network {
        legend_row(
            ui,
            hop_color(RingHop::Network(*tech)),
            &format!("between domains: {}", hop_label(RingHop::Network(*tech))),
        );
    }
    if let Some(c) = chain {
        legend_row(
            ui,
            chain_color(c),
            &format!("chain inside a domain: {}", c.label()),
        );
    }
    ui.separator();

    let bg = if dark {
        Background::Dark
    } else {
        Background::Light
    };
    let width = ui.available_width().max(320.0);
    let levels = (usize::BITS - m.leading_zeros()) as usize; // ⌊log2 m⌋ + 1
    let row = 34.0_f32;
    let panel = row * levels as f32 + 28.0;
    for (t, edges) in trees.edges.iter().enumerate() {
        ui.label(RichText::new(format!("Tree {t}")).strong());
        let (rect, response) = ui.allocate_exact_size(Vec2::new(width, panel), Sense::hover());
        let painter = ui.painter_at(rect);
        // In-order position of domain i in tree t, as `plan::tree` numbers it.
        let position = |i: usize| (i + t) % m + 1;
        let at = |i: usize| {
            let p = position(i);
            let level = p.trailing_zeros() as usize;
            let depth = levels.saturating_sub(level + 1);
            Pos2::new(
                rect.left() + width * p as f32 / (m + 1) as f32,
                rect.top() + 10.0 + row * depth as f32,
            )
        };
        let thick = if m > 64 { 1.0 } else { 2.5 };
        for &(parent, child) in edges {
            let d = &trees.domains[child as usize];
            painter.line_segment(
                [at(parent as usize), at(child as usize)],
                Stroke::new(thick, hop_color(RingHop::Network(d.network))),
            );
        }
        let dot = if m > 64 { 2.5 } else { 5.0 };
        for i in 0..m {
            painter.circle_filled(at(i), dot, color32(rail_color(i as u32, bg)));
            if m <= MAX_TREE_NAMES {
                painter.text(
                    at(i) + Vec2::new(0.0, dot + 2.0),
                    egui::Align2::CENTER_TOP,
                    domain_name(design, &trees.domains[i].nodes),
                    egui::FontId::proportional(10.0),
                    ui.visuals().text_color(),
                );
            }
        }
        if let Some(p) = response.hover_pos()
            && let Some(i) = (0..m).min_by(|&a, &b| at(a).distance(p).total_cmp(&at(b).distance(p)))
            && at(i).distance(p) < 10.0
        {
            let d = &trees.domains[i];
            response.on_hover_text_at_pointer(format!(
                "{}: {} GPU{}",
                domain_name(design, &d.nodes),
                d.gpus,
                if d.gpus == 1 { "" } else { "s" }
            ));
        }
    }
}

fn legend_row(ui: &mut Ui, color: Color32, text: &str) {
    ui.horizontal(|ui| {
        let (rect, _) = ui.allocate_exact_size(Vec2::new(24.0, 10.0), Sense::hover());
        ui.painter().line_segment(
            [rect.left_center(), rect.right_center()],
            Stroke::new(3.0, color),
        );
        ui.label(text);
    });
}

fn in_switch_ui(ui: &mut Ui, groups: &InSwitchGroups, design: &Design) {
    let name = |id: DeviceId| design.device(id).map_or("?", |d| d.name.as_str());
    ui.label(RichText::new("NVLS (NVLink SHARP)").strong());
    if groups.nvls.is_empty() {
        ui.label(
            "No NVSwitch domain here reduces in the switch: NVLS needs third-generation \
             NVSwitch and Hopper or later GPUs.",
        );
    } else {
        let gpus: u32 = groups.nvls.iter().map(|(_, g)| g).sum();
        ui.label(format!(
            "{} NVSwitch domain{} reduce in the switch, {gpus} GPUs in all. NCCL enables NVLS \
             by default where it is supported; the tuner picks it by size.",
            groups.nvls.len(),
            if groups.nvls.len() == 1 { "" } else { "s" }
        ));
        egui::ScrollArea::vertical()
            .id_salt("nvls groups")
            .max_height(160.0)
            .show(ui, |ui| {
                for (nodes, gpus) in &groups.nvls {
                    ui.label(format!("{}: {gpus} GPUs", domain_name(design, nodes)));
                }
            });
    }
    ui.separator();
    ui.label(RichText::new("SHARP (in-network reduction)").strong());
    if groups.sharp_switches.is_empty() {
        ui.label("No switch here reduces in the network.");
        return;
    }
    let n = groups.sharp_switches.len();
    ui.label(format!(
        "{n} switch{} can reduce in the network. {}",
        if n == 1 { "" } else { "es" },
        if groups.sharp_enabled {
            "In-network reduction is set up in this design: NCCL's CollNet runs SHARP where it \
             is fastest."
        } else {
            "It is not set up in this design, so NCCL does not use it (CollNet is off by \
             default): turn it on in the design's inspector to weigh it."
        }
    ));
    egui::ScrollArea::vertical()
        .id_salt("sharp switches")
        .max_height(160.0)
        .show(ui, |ui| {
            for &id in &groups.sharp_switches {
                ui.label(name(id));
            }
        });
}
