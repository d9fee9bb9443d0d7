//! Which form of a device's name fits its box: the full name, then shorter forms that keep
//! whole words from the end (where names differ: "…studio-3", "…3"), then nothing. A name is
//! never cut inside a word; the canvas's hover tag and the SVG's title always have the full
//! name. The canvas and the SVG export shorten alike.

/// The name and its shorter forms, longest first: each drops the leading word (words end at
/// `-`, `_`, `.` or a space) and marks the cut with "…".
pub fn name_forms(name: &str) -> Vec<String> {
    let name = name.trim();
    let mut forms = vec![name.to_string()];
    for (i, c) in name.char_indices() {
        if matches!(c, '-' | '_' | '.' | ' ') {
            let rest = &name[i + c.len_utf8()..];
            if !rest.is_empty() && !rest.starts_with(['-', '_', '.', ' ']) {
                forms.push(format!("…{rest}"));
            }
        }
    }
    forms
}

/// The whole name on two lines, broken after the word separator that evens them out best
/// ("mac-studio-m3-ultra-" / "512gb-living-room"): what a box tall enough for two lines
/// shows before it shortens the name. None for a name of one word.
pub fn two_lines(name: &str) -> Option<(&str, &str)> {
    let name = name.trim();
    let total = name.chars().count();
    name.char_indices()
        .enumerate()
        .filter(|(_, (_, c))| matches!(c, '-' | '_' | '.' | ' '))
        .map(|(k, (i, c))| (k + 1, i + c.len_utf8()))
        .filter(|&(_, at)| at < name.len())
        .min_by_key(|&(left, _)| left.max(total - left))
        .map(|(_, at)| (name[..at].trim_end(), &name[at..]))
}

/// The first of `forms` that `fits`, or none.
pub fn fitting_form(forms: &[String], fits: impl Fn(&str) -> bool) -> Option<&str> {
    forms.iter().map(String::as_str).find(|f| fits(f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_drop_whole_leading_words() {
        assert_eq!(
            name_forms("mac-studio-m2-ultra-3"),
            [
                "mac-studio-m2-ultra-3",
                "…studio-m2-ultra-3",
                "…m2-ultra-3",
                "…ultra-3",
                "…3"
            ]
        );
        assert_eq!(name_forms("leaf 1"), ["leaf 1", "…1"]);
        // Separators in a row or at the end make no empty or separator-led forms.
        assert_eq!(name_forms("a--b-"), ["a--b-", "…b-"]);
        assert_eq!(name_forms("node"), ["node"]);
    }

    #[test]
    fn two_lines_break_after_the_most_even_separator() {
        // 37 characters: after "ultra-" (20 | 17) is the most even break.
        assert_eq!(
            two_lines("mac-studio-m3-ultra-512gb-living-room"),
            Some(("mac-studio-m3-ultra-", "512gb-living-room"))
        );
        // A space at the break is not kept at the end of the first line.
        assert_eq!(two_lines("rack 12 node 7"), Some(("rack 12", "node 7")));
        assert_eq!(two_lines("node"), None);
        assert_eq!(two_lines("node-"), None);
    }

    #[test]
    fn the_longest_form_that_fits_wins() {
        let forms = name_forms("mac-studio-m2-ultra-3");
        // A box 9 characters wide takes "…ultra-3" (8), not the 11-character form.
        let width = |limit: usize| move |f: &str| f.chars().count() <= limit;
        assert_eq!(fitting_form(&forms, width(9)), Some("…ultra-3"));
        assert_eq!(
            fitting_form(&forms, width(40)),
            Some("mac-studio-m2-ultra-3")
        );
        assert_eq!(fitting_form(&forms, width(2)), Some("…3"));
        assert_eq!(fitting_form(&forms, width(1)), None);
    }
}
