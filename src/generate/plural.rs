//! Counts in the templates' notes: "1 spine", "2 spines".

/// `n` and the noun, plural unless `n` is 1: `plural(1, "spine", "spines")` is "1 spine".
pub(super) fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

#[cfg(test)]
mod tests {
    use super::plural;

    #[test]
    fn one_is_singular_others_plural() {
        assert_eq!(plural(1, "spine", "spines"), "1 spine");
        assert_eq!(plural(0, "spine", "spines"), "0 spines");
        assert_eq!(plural(2, "core switch", "core switches"), "2 core switches");
    }
}
