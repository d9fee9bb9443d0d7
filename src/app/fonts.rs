//! The window's fonts: egui's own, with its monospace face (Hack) as the last fallback of the
//! proportional text, so arrows and other symbols the UI writes ("NIC i → rail-i leaf",
//! "0.80 → 0.83") are drawn rather than shown as boxes: Ubuntu Light has no U+2190–21FF, and
//! the emoji fonts after it only some of them.

/// egui's default fonts with that fallback.
pub fn with_symbol_fallback() -> egui::FontDefinitions {
    let mut fonts = egui::FontDefinitions::default();
    let monospace = fonts
        .families
        .get(&egui::FontFamily::Monospace)
        .and_then(|faces| faces.first().cloned());
    if let (Some(face), Some(proportional)) = (
        monospace,
        fonts.families.get_mut(&egui::FontFamily::Proportional),
    ) && !proportional.contains(&face)
    {
        proportional.push(face);
    }
    fonts
}

#[cfg(test)]
mod tests {
    use super::*;

    /// egui's own proportional faces have no "→"; with the fallback it has a face.
    #[test]
    fn arrows_have_a_face() {
        let fonts = with_symbol_fallback();
        let proportional = &fonts.families[&egui::FontFamily::Proportional];
        let monospace = &fonts.families[&egui::FontFamily::Monospace];
        assert_eq!(proportional.last(), monospace.first());
        let has_arrow = |fonts: egui::FontDefinitions| {
            let ctx = egui::Context::default();
            ctx.set_fonts(fonts);
            // No renderer takes the font atlas here; it is dropped on purpose.
            ctx.run_ui(egui::RawInput::default(), |_| {})
                .textures_delta
                .clear();
            ctx.fonts_mut(|f| f.has_glyphs(&egui::FontId::proportional(14.0), "→"))
        };
        assert!(
            !has_arrow(egui::FontDefinitions::default()),
            "egui's own lack it"
        );
        assert!(has_arrow(fonts));
    }
}
