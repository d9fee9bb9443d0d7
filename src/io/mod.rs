//! Files in and out: design files, the bill of materials, exports. No UI imports.

pub mod bom;
pub mod design_file;
pub mod device_rows;
pub mod device_title;
pub mod export;
pub mod folding;
pub mod group_frames;
pub mod ib_names;
pub mod ibnetdiscover;
pub mod import;
pub mod link_colors;
pub mod link_label;
pub mod measured;
pub mod migrations;
pub mod model_file;
pub mod name_forms;
pub mod nccl_log;
pub(crate) mod parallel_parse;
pub(crate) mod plain_error;
pub use plain_error::{path_error, plain_io};
pub mod raster;
pub mod read_progress;
pub mod ron_tree;
pub mod row_units;

pub use design_file::{
    DesignFileError, load_design, load_design_reporting, parse_design, save_design,
};
pub mod report;
pub mod svg;
pub mod svg_overview;
pub mod tier_captions;
pub mod validation_plot;
pub mod validation_sets;
