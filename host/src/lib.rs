//! # rgemm: GPU matrix multiplication with kernels written in Rust
//!
//! The kernels (`kernels-gpu/`) are plain `no_std` Rust, compiled to PTX by rustc's NVPTX
//! backend while this crate builds, and launched through a safe, typed API on top of
//! [cudarc](https://docs.rs/cudarc). The driver is loaded at run time, so this crate
//! builds, and its CPU parts run, on machines without CUDA.
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
pub mod batched;
pub mod context;
pub mod cpu;
pub mod cublas;
pub mod element;
pub mod error;
pub mod gemm;
pub mod heuristic;
pub mod kernels;
pub mod matrix;
#[cfg(feature = "ndarray")]
pub mod ndarray_interop;
pub mod occupancy;
pub mod props;
pub mod ptx;
pub mod reference;
pub mod timing;
mod tma;
pub mod tuner;
pub mod view;

pub use context::{Context, LaunchPlan, device_count};
pub use cpu::CpuExecutor;
pub use cublas::Cublas;
/// The cudarc this crate is built on, for interoperation ([`Context::from_cudarc`],
/// [`DeviceMatrix::as_cuda_slice`], [`DeviceView::new`]).
pub use cudarc;
pub use element::{Element, Output, Scalar};
pub use error::{Error, Result};
pub use gemm::{GemmCall, gemm_reference};
pub use half::{bf16, f16};
pub use kernels::{
    Arch, ENTRY_PARAMS, Elem, Kernel, Launches, MAX_DIM, PackLaunch, Precision, PtxParam,
};
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
pub use rgemm_kernels::catalogue::KernelSpec;
pub use rgemm_kernels::problem::Problem;
pub use view::{Batch, DeviceView, DeviceViewMut, Layout, MatrixLayout, MatrixView, MatrixViewMut};

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
