//! File > Export view as PNG: the canvas as it shows now (its zoom, folds and heatmap; File >
//! Export PNG draws the whole diagram instead, `exports`). egui takes a screenshot of the
//! window (`ViewportCommand::Screenshot`), which arrives as an event a frame or two later; the
//! canvas's part of it is cut out and written as PNG. The frames from the request to the
//! screenshot draw the canvas for a slide (`clean_view`): no grid, selection, highlight or
//! tool windows, the design's title in the corner, the link legend kept. Where no file dialog can appear, a
//! path field in the window asks instead, as for Open and Save.

use anyhow::Context as _;
use egui::{ColorImage, Rect};
use std::path::{Path, PathBuf};

use super::RailyardApp;

/// What the screenshot carries back to us.
#[derive(Debug, Clone)]
struct ScreenshotFor {
    path: PathBuf,
}

#[derive(Default)]
pub struct PngExport {
    /// Where the canvas was on screen on the last frame: the part of the screenshot kept.
    pub canvas_rect: Option<Rect>,
    /// Chosen path, asked for on the next frame, once that frame draws the clean canvas.
    requested: Option<PathBuf>,
    /// A screenshot is on its way.
    awaiting: bool,
}

impl PngExport {
    /// This frame draws the canvas as the PNG shows it.
    pub fn clean_view(&self) -> bool {
        self.requested.is_some() || self.awaiting
    }
}

/// The design's title in the top-left corner of the exported canvas.
pub fn paint_title(ui: &egui::Ui, rect: Rect, title: &str) {
    let font = egui::FontId::proportional(22.0);
    ui.painter().text(
        rect.left_top() + egui::vec2(16.0, 12.0),
        egui::Align2::LEFT_TOP,
        title,
        font,
        ui.visuals().strong_text_color(),
    );
}

/// The pixels inside `rect` (in points), clamped to the image.
pub fn crop(image: &ColorImage, rect: Rect, pixels_per_point: f32) -> ColorImage {
    let [w, h] = image.size;
    let px = |v: f32, max: usize| ((v * pixels_per_point).round().max(0.0) as usize).min(max);
    let (x0, x1) = (px(rect.min.x, w), px(rect.max.x, w));
    let (y0, y1) = (px(rect.min.y, h), px(rect.max.y, h));
    if x1 <= x0 || y1 <= y0 {
        return image.clone();
    }
    image.region_by_pixels([x0, y0], [x1 - x0, y1 - y0])
}

/// The image as PNG bytes (8-bit RGBA).
pub fn encode_png(image: &ColorImage) -> anyhow::Result<Vec<u8>> {
    let [w, h] = image.size;
    let width = u32::try_from(w).context("image too wide")?;
    let height = u32::try_from(h).context("image too tall")?;
    let rgba: Vec<u8> = image
        .pixels
        .iter()
        .flat_map(|c| c.to_srgba_unmultiplied())
        .collect();
    let mut out = Vec::new();
    image::ImageEncoder::write_image(
        image::codecs::png::PngEncoder::new(&mut out),
        &rgba,
        width,
        height,
        image::ExtendedColorType::Rgba8,
    )
    .context("could not encode the PNG")?;
    Ok(out)
}

/// Encodes and writes the image; a temporary file is renamed over the target so a failed
/// write leaves an existing file as it was.
pub fn save_png(path: &Path, image: &ColorImage) -> anyhow::Result<()> {
    let bytes = encode_png(image)?;
    let tmp = path.with_extension("png.part");
    std::fs::write(&tmp, &bytes).with_context(|| format!("could not write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("could not write {}", path.display()))
}

pub(super) fn with_png_extension(path: PathBuf) -> PathBuf {
    if path.extension().is_some() {
        path
    } else {
        path.with_extension("png")
    }
}

impl RailyardApp {
    /// Asks for the screenshot on the next frame, which draws the clean canvas first.
    pub(super) fn request_screenshot(&mut self, ctx: &egui::Context, path: PathBuf) {
        self.status = format!("Exporting {}…", path.display());
        self.png.requested = Some(path);
        ctx.request_repaint();
    }

    /// Each frame: saves a screenshot that has arrived, and shows the path field if open.
    pub(super) fn drive_png(&mut self, ctx: &egui::Context) {
        if let Some(path) = self.png.requested.take() {
            self.png.awaiting = true;
            ctx.send_viewport_cmd(egui::ViewportCommand::Screenshot(egui::UserData::new(
                ScreenshotFor { path },
            )));
        }
        let shots: Vec<(PathBuf, std::sync::Arc<ColorImage>)> = ctx.input(|i| {
            i.events
                .iter()
                .filter_map(|e| match e {
                    egui::Event::Screenshot {
                        user_data, image, ..
                    } => {
                        let request = user_data.data.as_ref()?.downcast_ref::<ScreenshotFor>()?;
                        Some((request.path.clone(), std::sync::Arc::clone(image)))
                    }
                    _ => None,
                })
                .collect()
        });
        for (path, image) in shots {
            self.png.awaiting = false;
            let image = match self.png.canvas_rect {
                Some(rect) => crop(&image, rect, ctx.pixels_per_point()),
                None => ColorImage::clone(&image),
            };
            self.status = match save_png(&path, &image) {
                Ok(()) => format!(
                    "Exported {} ({}×{} px)",
                    path.display(),
                    image.size[0],
                    image.size[1]
                ),
                Err(e) => format!("PNG not written: {e:#}"),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use egui::Color32;

    #[test]
    fn a_png_reads_back_with_its_size_and_pixels() {
        let mut image = ColorImage::filled([3, 2], Color32::from_rgb(10, 20, 30));
        image[(2, 1)] = Color32::from_rgb(200, 100, 50);
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("canvas.png");
        save_png(&path, &image).expect("written");
        let back = image::open(&path).expect("a PNG").to_rgba8();
        assert_eq!(back.dimensions(), (3, 2));
        assert_eq!(back.get_pixel(0, 0).0, [10, 20, 30, 255]);
        assert_eq!(back.get_pixel(2, 1).0, [200, 100, 50, 255]);
        assert!(!dir.path().join("canvas.png.part").exists());
    }

    #[test]
    fn crop_takes_the_canvas_in_pixels_and_clamps() {
        let image = ColorImage::filled([100, 50], Color32::WHITE);
        // 10..30 × 5..20 points at 2 px per point: 40 × 30 px.
        let rect = Rect::from_min_max(egui::pos2(10.0, 5.0), egui::pos2(30.0, 20.0));
        assert_eq!(crop(&image, rect, 2.0).size, [40, 30]);
        // Past the edge: cut at the image.
        let wide = Rect::from_min_max(egui::pos2(40.0, 0.0), egui::pos2(120.0, 90.0));
        assert_eq!(crop(&image, wide, 1.0).size, [60, 50]);
    }

    #[test]
    fn export_names() {
        assert_eq!(
            super::super::exports::export_file_name(None, "DGX H100 pod", "png"),
            "dgx-h100-pod.png"
        );
        assert_eq!(
            with_png_extension(PathBuf::from("/tmp/x")),
            PathBuf::from("/tmp/x.png")
        );
    }
}
