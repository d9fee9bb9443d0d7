//! CPU time of one canvas frame (UI pass + tessellation) on a 1920×1080 screen.
//! Targets: 10,000 nodes and 20,000 links fully in view within 4 ms; 1,000 nodes within 1 ms;
//! a pan or zoom frame of a rail-optimized fabric of 8,192 DGX H100 (65,536 GPUs, about
//! 200,000 links) within 8 ms. The setup also checks that an idle frame asks for no repaint.
//!
//! Measured as this thread's CPU time (Linux `CLOCK_THREAD_CPUTIME_ID`), not wall time, so that other work on
//! the machine does not inflate the figures; elsewhere it falls back to wall time.

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{Criterion, criterion_group, criterion_main};
use egui::{Pos2, RawInput, Rect, ViewportId, vec2};
use railyard::app::canvas::{CanvasOverlay, CanvasState, canvas_ui, zoom_to_fit};
use railyard::generate::{Template, TemplateSpec, generate};
use railyard::model::factory::device_from_part;
use railyard::model::{
    Bandwidth, Catalog, Design, DeviceId, Endpoint, Link, LinkId, LinkTech, PartId, Port, Pos,
};
use std::collections::HashSet;
use std::hint::black_box;
use std::time::Duration;

const SCREEN: egui::Vec2 = vec2(1920.0, 1080.0);

/// Nanoseconds this thread has spent on a CPU (`CLOCK_THREAD_CPUTIME_ID`).
#[cfg(target_os = "linux")]
fn thread_cpu_ns() -> u64 {
    #[repr(C)]
    struct Timespec {
        tv_sec: i64,
        tv_nsec: i64,
    }
    unsafe extern "C" {
        fn clock_gettime(clock: i32, tp: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut t = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable timespec; the call only writes into it.
    let ok = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut t) } == 0;
    assert!(ok, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// Elsewhere: wall time.
#[cfg(not(target_os = "linux"))]
fn thread_cpu_ns() -> u64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_nanos() as u64
}

/// Criterion measurement of thread CPU time.
struct ThreadCpu(WallTime);

impl Measurement for ThreadCpu {
    type Intermediate = u64;
    type Value = Duration;

    fn start(&self) -> u64 {
        thread_cpu_ns()
    }
    fn end(&self, start: u64) -> Duration {
        Duration::from_nanos(thread_cpu_ns().saturating_sub(start))
    }
    fn add(&self, a: &Duration, b: &Duration) -> Duration {
        *a + *b
    }
    fn zero(&self) -> Duration {
        Duration::ZERO
    }
    fn to_f64(&self, value: &Duration) -> f64 {
        value.as_nanos() as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        self.0.formatter()
    }
}

/// `nodes` DGX nodes on a grid 120 × 80 apart, each linked to its right and lower
/// neighbours, then extra links to a node a few places on, until there are `links`.
fn grid_design(catalog: &Catalog, nodes: u32, links: u32) -> Design {
    let columns = (f64::from(nodes) * 1.5).sqrt().ceil() as u32;
    let template = device_from_part(
        catalog,
        &PartId::new("dgx-h100"),
        DeviceId(0),
        String::new(),
        Pos::default(),
    )
    .expect("dgx-h100 is in the catalog");
    let mut design = Design::new("bench");
    for i in 0..nodes {
        let mut d = template.clone();
        d.id = DeviceId(i);
        d.name = format!("node-{i:05}");
        d.pos = Pos::new((i % columns) as f32 * 120.0, (i / columns) as f32 * 80.0);
        design.devices.push(d);
    }
    let mut pairs = Vec::new();
    for i in 0..nodes {
        if (i + 1) % columns != 0 && i + 1 < nodes {
            pairs.push((i, i + 1));
        }
        if i + columns < nodes {
            pairs.push((i, i + columns));
        }
    }
    let mut k = 0u32;
    while (pairs.len() as u32) < links {
        let a = k % nodes;
        let b = (a + 2 + k / nodes * 7) % nodes;
        if a != b {
            pairs.push((a, b));
        }
        k += 1;
    }
    pairs.truncate(links as usize);
    for (n, (a, b)) in pairs.into_iter().enumerate() {
        let mut l = Link::new(
            Endpoint::new(DeviceId(a), Port::Nic(0)),
            Endpoint::new(DeviceId(b), Port::Nic(0)),
            if n % 3 == 0 {
                LinkTech::RoceV2
            } else {
                LinkTech::InfiniBand
            },
            Bandwidth::from_gbit_s(400.0),
        );
        l.id = LinkId(n as u32);
        design.links.push(l);
    }
    design
}

/// The rail-optimized template at 8,192 DGX H100 with its default 64-port QM9700 switches,
/// three tiers, placed as the template places it (the app opens it so).
fn rail_design(catalog: &Catalog) -> Design {
    let mut spec = TemplateSpec::new(Template::RailOptimized);
    spec.nodes = Some(8_192);
    spec.tiers = 3;
    generate(&spec, catalog).expect("the template builds 8,192 nodes in three tiers")
}

/// How the view changes between two frames.
#[derive(Clone, Copy)]
enum Motion {
    /// By a hundredth of its width, back and forth.
    Pan,
    /// By 2 % about its centre, in and out.
    Zoom,
}

fn input() -> RawInput {
    RawInput {
        screen_rect: Some(Rect::from_min_size(Pos2::ZERO, SCREEN)),
        ..RawInput::default()
    }
}

struct Bench {
    ctx: egui::Context,
    design: Design,
    catalog: Catalog,
    state: CanvasState,
}

impl Bench {
    fn new(design: Design, catalog: Catalog, fit: bool) -> Self {
        Self::at_zoom(design, catalog, if fit { None } else { Some(1.0) })
    }

    /// `zoom`: None fits the whole design; otherwise that zoom around its middle device.
    fn at_zoom(design: Design, catalog: Catalog, zoom: Option<f32>) -> Self {
        let mut state = CanvasState::default();
        match zoom {
            None => zoom_to_fit(&design, &mut state),
            Some(zoom) => {
                // Around the middle of the design: at zoom 1, labels and handles on.
                let c = design.devices[design.devices.len() / 2].pos;
                state.scene_rect = Rect::from_center_size(Pos2::new(c.x, c.y), SCREEN / zoom);
            }
        }
        let mut bench = Self {
            ctx: egui::Context::default(),
            design,
            catalog,
            state,
        };
        // Warm up (fonts, layer order), then check that idle frames ask for no repaint.
        for _ in 0..3 {
            bench.frame();
        }
        let output = bench.run();
        let delay = output.viewport_output[&ViewportId::ROOT].repaint_delay;
        assert_eq!(delay, Duration::MAX, "an idle canvas asked for a repaint");
        bench
    }

    fn run(&mut self) -> egui::FullOutput {
        self.run_with(input())
    }

    /// One frame with `raw` as its input.
    fn run_with(&mut self, raw: RawInput) -> egui::FullOutput {
        let no_highlight = HashSet::new();
        let overlay = CanvasOverlay {
            catalog: &self.catalog,
            heat: None,
            highlight_links: &no_highlight,
            loads: None,
        };
        let (design, state) = (&self.design, &mut self.state);
        self.ctx.run_ui(raw, |ui| {
            let events = canvas_ui(ui, design, state, &overlay);
            assert!(events.is_empty());
        })
    }

    /// Moves the pointer onto the screen at `at` (one frame); it rests there after.
    fn rest_pointer(&mut self, at: Pos2) {
        let mut raw = input();
        raw.events.push(egui::Event::PointerMoved(at));
        let _ = self.run_with(raw);
    }

    /// Moves the view (the `k`th step of `motion`, alternating direction), then one frame.
    fn moved_frame(&mut self, motion: Motion, k: u64) -> usize {
        self.move_view(motion, k);
        self.frame()
    }

    fn move_view(&mut self, motion: Motion, k: u64) {
        let r = self.state.scene_rect;
        let sign = if k.is_multiple_of(2) { 1.0 } else { -1.0 };
        self.state.scene_rect = match motion {
            Motion::Pan => r.translate(vec2(sign * r.width() / 100.0, 0.0)),
            Motion::Zoom => Rect::from_center_size(r.center(), r.size() * 1.02f32.powf(sign)),
        };
    }

    /// The two halves of a frame in CPU time, ms per frame over `frames` frames, each after
    /// `before(self, k)` (k from 1).
    fn split_ms(&mut self, frames: u64, mut before: impl FnMut(&mut Bench, u64)) -> (f64, f64) {
        let (mut ui_ns, mut tessellate_ns) = (0, 0);
        for k in 1..=frames {
            before(self, k);
            let t0 = thread_cpu_ns();
            let output = self.run();
            let t1 = thread_cpu_ns();
            let _ = black_box(self.ctx.tessellate(output.shapes, output.pixels_per_point));
            ui_ns += t1 - t0;
            tessellate_ns += thread_cpu_ns() - t1;
        }
        let per_frame_ms = |ns: u64| ns as f64 / (frames as f64 * 1e6);
        (per_frame_ms(ui_ns), per_frame_ms(tessellate_ns))
    }

    /// One frame: UI pass and tessellation; returns the triangle count.
    fn frame(&mut self) -> usize {
        let output = self.run();
        let primitives = self.ctx.tessellate(output.shapes, output.pixels_per_point);
        primitives
            .iter()
            .map(|p| match &p.primitive {
                egui::epaint::Primitive::Mesh(m) => m.indices.len() / 3,
                egui::epaint::Primitive::Callback(_) => 0,
            })
            .sum()
    }
}

fn canvas_frames(c: &mut Criterion<ThreadCpu>) {
    let catalog = Catalog::builtin();
    let cases = [
        ("1k nodes, 2k links, fully in view", 1_000, 2_000, true),
        ("1k nodes, 20k links, fully in view", 1_000, 20_000, true),
        ("10k nodes, 20k links, fully in view", 10_000, 20_000, true),
        (
            "10k nodes, 20k links, zoom 1 (labels)",
            10_000,
            20_000,
            false,
        ),
    ];
    let mut group = c.benchmark_group("canvas frame");
    group.sample_size(40);
    group.measurement_time(Duration::from_secs(4));
    for (name, nodes, links, fit) in cases {
        let mut bench = Bench::new(grid_design(&catalog, nodes, links), catalog.clone(), fit);
        let triangles = bench.frame();
        // The two halves of a frame, in CPU time.
        let (ui_ms, tessellate_ms) = bench.split_ms(20, |_, _| {});
        println!("{name}: ui {ui_ms:.2} ms, tessellate {tessellate_ms:.2} ms");
        println!(
            "{name}: zoom {:.3}, {triangles} triangles",
            bench.state.zoom().unwrap_or(0.0)
        );
        group.bench_function(name, |b| b.iter(|| black_box(bench.frame())));
    }
    group.finish();
}

/// Pan and zoom frames of the 8,192-node rail-optimized fabric, fitted and zoomed in.
fn rail_frames(c: &mut Criterion<ThreadCpu>) {
    let catalog = Catalog::builtin();
    let design = rail_design(&catalog);
    println!(
        "rail-optimized: {} devices, {} links, {} GPUs",
        design.devices.len(),
        design.links.len(),
        design.gpu_count()
    );
    let mut group = c.benchmark_group("canvas frame 8192 DGX");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(6));
    for (view, zoom) in [
        ("fit", None),
        ("zoom 0.25", Some(0.25)),
        ("zoom 1", Some(1.0)),
    ] {
        let mut bench = Bench::at_zoom(design.clone(), catalog.clone(), zoom);
        for (motion_name, motion) in [("pan", Motion::Pan), ("zoom", Motion::Zoom)] {
            let name = format!("{motion_name}, {view}");
            let triangles = bench.moved_frame(motion, 0);
            let (ui_ms, tessellate_ms) = bench.split_ms(10, |b, k| b.move_view(motion, k));
            println!(
                "{name}: ui {ui_ms:.2} ms, tessellate {tessellate_ms:.2} ms, zoom {:.4}, {triangles} triangles",
                bench.state.zoom().unwrap_or(0.0)
            );
            let mut k = 0u64;
            group.bench_function(&name, |b| {
                b.iter(|| {
                    k += 1;
                    black_box(bench.moved_frame(motion, k))
                })
            });
        }
    }
    group.finish();
}

/// Frames of the 8,192-node fabric with nothing moving, the pointer away and then resting
/// on the canvas between devices: a resting pointer searches the links for the one under
/// it (the hover card) every frame.
fn hover_frames(c: &mut Criterion<ThreadCpu>) {
    let catalog = Catalog::builtin();
    let design = rail_design(&catalog);
    let mut group = c.benchmark_group("canvas frame 8192 DGX");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(6));
    for (view, zoom) in [("fit", None), ("zoom 1", Some(1.0))] {
        let mut bench = Bench::at_zoom(design.clone(), catalog.clone(), zoom);
        group.bench_function(format!("still, {view}"), |b| {
            b.iter(|| black_box(bench.frame()))
        });
        // A point a third of the way down the screen: between the tiers' rows of devices.
        bench.rest_pointer(Pos2::new(SCREEN.x / 2.0 + 7.0, SCREEN.y / 3.0));
        let (ui_ms, tessellate_ms) = bench.split_ms(10, |_, _| {});
        println!("pointer resting, {view}: ui {ui_ms:.2} ms, tessellate {tessellate_ms:.2} ms");
        group.bench_function(format!("pointer resting, {view}"), |b| {
            b.iter(|| black_box(bench.frame()))
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(ThreadCpu(WallTime));
    targets = canvas_frames, rail_frames, hover_frames
}
criterion_main!(benches);
