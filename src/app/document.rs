//! One open design: the design itself, its undo history, where it lives on disk, whether it
//! has unsaved changes, and an error banner. Edits arrive as `Command`s only.
//!
//! Also the pure command builders behind Delete, Copy/Paste and the arrow-key nudge, kept here
//! (not in the panels) so they are unit-tested without a window.

use crate::io::read_progress::ReadProgress;
use crate::io::{DesignFileError, load_design_reporting, save_design};
use crate::model::command::{Command, CommandError, History};
use crate::model::{Design, Device, DeviceId, Link, LinkId, Pos};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub struct Document {
    /// Shared with the analysis worker; an edit clones it only while the worker still holds
    /// the previous revision.
    design: Arc<Design>,
    history: History,
    path: Option<PathBuf>,
    /// Net number of steps applied (apply and redo add one, undo takes one away).
    depth: i64,
    /// `depth` at the last save; None when that state can no longer be reached by undo/redo.
    saved_depth: Option<i64>,
    /// Names an untitled design ("Untitled 2") until it is saved.
    untitled_number: u32,
    /// An error to show above the canvas (a file that would not open, a failed save).
    pub banner: Option<String>,
    /// Changes with every edit, undo and redo but those of the job alone (`SetJob`): what a
    /// layout search depends on, so that pinning a layout it found keeps its list.
    fabric_revision: u64,
}

impl Document {
    /// A new, empty, untitled design.
    pub fn untitled(number: u32) -> Self {
        let name = if number <= 1 {
            "Untitled".to_string()
        } else {
            format!("Untitled {number}")
        };
        let mut doc = Self::from_design(Design::new(name), None);
        doc.untitled_number = number;
        doc
    }

    /// A design that matches `path` on disk (or, with no path, one that was never saved but
    /// has nothing to lose: a preset or a generated design counts as modified instead).
    pub fn from_design(design: Design, path: Option<PathBuf>) -> Self {
        Self {
            design: Arc::new(design),
            history: History::default(),
            path,
            depth: 0,
            saved_depth: Some(0),
            untitled_number: 0,
            banner: None,
            fabric_revision: 0,
        }
    }

    /// A design that exists only in memory so far (a preset, a template run): closing it asks.
    pub fn unsaved(design: Design) -> Self {
        let mut doc = Self::from_design(design, None);
        doc.saved_depth = None;
        doc
    }

    /// A design recovered after a crash: unsaved, and remembering the file it belonged to, so
    /// Save writes it back there.
    pub fn recovered(design: Design, path: Option<PathBuf>) -> Self {
        let mut doc = Self::from_design(design, path);
        doc.saved_depth = None;
        doc
    }

    pub fn open(path: &Path) -> Result<Self, DesignFileError> {
        Self::open_reporting(path, &ReadProgress::default())
    }

    /// `open`, telling `progress` how far the file has been read.
    pub fn open_reporting(path: &Path, progress: &ReadProgress) -> Result<Self, DesignFileError> {
        let design = load_design_reporting(path, progress)?;
        Ok(Self::from_design(design, Some(path.to_path_buf())))
    }

    pub fn design(&self) -> &Design {
        &self.design
    }

    /// The current design for the worker, without copying it.
    pub fn shared_design(&self) -> Arc<Design> {
        Arc::clone(&self.design)
    }

    pub fn history(&self) -> &History {
        &self.history
    }

    /// Changes with every edit, undo and redo.
    pub fn revision(&self) -> u64 {
        self.history.revision()
    }

    /// Changes with every edit, undo and redo but those of the job alone.
    pub fn fabric_revision(&self) -> u64 {
        self.fabric_revision
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    pub fn is_dirty(&self) -> bool {
        self.saved_depth != Some(self.depth)
    }

    /// Untitled, never edited and empty: opening a file may reuse its tab.
    pub fn is_pristine(&self) -> bool {
        self.path.is_none()
            && !self.is_dirty()
            && self.design.devices.is_empty()
            && !self.history.can_undo()
    }

    /// The tab and window title: the file name, else the design's name.
    pub fn title(&self) -> String {
        if let Some(name) = self.path.as_deref().and_then(Path::file_name) {
            return name.to_string_lossy().into_owned();
        }
        if !self.design.name.trim().is_empty() {
            return self.design.name.clone();
        }
        match self.untitled_number {
            0 | 1 => "Untitled".to_string(),
            n => format!("Untitled {n}"),
        }
    }

    /// Applies one edit as one undo step. On error the design is unchanged.
    pub fn apply(&mut self, command: Command) -> Result<(), CommandError> {
        let job_only = matches!(command, Command::SetJob(_));
        self.history
            .apply(Arc::make_mut(&mut self.design), command)?;
        if !job_only {
            self.fabric_revision += 1;
        }
        if self.saved_depth.is_some_and(|saved| saved > self.depth) {
            // The saved state was on the redo branch that this edit just discarded.
            self.saved_depth = None;
        }
        self.depth += 1;
        Ok(())
    }

    pub fn undo(&mut self) -> Option<&'static str> {
        let label = self.history.undo(Arc::make_mut(&mut self.design))?;
        self.depth -= 1;
        self.count_fabric_step(label);
        Some(label)
    }

    pub fn redo(&mut self) -> Option<&'static str> {
        let label = self.history.redo(Arc::make_mut(&mut self.design))?;
        self.depth += 1;
        self.count_fabric_step(label);
        Some(label)
    }

    /// An undo or redo step changed the fabric unless it was a job edit (`SetJob`, whose
    /// label no other command has).
    fn count_fabric_step(&mut self, label: &str) {
        if label != Command::SetJob(None).label() {
            self.fabric_revision += 1;
        }
    }

    /// Saves atomically and marks the document clean; keeps the old path if saving fails.
    pub fn save_to(&mut self, path: &Path) -> Result<(), DesignFileError> {
        save_design(path, &self.design)?;
        self.path = Some(path.to_path_buf());
        self.saved_depth = Some(self.depth);
        Ok(())
    }
}

/// What Copy puts on the clipboard: devices and the links among them. Written to the system
/// clipboard as RON too, so a copy can be pasted into another railyard window.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Clip {
    pub railyard_clip: u32,
    pub devices: Vec<Device>,
    pub links: Vec<Link>,
}

const CLIP_VERSION: u32 = 1;

impl Clip {
    pub fn to_text(&self) -> Option<String> {
        ron::ser::to_string(self).ok()
    }

    /// Parses clipboard text if it is one of ours; any other text is not an error, just not a clip.
    pub fn from_text(text: &str) -> Option<Clip> {
        let clip: Clip = ron::Options::default()
            .with_recursion_limit(64)
            .from_str(text)
            .ok()?;
        (clip.railyard_clip == CLIP_VERSION).then_some(clip)
    }
}

/// The selected devices and every link with both ends among them.
pub fn copy_selection(design: &Design, devices: &BTreeSet<DeviceId>) -> Clip {
    Clip {
        railyard_clip: CLIP_VERSION,
        devices: devices
            .iter()
            .filter_map(|&id| design.device(id).cloned())
            .collect(),
        links: design
            .links
            .iter()
            .filter(|l| devices.contains(&l.a.device) && devices.contains(&l.b.device))
            .cloned()
            .collect(),
    }
}

/// Inserts a clip with fresh ids and names no device in the design has (`leaf-3` becomes
/// the next free `leaf-N`), shifted by `offset`. Returns the command and the new ids (to
/// select them).
pub fn paste_command(
    design: &Design,
    clip: &Clip,
    offset: (f32, f32),
) -> (Command, Vec<DeviceId>, Vec<LinkId>) {
    let mut next_link = design.next_link_id().0;
    let mut renumber: HashMap<DeviceId, DeviceId> = HashMap::new();
    let mut devices = Vec::with_capacity(clip.devices.len());
    let mut taken: HashSet<String> = design.devices.iter().map(|d| d.name.clone()).collect();
    for (number, d) in (design.next_device_id().0..).zip(&clip.devices) {
        let mut device = d.clone();
        let id = DeviceId(number);
        renumber.insert(d.id, id);
        device.id = id;
        device.name = free_name(&d.name, &taken);
        taken.insert(device.name.clone());
        device.pos = Pos::new(d.pos.x + offset.0, d.pos.y + offset.1);
        // A group from another design would dangle.
        if device.group.is_some_and(|g| design.group(g).is_none()) {
            device.group = None;
        }
        devices.push(device);
    }
    // A node's NVSwitch domain follows it if the domain was copied too, else it stays put
    // only when it exists in this design.
    for device in &mut devices {
        if let crate::model::DeviceKind::GpuNode(node) = &mut device.kind
            && let Some(domain) = node.domain
        {
            node.domain = match renumber.get(&domain) {
                Some(&new) => Some(new),
                None if design.device(domain).is_some() => Some(domain),
                None => None,
            };
        }
    }
    let mut links = Vec::with_capacity(clip.links.len());
    for l in &clip.links {
        let (Some(&a), Some(&b)) = (renumber.get(&l.a.device), renumber.get(&l.b.device)) else {
            continue;
        };
        let mut link = l.clone();
        link.id = LinkId(next_link);
        next_link += 1;
        link.a.device = a;
        link.b.device = b;
        links.push(link);
    }
    let device_ids = devices.iter().map(|d| d.id).collect();
    let link_ids = links.iter().map(|l| l.id).collect();
    (
        Command::Insert {
            devices,
            links,
            groups: Vec::new(),
        },
        device_ids,
        link_ids,
    )
}

/// `name` if no device has it, else the same stem with the next free number: `leaf-3` →
/// `leaf-4` (keeping zero padding: `node-01` → `node-02`), `spine` → `spine-2`.
fn free_name(name: &str, taken: &HashSet<String>) -> String {
    if !taken.contains(name) {
        return name.to_string();
    }
    let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (stem, number, width) = match name[name.len() - digits..].parse::<u64>() {
        Ok(n) if digits > 0 => (&name[..name.len() - digits], n, digits),
        _ => (name, 1, 0),
    };
    let separator = if width == 0 { "-" } else { "" };
    (number.saturating_add(1)..)
        .map(|n| format!("{stem}{separator}{n:0width$}"))
        .find(|candidate| !taken.contains(candidate))
        .unwrap_or_else(|| format!("{name} (copy)"))
}

/// Deletes the selected devices (with their links) and the selected links.
pub fn delete_command(
    design: &Design,
    devices: &BTreeSet<DeviceId>,
    links: &BTreeSet<LinkId>,
) -> Option<Command> {
    let devices: Vec<DeviceId> = devices
        .iter()
        .copied()
        .filter(|&d| design.device(d).is_some())
        .collect();
    let links: Vec<LinkId> = links
        .iter()
        .copied()
        .filter(|&l| design.link(l).is_some())
        .collect();
    (!devices.is_empty() || !links.is_empty()).then_some(Command::Remove {
        devices,
        links,
        groups: Vec::new(),
    })
}

/// Moves the selected devices by one step: one `MoveDevices`, so one undo step per press.
pub fn nudge_command(
    design: &Design,
    devices: &BTreeSet<DeviceId>,
    delta: (f32, f32),
) -> Option<Command> {
    let moves: Vec<(DeviceId, Pos)> = devices
        .iter()
        .filter_map(|&id| design.device(id))
        .map(|d| (d.id, Pos::new(d.pos.x + delta.0, d.pos.y + delta.1)))
        .collect();
    (!moves.is_empty()).then_some(Command::MoveDevices { moves })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{
        Bandwidth, DeviceKind, Endpoint, LinkTech, PartId, Port, Switch, SwitchFeatures, SwitchRole,
    };

    fn switch(id: u32, x: f32) -> Device {
        Device {
            id: DeviceId(id),
            name: format!("sw{id}"),
            pos: Pos::new(x, 0.0),
            group: None,
            kind: DeviceKind::Switch(Switch {
                model: PartId::new("qm9700"),
                role: SwitchRole::Leaf,
                breakout: 1,
                rail: None,
                features: SwitchFeatures::default(),
            }),
        }
    }

    fn link(id: u32, a: u32, b: u32) -> Link {
        let mut l = Link::new(
            Endpoint::new(DeviceId(a), Port::Nic(0)),
            Endpoint::new(DeviceId(b), Port::Switch(0)),
            LinkTech::InfiniBand,
            Bandwidth::from_gbit_s(400.0),
        );
        l.id = LinkId(id);
        l
    }

    /// Three switches in a row, d0–d1 and d1–d2 linked.
    fn three() -> Design {
        let mut d = Design::new("t");
        for i in 0..3 {
            d.insert_device(switch(i, 100.0 * i as f32));
        }
        d.insert_link(link(0, 0, 1));
        d.insert_link(link(1, 1, 2));
        d
    }

    #[test]
    fn dirty_follows_undo_back_to_the_saved_state() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.ron");
        let mut doc = Document::from_design(three(), None);
        assert!(!doc.is_dirty());
        let nudge = nudge_command(doc.design(), &BTreeSet::from([DeviceId(0)]), (10.0, 0.0));
        doc.apply(nudge.expect("a move")).expect("applies");
        assert!(doc.is_dirty());
        doc.save_to(&path).expect("saves");
        assert!(!doc.is_dirty());
        assert_eq!(doc.title(), "a.ron");
        doc.undo();
        assert!(doc.is_dirty());
        doc.redo();
        assert!(!doc.is_dirty(), "redo returns to exactly what was saved");
        doc.undo();
        // A new edit on top of the undone state drops the redo branch with the saved state.
        let other = nudge_command(doc.design(), &BTreeSet::from([DeviceId(1)]), (0.0, 10.0));
        doc.apply(other.expect("a move")).expect("applies");
        doc.undo();
        assert!(doc.is_dirty());
        let reopened = Document::open(&path).expect("opens");
        assert_eq!(
            reopened.design().device(DeviceId(0)).map(|d| d.pos.x),
            Some(10.0)
        );
    }

    #[test]
    fn copy_takes_only_links_inside_the_selection() {
        let design = three();
        let clip = copy_selection(&design, &BTreeSet::from([DeviceId(0), DeviceId(1)]));
        assert_eq!(clip.devices.len(), 2);
        assert_eq!(clip.links.len(), 1, "d1–d2 leaves the selection");
        assert_eq!(clip.links[0].id, LinkId(0));
        let text = clip.to_text().expect("encodes");
        assert_eq!(Clip::from_text(&text), Some(clip));
        assert_eq!(Clip::from_text("just some words"), None);
    }

    #[test]
    fn paste_renumbers_devices_and_links() {
        let mut design = three();
        let clip = copy_selection(&design, &BTreeSet::from([DeviceId(1), DeviceId(2)]));
        let (command, devices, links) = paste_command(&design, &clip, (40.0, 40.0));
        assert_eq!(devices, vec![DeviceId(3), DeviceId(4)]);
        assert_eq!(links, vec![LinkId(2)]);
        command.apply(&mut design).expect("applies");
        let pasted = design.link(LinkId(2)).expect("pasted link");
        assert_eq!(
            (pasted.a.device, pasted.b.device),
            (DeviceId(3), DeviceId(4))
        );
        let moved = design.device(DeviceId(4)).expect("pasted device");
        assert_eq!(moved.pos, Pos::new(240.0, 40.0));
        assert_eq!(design.devices.len(), 5);
        assert_eq!(design.links.len(), 3);
    }

    #[test]
    fn pasted_devices_get_the_next_free_names() {
        let taken: HashSet<String> = ["leaf-3", "leaf-4", "node-01", "spine", "n9"]
            .into_iter()
            .map(String::from)
            .collect();
        assert_eq!(free_name("leaf-3", &taken), "leaf-5");
        assert_eq!(free_name("node-01", &taken), "node-02");
        assert_eq!(free_name("spine", &taken), "spine-2");
        assert_eq!(free_name("n9", &taken), "n10");
        assert_eq!(free_name("fresh", &taken), "fresh");
        // Two copies pasted together get two names.
        let mut design = three();
        let all = BTreeSet::from([DeviceId(0), DeviceId(1), DeviceId(2)]);
        let clip = copy_selection(&design, &all);
        let (command, ..) = paste_command(&design, &clip, (40.0, 40.0));
        command.apply(&mut design).expect("applies");
        let names: HashSet<&str> = design.devices.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names.len(), 6, "{names:?}");
    }

    #[test]
    fn delete_skips_ids_already_gone() {
        let mut design = three();
        let command = delete_command(
            &design,
            &BTreeSet::from([DeviceId(1), DeviceId(9)]),
            &BTreeSet::new(),
        )
        .expect("something to delete");
        command.apply(&mut design).expect("applies");
        assert_eq!(design.devices.len(), 2);
        assert!(design.links.is_empty(), "both links touched d1");
        assert!(
            delete_command(&design, &BTreeSet::from([DeviceId(9)]), &BTreeSet::new()).is_none()
        );
    }
}
