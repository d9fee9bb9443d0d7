//! Design files: RON, readable and diff-friendly, with a version and migrations.
//!
//! A file is `(version: N, design: (...))`. Loading a file of the current version is one typed
//! pass. An older file is read into a lossless tree (`ron_tree`), taken through the
//! migrations N→N+1 in order, printed back and read typed; a newer file is refused.
//! After parsing, devices and links are sorted by id (a hand-edited file need not keep them in
//! order) and the design is validated (`model::validate`): a file that would make the
//! program wrong is refused with a message naming the file, and line:column where the error
//! has a position. A save writes a temporary file beside the target and renames it over,
//! so a failed save never destroys the previous file.

use super::read_progress::ReadProgress;
use super::ron_tree::{self, Tree};
use crate::model::Design;
use crate::model::validate::{ValidationError, validate};
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};

/// The version this build writes. Older versions are migrated on load; newer ones refused.
pub const CURRENT_VERSION: u32 = 2;

/// Files larger than this are refused before parsing: a design of 131,072 GPUs is ~60 MB.
pub const MAX_FILE_BYTES: u64 = 512 * 1024 * 1024;

/// Nesting deeper than this is refused while parsing: a design file needs about ten levels,
/// and deep nesting in a hostile file must not overflow the stack.
pub const MAX_NESTING: usize = 64;

/// One step of the file format: rewrites the `design` of a version `from` file into the
/// layout of version `from + 1`. Errors are messages for the user.
#[derive(Clone, Copy)]
pub struct Migration {
    pub from: u32,
    pub migrate: fn(&mut Tree) -> Result<(), String>,
}

pub use super::migrations::MIGRATIONS;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DesignFile {
    pub version: u32,
    pub design: Design,
}

#[derive(Debug, thiserror::Error)]
pub enum DesignFileError {
    #[error("{path}: {}", super::plain_error::plain_io(.error))]
    Read {
        path: String,
        /// Not a `source`: the message gives it in plain words, once.
        error: std::io::Error,
    },
    #[error("{origin}:{line}:{column}: {message}")]
    Syntax {
        origin: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error(
        "{origin}: file version {found} is newer than this railyard understands ({CURRENT_VERSION}); update railyard"
    )]
    FutureVersion { origin: String, found: u32 },
    #[error(
        "{origin}: file version {found} is too old; this railyard reads versions {oldest} to {CURRENT_VERSION}"
    )]
    UnsupportedVersion {
        origin: String,
        found: u32,
        oldest: u32,
    },
    #[error("{origin}: file is {size} bytes, over the limit of {MAX_FILE_BYTES}")]
    TooLarge { origin: String, size: u64 },
    #[error("{origin}: {message}")]
    Invalid { origin: String, message: String },
    /// The design parsed but is structurally broken; every problem found is listed.
    #[error("{origin}: {}", join_problems(.errors))]
    Validation {
        origin: String,
        errors: Vec<ValidationError>,
    },
    #[error("{origin}: migrating from version {from} to {}: {message}", .from + 1)]
    Migration {
        origin: String,
        from: u32,
        message: String,
    },
    #[error("could not save {path}: {}", super::plain_error::plain_io(.error))]
    Write { path: String, error: std::io::Error },
    #[error("could not encode the design: {0}")]
    Encode(String),
}

/// One line for the user: a status bar or a terminal shows a single message.
fn join_problems(errors: &[ValidationError]) -> String {
    let list: Vec<String> = errors.iter().map(ToString::to_string).collect();
    match list.len() {
        1 => list[0].clone(),
        n => format!("{n} problems: {}", list.join("; ")),
    }
}

fn syntax_error(origin: &str, text: &str, e: &ron::error::SpannedError) -> DesignFileError {
    let (line, column) = (e.span.start.line, e.span.start.col);
    let mut message = super::plain_error::plain(&e.code);
    if nothing_after(text, line, column) && !message.contains("cut short") {
        message.push_str(
            ", but the file ends there: it looks cut short (an unfinished copy, download or \
             save)",
        );
    }
    DesignFileError::Syntax {
        origin: origin.to_string(),
        line,
        column,
        message,
    }
}

/// Whether at most one word follows `line`:`column` (1-based, in characters) in `text`: an
/// error there is at the end of the file (cut in the middle of `true` or of a name), not a
/// wrong value in the middle of it.
fn nothing_after(text: &str, line: usize, column: usize) -> bool {
    // A file whose first word is wrong is some other file, not a design cut short.
    if text.split_whitespace().next().is_some() && (line, column) <= (1, 1) {
        return false;
    }
    let mut lines = text.lines().skip(line.saturating_sub(1));
    let Some(here) = lines.next() else {
        return true;
    };
    let rest: String = here.chars().skip(column.saturating_sub(1)).collect();
    rest.split_whitespace().count() <= 1 && lines.all(|l| l.trim().is_empty())
}

pub(super) fn ron_options() -> ron::Options {
    ron::Options::default().with_recursion_limit(MAX_NESTING)
}

/// The top level of a file, read in one pass: the design is typed only when the version
/// (which the writer puts first) says it is in the current layout; otherwise it is skipped
/// and read again through the migration path.
enum Envelope {
    Current(Box<Design>),
    Other(u32),
}

impl<'de> Deserialize<'de> for Envelope {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(field_identifier, rename_all = "lowercase")]
        enum Field {
            Version,
            Design,
        }

        struct EnvelopeVisitor;

        impl<'de> Visitor<'de> for EnvelopeVisitor {
            type Value = Envelope;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a design file `(version: N, design: (...))`")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Envelope, A::Error> {
                let mut version: Option<u32> = None;
                let mut design: Option<Design> = None;
                let mut design_seen = false;
                while let Some(key) = map.next_key::<Field>()? {
                    match key {
                        Field::Version => {
                            if version.is_some() {
                                return Err(de::Error::duplicate_field("version"));
                            }
                            version = Some(map.next_value()?);
                        }
                        Field::Design => {
                            if design_seen {
                                return Err(de::Error::duplicate_field("design"));
                            }
                            design_seen = true;
                            if version == Some(CURRENT_VERSION) {
                                design = Some(map.next_value()?);
                            } else {
                                map.next_value::<IgnoredAny>()?;
                            }
                        }
                    }
                }
                let version = version.ok_or_else(|| de::Error::missing_field("version"))?;
                if !design_seen {
                    return Err(de::Error::missing_field("design"));
                }
                Ok(match design {
                    Some(d) => Envelope::Current(Box::new(d)),
                    None => Envelope::Other(version),
                })
            }
        }

        deserializer.deserialize_struct("DesignFile", &["version", "design"], EnvelopeVisitor)
    }
}

/// Parses design text; `origin` names the file in error messages.
pub fn parse_design(text: &str, origin: &str) -> Result<Design, DesignFileError> {
    parse_design_with(text, origin, MIGRATIONS, None)
}

/// `parse_design` with a given migration list (tests use made-up formats), telling
/// `progress` how far it has read.
fn parse_design_with(
    text: &str,
    origin: &str,
    migrations: &[Migration],
    progress: Option<&ReadProgress>,
) -> Result<Design, DesignFileError> {
    let design = match read_in_pieces(text, progress) {
        Some(design) => design,
        None => parse_in_one_pass(text, origin, migrations)?,
    };
    if let Some(progress) = progress {
        progress.checking();
    }
    finish_design(design, origin)
}

/// A large file in the current layout read with its big lists on several threads; None
/// when it is not one (or has a mistake: the one-pass reader words it).
fn read_in_pieces(text: &str, progress: Option<&ReadProgress>) -> Option<Design> {
    super::parallel_parse::read(
        text,
        &ron_options(),
        |skeleton| match ron_options().from_str::<Envelope>(skeleton) {
            Ok(Envelope::Current(design)) => Some(*design),
            _ => None,
        },
        progress,
    )
}

/// Reads the whole text in one pass, through the migrations if it is older.
fn parse_in_one_pass(
    text: &str,
    origin: &str,
    migrations: &[Migration],
) -> Result<Design, DesignFileError> {
    Ok(match ron_options().from_str::<Envelope>(text) {
        Err(e) => return Err(syntax_error(origin, text, &e)),
        Ok(Envelope::Current(design)) => *design,
        Ok(Envelope::Other(found)) if found > CURRENT_VERSION => {
            return Err(DesignFileError::FutureVersion {
                origin: origin.to_string(),
                found,
            });
        }
        // A current file that lists `design` before `version`: read it again, typed.
        Ok(Envelope::Other(CURRENT_VERSION)) => {
            ron_options()
                .from_str::<DesignFile>(text)
                .map_err(|e| syntax_error(origin, text, &e))?
                .design
        }
        Ok(Envelope::Other(found)) => migrate(text, origin, found, migrations)?,
    })
}

/// Tidies and checks a design as read: ids sorted, then validated.
fn finish_design(mut design: Design, origin: &str) -> Result<Design, DesignFileError> {
    // Hand-edited files need not keep ids in order; lookups need them sorted.
    design.devices.sort_by_key(|d| d.id);
    design.links.sort_by_key(|l| l.id);
    validate(&design).map_err(|errors| DesignFileError::Validation {
        origin: origin.to_string(),
        errors,
    })?;
    Ok(design)
}

/// Takes an older file through the migrations to the current layout and reads it.
fn migrate(
    text: &str,
    origin: &str,
    found: u32,
    migrations: &[Migration],
) -> Result<Design, DesignFileError> {
    let oldest = oldest_version(migrations);
    if found < oldest {
        return Err(DesignFileError::UnsupportedVersion {
            origin: origin.to_string(),
            found,
            oldest,
        });
    }
    let mut doc = ron_tree::parse(text).map_err(|e| DesignFileError::Syntax {
        origin: origin.to_string(),
        line: e.line,
        column: e.column,
        message: e.message,
    })?;
    let Some(design) = doc.value.field_mut("design") else {
        return Err(DesignFileError::Invalid {
            origin: origin.to_string(),
            message: "no `design` field".into(),
        });
    };
    for step in migrations
        .iter()
        .filter(|m| m.from >= found && m.from < CURRENT_VERSION)
    {
        if let Err(message) = (step.migrate)(design) {
            return Err(
                located(text, origin, found).unwrap_or(DesignFileError::Migration {
                    origin: origin.to_string(),
                    from: step.from,
                    message,
                }),
            );
        }
    }
    doc.value
        .set_field("version", Tree::Number(CURRENT_VERSION.to_string()));
    let migrated = ron_tree::print(&doc);
    // Positions in the migrated text mean nothing to the user, so this error names none.
    let file: DesignFile = ron_options().from_str(&migrated).map_err(|e| {
        located(text, origin, found).unwrap_or(DesignFileError::Invalid {
            origin: origin.to_string(),
            message: format!(
                "after migrating from version {found}: {}",
                super::plain_error::plain(&e.code)
            ),
        })
    })?;
    Ok(file.design)
}

/// An old file's error with its line and column, for the versions whose layout is known
/// typed (`migrations.rs`); None when that layout reads the file or is not known.
fn located(text: &str, origin: &str, found: u32) -> Option<DesignFileError> {
    if found != 1 {
        return None;
    }
    super::migrations::locate_v1_error(text).map(|e| syntax_error(origin, text, &e))
}

/// The oldest version a migration list reaches the current one from; the list must run
/// without gaps up to `CURRENT_VERSION`.
fn oldest_version(migrations: &[Migration]) -> u32 {
    let mut oldest = CURRENT_VERSION;
    for step in migrations.iter().rev() {
        if step.from + 1 != oldest {
            break;
        }
        oldest = step.from;
    }
    oldest
}

/// Reads and parses a design file.
pub fn load_design(path: &Path) -> Result<Design, DesignFileError> {
    load_design_reporting(path, &ReadProgress::default())
}

/// `load_design`, telling `progress` how far it has read (a large file's window shows it).
pub fn load_design_reporting(
    path: &Path,
    progress: &ReadProgress,
) -> Result<Design, DesignFileError> {
    let result = load_with_progress(path, progress);
    progress.finish();
    result
}

fn load_with_progress(path: &Path, progress: &ReadProgress) -> Result<Design, DesignFileError> {
    let origin = path.display().to_string();
    let read_error = |error| DesignFileError::Read {
        path: origin.clone(),
        error,
    };
    let meta = std::fs::metadata(path).map_err(read_error)?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(DesignFileError::TooLarge {
            origin,
            size: meta.len(),
        });
    }
    let bytes = std::fs::read(path).map_err(read_error)?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        // The prefix up to the error is valid UTF-8 by definition.
        let before = std::str::from_utf8(valid).unwrap_or_default();
        DesignFileError::Syntax {
            origin: origin.clone(),
            line: 1 + before.matches('\n').count(),
            column: 1 + before.chars().rev().take_while(|&c| c != '\n').count(),
            message: "not UTF-8 text (is this a design file?)".into(),
        }
    })?;
    progress.start(text.len() as u64);
    parse_design_with(&text, &origin, MIGRATIONS, Some(progress))
}

/// The file text of a design, pretty and stable for diffs.
pub fn design_to_string(design: &Design) -> Result<String, DesignFileError> {
    let file = DesignFile {
        version: CURRENT_VERSION,
        design: design.clone(),
    };
    let pretty = ron::ser::PrettyConfig::new()
        .depth_limit(4)
        .indentor("  ".to_string())
        .struct_names(false);
    ron::ser::to_string_pretty(&file, pretty).map_err(|e| DesignFileError::Encode(e.to_string()))
}

/// Writes atomically: temporary file in the same folder, flushed, then renamed over the target.
/// A design that would not load again is refused rather than written.
pub fn save_design(path: &Path, design: &Design) -> Result<(), DesignFileError> {
    let origin = path.display().to_string();
    validate(design).map_err(|errors| DesignFileError::Validation {
        origin: origin.clone(),
        errors,
    })?;
    let text = design_to_string(design)?;
    write_atomically(path, text.as_bytes()).map_err(|error| DesignFileError::Write {
        path: origin,
        error,
    })
}

/// Writes bytes to `path` through a temporary sibling and a rename.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::sync::atomic::{AtomicU64, Ordering};
    // Unique per process and call, and short: a long target name must not make it too long.
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."));
    if path.file_name().is_none() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "no file name",
        ));
    }
    let tmp: PathBuf = dir.join(format!(
        ".railyard-{}-{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file over `parallel_parse::MIN_BYTES` (1,024 DGX, 3-tier rail-optimized, 8 MB) with
    /// links of every kind of state, lane count, transport and cable: read in pieces, it is
    /// what one pass reads, and what was saved; its progress moves as the pieces are read.
    #[test]
    fn a_large_file_read_in_pieces_is_the_file_read_in_one_pass() {
        use crate::generate::{Template, TemplateSpec, generate};
        use crate::model::{Catalog, LinkState, PartId, Transport};
        let mut spec = TemplateSpec::new(Template::RailOptimized);
        spec.nodes = Some(1024);
        spec.tiers = 3;
        let mut design = generate(&spec, &Catalog::builtin()).expect("generated");
        for (k, link) in design.links.iter_mut().enumerate().step_by(97) {
            match k % 4 {
                0 => link.state = LinkState::Degraded { fraction: 0.25 },
                1 => link.state = LinkState::Failed,
                2 => link.cable = Some(PartId::new("optic-400g")),
                _ => {
                    link.lanes = 2;
                    link.transport = Transport::Tcp;
                }
            }
        }
        design.devices[5].name = "node \"five\", [rack] (a)".into();
        let text = design_to_string(&design).expect("written");
        assert!(text.len() > super::super::parallel_parse::MIN_BYTES);
        let one_pass = finish_design(
            parse_in_one_pass(&text, "big", MIGRATIONS).expect("one pass"),
            "big",
        )
        .expect("valid");
        let progress = ReadProgress::default();
        progress.start(text.len() as u64);
        let in_pieces = read_in_pieces(&text, Some(&progress)).expect("read in pieces");
        let in_pieces = finish_design(in_pieces, "big").expect("valid");
        assert_eq!(in_pieces, one_pass);
        assert_eq!(in_pieces, design);
        // The window's bar moved in steps (16 parts per piece, a piece per list at least),
        // and the pieces are nearly the whole file: all but the skeleton.
        assert!(progress.steps() >= 32, "{} steps", progress.steps());
        let read = progress.fraction().expect("started");
        assert!(read > 0.95 && read <= 1.0, "{read}");
        progress.finish();
        assert_eq!(progress.fraction(), Some(1.0));
        assert!(
            !progress.is_checking(),
            "read_in_pieces leaves checking to its caller"
        );
    }

    /// A made-up history: version 0 called the design's name `title`.
    fn title_to_name(design: &mut Tree) -> Result<(), String> {
        if design.rename_field("title", "name") {
            Ok(())
        } else {
            Err("version 0 designs have a `title`".into())
        }
    }

    /// The made-up step from version 0, then the real history.
    const V0_TO_CURRENT: &[Migration] = &[
        Migration {
            from: 0,
            migrate: title_to_name,
        },
        MIGRATIONS[0],
    ];

    const V0_FILE: &str = r#"(
        version: 0,
        design: (
            title: "lab",
            devices: [
                (id: 1, name: "sw", pos: (x: 0.0, y: 0.0),
                 kind: Switch((model: "sn5600", role: Leaf))),
                (id: 0, name: "mac", pos: (x: -40.0, y: 12.5),
                 kind: GpuNode((model: "mac-studio-m2-ultra", gpu: "m2-ultra", gpu_count: 1,
                                scale_up: UnifiedMemory))),
            ],
            links: [(id: 0, a: (device: 0, port: 0), b: (device: 1, port: 3),
                     tech: Thunderbolt4, rate_gbit_s: 40.0, state: Degraded(fraction: 0.5))],
        ),
    )"#;

    #[test]
    fn version_0_is_migrated_with_names_and_enums_intact() {
        let design = parse_design_with(V0_FILE, "old.ron", V0_TO_CURRENT, None).unwrap();
        assert_eq!(design.name, "lab");
        // Sorted on load: the file lists device 1 first.
        assert_eq!(design.devices[0].name, "mac");
        assert_eq!(design.devices[0].pos.x, -40.0);
        assert!(matches!(
            design.devices[1].kind,
            crate::model::DeviceKind::Switch(_)
        ));
        let link = &design.links[0];
        assert_eq!(link.tech, crate::model::LinkTech::Thunderbolt4);
        assert_eq!(
            link.state,
            crate::model::LinkState::Degraded { fraction: 0.5 }
        );
        assert_eq!(link.capacity().gbit_s(), 20.0);
        // Version 1 numbered the Mac's first Thunderbolt port 0 (it has no NIC).
        assert_eq!(link.a.port, crate::model::Port::Thunderbolt(0));
        assert_eq!(link.b.port, crate::model::Port::Switch(3));
    }

    #[test]
    fn without_the_migration_version_0_is_refused() {
        let e = parse_design(V0_FILE, "old.ron").unwrap_err();
        assert_eq!(
            e.to_string(),
            "old.ron: file version 0 is too old; this railyard reads versions 1 to 2"
        );
    }

    #[test]
    fn a_failing_migration_says_which_step() {
        let no_title = V0_FILE.replace("title", "label");
        let e = parse_design_with(&no_title, "old.ron", V0_TO_CURRENT, None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "old.ron: migrating from version 0 to 1: version 0 designs have a `title`"
        );
    }

    #[test]
    fn a_current_file_reads_in_one_pass_and_in_any_field_order() {
        let current = V0_FILE
            .replace("version: 0", "version: 2")
            .replace("title", "name")
            .replace("port: 0)", "port: Thunderbolt(0))")
            .replace("port: 3)", "port: Switch(3))");
        let a = parse_design(&current, "a.ron").unwrap();
        // `design` before `version` takes a second pass but gives the same design.
        let swapped = format!(
            "(design: {}, version: 2)",
            &current[current.find("(\n            name").unwrap()..current.rfind(',').unwrap()]
        );
        let b = parse_design(&swapped, "b.ron").unwrap();
        assert_eq!(a, b);
        assert_eq!(a.links.len(), 1);
    }

    #[test]
    fn a_wrong_field_in_a_version_1_file_is_placed_by_line_and_column() {
        let text = "(\n  version: 1,\n  design: (name: \"x\", devices: [oops]),\n)";
        let e = parse_design(text, "old.ron").unwrap_err();
        assert!(e.to_string().starts_with("old.ron:3:"), "{e}");
        // A port number is what version 1 had, so it is no error there.
        let fine = "(version: 1, design: (name: \"x\", links: []))";
        assert!(parse_design(fine, "ok.ron").is_ok());
    }

    #[test]
    fn future_versions_are_refused() {
        let e = parse_design("(version: 7, design: (anything: [1, 2]))", "new.ron").unwrap_err();
        assert_eq!(
            e.to_string(),
            "new.ron: file version 7 is newer than this railyard understands (2); update railyard"
        );
    }

    #[test]
    fn oldest_version_needs_an_unbroken_chain() {
        let step = |from| Migration {
            from,
            migrate: title_to_name,
        };
        assert_eq!(oldest_version(&[]), 2);
        assert_eq!(oldest_version(&[step(1)]), 1);
        assert_eq!(oldest_version(&[step(0), step(1)]), 0);
        // A chain that does not reach the current version helps no file.
        assert_eq!(oldest_version(&[step(0)]), 2);
        assert_eq!(oldest_version(&[step(3)]), 2);
    }
}
