//! The designer's preferences: what eframe keeps between runs (recent files, theme, panel
//! sizes, view toggles, the sidebar's collective, the last workload chosen). The design
//! itself, its workload included, lives only in its file.

use std::path::PathBuf;

use super::menu::Theme;
use super::sidebar::{CollectiveSettings, SidebarView};
use crate::io::link_colors::ColorMode;
use crate::model::JobSpec;

/// Key of the preferences in eframe's storage.
pub(super) const PREFS_KEY: &str = "railyard-prefs";

/// UI preferences, persisted by eframe between runs. The design itself lives only in its file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Prefs {
    pub recent: Vec<PathBuf>,
    pub theme: Theme,
    pub palette_width: f32,
    pub sidebar_width: f32,
    pub inspector_height: f32,
    /// Inspector, metrics or both in the sidebar.
    pub sidebar_view: SidebarView,
    pub show_grid: bool,
    pub snap: bool,
    pub heatmap: bool,
    /// What link colours show while the heatmap is off.
    pub link_colors: ColorMode,
    /// The canvas's legend folded to its heading.
    pub legend_folded: bool,
    pub collective: CollectiveSettings,
    /// The last workload chosen: what a design without one starts from when it is turned on.
    pub workload: JobSpec,
}

impl Default for Prefs {
    fn default() -> Self {
        Self {
            recent: Vec::new(),
            theme: Theme::System,
            palette_width: 230.0,
            sidebar_width: 320.0,
            inspector_height: 330.0,
            sidebar_view: SidebarView::Both,
            show_grid: true,
            snap: true,
            heatmap: false,
            link_colors: ColorMode::Technology,
            legend_folded: false,
            collective: CollectiveSettings::default(),
            workload: JobSpec::default(),
        }
    }
}
