//! A monkey test (#19): seeded random clicks, double-clicks, drags, scrolls, keys, typing and
//! menu choices on the designer in a kittest harness for thousands of frames. Nothing may
//! panic, and undoing everything must give back the preset design exactly: every edit the
//! UI makes is a `Command` whose inverse is on the undo stack, so the stack is the whole story.
//!
//! Replay a failure with the seed it prints: `MONKEY_SEED=0x… cargo test --test monkey_kittest`.
//! `MONKEY_EVENTS=n` sets how many actions a run makes, `MONKEY_PRESET=<title>` another
//! preset, `MONKEY_VERBOSE=1` prints progress (and any slow action).
//!
//! Left out, because they leave the document or the process, or change the design other than
//! through its undo stack:
//! - the whole File menu and its shortcuts (Ctrl+N/O/S/Shift+S/W/Q): new, open, presets and
//!   recent files open another tab; save and the exports write files; close tab and quit end
//!   the document or the window; Check cabling sits there too;
//! - the tab bar (its `+` opens a tab, its `×` closes one): no click lands above the tab bar,
//!   and no Tab key is pressed, which walks the keyboard focus onto `+` for an Enter to press;
//! - Design > Generate and Ctrl+G, and the Generate dialog whenever a click opens it (the
//!   palette has a Generate… button): its Generate puts the new design in a new tab. The
//!   dialog is closed with Escape as soon as it shows.
//!
//! Preferences (theme, grid, snap, link colours, sidebar settings) and windows (Compare,
//! Plots, Calibrate, shortcuts, About, presentation mode) are not the design, so they stay in.
//! Past `MAX_DEVICES` the monkey undoes instead of acting: select all, copy and paste double
//! the design each time, and tens of thousands of devices take seconds a frame.
//!
//! The injected `ScriptedDialogs` has no answers, so a file dialog reached anyway would not
//! block; `tab_count() == 1` is checked after every action, so a way out of the document that
//! was missed fails the test rather than passing it on another tab.

mod common;

use common::app::{WINDOW, app, open_preset, wait_for_analysis};
use egui::accesskit::Role;
use egui::{Event, Key, Modifiers, MouseWheelUnit, PointerButton, Pos2, TouchPhase, Vec2, pos2};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use railyard::app::RailyardApp;
use railyard::app::files::ScriptedDialogs;
use railyard::io::design_file::design_to_string;
use railyard::model::Design;
use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::time::Instant;

/// Actions per run unless `MONKEY_EVENTS` says otherwise. Each is one to a dozen frames.
const EVENTS: usize = 2500;

/// splitmix64: a few lines, no dependency, and the same sequence on every platform.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }

    fn chance(&mut self, p: f32) -> bool {
        self.unit() < p
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// The designer, its random source and what it did last (printed when a run fails).
struct Monkey {
    harness: Harness<'static, RailyardApp>,
    rng: Rng,
    /// Screen y below which clicks land: under the menu and tab bars.
    top: f32,
    log: VecDeque<String>,
    frames: usize,
    /// The preset as opened, before the first action.
    original: Design,
    /// The design differed from the original after some action.
    changed: bool,
    /// The kinds of edit made (undo labels), for the summary.
    edits: std::collections::BTreeSet<&'static str>,
}

const LOG_KEPT: usize = 40;

/// Above this many devices the monkey undoes rather than acts.
const MAX_DEVICES: usize = 150;

impl Monkey {
    fn note(&mut self, what: String) {
        if self.log.len() == LOG_KEPT {
            self.log.pop_front();
        }
        self.log.push_back(what);
    }

    /// One frame per queued event (as `Harness::step` does), then closes what must not stay open.
    fn frame(&mut self) {
        self.harness.step();
        self.frames += 1;
        self.close_generate();
    }

    fn send(&mut self, event: Event) {
        self.harness.event(event);
        self.frame();
    }

    /// The Generate dialog puts its design in a new tab: closed as soon as it shows.
    fn close_generate(&mut self) {
        for _ in 0..4 {
            if self
                .harness
                .query_all_by_label("Generate a design")
                .next()
                .is_none()
            {
                return;
            }
            // Escape is taken by a dialog before anything else (`close_dialog_on_escape`),
            // and the Generate dialog is the most modal one the monkey can open.
            self.harness.key_press(Key::Escape);
            self.harness.step();
            self.frames += 1;
        }
    }

    fn random_pos(&mut self) -> Pos2 {
        pos2(
            self.rng.unit() * (WINDOW.x - 2.0) + 1.0,
            self.top + self.rng.unit() * (WINDOW.y - self.top - 2.0),
        )
    }

    fn random_modifiers(&mut self) -> Modifiers {
        match self.rng.below(8) {
            0 => Modifiers::SHIFT,
            1 => Modifiers::COMMAND,
            2 => Modifiers::ALT,
            _ => Modifiers::NONE,
        }
    }

    fn press(&mut self, pos: Pos2, button: PointerButton, pressed: bool, modifiers: Modifiers) {
        self.send(Event::PointerButton {
            pos,
            button,
            pressed,
            modifiers,
        });
    }

    fn click(&mut self, pos: Pos2, button: PointerButton, modifiers: Modifiers, times: usize) {
        self.note(format!(
            "click {button:?} ×{times} at {pos:?} {modifiers:?}"
        ));
        self.send(Event::ModifiersChanged(modifiers));
        self.send(Event::PointerMoved(pos));
        for _ in 0..times {
            self.press(pos, button, true, modifiers);
            self.press(pos, button, false, modifiers);
        }
        self.send(Event::ModifiersChanged(Modifiers::NONE));
    }

    fn drag(&mut self, from: Pos2, to: Pos2, button: PointerButton, modifiers: Modifiers) {
        let steps = 2 + self.rng.below(8);
        self.note(format!(
            "drag {button:?} {from:?} → {to:?} in {steps} moves {modifiers:?}"
        ));
        self.send(Event::ModifiersChanged(modifiers));
        self.send(Event::PointerMoved(from));
        self.press(from, button, true, modifiers);
        for i in 1..=steps {
            let t = i as f32 / steps as f32;
            // A hand wobbles on the way.
            let wobble = Vec2::new(self.rng.unit() - 0.5, self.rng.unit() - 0.5) * 12.0;
            self.send(Event::PointerMoved(from + (to - from) * t + wobble));
        }
        // Now and then a key in the middle of the drag (Escape cancels a canvas drag).
        if self.rng.chance(0.1) {
            self.send_key(Key::Escape, Modifiers::NONE);
        }
        self.press(to, button, false, modifiers);
        self.send(Event::ModifiersChanged(Modifiers::NONE));
    }

    fn send_key(&mut self, key: Key, modifiers: Modifiers) {
        self.send(Event::ModifiersChanged(modifiers));
        for pressed in [true, false] {
            self.send(Event::Key {
                key,
                physical_key: None,
                pressed,
                repeat: false,
                modifiers,
            });
        }
        self.send(Event::ModifiersChanged(Modifiers::NONE));
    }

    fn key(&mut self) {
        // Ctrl combinations only from those left in (see the top of the file).
        const CTRL: [Key; 9] = [
            Key::Z,
            Key::Y,
            Key::C,
            Key::X,
            Key::V,
            Key::A,
            Key::D,
            Key::Minus,
            Key::Equals,
        ];
        const PLAIN: [Key; 30] = [
            Key::ArrowLeft,
            Key::ArrowRight,
            Key::ArrowUp,
            Key::ArrowDown,
            Key::Delete,
            Key::Backspace,
            Key::Escape,
            Key::Num2,
            Key::Enter,
            Key::Space,
            Key::Home,
            Key::End,
            Key::PageUp,
            Key::PageDown,
            Key::F,
            Key::H,
            Key::Num0,
            Key::Num1,
            Key::Num5,
            Key::Num9,
            Key::A,
            Key::E,
            Key::L,
            Key::S,
            Key::Z,
            Key::Questionmark,
            Key::Plus,
            Key::Minus,
            Key::F11,
            Key::F2,
        ];
        let (key, modifiers) = match self.rng.below(10) {
            0..=2 => {
                let key = *self.rng.pick(&CTRL);
                // Ctrl+Shift+Z is Redo.
                let shift = key == Key::Z && self.rng.chance(0.4);
                let mods = if shift {
                    Modifiers::COMMAND | Modifiers::SHIFT
                } else {
                    Modifiers::COMMAND
                };
                (key, mods)
            }
            3 => (*self.rng.pick(&PLAIN), Modifiers::SHIFT),
            _ => (*self.rng.pick(&PLAIN), Modifiers::NONE),
        };
        let times = if self.rng.chance(0.2) {
            2 + self.rng.below(4)
        } else {
            1
        };
        self.note(format!("key {modifiers:?} {key:?} ×{times}"));
        for _ in 0..times {
            self.send_key(key, modifiers);
        }
    }

    /// Clipboard events as egui-winit sends them for Ctrl+C, Ctrl+X and Ctrl+V.
    fn clipboard(&mut self) {
        let event = match self.rng.below(4) {
            0 => Event::Copy,
            1 => Event::Cut,
            2 => {
                // What Copy put on the system clipboard, if anything, else stray text.
                let copied = self
                    .harness
                    .output()
                    .platform_output
                    .commands
                    .iter()
                    .find_map(|c| match c {
                        egui::OutputCommand::CopyText(t) => Some(t.clone()),
                        _ => None,
                    });
                Event::Paste(copied.unwrap_or_else(|| "(railyard_clip:1,devices:[])".into()))
            }
            _ => Event::Paste(self.text()),
        };
        self.note(format!("clipboard {event:?}"));
        self.send(event);
    }

    fn text(&mut self) -> String {
        const PIECES: [&str; 16] = [
            "a", "Z", "0", "7", "42", "-1", "1e9", "0.5", " ", "leaf", "×", "ü", "🚂", ".", ",",
            "NaN",
        ];
        let n = 1 + self.rng.below(6);
        (0..n).map(|_| *self.rng.pick(&PIECES)).collect()
    }

    fn type_text(&mut self) {
        let text = self.text();
        self.note(format!("type {text:?}"));
        self.send(Event::Text(text));
        if self.rng.chance(0.3) {
            self.send_key(Key::Enter, Modifiers::NONE);
        }
    }

    fn scroll(&mut self) {
        let pos = self.random_pos();
        let delta = Vec2::new(self.rng.unit() - 0.5, self.rng.unit() - 0.5) * 400.0;
        let modifiers = self.random_modifiers();
        self.note(format!("scroll {delta:?} at {pos:?} {modifiers:?}"));
        self.send(Event::PointerMoved(pos));
        self.send(Event::ModifiersChanged(modifiers));
        if self.rng.chance(0.3) {
            let factor = 0.5 + self.rng.unit() * 1.5;
            self.send(Event::Zoom(factor));
        } else {
            self.send(Event::MouseWheel {
                unit: MouseWheelUnit::Point,
                delta,
                phase: TouchPhase::Move,
                modifiers,
            });
        }
        self.send(Event::ModifiersChanged(Modifiers::NONE));
    }

    /// A click on a widget the accessibility tree names: far likelier to hit a button, a
    /// field or a combo box than a click anywhere.
    fn click_widget(&mut self) {
        let top = self.top;
        let targets: Vec<(Pos2, String)> = self
            .harness
            .query_all_by(|n| {
                matches!(
                    n.role(),
                    Role::Button
                        | Role::CheckBox
                        | Role::RadioButton
                        | Role::ComboBox
                        | Role::MenuItem
                        | Role::Link
                        | Role::SpinButton
                        | Role::Slider
                        | Role::TextInput
                        | Role::MultilineTextInput
                        | Role::Tab
                ) && !n.is_disabled()
            })
            .filter_map(|n| {
                let label = n.accesskit_node().label().unwrap_or_default();
                let rect = n.rect();
                let left_out = ["Generate", "Export", "Save", "Open", "Browse"]
                    .iter()
                    .any(|word| label.contains(word));
                // Not one scrolled out of the window.
                let on_screen = rect.center().y > top && rect.center().y < WINDOW.y;
                (on_screen && !left_out && rect.is_positive()).then(|| (rect.center(), label))
            })
            .collect();
        if targets.is_empty() {
            return;
        }
        let (pos, label) = self.rng.pick(&targets).clone();
        self.note(format!("widget {label:?}"));
        let button = if self.rng.chance(0.1) {
            PointerButton::Secondary
        } else {
            PointerButton::Primary
        };
        let times = if self.rng.chance(0.1) { 2 } else { 1 };
        self.click(pos, button, Modifiers::NONE, times);
    }

    /// Where devices and links' midpoints are on screen, if on the canvas: random points
    /// rarely hit a device, let alone a link or a port handle.
    fn canvas_targets(&self) -> Vec<Pos2> {
        let app = self.harness.state();
        let design = app.document().design();
        let canvas = app.canvas_state();
        let at = |id| design.device(id).and_then(|d| canvas.to_screen(d.pos));
        let devices = design.devices.iter().filter_map(|d| at(d.id));
        let links = design.links.iter().filter_map(|l| {
            let (a, b) = (at(l.a.device)?, at(l.b.device)?);
            Some(a + (b - a) / 2.0)
        });
        devices
            .chain(links)
            .filter(|p| p.y > self.top && p.x > 0.0 && p.x < WINDOW.x && p.y < WINDOW.y)
            .collect()
    }

    /// A click, right-click or drag on a device or link, or from near one (a port handle)
    /// to another: what selects, moves and wires things.
    fn on_canvas_items(&mut self) {
        let targets = self.canvas_targets();
        if targets.is_empty() {
            return;
        }
        let at = *self.rng.pick(&targets);
        let near = at + Vec2::new(self.rng.unit() - 0.5, self.rng.unit() - 0.5) * 60.0;
        let modifiers = if self.rng.chance(0.25) {
            Modifiers::SHIFT
        } else {
            Modifiers::NONE
        };
        match self.rng.below(6) {
            0 | 1 => self.click(at, PointerButton::Primary, modifiers, 1),
            2 => self.click(at, PointerButton::Primary, Modifiers::NONE, 2),
            3 => self.click(at, PointerButton::Secondary, Modifiers::NONE, 1),
            4 => {
                let to = *self.rng.pick(&targets);
                self.drag(near, to, PointerButton::Primary, Modifiers::NONE);
            }
            _ => {
                let to = near + Vec2::new(self.rng.unit() - 0.5, self.rng.unit() - 0.5) * 200.0;
                self.drag(at, to, PointerButton::Primary, modifiers);
            }
        }
    }

    /// Design > Calibrate, a real nccl-tests log pasted in, Fit, and Apply to design once the
    /// fit is in: a sequence random clicks all but never hit, and the one way to a
    /// `SetCalibration` edit. Any step that is not there (a window in the way) ends it.
    fn calibrate(&mut self) {
        const LOG: &str = include_str!("data/nccl/dgx-h100-all-reduce.txt");
        self.note("calibrate from a pasted log".into());
        let Some(design) = self
            .harness
            .query_all_by_role_and_label(Role::Button, "Design")
            .map(|n| n.rect().center())
            .find(|p| p.y < self.top)
        else {
            return;
        };
        self.click(design, PointerButton::Primary, Modifiers::NONE, 1);
        let Some(item) = self.widget_at("Calibrate", Role::Button) else {
            self.send_key(Key::Escape, Modifiers::NONE);
            return;
        };
        self.click(item, PointerButton::Primary, Modifiers::NONE, 1);
        let Some(text) = self.widget_at("", Role::MultilineTextInput) else {
            return;
        };
        self.click(text, PointerButton::Primary, Modifiers::NONE, 1);
        self.send_key(Key::A, Modifiers::COMMAND);
        self.send(Event::Paste(LOG.to_string()));
        let Some(fit) = self.widget_at("Fit", Role::Button) else {
            return;
        };
        self.click(fit, PointerButton::Primary, Modifiers::NONE, 1);
        // The fit runs on a background job; give it a few seconds at most. It shows
        // "Fitting…" until it is in (or failed: then there is nothing to apply).
        let start = Instant::now();
        while start.elapsed().as_secs_f32() < 5.0 {
            if let Some(apply) = self.widget_at("Apply to design", Role::Button) {
                self.click(apply, PointerButton::Primary, Modifiers::NONE, 1);
                return;
            }
            let fitting = self
                .harness
                .query_all_by_label_contains("Fitting")
                .next()
                .is_some();
            if !fitting {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
            self.frame();
        }
    }

    /// The centre of the first enabled widget of `role` whose label contains `label`.
    fn widget_at(&self, label: &str, role: Role) -> Option<Pos2> {
        self.harness
            .query_all_by(|n| n.role() == role && !n.is_disabled())
            .filter(|n| {
                n.accesskit_node()
                    .label()
                    .is_some_and(|l| l.contains(label))
                    || label.is_empty()
            })
            .map(|n| n.rect().center())
            .find(|p| p.y > 0.0 && p.y < WINDOW.y)
    }

    /// A menu entry, by label, through the menu bar as a user picks it.
    fn menu(&mut self) {
        const CHOICES: [(&str, &[&str]); 27] = [
            ("Edit", &["Undo"]),
            ("Edit", &["Undo"]),
            ("Edit", &["Redo"]),
            ("Edit", &["Cut"]),
            ("Edit", &["Copy"]),
            ("Edit", &["Paste"]),
            ("Edit", &["Delete"]),
            ("Edit", &["Select all"]),
            ("View", &["Zoom to fit"]),
            ("View", &["Grid"]),
            ("View", &["Snap to grid"]),
            ("View", &["Link colours", "By technology"]),
            ("View", &["Link colours", "By rail"]),
            ("View", &["Link colours", "By tier"]),
            ("View", &["Link heatmap"]),
            ("View", &["Presentation mode"]),
            ("View", &["Compare designs"]),
            ("View", &["Plots"]),
            ("View", &["Theme", "Dark"]),
            ("View", &["Theme", "Light"]),
            ("View", &["Theme", "Follow system"]),
            ("Design", &["Arrange by tier"]),
            ("Design", &["Arrange by tier"]),
            ("Design", &["Calibrate"]),
            ("Help", &["Keyboard shortcuts"]),
            ("Help", &["About railyard"]),
            // Opened and closed again without a choice.
            ("Edit", &[]),
        ];
        let (menu, path) = *self.rng.pick(&CHOICES);
        self.note(format!("menu {menu} > {path:?}"));
        // Presentation mode hides the menu bar.
        let Some(pos) = self
            .harness
            .query_all_by_role_and_label(Role::Button, menu)
            .map(|n| n.rect().center())
            .find(|p| p.y < self.top)
        else {
            return;
        };
        self.click(pos, PointerButton::Primary, Modifiers::NONE, 1);
        for item in path {
            let found = self
                .harness
                .query_all_by_label_contains(item)
                .find(|n| {
                    matches!(
                        n.accesskit_node().role(),
                        Role::Button | Role::RadioButton | Role::MenuItem
                    ) && n.rect().center().y > 10.0
                })
                .map(|n| n.rect().center());
            match found {
                Some(pos) => self.click(pos, PointerButton::Primary, Modifiers::NONE, 1),
                None => break,
            }
        }
        // A menu still open (a disabled item, or none chosen) closes on Escape.
        self.send_key(Key::Escape, Modifiers::NONE);
    }

    fn act(&mut self) {
        // Select all, copy, paste doubles the design each time: past a few hundred devices
        // a frame takes seconds. A monkey with too much undoes some of it.
        if self.harness.state().document().design().devices.len() > MAX_DEVICES {
            self.note("too many devices: Escape, Ctrl+Z".into());
            self.send_key(Key::Escape, Modifiers::NONE);
            self.send_key(Key::Z, Modifiers::COMMAND);
            return;
        }
        match self.rng.below(100) {
            0..=14 => {
                let pos = self.random_pos();
                let modifiers = self.random_modifiers();
                self.click(pos, PointerButton::Primary, modifiers, 1);
            }
            15..=19 => {
                let pos = self.random_pos();
                self.click(pos, PointerButton::Primary, Modifiers::NONE, 2);
            }
            20..=22 => {
                let pos = self.random_pos();
                self.click(pos, PointerButton::Secondary, Modifiers::NONE, 1);
            }
            23..=35 => {
                let from = self.random_pos();
                // Mostly short drags (moving a device, a marquee), sometimes across panels.
                let to = if self.rng.chance(0.7) {
                    let d = Vec2::new(self.rng.unit() - 0.5, self.rng.unit() - 0.5) * 300.0;
                    (from + d).clamp(pos2(1.0, self.top), WINDOW.to_pos2() - Vec2::splat(1.0))
                } else {
                    self.random_pos()
                };
                let button = match self.rng.below(6) {
                    0 => PointerButton::Middle,
                    1 => PointerButton::Secondary,
                    _ => PointerButton::Primary,
                };
                let modifiers = self.random_modifiers();
                self.drag(from, to, button, modifiers);
            }
            36..=39 => {
                // From the palette (left) onto the canvas: adds a part.
                let from = pos2(
                    10.0 + self.rng.unit() * 180.0,
                    self.top + self.rng.unit() * 600.0,
                );
                let to = pos2(
                    300.0 + self.rng.unit() * 700.0,
                    self.top + 50.0 + self.rng.unit() * 600.0,
                );
                self.drag(from, to, PointerButton::Primary, Modifiers::NONE);
            }
            40..=44 => self.scroll(),
            45..=64 => self.key(),
            65..=68 => self.clipboard(),
            69..=74 => self.type_text(),
            75..=82 => self.menu(),
            83..=89 => self.on_canvas_items(),
            90 => self.calibrate(),
            _ => self.click_widget(),
        }
        self.changed |= *self.harness.state().document().design() != self.original;
        if let Some(label) = self.harness.state().document().history().undo_label() {
            self.edits.insert(label);
        }
        assert_eq!(
            self.harness.state().tab_count(),
            1,
            "the monkey left its document"
        );
    }

    /// Lets go of everything, closes every dialog, then undoes until nothing is left;
    /// returns how many steps that took.
    fn undo_everything(&mut self) -> usize {
        let pos = pos2(WINDOW.x / 2.0, WINDOW.y / 2.0);
        for button in [
            PointerButton::Primary,
            PointerButton::Secondary,
            PointerButton::Middle,
        ] {
            self.press(pos, button, false, Modifiers::NONE);
        }
        self.send(Event::ModifiersChanged(Modifiers::NONE));
        self.send(Event::PointerGone);
        // One dialog per press; Escape also takes focus from a text field (which commits
        // what it holds: one more step to undo) and leaves presentation mode.
        for _ in 0..16 {
            self.send_key(Key::Escape, Modifiers::NONE);
        }
        let mut undos = 0;
        let mut stuck = 0;
        while self.harness.state().document().history().can_undo() {
            let before = self.harness.state().document().revision();
            if stuck == 0 {
                self.send_key(Key::Z, Modifiers::COMMAND);
            } else {
                // Something holds the keyboard: Edit > Undo does not depend on it.
                let edit = self
                    .harness
                    .query_all_by_role_and_label(Role::Button, "Edit")
                    .next()
                    .map(|n| n.rect().center());
                if let Some(edit) = edit {
                    self.click(edit, PointerButton::Primary, Modifiers::NONE, 1);
                    let undo = self
                        .harness
                        .query_all_by_label_contains("Undo")
                        .find(|n| n.accesskit_node().role() == Role::Button)
                        .map(|n| n.rect().center());
                    if let Some(undo) = undo {
                        self.click(undo, PointerButton::Primary, Modifiers::NONE, 1);
                    }
                }
            }
            if self.harness.state().document().revision() == before {
                stuck += 1;
                assert!(stuck < 4, "undo does nothing; the undo stack is stuck");
            } else {
                stuck = 0;
                undos += 1;
            }
            assert!(undos < 100_000, "undo never ends");
        }
        // Nothing may arrive after the last undo (a late commit from a field, say).
        for _ in 0..10 {
            self.frame();
        }
        assert!(
            !self.harness.state().document().history().can_undo(),
            "an edit arrived after the last undo"
        );
        undos
    }
}

fn monkey_harness() -> Harness<'static, RailyardApp> {
    let mut app = app();
    app.set_dialogs(Box::new(ScriptedDialogs::default()));
    Harness::builder()
        .with_size(WINDOW)
        // Frames a sixtieth of a second apart, as on a screen: two clicks make a double-click.
        .with_step_dt(1.0 / 60.0)
        .with_max_steps(12)
        .build_eframe(move |_cc| app)
}

fn env_number(name: &str) -> Option<u64> {
    let text = std::env::var(name).ok()?;
    let text = text.trim();
    match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

/// First lines where two RON texts differ, to say what undo failed to restore.
fn first_difference(a: &str, b: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let at = a
        .iter()
        .zip(&b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let from = at.saturating_sub(3);
    format!(
        "line {}:\n--- original\n{}\n--- after undo\n{}",
        at + 1,
        a[from..(at + 4).min(a.len())].join("\n"),
        b[from..(at + 4).min(b.len())].join("\n")
    )
}

/// Opens `preset`, lets the monkey loose, undoes everything and compares.
fn monkey_on(preset: &str, default_seed: u64) {
    let preset = std::env::var("MONKEY_PRESET").unwrap_or_else(|_| preset.to_string());
    let preset = preset.as_str();
    let seed = env_number("MONKEY_SEED").unwrap_or(default_seed);
    let events = env_number("MONKEY_EVENTS").map_or(EVENTS, |n| n as usize);
    let started = Instant::now();

    let mut harness = monkey_harness();
    open_preset(&mut harness, preset);
    wait_for_analysis(&mut harness);
    let original = harness.state().document().design().clone();
    assert!(!original.devices.is_empty(), "the preset opened");
    assert!(!harness.state().document().history().can_undo());
    // The tab bar's `+` and `×`, the lowest of the small buttons at the top of the window
    // (a design may show other `+` buttons, on the canvas, higher up).
    let top = harness
        .query_all_by(|n| {
            n.role() == Role::Button && matches!(n.label().as_deref(), Some("+" | "×"))
        })
        .map(|n| n.rect())
        .filter(|r| r.min.y < 80.0)
        .map(|r| r.max.y)
        .fold(f32::NAN, f32::max)
        // egui gives a click to a widget within `interact_radius` (5 points) of it.
        + 10.0;
    assert!(top > 40.0, "the tab bar's buttons, found at {top}");

    if std::env::var_os("MONKEY_VERBOSE").is_some() {
        eprintln!("clicks land below y = {top}");
    }
    let mut monkey = Monkey {
        harness,
        rng: Rng(seed),
        top,
        log: VecDeque::new(),
        frames: 0,
        original,
        changed: false,
        edits: Default::default(),
    };
    let mut done = 0;
    let mut undos = 0;
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let verbose = std::env::var_os("MONKEY_VERBOSE").is_some();
        for i in 0..events {
            done = i;
            let t = Instant::now();
            monkey.act();
            if verbose && (i % 100 == 0 || t.elapsed().as_secs_f32() > 1.0) {
                let design = monkey.harness.state().document().design();
                eprintln!(
                    "{i}: {:.2} s, {} devices, {} links, {:.0} s in all; {}",
                    t.elapsed().as_secs_f32(),
                    design.devices.len(),
                    design.links.len(),
                    started.elapsed().as_secs_f32(),
                    monkey.log.back().map_or("", String::as_str)
                );
            }
        }
        done = events;
        undos = monkey.undo_everything();
    }));
    if let Err(panic) = outcome {
        eprintln!(
            "monkey on {preset:?} failed at action {done} of {events}, frame {}: replay with \
             MONKEY_SEED={seed:#x}. Its last actions:",
            monkey.frames
        );
        for line in &monkey.log {
            eprintln!("  {line}");
        }
        resume_unwind(panic);
    }

    let after = monkey.harness.state().document().design();
    if *after != monkey.original {
        let was = design_to_string(&monkey.original).expect("the original serialises");
        let now = design_to_string(after).expect("the design serialises");
        panic!(
            "after {undos} undos the design is not the original (MONKEY_SEED={seed:#x}): {}",
            first_difference(&was, &now)
        );
    }
    // Not vacuous: the monkey did change the design, and by enough to undo.
    assert!(
        monkey.changed,
        "the design never changed (MONKEY_SEED={seed:#x})"
    );
    assert!(
        undos >= 10,
        "only {undos} steps to undo (MONKEY_SEED={seed:#x})"
    );
    eprintln!(
        "monkey on {preset:?}, seed {seed:#x}: {events} actions, {} frames, {undos} undos, \
         {:.1} s; edits made: {:?}",
        monkey.frames,
        started.elapsed().as_secs_f32(),
        monkey.edits
    );
}

#[test]
fn monkey_on_a_workstation_cluster_then_undo_restores_it() {
    monkey_on(
        "4 workstations × 4 RTX 4090 (16 GPUs), 10 GbE switch",
        0x5EED_0001,
    );
}

/// A rail-optimised fabric: NICs, rails and a spine for the inspector and what-ifs to edit.
#[test]
fn monkey_on_a_rail_optimised_hgx_cluster_then_undo_restores_it() {
    monkey_on("4 × HGX H100, 400G RoCE", 0x5EED_0002);
}
