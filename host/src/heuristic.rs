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

/// The SIMT kernels that read every form, best first (the ladder of `docs/worklog/simt.md`).
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
/// `problem` on `props`'s device, C in the accumulator's type (f32 for 16-bit inputs).
/// Callers keep the first that can launch it.
pub fn preference<T: Element>(
    props: &DeviceProps,
    problem: &Problem,
    precision: Precision,
) -> Vec<Kernel> {
    preference_for::<T>(props, problem, precision, false)
}

/// [`preference`] for C in the 16-bit input type where `narrow_c`.
pub fn preference_for<T: Element>(
    props: &DeviceProps,
    problem: &Problem,
    precision: Precision,
    narrow_c: bool,
) -> Vec<Kernel> {
    let (m, n, k) = (problem.m as u64, problem.n as u64, problem.k as u64);
    let hopper = props.compute_capability == (9, 0);
    let mut order = Vec::new();
    match precision {
        // Hopper's `wgmma` on packed operands (A in place where TMA reads it), every form
        // (H200: 94% of cuBLAS at 4096^3 against `mma_tf32`'s 27%,
        // docs/bench/2026-11-24-h200-tf32-wgmma-rs.md); `mma.sync` elsewhere.
        Precision::Tf32 if hopper => order.extend([Kernel::WgmmaTf32, Kernel::MmaTf32]),
        Precision::Tf32 => order.push(Kernel::MmaTf32),
        Precision::Tf32x3 if hopper => order.extend([Kernel::Wgmma3xTf32, Kernel::Mma3xTf32]),
        Precision::Tf32x3 => order.push(Kernel::Mma3xTf32),
        // Exact, and any arithmetic without kernels of its own here.
        _ => {}
    }
    let side = m.min(n);
    let sixteen_bit = matches!(T::ELEM, Elem::F16 | Elem::Bf16);
    let plain = problem.layout == 0 && problem.batch == 1;
    // Up to 127 rows of f32 or f64: stream-K on tiles as short as C (H200, f32 x 4096 x
    // 4096, % of cuBLAS: 16 rows 171% with `stream_k_32` against `decode`'s 94%, 32 rows
    // 103%, 48 rows 94% with `stream_k_64`, 96 rows 102% with `stream_k_32` against
    // `stream_k`'s 87%; f64 at 64 rows 48% against `dmma_small`'s 34%). A C whose last tile
    // is partial runs one tile height: mixing whole and edge tiles of these kernels cost
    // 65% more time (96 rows on `stream_k_64`, 48 on `stream_k_32`). Fewer rows still:
    // f32 from 7 rows (x 4096 x 4096: 7 rows 4.9 against `decode`'s 4.7 TFLOP/s, 8 rows 5.6
    // against 5.1; at x 8192 x 8192 8.1 against 4.9), f64 from 3 (x 4096 x 4096, 4 to 8
    // rows: 65-72% of cuBLAS against `thin`'s 23-43%; `thin`'s time grows with the rows,
    // and at 1 row it leads with 110%).
    let fewest = match T::ELEM {
        Elem::F32 => 7,
        Elem::F64 => 3,
        _ => 9,
    };
    if (fewest..128).contains(&m) && !sixteen_bit && plain {
        match m {
            0..=32 => order.push(Kernel::StreamK32),
            33..=64 => order.push(Kernel::StreamK64),
            _ if m.is_multiple_of(32) => order.push(Kernel::StreamK32),
            _ => {}
        }
    }
    // Few columns under many rows: stream-K on 128 x 64 tiles (3 to 64 columns, f32) or
    // 128 x 32 (3 to 32, f32 from 4096 rows, and f64). 128-column tiles computed 2-16 times
    // the columns of C (H200, f32 x 4096 x N x 4096: `stream_k` 47-61% of cuBLAS for N = 8
    // to 64, `stream_k_narrow` 67-85%; 96 columns: 96% against 78%). f64 keeps the DMMA
    // kernels from 33 columns at 8192 rows (H200, 8192 x 64 x 8192: `dmma_small` 58%,
    // `stream_k_narrow` 43%), and `stream_k_narrow_32` beats them below 33 (4096 x 32 x
    // 4096: 60% against 30%).
    let (f32, f64) = (T::ELEM == Elem::F32, T::ELEM == Elem::F64);
    let under_many_rows = m > 64 && plain;
    // Fewer still: `few_columns` (whole rows of C per thread, A read once through shared
    // memory) leads for 3 to 32 columns of f32 from 1024 rows (H200, % of cuBLAS, 4096 x N
    // x 4096: N = 8 129%, 16 124%, 32 94% against `stream_k_narrow_32`'s 71-73%; 2048 x
    // 16 x 2048 127% against 101%; 1000 x 20 x 2000 86%, a tie), for up to 64 columns from
    // 4096 rows (4096 x 63 x 4096: 87.5% against `stream_k_narrow`'s 50.8%, H200,
    // `docs/bench/2026-11-23-h200-f32-f64-few-columns.md`; 4096 x 64 x 4096, the tuner's
    // choice in three runs of `rgemm-forms`, H200 and H100: 25.7 / 27.2 / 27.0 against
    // 25.1 / 24.8 / 23.9 TFLOP/s), and for 3 to 16 columns of f64 from 2048 rows (4096 x 8 x
    // 4096 100% against 60%, 8192 x 16 x 8192 80% against 49%; 17 to 32 columns lost: 48%
    // against 57%).
    let few_columns = match T::ELEM {
        Elem::F32 => (m >= 1024 && (3..=32).contains(&n)) || (m >= 4096 && (33..=64).contains(&n)),
        Elem::F64 => m >= 2048 && (3..=16).contains(&n),
        _ => false,
    };
    if plain && few_columns {
        order.push(Kernel::FewColumns);
    }
    // f64 from 16384 rows fills the GPU with `dmma_small`'s tiles (16384 x 32 x 4096: 62%
    // against 46%; at 8192 x 32 x 8192 38% against 49%).
    if under_many_rows && (3..=32).contains(&n) && ((f64 && m < 16384) || (f32 && m >= 4096)) {
        order.push(Kernel::StreamKNarrow32);
    }
    // f64 with 33 to 64 columns: the DMMA tiles fill the GPU from 8192 rows (8192 x 64 x
    // 8192 above); at 4096 rows `stream_k_narrow` ran 46.1% against `dmma_small`'s 35.6%.
    if under_many_rows && (3..=64).contains(&n) && (f32 || (f64 && m < 8192)) {
        order.push(Kernel::StreamKNarrow);
    }
    // Block tiles of a kernel over the whole batch.
    let tiles_of = |kernel: Kernel| {
        let spec = kernel.spec();
        m.div_ceil(spec.rows() as u64)
            * n.div_ceil(spec.cols() as u64)
            * problem.batch.max(1) as u64
    };
    // Hopper's 16-bit `wgmma` kernels, best first for this shape.
    let wgmma = match sixteen_bit && hopper {
        true => wgmma_order(props, problem, &tiles_of),
        false => Vec::new(),
    };
    if m <= 16 && problem.batch == 1 {
        // Decode shapes (few rows of C): the kernels that read B once at full bandwidth;
        // which one leads depends on the rows (bf16 on an H200: `decode_async` for 1-2;
        // `decode_mma` for 3-8, H100 and H200: x 8192 x 8192 at 76-88% of cuBLAS against
        // `decode`'s 31-64%, and ties at x 4096 x 4096). From 9 rows the `wgmma` kernels,
        // where TMA reads the operands (H100, % of cuBLAS, bf16: 16 x 8192 x 8192
        // `wgmma_128x64` 87% against `decode_mma`'s 72%; 16 x 4096 x 4096 `wgmma_128x128`
        // 58% against 39%; 16 x 28672 x 8192 `wgmma_persistent` 97% against 82%). f32 from
        // 7 rows: stream-K's tiles win (above). Few columns are not theirs: 4096 x 16 x
        // 4096 took `decode` 166 ms (H200, f32).
        let tma_rows = (problem.lda | problem.ldb | problem.ldc).is_multiple_of(8);
        // On Hopper, where TMA reads A and B, `decode_tma` leads (H100, 2026-11-25,
        // `docs/bench/2026-11-25-h100-bf16-f16-decode-tma.md`: 4-16 x 4096 x 4096 at 75-102%
        // of cuBLAS against the other kernels' best 56-72%; 4-16 x 8192 x 8192 88-94% against
        // 76-84%; 16 x 28672 x 8192 98-102% against `wgmma_tma`'s 94-100%; 1 row with a 16-bit
        // C 91-103% against `decode_async`'s 82-94%), but for 1 or 2 rows with an f32 C, where
        // `decode_async` ran 7-14% ahead in two of three runs (1 x 4096 x 4096 and 1 x 8192
        // x 8192) and 1-6% behind in the third.
        let tma_decode = sixteen_bit && hopper && tma_rows;
        let async_first = m <= 2 && !narrow_c;
        if tma_decode && !async_first {
            order.push(Kernel::DecodeTma);
        }
        if m > 8 && tma_rows {
            order.extend(&wgmma);
        }
        order.extend_from_slice(match m {
            0..=2 if tma_decode && async_first => &[
                Kernel::DecodeAsync,
                Kernel::DecodeTma,
                Kernel::Decode,
                Kernel::DecodeMma,
            ],
            0..=2 => &[Kernel::DecodeAsync, Kernel::Decode, Kernel::DecodeMma],
            3..=8 if sixteen_bit => &[Kernel::DecodeMma, Kernel::Decode, Kernel::DecodeAsync],
            3..=8 => &[Kernel::Decode, Kernel::DecodeAsync, Kernel::DecodeMma],
            _ => &[Kernel::DecodeMma, Kernel::DecodeAsync, Kernel::Decode],
        });
    }
    // `thin` after the decode kernels for few rows; for few columns only for one or two (H200,
    // 4096 x 1 x 4096: 122% of cuBLAS in f32, 159% in bf16; at 8 columns 30% and 19%,
    // where stream-K and the wgmma kernels run 47% and 45%).
    let thin = match m <= n {
        true => side <= 16 && (sixteen_bit || side <= 8),
        false => n <= 2,
    };
    if thin && problem.batch == 1 {
        order.push(Kernel::Thin);
    }
    // 128 x 128 tiles, two blocks per SM: less than half a wave of them, and a long K, and
    // stream-K shares the phases out instead of leaving SMs idle (f32 1000^3 on an H200:
    // 57% of cuBLAS against `paired_lanes`' 32%).
    let tiles = tiles_of(Kernel::StreamK);
    let slots = 2 * props.multiprocessors as u64;
    let few_tiles = 2 * tiles < slots && k >= 512;
    // Rows of A, B or C not in 16-byte groups: no block takes the vector path, and the
    // BK = 8 kernel's checked loop is the faster one (H200: 25.6 against 21.3 TFLOP/s).
    let unaligned = !(problem.lda | problem.ldb | problem.ldc).is_multiple_of(4);
    match T::ELEM {
        Elem::F16 | Elem::Bf16 => {
            for kernel in wgmma {
                if !order.contains(&kernel) {
                    order.push(kernel);
                }
            }
            // Without `wgmma` (compute capability 8.x), or where no `wgmma` kernel takes
            // the launch: the swizzled `mma.sync` rung leads (H200, bf16 4096^3: 378
            // TFLOP/s against `mma_deep`'s 272; 2048^3 286 against 223), but under half a
            // wave of its tiles two blocks per SM of 128 x 128 do better (1024^3, 32
            // tiles: `mma_deep128` 75.7 against 62.6).
            let mut mma = [Kernel::MmaSwizzled, Kernel::MmaDeep128];
            if 2 * tiles_of(Kernel::MmaSwizzled) <= props.multiprocessors as u64 {
                mma.swap(0, 1);
            }
            order.extend(mma);
            order.extend([Kernel::MmaDeep, Kernel::MmaAsync, Kernel::MmaWide]);
        }
        Elem::F64 if hopper => {
            // 64 x 64 tiles where 128 x 64 ones would not fill two blocks per SM.
            let wide_tiles = m.div_ceil(128) * n.div_ceil(64) * problem.batch.max(1) as u64;
            // `dmma_k4` where every tile is whole (its buffered mainloop in K steps of 4;
            // edge tiles run the plain one, spilled): H200, one run, 4096^3 91.7%, 8192^3
            // 91.0%, 2048^3 92.8% of cuBLAS against `dmma_buffered`'s 89.1-89.6% and
            // `dmma_warps`' 81-83%. (3000^3, edge tiles and a partial stage: `dmma_k4` 84.0%
            // against `dmma_warps`' 76.6% in that run, once; not taken yet.)
            let whole = m % 128 == 0 && n % 64 == 0;
            if wide_tiles < 2 * props.multiprocessors as u64 {
                order.extend([Kernel::DmmaSmall, Kernel::DmmaK4, Kernel::DmmaWarps]);
            } else if whole {
                order.extend([Kernel::DmmaK4, Kernel::DmmaWarps, Kernel::DmmaSmall]);
            } else {
                order.extend([Kernel::DmmaWarps, Kernel::DmmaK4, Kernel::DmmaSmall]);
            }
            order.push(Kernel::DmmaBuffered);
            order.push(Kernel::Dmma);
        }
        _ => {}
    }
    // Many waves of tiles of operands as stored: stream-K's even split of the last waves
    // paid at 8192^3 (f32, H200: 49.2 against 47.3 TFLOP/s), not at 4096^3.
    let many_waves = tiles >= 4 * slots && plain;
    // A last wave of tiles that leaves more than a tenth of the grid's time idle: 3000^3
    // (2.2 waves, H200, f32) ran at 101% of cuBLAS with stream-K, 89% without.
    let waves = tiles as f64 / slots as f64;
    let idle_tail = waves.ceil() - waves > 0.1 * waves.ceil() && k >= 512 && !unaligned && plain;
    if few_tiles || many_waves || idle_tail || ((9..=16).contains(&side) && !sixteen_bit) {
        order.push(Kernel::StreamK);
    }
    if unaligned {
        order.push(Kernel::FragmentBuffered);
    }
    // f32 batches of one-tile products: BK = 16 and no `cp.async` stages to fill (512 x
    // 128^3, the tuner's choice in three runs of `rgemm-forms`, H200 and H100: 35.1 / 33.9
    // / 35.3 against `paired_lanes`' 32.9 / 33.7 / 31.2 TFLOP/s).
    if f32 && problem.batch > 1 && m <= 128 && n <= 128 {
        order.push(Kernel::WarpTiledK16);
    }
    order.extend(SIMT);
    order
}

/// The 16-bit `wgmma` kernels (Hopper), best first for `problem`: every form the TMA
/// kernels read (leading dimensions, transposes, alpha/beta, batches). Block tiles of
/// 128 x 256, 128 x 128 or 128 x 64, as the product's tiles fill the SMs.
fn wgmma_order(
    props: &DeviceProps,
    problem: &Problem,
    tiles_of: &dyn Fn(Kernel) -> u64,
) -> Vec<Kernel> {
    let (m, n) = (problem.m as u64, problem.n as u64);
    let sms = props.multiprocessors as u64;
    let waves = |kernel: Kernel| tiles_of(kernel).div_ceil(sms);
    // The persistent grid leads, batches of one-tile products included since the epilogue
    // skips the columns past C (bf16, 512 x 128^3, H200: 70.6 against `wgmma_tma`'s 65-66
    // TFLOP/s; before, 56 against 61); at most one tile per SM, the persistent walk has
    // nothing to overlap, and lost (bf16 1024^3, 32 tiles, H200: 92.9 against `wgmma_tma`'s
    // 110.4 TFLOP/s; 64 x 4096 x 4096: 43.9 against 45.2).
    let mut wide = [
        Kernel::WgmmaPersistent,
        Kernel::WgmmaTma,
        Kernel::WgmmaAsync,
    ];
    if tiles_of(Kernel::WgmmaPersistent) <= sms {
        wide.swap(0, 1);
    }
    // 128 x 128 tiles where they take fewer waves' time: a wave of them is half a wide
    // wave's work, and ran at 1.12-1.16 times its time per FLOP (bf16, H100: 1024 x 4096 x
    // 4096, one wide wave or two narrow ones, 630 against 562 TFLOP/s; 1536 x 4096 x 4096,
    // two against three, 546 against 628; 1024^3 with a bf16 C, one against one, 63
    // against 93% of cuBLAS).
    let narrow = 23 * waves(Kernel::Wgmma128x128) < 40 * waves(Kernel::WgmmaPersistent);
    // 128 x 64 tiles where they fit one wave and either C has a whole row of tiles, or few
    // columns, or the tiles fill more than half the SMs (bf16, H100, % of cuBLAS against
    // `wgmma_128x128`'s: 1024^3 146% against 129%; 128 x 4096 x 4096 97% against 86%;
    // 256 x 4096 x 4096 119% against 101%; 4096 x 16 x 4096 82% against 68%; 16 x 8192 x
    // 8192 87% against 78%. With fewer rows and tiles it lost: 16 and 32 x 4096 x 4096, 53
    // and 58% against 58 and 68%; 64 x 4096 x 4096 a tie).
    // So do batches of one-tile products: 512 x 128^3, 200 calls back to back, 27.5 us a
    // call against `wgmma_persistent`'s 30.0 and cuBLAS's 26.2 (95.4% where it ran 87.8%);
    // at 256^3 and 512^3 the wide tiles stay (92.0 and 81.9% against 94.6 and 97.6%).
    let quarter = tiles_of(Kernel::Wgmma128x64);
    let one_tile_products = problem.batch > 1 && m <= 128 && n <= 128;
    let narrowest =
        one_tile_products || (quarter <= sms && (m >= 128 || n <= 64 || 2 * quarter > sms));
    let mut order = Vec::new();
    if narrowest {
        order.push(Kernel::Wgmma128x64);
    }
    if narrow || narrowest {
        order.push(Kernel::Wgmma128x128);
    }
    order.extend(wide);
    order
}
