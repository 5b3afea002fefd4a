//! Hopper parts: the warpgroup tile, the warp-specialised TMA mainloop, its epilogue and the TF32 pack.
pub mod epilogue;
pub mod pack;
pub mod warp_specialised;
pub mod warpgroup;
