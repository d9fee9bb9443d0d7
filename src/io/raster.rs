//! The SVG diagram rendered to a PNG on the CPU (resvg), so a PNG export needs no GPU or
//! display and shows exactly what the SVG does. Text uses egui's built-in font, loaded from
//! memory, so the picture is the same on a machine without fonts installed.

use std::sync::{Arc, OnceLock};
use thiserror::Error;

/// Largest scale a PNG is rendered at; 4× of a big design is already tens of megapixels.
pub const MAX_SCALE: u32 = 4;
/// Largest picture rendered: 200 megapixels is 800 MB of pixels while it is drawn. The
/// 8,192-DGX fabric on Q3400 switches (26,310 × 14,358 units) is 377 at 1×: its SVG is the
/// export for that size.
pub const MAX_PIXELS: u64 = 200_000_000;

#[derive(Debug, Error)]
pub enum RasterError {
    #[error("scale {0} is not between 1 and {MAX_SCALE}")]
    Scale(u32),
    #[error("the SVG could not be read: {0}")]
    Svg(String),
    #[error(
        "a {width} × {height} pixel picture is too large to render (over {} megapixels); the SVG export has no such limit",
        MAX_PIXELS / 1_000_000
    )]
    TooLarge { width: u32, height: u32 },
    #[error("the PNG could not be encoded: {0}")]
    Encode(String),
}

/// Fonts for the SVG's `sans-serif` text: egui's Ubuntu Light, from memory.
fn fonts() -> Arc<resvg::usvg::fontdb::Database> {
    static FONTS: OnceLock<Arc<resvg::usvg::fontdb::Database>> = OnceLock::new();
    FONTS
        .get_or_init(|| {
            let mut db = resvg::usvg::fontdb::Database::new();
            db.load_font_data(epaint_default_fonts::UBUNTU_LIGHT.to_vec());
            let family = db
                .faces()
                .next()
                .and_then(|f| f.families.first())
                .map(|f| f.0.clone());
            if let Some(family) = family {
                db.set_sans_serif_family(family.clone());
                db.set_serif_family(family);
            }
            Arc::new(db)
        })
        .clone()
}

/// `svg` as PNG bytes, `scale` (1–4) pixels per SVG pixel.
pub fn svg_to_png(svg: &str, scale: u32) -> Result<Vec<u8>, RasterError> {
    if !(1..=MAX_SCALE).contains(&scale) {
        return Err(RasterError::Scale(scale));
    }
    let options = resvg::usvg::Options {
        fontdb: fonts(),
        ..Default::default()
    };
    let tree =
        resvg::usvg::Tree::from_str(svg, &options).map_err(|e| RasterError::Svg(e.to_string()))?;
    let size = tree.size().to_int_size();
    let (width, height) = (
        size.width().saturating_mul(scale),
        size.height().saturating_mul(scale),
    );
    if u64::from(width) * u64::from(height) > MAX_PIXELS {
        return Err(RasterError::TooLarge { width, height });
    }
    let mut pixmap = resvg::tiny_skia::Pixmap::new(width, height)
        .ok_or(RasterError::TooLarge { width, height })?;
    let k = scale as f32;
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::from_scale(k, k),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|e| RasterError::Encode(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SQUARE: &str = r##"<svg xmlns="http://www.w3.org/2000/svg" width="30" height="20"><rect width="30" height="20" fill="#ff0000"/><text x="2" y="15">A</text></svg>"##;

    #[test]
    fn scale_multiplies_the_size_and_keeps_the_colours() {
        for scale in [1, 3] {
            let png = svg_to_png(SQUARE, scale).unwrap();
            // Decoded by tiny-skia, not the `image` crate, which only the window builds with.
            let img = resvg::tiny_skia::Pixmap::decode_png(&png).unwrap();
            assert_eq!((img.width(), img.height()), (30 * scale, 20 * scale));
            // Top right is away from the letter: the rectangle's pure red.
            let p = img.pixel(29 * scale, 0).unwrap();
            assert_eq!((p.red(), p.green(), p.blue(), p.alpha()), (255, 0, 0, 255));
        }
    }

    #[test]
    fn text_is_drawn_with_the_built_in_font() {
        let png = svg_to_png(SQUARE, 2).unwrap();
        let img = resvg::tiny_skia::Pixmap::decode_png(&png).unwrap();
        // The black "A" darkens some pixels of the red square.
        assert!(img.pixels().iter().any(|p| p.red() < 100));
    }

    #[test]
    fn scales_and_documents_out_of_range_are_refused() {
        assert!(matches!(svg_to_png(SQUARE, 0), Err(RasterError::Scale(0))));
        assert!(matches!(svg_to_png(SQUARE, 5), Err(RasterError::Scale(5))));
        assert!(matches!(svg_to_png("<svg", 1), Err(RasterError::Svg(_))));
        // 20,000 × 12,000 at 1× is 240 megapixels: refused before a pixel is allocated.
        let huge = r#"<svg xmlns="http://www.w3.org/2000/svg" width="20000" height="12000"/>"#;
        assert!(matches!(
            svg_to_png(huge, 1),
            Err(RasterError::TooLarge {
                width: 20000,
                height: 12000
            })
        ));
    }
}
