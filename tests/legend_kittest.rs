//! View > Link colours > By rail on the rail-optimized SuperPOD preset: the rendered window
//! shows every rail's hue (in the links and the legend), which the technology view does not.

mod common;

use common::app::{WINDOW, app, click_menu, open_preset};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use railyard::app::RailyardApp;
use railyard::io::link_colors::{Background, ColorMode, Rgb, rail_color};

/// Pixels within a small distance of `c` (anti-aliasing blends line edges).
fn pixels_near(image: &image::RgbaImage, Rgb(r, g, b): Rgb) -> usize {
    image
        .pixels()
        .filter(|p| {
            let d = |x: u8, y: u8| (i32::from(x) - i32::from(y)).abs();
            d(p.0[0], r) + d(p.0[1], g) + d(p.0[2], b) <= 6
        })
        .count()
}

fn render(harness: &mut Harness<'_, RailyardApp>) -> image::RgbaImage {
    harness.run_ok();
    harness.render().expect("a rendered frame")
}

#[test]
fn rail_view_shows_each_rails_hue_and_technology_view_does_not() {
    if !common::vulkan::adapter_or_skip("rail_view_shows_each_rails_hue") {
        return;
    }
    let mut harness = Harness::builder()
        .with_size(WINDOW)
        .with_max_steps(12)
        .wgpu()
        .build_eframe(|_cc| app());
    open_preset(&mut harness, "DGX H100 SuperPOD scalable unit (32 nodes)");
    harness.remove_cursor();
    // Rails 0 to 6; rail 7 is white on the dark canvas, like the text.
    let hues: Vec<Rgb> = (0..7).map(|r| rail_color(r, Background::Dark)).collect();

    let technology = render(&mut harness);
    for (rail, &hue) in hues.iter().enumerate() {
        assert_eq!(
            pixels_near(&technology, hue),
            0,
            "rail {rail} hue by technology"
        );
    }

    // The submenu's item is a radio button, not a plain menu button.
    click_menu(&mut harness, "View", "Link colours");
    harness.get_by_label("By rail").click();
    harness.run_ok();
    assert_eq!(harness.state().canvas_state().link_colors, ColorMode::Rail);
    let rails = render(&mut harness);
    for (rail, &hue) in hues.iter().enumerate() {
        // The legend's sample alone is 26 × 3 points.
        let n = pixels_near(&rails, hue);
        assert!(n >= 40, "rail {rail}: {n} pixels of {hue:?}");
    }
}
