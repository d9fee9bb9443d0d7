//! Helpers shared by test files: the designer under egui_kittest, the command line, and
//! Xvfb for the files that start the real binary. Each test file uses a part of them.
#![allow(dead_code)]

#[cfg(feature = "gui")]
pub mod app;
pub mod cli;
pub mod design;
#[cfg(feature = "gui")]
pub mod painted;
pub mod vulkan;
pub mod xvfb;
