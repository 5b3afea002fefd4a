//! The tensor maps of the kernels that read A and B through TMA ([`TensorMaps`]): the
//! driver's (`cuTensorMapEncodeTiled`) for the GPU, the CPU executor's own
//! ([`EmulatedMap`]) for the host, A's then B's in the launch's workspace, each operand as
//! stored (transposed or not), its leading dimension the row stride and the batch the
//! third dimension. Where TMA's rules are not met (a row or batch stride that is not a whole
//! number of 16-byte units, a base not 16-byte aligned) there are no maps: the kernel takes
//! its other path for the dense product (it checks the same rules), and the host does not
//! choose it for the other forms.
use crate::error::Result;
use cudarc::driver::sys;
use rgemm_kernels::catalogue::TensorMaps;
use rgemm_kernels::device::tma::{EmulatedMap, MAP_BYTES, reads};
use rgemm_kernels::problem::Problem;

/// One operand as TMA sees it: its base address, `planes` matrices `plane_stride` elements
/// apart, each `rows x cols` elements stored row-major `ld` apart, copied in boxes of
/// `(rows, cols)`.
struct Operand {
    base: u64,
    rows: usize,
    cols: usize,
    ld: usize,
    planes: usize,
    plane_stride: usize,
    boxed: (u32, u32),
}

/// A's and B's operands as stored: A `m x k` (`k x m` transposed), B `k x n` (`n x k`), each
/// with its leading dimension and batch stride (one plane where it is shared).
///
/// Packed operands of several parts ([`rgemm_kernels::catalogue::Pack`]) have each part's
/// planes after the last part's: `parts` times the planes, a shared operand's one plane per
/// part right after the other.
fn operands(maps: TensorMaps, (a, b): (u64, u64), p: &Problem) -> [Operand; 2] {
    let s = p.strides();
    let (m, n, k) = (p.m as usize, p.n as usize, p.k as usize);
    let parts = maps.pack.map_or(1, |pack| pack.parts as usize);
    let one = |base: u64, (rows, cols): (usize, usize), ld: u32, stride: u64, boxed| {
        let planes = if stride == 0 {
            1
        } else {
            p.batch.max(1) as usize
        };
        Operand {
            base,
            rows,
            cols,
            ld: ld as usize,
            planes: parts * planes,
            // A single plane's stride is used only between parts (a packed plane is rows
            // x ld); any legal value would do otherwise (the driver wants one at least a
            // row).
            plane_stride: if stride == 0 {
                rows.max(1) * ld as usize
            } else {
                stride as usize
            },
            boxed,
        }
    };
    [
        match s.a_t {
            false => {
                let boxed = (maps.a_box_rows(p.m), maps.a_box.1);
                one(a, (m, k), p.lda, p.batch_stride_a, boxed)
            }
            true => one(a, (k, m), p.lda, p.batch_stride_a, maps.a_t_box),
        },
        match s.b_t {
            false => one(b, (k, n), p.ldb, p.batch_stride_b, maps.b_box),
            true => one(b, (n, k), p.ldb, p.batch_stride_b, maps.b_t_box),
        },
    ]
}

/// The driver's maps of A and B (elements of `elem_bytes`: 2, or 4 for TF32), or `None`
/// where TMA cannot read them.
pub(crate) fn device_maps(
    maps: TensorMaps,
    ptrs: (u64, u64),
    problem: &Problem,
    elem_bytes: usize,
) -> Result<Option<[u8; TensorMaps::BYTES]>> {
    if !reads(problem, ptrs, elem_bytes as u64) {
        return Ok(None);
    }
    // Bits as they are: no conversion on the way.
    let data_type = match elem_bytes {
        2 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT16,
        _ => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT32,
    };
    let mut out = [0u8; TensorMaps::BYTES];
    for (i, op) in operands(maps, ptrs, problem).into_iter().enumerate() {
        let mut map = sys::CUtensorMap { opaque: [0; 16] };
        // Sizes of at least one element: the driver refuses empty dimensions, and a launch
        // with an empty operand (K = 0) reads nothing through its map.
        let global_dim = [
            op.cols.max(1) as u64,
            op.rows.max(1) as u64,
            op.planes as u64,
        ];
        let global_stride = [
            (op.ld * elem_bytes) as u64,
            (op.plane_stride * elem_bytes) as u64,
        ];
        let boxes = [op.boxed.1, op.boxed.0, 1];
        let element_strides = [1u32, 1, 1];
        // SAFETY: every pointer is to a live local of the length the call reads (rank 3);
        // the driver only encodes the map (the base is not dereferenced).
        unsafe {
            sys::cuTensorMapEncodeTiled(
                &mut map,
                data_type,
                3,
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
    problem: &Problem,
    elem_bytes: usize,
) -> Option<[u8; TensorMaps::BYTES]> {
    if !reads(problem, ptrs, elem_bytes as u64) {
        return None;
    }
    let mut out = [0u8; TensorMaps::BYTES];
    for (i, op) in operands(maps, ptrs, problem).into_iter().enumerate() {
        let map = EmulatedMap {
            base: op.base,
            dims: [op.cols as u64, op.rows as u64, op.planes as u64],
            strides: [
                (op.ld * elem_bytes) as u64,
                (op.plane_stride * elem_bytes) as u64,
            ],
            boxes: [op.boxed.1, op.boxed.0],
            elem_bytes: elem_bytes as u32,
            swizzle: 128,
        };
        out[i * MAP_BYTES..(i + 1) * MAP_BYTES].copy_from_slice(&map.to_bytes());
    }
    Some(out)
}
