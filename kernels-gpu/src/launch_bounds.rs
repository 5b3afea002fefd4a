//! Launch bounds, CUDA's `__launch_bounds__(max threads, min blocks per SM)`: rustc has no
//! attribute for them, so host/build.rs writes them into the PTX as `.maxntid` and
//! `.minnctapersm` directives on the entries named here (this file is `include!`d there).
//!
//! Why: ptxas otherwise gives the 8 x 8 f32 register-tiled kernels about 145 registers, so
//! one 256-thread block fits an SM (8 warps); capped at 128 by asking for 2 blocks per SM,
//! twice the warps hide the shared- and global-memory latency. The f64 kernels need about
//! 250 registers for their 64 f64 accumulators and stay at one block.

/// `(entry-name prefix, max threads per block, min blocks per SM)`: every entry whose name
/// starts with the prefix gets `.maxntid threads, 1, 1` and `.minnctapersm blocks`.
pub const LAUNCH_BOUNDS: &[(&str, u32, u32)] = &[
    ("register_tiled_f32", 256, 2),
    ("register_tiled_f16", 256, 2),
    ("register_tiled_bf16", 256, 2),
    ("vectorized_f32", 256, 2),
    ("vectorized_f16", 256, 2),
    ("vectorized_bf16", 256, 2),
    ("double_buffered_f32", 256, 2),
    ("double_buffered_f16", 256, 2),
    ("double_buffered_bf16", 256, 2),
    ("warp_tiled_f32", 256, 2),
    ("warp_tiled_f16", 256, 2),
    ("warp_tiled_bf16", 256, 2),
    ("warp_tiled_k16_f32", 256, 2),
    ("warp_tiled_k16_f16", 256, 2),
    ("warp_tiled_k16_bf16", 256, 2),
    ("fragment_buffered_f32", 256, 2),
    ("fragment_buffered_f16", 256, 2),
    ("fragment_buffered_bf16", 256, 2),
    ("fragment_buffered_k16_f32", 256, 2),
    ("fragment_buffered_k16_f16", 256, 2),
    ("fragment_buffered_k16_bf16", 256, 2),
    ("async_copy_f32", 256, 2),
    ("async_copy_f16", 256, 2),
    ("async_copy_bf16", 256, 2),
    ("paired_lanes_f32", 256, 2),
    ("paired_lanes_f16", 256, 2),
    ("paired_lanes_bf16", 256, 2),
    ("stream_k_f32", 256, 2),
    ("stream_k_f16", 256, 2),
    ("stream_k_bf16", 256, 2),
];
