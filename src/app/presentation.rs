//! Presentation mode (F11 or View > Presentation mode): the canvas fills the window, text is
//! larger, and one compact strip of key figures replaces the menus, palette, inspector,
//! sidebar and status bar.

use super::sidebar::{Analysis, percent};
use egui::{RichText, Ui};

/// How much larger text is while presenting.
pub const FONT_SCALE: f32 = 1.5;

/// Scales every text style of both themes up (`on`) or back down. Scaling rather than
/// saving and restoring a style keeps a theme switch made meanwhile.
pub fn set_large_fonts(ctx: &egui::Context, on: bool) {
    let factor = if on { FONT_SCALE } else { 1.0 / FONT_SCALE };
    ctx.all_styles_mut(|style| {
        for font in style.text_styles.values_mut() {
            font.size *= factor;
        }
    });
}

/// The strip's figures, in order: each a short label and its value.
pub fn key_figures(analysis: &Analysis) -> Vec<(&'static str, String)> {
    let m = &analysis.metrics;
    let mut out = vec![("GPUs", m.gpus.to_string())];
    let b = &m.bisection;
    out.push((
        "bisection",
        match b.ratio {
            Some(ratio) if b.status.is_ok() => format!("{} ({})", b.value, percent(ratio)),
            _ => b.value.to_string(),
        },
    ));
    // A total that leaves parts out says so on the slide too.
    let incomplete = if m.cost_gap().is_some() {
        " (incomplete)"
    } else {
        ""
    };
    out.push(("cost", format!("{}{incomplete}", m.cost.total.compact())));
    if m.gpus > 0 {
        out.push((
            "per GPU",
            crate::model::Usd(m.cost.total.0 / m.gpus as f64).compact(),
        ));
    }
    out.push(("power", m.power.to_string()));
    if let Some(Ok(r)) = &analysis.collective {
        out.push((
            "collective",
            format!(
                "{} {}: {}, busbw {:.1} GB/s ({}, {})",
                r.op,
                r.bytes,
                crate::model::units::time_text(r.time_us),
                r.busbw_gbyte_s,
                r.library_text(),
                r.algorithm_text()
            ),
        ));
    }
    out
}

/// The strip at the top of the window; returns true when "Exit" was clicked. `what_if` says
/// which links a what-if has down, so the figures are not taken for the healthy design's.
///
/// The figures wrap in the width the way out leaves them, so a long strip never runs under
/// the button.
pub fn strip_ui(
    ui: &mut Ui,
    title: &str,
    what_if: Option<&str>,
    analysis: Option<&Analysis>,
) -> bool {
    const EXIT: &str = "Exit presentation";
    let mut exit = false;
    egui::Panel::top("presentation-strip").show(ui, |ui| {
        let exit_width = egui::WidgetText::from(EXIT)
            .into_galley(
                ui,
                Some(egui::TextWrapMode::Extend),
                f32::INFINITY,
                egui::TextStyle::Button,
            )
            .size()
            .x
            + 2.0 * ui.spacing().button_padding.x;
        let figures_width = ui.available_width() - exit_width - ui.spacing().item_spacing.x;
        ui.horizontal_top(|ui| {
            ui.vertical(|ui| {
                ui.set_max_width(figures_width.max(0.0));
                ui.horizontal_wrapped(|ui| figures_ui(ui, title, what_if, analysis));
            });
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Min), |ui| {
                exit = ui.button(EXIT).on_hover_text("F11").clicked();
            });
        });
    });
    exit
}

/// "GPUs 576": the label faint, the value strong, as one text.
fn figure_text(ui: &Ui, label: &str, value: &str) -> egui::text::LayoutJob {
    let font = egui::TextStyle::Body.resolve(ui.style());
    let mut job = egui::text::LayoutJob::default();
    let visuals = ui.visuals();
    job.append(
        label,
        0.0,
        egui::TextFormat::simple(font.clone(), visuals.weak_text_color()),
    );
    job.append(
        &format!(" {value}"),
        0.0,
        egui::TextFormat::simple(font, visuals.strong_text_color()),
    );
    job
}

/// The title, a what-if's warning and the key figures, parted by separators.
fn figures_ui(ui: &mut Ui, title: &str, what_if: Option<&str>, analysis: Option<&Analysis>) {
    ui.label(RichText::new(title).strong());
    if let Some(what_if) = what_if {
        ui.separator();
        ui.label(
            RichText::new(what_if)
                .strong()
                .color(ui.visuals().warn_fg_color),
        );
    }
    match analysis {
        Some(a) => {
            for (label, value) in key_figures(a) {
                ui.separator();
                // One unit: a figure wraps to the next row whole, never its label left at
                // the end of one row and its value opening the next.
                ui.add(
                    egui::Label::new(figure_text(ui, label, &value))
                        .wrap_mode(egui::TextWrapMode::Extend),
                );
            }
        }
        None => {
            ui.separator();
            ui.weak("computing…");
        }
    }
}
