//! Helpers shared by the test files that start the real binary.

pub mod xvfb;
