//! View > Ring order: the ring a ring collective runs on the drawn GPUs, as a circle of GPUs
//! in ring order, each hop coloured by what it goes over (the canvas's technology colours),
//! each node's GPUs in its own colour. Drawn with the painter only while the window is open,
//! so an idle designer still repaints nothing. Worked out on the UI thread once per design
//! revision: building the fabric is milliseconds even for large designs.

use egui::{Color32, Pos2, RichText, Sense, Stroke, Ui, Vec2};
use std::collections::HashMap;

use crate::analysis::collective::logical::{RingHop, RingOrder, ScaleUpPath, ring_order};
use crate::io::link_colors::{Background, Rgb, rail_color, tech_color};
use crate::model::{Catalog, Design, DeviceId, LinkTech};

/// Above this many GPUs the circle shows one dot per node (its GPUs run one after another).
const MAX_GPU_DOTS: usize = 512;

#[derive(Default)]
pub struct LogicalView {
    pub open: bool,
    /// The ring of the design revision it was worked out for (tab id, revision).
    ring: Option<((u64, u64), Result<RingOrder, String>)>,
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
        if self.ring.as_ref().is_none_or(|(k, _)| *k != key) {
            let ring = ring_order(design, catalog).map_err(|e| e.to_string());
            self.ring = Some((key, ring));
        }
        let Some((_, ring)) = &self.ring else {
            return;
        };
        let dark = ctx.global_style().visuals.dark_mode;
        egui::Window::new("Ring order")
            .open(&mut self.open)
            .default_size([560.0, 640.0])
            .show(ctx, |ui| match ring {
                Ok(ring) if !ring.stops.is_empty() => ring_ui(ui, ring, design, dark),
                Ok(_) => {
                    ui.label("The design has no GPUs.");
                }
                Err(e) => {
                    ui.label(format!("No ring: {e}"));
                }
            });
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
        ui.horizontal(|ui| {
            let (rect, _) = ui.allocate_exact_size(Vec2::new(24.0, 10.0), Sense::hover());
            ui.painter().line_segment(
                [rect.left_center(), rect.right_center()],
                Stroke::new(3.0, hop_color(*hop)),
            );
            ui.label(format!("{} × {}", count, hop_label(*hop)));
        });
    }
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
