//! # rgemm: GPU matrix multiplication with kernels written in Rust
//!
//! The kernels (crate `rgemm-kernels`) are plain `no_std` Rust, compiled to PTX by rustc's
//! NVPTX backend; the PTX ships with this crate, so it builds on stable Rust without a CUDA
//! toolkit (`RGEMM_PTX=source` rebuilds it from the kernels' source with the pinned nightly).
//! They are launched through a safe, typed API on top of [cudarc](https://docs.rs/cudarc),
//! which loads the driver at run time, so this crate builds, and its CPU parts run (the CPU
//! executor runs the same kernels), on machines without CUDA.
//!
//! ```
//! use rgemm::{Context, Kernel, Matrix};
//!
//! # fn main() -> Result<(), rgemm::Error> {
//! let a = Matrix::from_fn(64, 32, |r, c| (r + c) as f32)?;
//! let b = Matrix::from_fn(32, 48, |r, c| r as f32 - c as f32)?;
//! let expected = rgemm::matmul_reference(&a, &b)?; // f64 accumulation on the CPU
//! match Context::new(0) {
//!     Ok(ctx) => {
//!         let c = ctx.matmul_with(&a, &b, Kernel::Tiled16)?;
//!         for (x, y) in c.as_slice().iter().zip(expected.as_slice()) {
//!             assert_eq!(*x as f64, *y); // small integers: exact
//!         }
//!         let plan = ctx.plan::<f32>(ctx.textbook_kernel::<f32>()?, 64, 48, 32)?;
//!         println!("{} on {}: {:?}", plan.entry, ctx.props().name, plan.occupancy.limiter);
//!     }
//!     Err(e) => eprintln!("no GPU, GPU part skipped: {e}"),
//! }
//! # Ok(())
//! # }
//! ```
//!
//! Layout: [`Context`] (device, stream, kernels, [`DeviceProps`]), [`Matrix`] and
//! [`DeviceMatrix`] (row-major), [`Kernel`] (the catalogue: each kernel's [`KernelSpec`]
//! and the launch rules it implies), [`Occupancy`] (the textbook's occupancy arithmetic), [`matmul_reference`] (the
//! CPU reference), [`Cublas`] (the yardstick), [`Error`].
mod batched;
mod context;
mod cpu;
mod cublas;
mod device;
mod dispatch;
mod element;
mod error;
mod gemm;
mod heuristic;
mod kernels;
mod layout;
mod library;
mod matmul;
mod matrix;
#[cfg(feature = "ndarray")]
pub mod ndarray_interop;
mod normalize;
mod occupancy;
mod props;
mod ptx;
// Run by the build script; compiled here for its tests.
#[cfg(test)]
mod ptx_split;
mod reference;
mod select;
mod timing;
mod tma;
mod tuner;
mod tuning;
mod view;

pub use context::Context;
pub use cpu::{CpuExecutor, CpuLaunch, Fault};
pub use cublas::Cublas;
/// The cudarc this crate is built on, for interoperation ([`Context::from_cudarc`],
/// [`DeviceMatrix::from_cuda_slice`], [`DeviceView::from_cuda_view`]).
pub use cudarc;
pub use device::device_count;
pub use dispatch::LaunchPlan;
pub use element::{Element, Output, Scalar};
pub use error::{Error, Result};
pub use gemm::{GemmCall, gemm_reference};
pub use half::{bf16, f16};
pub use kernels::{Arch, Elem, Kernel, MAX_DIM, Precision};
pub use layout::Layout;
pub use matrix::{DeviceMatrix, Matrix};
/// The ndarray the interop is built on (feature `ndarray`).
#[cfg(feature = "ndarray")]
pub use ndarray;
pub use occupancy::{BlockResources, Limiter, Occupancy};
pub use props::DeviceProps;
pub use reference::{
    abs_product, agreement_limit, check_output_shape, check_product_shape, matmul_reference,
    max_relative_error, product_dims,
};
pub use rgemm_kernels::catalogue::{Candidate, Grid, KernelSpec, RunsOn, Shared, Threads, Tile};
pub use tuning::Bucket;
pub use view::{Batch, DeviceView, DeviceViewMut, MatrixLayout, MatrixView, MatrixViewMut};

/// rgemm's own machinery, public for its benchmark, tests and tools: the kernels' launch
/// arithmetic and parameter block, the selection rule's order, the PTX modules, the timing
/// helpers. **Not part of the stable API**: anything here may change in any release.
#[doc(hidden)]
pub mod internals {
    pub use crate::cpu::GlobalRegion;
    pub use crate::gemm::random_buffer;
    pub use crate::heuristic::{Product, RULE, Row, Then, order_of, preference, preference_for};
    pub use crate::kernels::{ENTRY_PARAMS, Launches, PackLaunch, PtxParam};
    pub use crate::normalize::{Indexed, Normalized, Table, ViewOf};
    pub use crate::ptx::{entry as ptx_entry, module as ptx_module};
    pub use crate::timing::{median, time_ms};
    pub use rgemm_kernels::problem::Problem;
}

/// Parses a product shape written `S` (for S x S x S) or `MxNxK` (C is M x N, the inner
/// dimension K), as the binaries take them on their command lines.
pub fn parse_shape(text: &str) -> Option<(usize, usize, usize)> {
    let dims: Vec<usize> = text
        .split('x')
        .map(|d| d.trim().parse().ok())
        .collect::<Option<_>>()?;
    match dims[..] {
        [s] => Some((s, s, s)),
        [m, n, k] => Some((m, n, k)),
        _ => None,
    }
}
