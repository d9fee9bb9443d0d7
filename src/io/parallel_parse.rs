//! A large design file read on several threads. Nearly all of a big file is its `devices`
//! and `links` lists and nearly all the time of reading it is RON's tokenizer, so the lists
//! are cut at their elements' commas and read in pieces side by side, while the rest (the
//! "skeleton", with those lists emptied) is read as usual. Anything this does not expect
//! (comments, raw strings, char literals, unbalanced brackets) and any error leaves the file
//! to the one-pass reader, which reports errors with their line and column; so this path
//! only ever returns what that reader would have.

use super::read_progress::ReadProgress;
use crate::model::{Design, Device, Link};
use serde::de::DeserializeOwned;
use std::ops::Range;

/// Below this size one pass is fast enough (a 16,384-GPU file is about 16 MB).
pub const MIN_BYTES: usize = 4 << 20;

/// The element spans of one of the design's lists, and the span inside its brackets.
#[derive(Debug, Default, PartialEq)]
struct List {
    inside: Range<usize>,
    elements: Vec<Range<usize>>,
}

/// Where the design's `devices` and `links` lists lie, or None when the text holds
/// something the scan does not follow.
#[derive(Debug, Default, PartialEq)]
struct Lists {
    devices: Option<List>,
    links: Option<List>,
}

/// Scans the text once: bracket depth, strings with their escapes, and at the design's
/// level (depth 2: inside the file's and the design's parentheses) the lists named
/// `devices` and `links` with their top-level commas.
fn scan(text: &str) -> Option<Lists> {
    let bytes = text.as_bytes();
    let mut lists = Lists::default();
    let mut depth = 0usize;
    // The list being cut: which, where its inside starts, its elements so far.
    let mut open: Option<(bool, usize, Vec<Range<usize>>, usize)> = None;
    let mut i = 0;
    while i < bytes.len() {
        // Most bytes are none of the ones that matter: skip them in a tight loop.
        while i < bytes.len() && !MATTERS[usize::from(bytes[i])] {
            i += 1;
        }
        let Some(&byte) = bytes.get(i) else { break };
        match byte {
            // A raw string (r"…", r#"…"#): left to the one-pass reader.
            b'"' if i > 0 && bytes[i - 1] == b'r' && (i < 2 || !is_ident(bytes[i - 2])) => {
                return None;
            }
            b'"' => {
                // A plain string: skip to its closing quote, escapes included.
                i += 1;
                loop {
                    match bytes.get(i)? {
                        b'\\' => i += 2,
                        b'"' => break,
                        _ => i += 1,
                    }
                }
            }
            // Comments, char literals, raw strings and attributes: left to the one-pass
            // reader.
            b'/' | b'\'' | b'#' => return None,
            b'(' | b'{' => depth += 1,
            b'[' => {
                depth += 1;
                if depth == 3 && open.is_none() {
                    let name = field_before(&text[..i]);
                    if name == Some("devices") || name == Some("links") {
                        open = Some((name == Some("devices"), i + 1, Vec::new(), i + 1));
                    }
                }
            }
            b',' if depth == 3 => {
                if let Some((_, _, elements, start)) = &mut open {
                    elements.push(*start..i);
                    *start = i + 1;
                }
            }
            b')' | b'}' => depth = depth.checked_sub(1)?,
            b']' => {
                if depth == 3
                    && let Some((is_devices, inside, mut elements, start)) = open.take()
                {
                    if !text[start..i].trim().is_empty() {
                        elements.push(start..i);
                    }
                    let list = List {
                        inside: inside..i,
                        elements,
                    };
                    let slot = if is_devices {
                        &mut lists.devices
                    } else {
                        &mut lists.links
                    };
                    if slot.replace(list).is_some() {
                        return None;
                    }
                }
                depth = depth.checked_sub(1)?;
            }
            _ => {}
        }
        i += 1;
    }
    (depth == 0 && open.is_none()).then_some(lists)
}

/// The bytes the scan acts on; every other byte is skipped.
const MATTERS: [bool; 256] = {
    let mut table = [false; 256];
    let mut k = 0;
    let bytes = b"\"/'#()[]{},";
    while k < bytes.len() {
        table[bytes[k] as usize] = true;
        k += 1;
    }
    table
};

fn is_ident(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

/// The field name written just before a `[` (`devices: [`), if any.
fn field_before(text: &str) -> Option<&str> {
    let before = text.trim_end().strip_suffix(':')?.trim_end();
    let start = before
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |k| k + 1);
    Some(&before[start..])
}

/// A piece of a list: being read on its thread, or read already (where no thread could
/// start).
enum Piece<'scope, T> {
    Reading(std::thread::ScopedJoinHandle<'scope, Option<Vec<T>>>),
    Read(Option<Vec<T>>),
}

/// A piece is read in this many parts, each reported to the progress when done.
const PROGRESS_STEPS: usize = 16;

/// Reads the elements in `piece` as RON, a part at a time, telling `progress` of each.
fn read_piece<T: DeserializeOwned>(
    text: &str,
    piece: &[Range<usize>],
    options: &ron::Options,
    progress: Option<&ReadProgress>,
) -> Option<Vec<T>> {
    let mut all = Vec::with_capacity(piece.len());
    for part in piece.chunks(piece.len().div_ceil(PROGRESS_STEPS).max(1)) {
        let (first, last) = (part.first()?, part.last()?);
        let chunk = format!("[{}]", &text[first.start..last.end]);
        all.extend(options.from_str::<Vec<T>>(&chunk).ok()?);
        if let Some(progress) = progress {
            progress.advance((last.end - first.start) as u64);
        }
    }
    Some(all)
}

/// Starts reading a list's elements in `parts` pieces, one thread each, in the list's order.
fn spawn_pieces<'scope, T: DeserializeOwned + Send + 'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    text: &'scope str,
    list: &'scope List,
    parts: usize,
    options: &'scope ron::Options,
    progress: Option<&'scope ReadProgress>,
) -> Vec<Piece<'scope, T>> {
    let per = list.elements.len().div_ceil(parts.max(1)).max(1);
    list.elements
        .chunks(per)
        .map(|piece| {
            match std::thread::Builder::new()
                .spawn_scoped(scope, move || read_piece(text, piece, options, progress))
            {
                Ok(handle) => Piece::Reading(handle),
                Err(_) => Piece::Read(read_piece(text, piece, options, progress)),
            }
        })
        .collect()
}

/// The pieces read, joined in order; None if any failed.
fn joined<T>(pieces: Vec<Piece<'_, T>>) -> Option<Vec<T>> {
    let mut all = Vec::new();
    for piece in pieces {
        let read = match piece {
            Piece::Reading(handle) => handle.join().ok()?,
            Piece::Read(read) => read,
        };
        all.extend(read?);
    }
    Some(all)
}

/// The design's big lists read side by side, and the rest by `read_skeleton`; None when
/// the text is small, holds what the scan does not follow, or any piece fails to read (the
/// caller then reads it in one pass, which also words the error).
pub fn read(
    text: &str,
    options: &ron::Options,
    read_skeleton: impl FnOnce(&str) -> Option<Design>,
    progress: Option<&ReadProgress>,
) -> Option<Design> {
    if text.len() < MIN_BYTES {
        return None;
    }
    let lists = scan(text)?;
    let parts = std::thread::available_parallelism().map_or(1, |n| n.get());
    // The skeleton: the text with both lists' insides taken out, in order.
    let mut cuts: Vec<&Range<usize>> = [&lists.devices, &lists.links]
        .into_iter()
        .flatten()
        .map(|l| &l.inside)
        .collect();
    cuts.sort_by_key(|r| r.start);
    let mut skeleton = String::with_capacity(4096);
    let mut at = 0;
    for cut in cuts {
        skeleton.push_str(&text[at..cut.start]);
        at = cut.end;
    }
    skeleton.push_str(&text[at..]);
    // First, as it is quick and says whether the file is in the current layout at all.
    let mut design = read_skeleton(&skeleton)?;
    // Pieces by each list's share of the bytes, so that every core has about as much.
    let size = |l: &Option<List>| l.as_ref().map_or(0, |l| l.inside.len());
    let total = (size(&lists.devices) + size(&lists.links)).max(1);
    let share = |l: &Option<List>| (parts * size(l)).div_ceil(total).max(1);
    let (devices, links) = std::thread::scope(|scope| {
        let devices = lists.devices.as_ref().map(|l| {
            spawn_pieces::<Device>(scope, text, l, share(&lists.devices), options, progress)
        });
        let links = lists
            .links
            .as_ref()
            .map(|l| spawn_pieces::<Link>(scope, text, l, share(&lists.links), options, progress));
        (devices.map(joined), links.map(joined))
    });
    if let Some(devices) = devices {
        design.devices = devices?;
    }
    if let Some(links) = links {
        design.links = links?;
    }
    Some(design)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lists_are_found_at_the_designs_level_with_their_elements() {
        let text = r#"(version: 1, design: (name: "a [b], c", devices: [(id: 0, name: "x\"]"), (id: 1)], groups: [(id: 0)], links: [(id: 0, a: (device: 0)),]))"#;
        let lists = scan(text).expect("scanned");
        let texts = |list: Option<List>| -> Vec<&str> {
            let list = list.expect("the list");
            list.elements
                .iter()
                .map(|r| text[r.clone()].trim())
                .collect()
        };
        assert_eq!(
            texts(lists.devices),
            [r#"(id: 0, name: "x\"]")"#, "(id: 1)"]
        );
        // The trailing comma leaves no empty element.
        assert_eq!(texts(lists.links), ["(id: 0, a: (device: 0))"]);
    }

    #[test]
    fn what_the_scan_does_not_follow_is_left_to_the_one_pass_reader() {
        for text in [
            "(version: 1, design: (name: \"a\", // note\n devices: []))",
            "(version: 1, design: (name: r\"a\", devices: []))",
            "(version: 1, design: (name: \"a\", devices: [(id: 0)])",
            "(version: 1, design: (name: \"a\", devices: [], devices: []))",
        ] {
            assert_eq!(scan(text), None, "{text}");
        }
    }
}
