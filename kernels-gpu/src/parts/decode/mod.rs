//! Decode mainloops.
pub mod mma_strip;
