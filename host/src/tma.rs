//! The tensor maps of the kernels that read A and B through TMA ([`TensorMaps`]): the
//! driver's (`cuTensorMapEncodeTiled`) for the GPU, the CPU executor's own
//! ([`EmulatedMap`]) for the host, A's then B's in the launch's workspace. Where TMA's rules
//! are not met (a row stride that is not a whole number of 16-byte units, a base not 16-byte
//! aligned) there are no maps, and the kernel takes its other path (it checks the same
//! rules).
use crate::error::Result;
use cudarc::driver::sys;
use rgemm_kernels::catalogue::TensorMaps;
use rgemm_kernels::device::tma::{EmulatedMap, MAP_BYTES};

/// One matrix as TMA sees it: its base address, `rows x cols` elements of `elem_bytes`,
/// row-major, copied in boxes of `box_rows x box_cols`.
struct Operand {
    base: u64,
    rows: usize,
    cols: usize,
    box_rows: u32,
    box_cols: u32,
}

/// Whether TMA can read A (`m x k`) and B (`k x n`) at these addresses.
pub(crate) fn usable((a, b): (u64, u64), (n, k): (usize, usize), elem_bytes: usize) -> bool {
    (k * elem_bytes).is_multiple_of(16)
        && (n * elem_bytes).is_multiple_of(16)
        && a.is_multiple_of(16)
        && b.is_multiple_of(16)
}

fn operands(
    maps: TensorMaps,
    (a, b): (u64, u64),
    (m, n, k): (usize, usize, usize),
) -> [Operand; 2] {
    [
        Operand {
            base: a,
            rows: m,
            cols: k,
            box_rows: maps.a_box.0,
            box_cols: maps.a_box.1,
        },
        Operand {
            base: b,
            rows: k,
            cols: n,
            box_rows: maps.b_box.0,
            box_cols: maps.b_box.1,
        },
    ]
}

/// The driver's maps of A and B (16-bit elements), or `None` where TMA cannot read them.
pub(crate) fn device_maps(
    maps: TensorMaps,
    ptrs: (u64, u64),
    dims: (usize, usize, usize),
) -> Result<Option<[u8; TensorMaps::BYTES]>> {
    if !usable(ptrs, (dims.1, dims.2), 2) {
        return Ok(None);
    }
    let mut out = [0u8; TensorMaps::BYTES];
    for (i, op) in operands(maps, ptrs, dims).into_iter().enumerate() {
        let mut map = sys::CUtensorMap { opaque: [0; 16] };
        let global_dim = [op.cols as u64, op.rows as u64];
        let global_stride = [(op.cols * 2) as u64];
        let boxes = [op.box_cols, op.box_rows];
        let element_strides = [1u32, 1];
        // SAFETY: every pointer is to a live local of the length the call reads (rank 2);
        // the driver only encodes the map (the base is not dereferenced).
        unsafe {
            sys::cuTensorMapEncodeTiled(
                &mut map,
                sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT16,
                2,
                op.base as *mut std::ffi::c_void,
                global_dim.as_ptr(),
                global_stride.as_ptr(),
                boxes.as_ptr(),
                element_strides.as_ptr(),
                sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
                sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
                sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            )
        }
        .result()?;
        for (j, word) in map.opaque.iter().enumerate() {
            let at = i * MAP_BYTES + 8 * j;
            out[at..at + 8].copy_from_slice(&word.to_ne_bytes());
        }
    }
    Ok(Some(out))
}

/// The CPU executor's maps of A and B (elements of `elem_bytes`), as the workspace holds
/// them, or `None` where TMA cannot read them.
pub(crate) fn emulated_maps(
    maps: TensorMaps,
    ptrs: (u64, u64),
    dims: (usize, usize, usize),
    elem_bytes: usize,
) -> Option<[u8; TensorMaps::BYTES]> {
    if !usable(ptrs, (dims.1, dims.2), elem_bytes) {
        return None;
    }
    let mut out = [0u8; TensorMaps::BYTES];
    for (i, op) in operands(maps, ptrs, dims).into_iter().enumerate() {
        let map = EmulatedMap {
            base: op.base,
            dims: [op.cols as u64, op.rows as u64],
            row_stride: (op.cols * elem_bytes) as u64,
            boxes: [op.box_cols, op.box_rows],
            elem_bytes: elem_bytes as u32,
            swizzle: 128,
        };
        out[i * MAP_BYTES..(i + 1) * MAP_BYTES].copy_from_slice(&map.to_bytes());
    }
    Some(out)
}
