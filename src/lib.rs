//! railyard: a designer for AI-cluster networks.
//!
//! The core (`model`, `analysis`, `generate`, `io`) knows nothing of the UI; the designer
//! window (`app`, behind the default `gui` feature), the command line (`cli`) and the tests are
//! three clients of the same calls.

pub mod analysis;
#[cfg(feature = "gui")]
pub mod app;
pub mod cli;
pub mod generate;
pub mod io;
pub mod model;
