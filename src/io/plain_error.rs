//! RON's parse errors, and the operating system's file errors, in plain words. RON names the Rust types behind a file ("Unexpected
//! field named `n` in `Device`", "Expected opening `(` for struct `DesignFile`") and gives
//! advice meant for programmers (its recursion limit and `serde_stacker`); a person reading
//! the banner wants the part of the design and what belongs there.

use ron::error::Error;

/// What went wrong, in words that name the design's parts ("the device", "a link").
pub(crate) fn plain(code: &Error) -> String {
    match code {
        Error::ExpectedNamedStructLike(name)
        | Error::ExpectedDifferentStructName { expected: name, .. } => {
            if *name == "DesignFile" {
                "this is not a design file: it should start with `(`".to_string()
            } else {
                format!("expected `(` to open {}", with_article(&part(name)))
            }
        }
        Error::ExpectedStructLike => "expected `(` to open a group of fields".to_string(),
        Error::ExpectedStructLikeEnd => "expected `)` to close these fields".to_string(),
        Error::MissingStructField { field, outer } => {
            format!("{} is missing its `{field}`", the(outer.as_deref()))
        }
        Error::NoSuchStructField {
            expected,
            found,
            outer,
        } => format!(
            "{} has no field `{found}`; its fields are {}",
            the(outer.as_deref()),
            listed(expected)
        ),
        Error::DuplicateStructField { field, outer } => {
            format!("`{field}` is given twice in {}", the(outer.as_deref()))
        }
        Error::NoSuchEnumVariant {
            expected,
            found,
            outer,
        } => format!(
            "`{found}` is not a known {}; expected {}",
            outer.as_deref().map_or("value".to_string(), part),
            listed(expected)
        ),
        Error::ExpectedFloat => "expected a number".to_string(),
        Error::ExpectedInteger => "expected a whole number".to_string(),
        Error::IntegerOutOfBounds => {
            "this number is out of bounds (negative, or too large)".to_string()
        }
        Error::ExpectedBoolean => "expected true or false".to_string(),
        Error::ExpectedString => "expected text in double quotes".to_string(),
        Error::ExpectedStringEnd => "this text has no closing double quote".to_string(),
        Error::ExpectedComma => "expected a comma".to_string(),
        Error::ExpectedArray => "expected `[` to open a list".to_string(),
        Error::ExpectedArrayEnd => "expected `]` to close the list".to_string(),
        Error::ExpectedOption => "expected Some(…) or None".to_string(),
        Error::ExpectedIdentifier => "expected a name".to_string(),
        Error::Eof => "the file ends too early (is it cut short?)".to_string(),
        Error::TrailingCharacters => "unexpected text after the end of the design".to_string(),
        Error::ExceededRecursionLimit => {
            "brackets nested too deeply: over the recursion limit of a design file".to_string()
        }
        Error::UnexpectedChar(c) => format!("unexpected `{c}`"),
        other => other.to_string(),
    }
}

/// A file error without the system's error number ("File name too long (os error 36)" reads
/// "the name is too long for a file name"): the words people see in a banner.
pub fn plain_io(error: &std::io::Error) -> String {
    use std::io::ErrorKind;
    let words = match error.kind() {
        ErrorKind::NotFound => "no such file or folder",
        ErrorKind::PermissionDenied => "permission denied",
        ErrorKind::IsADirectory => "this is a folder, not a file",
        ErrorKind::NotADirectory => "a part of the path is a file, not a folder",
        ErrorKind::InvalidFilename => "the name is too long for a file name, or not valid",
        ErrorKind::StorageFull => "the disk is full",
        ErrorKind::ReadOnlyFilesystem => "the disk is read-only",
        ErrorKind::FileTooLarge => "the file is too large for this disk",
        _ => "",
    };
    if !words.is_empty() {
        return words.to_string();
    }
    let text = error.to_string();
    match text.rfind(" (os error ") {
        Some(at) if text.ends_with(')') => text[..at].to_string(),
        _ => text,
    }
}

/// "path: what went wrong", in plain words.
pub fn path_error(path: &std::path::Path, error: &std::io::Error) -> String {
    format!("{}: {}", path.display(), plain_io(error))
}

/// A type's name as the part of a design it stands for: `Device` → "device",
/// `NicSlot` → "NIC slot".
fn part(type_name: &str) -> String {
    let known = match type_name {
        "DesignFile" => "design file",
        "Endpoint" => "link end",
        "Pos" => "position",
        "GpuNode" => "GPU node",
        "NicSlot" => "NIC slot",
        "NvSwitchDomain" => "NVSwitch domain",
        "LinkTech" => "link technology",
        "DeviceKind" => "kind of device",
        "SwitchRole" => "switch role",
        "GroupKind" => "kind of group",
        "LinkState" => "link state",
        "LengthClass" => "cable length",
        _ => "",
    };
    if !known.is_empty() {
        return known.to_string();
    }
    // Otherwise the words of the CamelCase name, in lower case.
    let mut words = String::new();
    for (i, c) in type_name.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            words.push(' ');
        }
        words.extend(c.to_lowercase());
    }
    words
}

fn with_article(noun: &str) -> String {
    let vowel = noun.starts_with(|c: char| "aeiouAEIOU".contains(c));
    format!("{} {noun}", if vowel { "an" } else { "a" })
}

fn the(outer: Option<&str>) -> String {
    outer.map_or("this part".to_string(), |t| format!("the {}", part(t)))
}

fn listed(names: &[&str]) -> String {
    match names {
        [] => "none".to_string(),
        [one] => format!("`{one}`"),
        [init @ .., last] => {
            let init: Vec<String> = init.iter().map(|n| format!("`{n}`")).collect();
            format!("{} or `{last}`", init.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names_become_parts_of_a_design() {
        let e = Error::NoSuchStructField {
            expected: &["id", "name", "pos"],
            found: "n".to_string(),
            outer: Some("Device".to_string()),
        };
        assert_eq!(
            plain(&e),
            "the device has no field `n`; its fields are `id`, `name` or `pos`"
        );
        let e = Error::MissingStructField {
            field: "version",
            outer: Some("DesignFile".to_string()),
        };
        assert_eq!(plain(&e), "the design file is missing its `version`");
        assert_eq!(
            plain(&Error::ExpectedNamedStructLike("DesignFile")),
            "this is not a design file: it should start with `(`"
        );
        assert_eq!(
            plain(&Error::ExpectedNamedStructLike("Endpoint")),
            "expected `(` to open a link end"
        );
        assert_eq!(part("SomeNewThing"), "some new thing");
        assert!(!plain(&Error::ExceededRecursionLimit).contains("serde"));
    }

    #[test]
    fn file_errors_lose_their_error_numbers() {
        use std::io::Error as IoError;
        // ENAMETOOLONG is 36 on Linux: what the Open banner once ended with.
        assert_eq!(
            plain_io(&IoError::from_raw_os_error(36)),
            "the name is too long for a file name, or not valid"
        );
        let missing = std::fs::read("/nonexistent-railyard-dir/x.ron").unwrap_err();
        assert_eq!(plain_io(&missing), "no such file or folder");
        // A kind without words of its own keeps the system's text, less the number.
        assert_eq!(
            plain_io(&IoError::from_raw_os_error(5)),
            IoError::from_raw_os_error(5)
                .to_string()
                .replace(" (os error 5)", "")
        );
        assert!(!plain_io(&IoError::from_raw_os_error(5)).contains("os error"));
        assert_eq!(plain_io(&IoError::other("cut short")), "cut short");
    }
}
