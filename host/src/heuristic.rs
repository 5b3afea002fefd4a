//! The kernel a product runs when nobody times anything: an order of preference from the
//! element type, the precision, the device and the shape, filtered by what each kernel can
//! compute (forms, shape, device). Pure arithmetic on the catalogue, no launch: the first
//! product of a new shape costs no more host time than the next.
//!
//! The order comes from the benchmark tables (`docs/bench/`, an H200): the Hopper kernels
//! lead on compute capability 9.0, the `mma.sync` ones on 8.x, and the SIMT ladder's best
//! rungs follow in the order they were measured, down to the textbook kernels, which take
//! any form on any device.
use crate::element::Element;
use crate::kernels::{Elem, Kernel, Precision};
use crate::props::DeviceProps;
use rgemm_kernels::problem::Problem;

/// The SIMT kernels that read every form, best first (`docs/PERF.md`'s ladder).
const SIMT: [Kernel; 12] = [
    Kernel::PairedLanes,
    Kernel::AsyncCopy,
    Kernel::FragmentBufferedK16,
    Kernel::WarpTiledK16,
    Kernel::FragmentBuffered,
    Kernel::WarpTiled,
    Kernel::DoubleBuffered,
    Kernel::Vectorized,
    Kernel::Tiled16,
    Kernel::Tiled32,
    Kernel::Tiled8,
    Kernel::Naive,
];

/// The kernels to try, best first, for a product of `T` in `precision` laid out as
/// `problem` on `props`'s device. Callers keep the first that can launch it.
pub fn preference<T: Element>(
    props: &DeviceProps,
    problem: &Problem,
    precision: Precision,
) -> Vec<Kernel> {
    let (m, n, k) = (problem.m as u64, problem.n as u64, problem.k as u64);
    let hopper = props.compute_capability == (9, 0);
    let mut order = Vec::new();
    match precision {
        Precision::Tf32 => order.push(Kernel::MmaTf32),
        Precision::Tf32x3 => order.push(Kernel::Mma3xTf32),
        Precision::Exact => {}
    }
    // Decode shapes (a side of at most 16): the kernels that read B once at full bandwidth.
    if m.min(n) <= 16 && problem.batch == 1 {
        order.extend([Kernel::DecodeAsync, Kernel::DecodeMma, Kernel::Decode]);
    }
    if m.min(n) <= 32 && problem.batch == 1 {
        order.push(Kernel::Thin);
    }
    // Whole waves of 128 x 128 tiles (2 blocks per SM): fewer than two and a long K, and
    // stream-K shares the phases out instead of leaving SMs idle.
    let tiles = m.div_ceil(128) * n.div_ceil(128) * problem.batch.max(1) as u64;
    let few_tiles = tiles < 2 * 2 * props.multiprocessors as u64 && k >= 1024;
    match T::ELEM {
        Elem::F16 | Elem::Bf16 => {
            if hopper {
                order.extend([
                    Kernel::WgmmaPersistent,
                    Kernel::WgmmaTma,
                    Kernel::WgmmaAsync,
                ]);
            }
            order.extend([
                Kernel::MmaDeep,
                Kernel::MmaDeep128,
                Kernel::MmaAsync,
                Kernel::MmaWide,
            ]);
        }
        Elem::F64 if hopper => {
            // 64 x 64 tiles where 128 x 64 ones would not fill two blocks per SM.
            let wide_tiles = m.div_ceil(128) * n.div_ceil(64) * problem.batch.max(1) as u64;
            if wide_tiles < 2 * props.multiprocessors as u64 {
                order.extend([Kernel::DmmaSmall, Kernel::DmmaWarps]);
            } else {
                order.extend([Kernel::DmmaWarps, Kernel::DmmaSmall]);
            }
            order.push(Kernel::Dmma);
        }
        _ => {}
    }
    if few_tiles {
        order.push(Kernel::StreamK);
    }
    order.extend(SIMT);
    order
}
