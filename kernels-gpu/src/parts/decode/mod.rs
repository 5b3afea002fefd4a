//! Decode mainloops.
pub mod mma_strip;
pub mod stream;
