//! The example designs shipped in `presets/`, compiled into the binary so that File → Open
//! preset works from a single executable anywhere.

use crate::io::{DesignFileError, parse_design};
use crate::model::Design;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    /// The menu label.
    pub title: &'static str,
    /// The file name under `presets/` (also the origin in error messages).
    pub file: &'static str,
    pub text: &'static str,
}

pub const PRESETS: &[Preset] = &[
    Preset {
        title: "4 × Mac Studio, Thunderbolt 5 mesh",
        file: "mac-studio-tb5-x4.ron",
        text: include_str!("../../presets/mac-studio-tb5-x4.ron"),
    },
    Preset {
        title: "2 workstations × 4 RTX 4090 (8 GPUs), 25 GbE",
        file: "rtx4090-pair-25gbe.ron",
        text: include_str!("../../presets/rtx4090-pair-25gbe.ron"),
    },
    Preset {
        title: "4 workstations × 4 RTX 4090 (16 GPUs), 10 GbE switch",
        file: "workstation-star-10gbe.ron",
        text: include_str!("../../presets/workstation-star-10gbe.ron"),
    },
    Preset {
        title: "2 × DGX Spark, one QSFP cable",
        file: "dgx-spark-pair.ron",
        text: include_str!("../../presets/dgx-spark-pair.ron"),
    },
    Preset {
        title: "4 × HGX H100, 400G RoCE",
        file: "hgx-h100-x4-roce.ron",
        text: include_str!("../../presets/hgx-h100-x4-roce.ron"),
    },
    Preset {
        title: "DGX H100 SuperPOD scalable unit (32 nodes)",
        file: "dgx-h100-superpod-su.ron",
        text: include_str!("../../presets/dgx-h100-superpod-su.ron"),
    },
    Preset {
        title: "32 × DGX H100, fat-tree at 3:1",
        file: "dgx-h100-fat-tree-3to1.ron",
        text: include_str!("../../presets/dgx-h100-fat-tree-3to1.ron"),
    },
    Preset {
        title: "Rail-only, one tier: 32 × DGX H100",
        file: "rail-only-1tier.ron",
        text: include_str!("../../presets/rail-only-1tier.ron"),
    },
    Preset {
        title: "GB200 NVL72 pod: 8 racks, 576 GPUs",
        file: "gb200-nvl72-pod.ron",
        text: include_str!("../../presets/gb200-nvl72-pod.ron"),
    },
];

impl Preset {
    pub fn design(&self) -> Result<Design, DesignFileError> {
        parse_design(self.text, &format!("presets/{}", self.file))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_parses_and_has_gpus() {
        for preset in PRESETS {
            let design = preset
                .design()
                .unwrap_or_else(|e| panic!("{}: {e}", preset.file));
            assert!(design.gpu_count() > 0, "{} has no GPUs", preset.file);
        }
    }

    #[test]
    fn every_preset_file_is_listed() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("presets");
        let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
            .expect("presets dir")
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".ron"))
            .collect();
        on_disk.sort();
        let mut listed: Vec<String> = PRESETS.iter().map(|p| p.file.to_string()).collect();
        listed.sort();
        assert_eq!(listed, on_disk, "presets/ and the compiled-in list differ");
    }
}
