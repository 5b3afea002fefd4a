//! GPU tests: every kernel x element type against the CPU reference (property tests on
//! random shapes), the textbook's fixed cases, occupancy against the driver, error paths.
//!
//! A libtest-mimic harness, so a test can be reported ignored at run time, with the reason,
//! when there is no GPU (and failed instead under `REQUIRE_GPU=1`).
//! Case count: `PROPTEST_CASES` (default 48) per kernel x type.
use libtest_mimic::{Arguments, Trial};
use rgemm::{Context, CpuExecutor, Element, Error, Kernel, Matrix, Output, Precision, Scalar};
use rgemm_tests::{
    Backend, Under, cases, check_product, check_product_with, fail, gpu_trial, integer_operands,
    kernels_for, random_matrix, random_operands, random_products,
};

/// `Ok` where `x` and `y` hold the same bits (NaN included), else the first element where
/// they differ and its two values.
fn same_bits<X: Scalar>(x: &Matrix<X>, y: &Matrix<X>) -> Result<(), String> {
    let bits = |v: &X| v.to_f64().to_bits();
    let pairs = x.as_slice().iter().zip(y.as_slice());
    match pairs.enumerate().find(|(_, (p, q))| bits(p) != bits(q)) {
        None => Ok(()),
        Some((i, (p, q))) => {
            let (p, q) = (p.to_f64(), q.to_f64());
            Err(format!(
                "C[{}][{}] is {p:e} and {q:e}",
                i / x.cols(),
                i % x.cols()
            ))
        }
    }
}

fn properties() -> Vec<Trial> {
    fn one<T: Element>(under: Under) -> Trial {
        gpu_trial(
            format!("property::{}::{}", under.name(), T::NAME),
            move |ctx| {
                rgemm_tests::property::<T>(&Backend::Gpu(ctx.clone()), under, cases(48), 300)
            },
        )
    }
    // C in the 16-bit input type, rounded once at the store.
    fn one_as<T: Element, O: Output<T>>(under: Under) -> Trial {
        gpu_trial(
            format!("property::{}::{}", under.name(), O::SUFFIX),
            move |ctx| {
                let be = Backend::Gpu(ctx.clone());
                rgemm_tests::property_as::<T, O>(&be, under, cases(48), 300)
            },
        )
    }
    let mut trials = rgemm_tests::property_trials!(one);
    trials.extend(rgemm_tests::narrow_property_trials!(one_as));
    trials
}

/// The CPU executor runs the same kernel source with the same launch (it emulates this
/// GPU's SM count, which `stream_k`'s grid follows), and IEEE arithmetic leaves no freedom:
/// every fused multiply-add and every addition happens in the same order on both, so the
/// results must agree bit for bit, for every kernel and element type, except the
/// tensor-core kernels (their hardware sums 16 products its own way: both within
/// tolerance). (Nothing in today's
/// kernels depends on the order threads run in: no atomics, no reductions across blocks
/// but `stream_k`'s fix-up, which adds the parts in K order.)
fn executor_agrees() -> Trial {
    gpu_trial("executor::same_bits_as_the_gpu", |ctx| {
        fn each<T: Element>(ctx: &Context) -> Result<(), String> {
            let cpu = CpuExecutor::emulating(ctx.props().clone());
            let shapes = [
                (33, 47, 65),
                (64, 64, 64),
                (1, 97, 31),
                (100, 3, 17),
                (130, 260, 50),
                (68, 132, 48),
            ];
            for ((m, n, k), a, b) in random_products::<T>(shapes, 11) {
                for kernel in kernels_for::<T>(7) {
                    let gpu = ctx.matmul_with(&a, &b, kernel).map_err(fail)?;
                    let host = cpu.matmul_with(&a, &b, kernel).map_err(fail)?;
                    let tensor = kernel.spec().tensor_cores;
                    check_product_with(&a, &b, &gpu, kernel)
                        .map_err(|e| format!("gpu {kernel}: {e}"))?;
                    if tensor {
                        // Tensor-core additions round their own way: within tolerance only.
                        check_product_with(&a, &b, &host, kernel)
                            .map_err(|e| format!("cpu {kernel}: {e}"))?;
                        continue;
                    }
                    same_bits(&gpu, &host).map_err(|e| {
                        format!(
                            "{kernel} {} {m}x{n}x{k}: {e} on the GPU and the executor",
                            T::NAME
                        )
                    })?;
                }
            }
            Ok(())
        }
        rgemm_tests::each_element!(each(ctx))
    })
}

/// Every kernel, twice on the same inputs: the same bits (as the `Context` docs promise),
/// on shapes with edge tiles and on shapes that the split-K and stream-K kernels split.
fn run_to_run() -> Trial {
    gpu_trial(
        "determinism::every_kernel_gives_the_same_bits_twice",
        |ctx| {
            fn each<T: Element>(ctx: &Context) -> Result<(), String> {
                let shapes = [
                    (130, 260, 50),
                    (4, 512, 4096),
                    (16, 64, 8192),
                    (300, 300, 2000),
                ];
                for ((m, n, k), a, b) in random_products::<T>(shapes, 5) {
                    let chosen = [None];
                    let named = kernels_for::<T>(16).map(Some);
                    for kernel in chosen.into_iter().chain(named) {
                        let run = || match kernel {
                            Some(kernel) => ctx.matmul_with(&a, &b, kernel),
                            None => ctx.matmul(&a, &b),
                        };
                        let first = run().map_err(fail)?;
                        let second = run().map_err(fail)?;
                        same_bits(&first, &second).map_err(|e| {
                            format!("{kernel:?} {} {m}x{n}x{k}: {e} in two runs", T::NAME)
                        })?;
                    }
                }
                Ok(())
            }
            rgemm_tests::each_element!(each(ctx))
        },
    )
}

/// Operands from cudarc values and raw device addresses, and a caller's `CudaSlice` as a
/// `DeviceMatrix`: the same product as from rgemm's own matrices, errors where lengths are
/// off, and the buffer handed back.
fn interop() -> Trial {
    gpu_trial("interop::cuda_views_raw_pointers_and_slices", |ctx| {
        use rgemm::{DeviceMatrix, DeviceView, DeviceViewMut, MatrixLayout};
        let (m, n, k) = (70, 90, 110);
        let a = random_matrix::<f32>(m, k, 1);
        let b = random_matrix::<f32>(k, n, 2);
        let want = ctx.matmul(&a, &b).map_err(fail)?;
        let stream = ctx.stream();
        // A and B as two halves of one allocation, C a part of another: cudarc views.
        let mut ab = a.as_slice().to_vec();
        ab.extend_from_slice(b.as_slice());
        let ab = stream.clone_htod(&ab).map_err(fail)?;
        let mut c = stream.alloc_zeros::<f32>(m * n + 7).map_err(fail)?;
        let (va, vb) = (ab.slice(..m * k), ab.slice(m * k..));
        let da = DeviceView::from_cuda_view(&va, MatrixLayout::row_major(m, k)).map_err(fail)?;
        let db = DeviceView::from_cuda_view(&vb, MatrixLayout::row_major(k, n)).map_err(fail)?;
        let dc = DeviceViewMut::from_cuda_view_mut(c.slice_mut(7..), MatrixLayout::row_major(m, n))
            .map_err(fail)?;
        ctx.gemm(da, db, dc).run().map_err(fail)?;
        let got = stream.clone_dtoh(&c.slice(7..)).map_err(fail)?;
        if got != want.as_slice() {
            return Err(
                "a product of cudarc views differs from the same product of matrices".into(),
            );
        }
        // A view reaching past its cudarc view is refused.
        let short = ab.slice(..m * k - 1);
        if DeviceView::from_cuda_view(&short, MatrixLayout::row_major(m, k)).is_ok() {
            return Err("a view past the end of a cudarc view was accepted".into());
        }
        // Raw device addresses, as another library would hand them over.
        let (pa, pb, pc) = {
            use rgemm::cudarc::driver::{DevicePtr, DevicePtrMut};
            let pa = va.device_ptr(stream).0;
            let pb = vb.device_ptr(stream).0;
            let pc = c.device_ptr_mut(stream).0;
            (pa, pb, pc)
        };
        stream.memset_zeros(&mut c).map_err(fail)?;
        // SAFETY: `pa`/`pb` are `ab`'s m*k and k*n halves, `pc` all m*n + 7 of `c`, initialised
        // on `stream`; both outlive the views, and nothing else touches them meanwhile.
        let (ra, rb, rc) = unsafe {
            (
                DeviceView::<f32>::from_raw(pa, m * k, stream, MatrixLayout::row_major(m, k)),
                DeviceView::<f32>::from_raw(pb, k * n, stream, MatrixLayout::row_major(k, n)),
                DeviceViewMut::<f32>::from_raw(
                    pc,
                    m * n + 7,
                    stream,
                    MatrixLayout::row_major(m, n),
                ),
            )
        };
        ctx.gemm(ra.map_err(fail)?, rb.map_err(fail)?, rc.map_err(fail)?)
            .run()
            .map_err(fail)?;
        let got = stream.clone_dtoh(&c.slice(..m * n)).map_err(fail)?;
        if got != want.as_slice() {
            return Err("a product of raw addresses differs".into());
        }
        // A caller's CudaSlice as a matrix, and back.
        let buf = stream.clone_htod(a.as_slice()).map_err(fail)?;
        if DeviceMatrix::from_cuda_slice(stream.alloc_zeros::<f32>(5).map_err(fail)?, 2, 3).is_ok()
        {
            return Err("a buffer of 5 was taken as a 2 x 3 matrix".into());
        }
        let da = DeviceMatrix::from_cuda_slice(buf, m, k).map_err(fail)?;
        let db = ctx.upload(&b).map_err(fail)?;
        let mut dc = ctx.zeros::<f32>(m, n).map_err(fail)?;
        ctx.matmul_device(&da, &db, &mut dc, None).map_err(fail)?;
        if ctx.download(&dc).map_err(fail)?.as_slice() != want.as_slice() {
            return Err("a product over a wrapped CudaSlice differs".into());
        }
        let back = stream.clone_dtoh(&da.into_cuda_slice()).map_err(fail)?;
        if back != a.as_slice() {
            return Err("the wrapped CudaSlice came back changed".into());
        }
        Ok(())
    })
}

fn occupancy() -> Trial {
    gpu_trial("occupancy::matches_the_driver", |ctx| {
        fn each<T: Element>(ctx: &Context) -> Result<(), String> {
            for kernel in kernels_for::<T>(12).chain([Kernel::TiledDynamic(24)]) {
                let ours = ctx.occupancy::<T>(kernel).map_err(fail)?;
                let driver = ctx.driver_blocks_per_sm::<T>(kernel).map_err(fail)?;
                if ours.blocks_per_sm != driver {
                    return Err(format!(
                        "{kernel} {}: ours {ours:?}, driver {driver} blocks/SM",
                        T::NAME
                    ));
                }
            }
            // A one-wave grid's launch rule must be what the device holds.
            for kernel in rgemm_tests::one_wave_kernels::<T>() {
                let rule = kernel.blocks_per_sm::<T>();
                let driver = ctx.driver_blocks_per_sm::<T>(kernel).map_err(fail)?;
                if rule != driver {
                    return Err(format!(
                        "{kernel} {}: launch rule {rule} blocks/SM, driver {driver}",
                        T::NAME
                    ));
                }
            }
            Ok(())
        }
        rgemm_tests::each_element!(each(ctx))
    })
}

/// The stream-K kernels on a C with more tiles than their grid has blocks: whole tiles
/// (round-robin) and split ones (parts added by the fix-up), interior and edge tiles (for
/// the short-tile ones, aligned ones: the unchecked edge path), K a multiple of BK and not;
/// exact on small integers.
fn stream_k_whole_and_split() -> Trial {
    gpu_trial("shapes::stream_k_whole_and_split_tiles_exact", |ctx| {
        fn each<T: Element>(ctx: &Context) -> Result<(), String> {
            for (kernel, (m, cols)) in [
                (Kernel::StreamK, (17 * 128 - 5, 128)),
                (Kernel::StreamK64, (17 * 64 - 4, 128)),
                (Kernel::StreamK32, (17 * 32 - 4, 128)),
                (Kernel::StreamKNarrow, (17 * 128 - 4, 64)),
                (Kernel::StreamKNarrow32, (17 * 128 - 4, 32)),
            ] {
                let ctas = (ctx.props().multiprocessors * kernel.blocks_per_sm::<T>()) as usize;
                let n = (ctas * 3 / 2 + 1).div_ceil(17) * cols;
                for k in [48, 37] {
                    let (a, b) = integer_operands::<T>((m, n, k));
                    let c = ctx.matmul_with(&a, &b, kernel).map_err(fail)?;
                    let want = rgemm::matmul_reference(&a, &b).map_err(fail)?;
                    let (got, want) = (c.as_slice(), want.as_slice());
                    if let Some(i) = (0..m * n).find(|&i| got[i].to_f64() != want[i]) {
                        return Err(format!(
                            "{kernel} {} {m}x{n}x{k} ({ctas} blocks): C[{}][{}] = {}, want {}",
                            T::NAME,
                            i / n,
                            i % n,
                            got[i].to_f64(),
                            want[i]
                        ));
                    }
                }
            }
            Ok(())
        }
        rgemm_tests::each_element!(each(ctx))
    })
}

fn choice() -> Trial {
    gpu_trial("choice::textbook_tile_and_timed_choice", |ctx| {
        let kernel = ctx.textbook_kernel::<f32>().map_err(fail)?;
        let tiled = [Kernel::Tiled8, Kernel::Tiled16, Kernel::Tiled32];
        if !tiled.contains(&kernel) {
            return Err(format!("expected a fixed tiled kernel, got {kernel}"));
        }
        let plan = ctx.plan::<f32>(kernel, 300, 200, 100).map_err(fail)?;
        let t = kernel.spec().rows();
        if plan.block != (t, t, 1) || plan.grid != (200u32.div_ceil(t), 300u32.div_ceil(t), 1) {
            return Err(format!("launch rules broken: {plan:?}"));
        }
        if plan.shared_bytes != 2 * t * t * 4 {
            return Err(format!("shared bytes: {plan:?}"));
        }
        // No other fixed tile reaches a higher occupancy on this device.
        for other in tiled {
            let occ = ctx.occupancy::<f32>(other).map_err(fail)?;
            if occ.threads_per_sm > plan.occupancy.threads_per_sm {
                return Err(format!(
                    "{other} has higher occupancy than the chosen {kernel}"
                ));
            }
        }
        // matmul's own choice: one of the candidates, remembered, reported, and right.
        let (a, b) = random_operands::<f32>((300, 200, 100), 5);
        let (da, db) = (ctx.upload(&a).map_err(fail)?, ctx.upload(&b).map_err(fail)?);
        let mut dc = ctx.zeros::<f32>(300, 200).map_err(fail)?;
        let ran = ctx.matmul_device(&da, &db, &mut dc, None).map_err(fail)?;
        let candidates = ctx.candidates::<f32>(300, 200, 100).map_err(fail)?;
        if !candidates.contains(&ran.kernel)
            || !candidates.contains(&kernel)
            || candidates.contains(&Kernel::Naive)
            || candidates.contains(&Kernel::Thin)
        {
            return Err(format!("ran {ran:?}, candidates {candidates:?}"));
        }
        // `thin` only where a side of C is at most 32 (its spec).
        let thin_side = 32;
        let thin = ctx.candidates::<f32>(thin_side, 4096, 64).map_err(fail)?;
        let square = ctx
            .candidates::<f32>(thin_side + 1, thin_side + 1, 64)
            .map_err(fail)?;
        if !thin.contains(&Kernel::Thin) || square.contains(&Kernel::Thin) {
            return Err(format!("thin candidacy: {thin:?} / {square:?}"));
        }
        if ctx.chosen_kernel::<f32>(300, 200, 100) != Some(ran.kernel) {
            return Err("the choice was not remembered".into());
        }
        let again = ctx.matmul_device(&da, &db, &mut dc, None).map_err(fail)?;
        if again != ran {
            return Err(format!("second call ran {again:?}, first {ran:?}"));
        }
        check_product(&a, &b, &ctx.download(&dc).map_err(fail)?)
    })
}

/// f32 is FP32 unless asked: `matmul` never runs a TF32 kernel, `matmul_in` runs one of
/// the precision asked for (and says so), and other element types have no TF32.
fn precision() -> Trial {
    gpu_trial("choice::f32_is_exact_unless_tf32_is_asked_for", |ctx| {
        let (a, b) = random_operands::<f32>((256, 320, 192), 3);
        let (da, db) = (ctx.upload(&a).map_err(fail)?, ctx.upload(&b).map_err(fail)?);
        let mut dc = ctx.zeros::<f32>(256, 320).map_err(fail)?;
        let exact = ctx.matmul_device(&da, &db, &mut dc, None).map_err(fail)?;
        if exact.precision != Precision::Exact || exact.kernel.spec().precision != Precision::Exact
        {
            return Err(format!("matmul ran {exact:?}"));
        }
        for precision in [Precision::Tf32, Precision::Tf32x3] {
            let plan = ctx
                .matmul_device_in(&da, &db, &mut dc, precision)
                .map_err(fail)?;
            if plan.precision != precision
                || ctx.chosen_kernel_in::<f32, f32>(256, 320, 192, precision) != Some(plan.kernel)
            {
                return Err(format!("{precision:?}: ran {plan:?}"));
            }
            let c = ctx.download(&dc).map_err(fail)?;
            check_product_with(&a, &b, &c, plan.kernel)?;
            let via_host = ctx.matmul_in(&a, &b, precision).map_err(fail)?;
            check_product_with(&a, &b, &via_host, plan.kernel)?;
        }
        if ctx.chosen_kernel::<f32>(256, 320, 192) != Some(exact.kernel) {
            return Err("the exact choice was overwritten".into());
        }
        let a64 = Matrix::<f64>::zeros(4, 4).map_err(fail)?;
        match ctx.matmul_in(&a64, &a64, Precision::Tf32) {
            Err(Error::UnsupportedPrecision { .. }) => Ok(()),
            other => Err(format!("f64 in TF32: {other:?}")),
        }
    })
}

fn errors() -> Vec<Trial> {
    vec![
        gpu_trial("errors::inner_dimension_mismatch", |ctx| {
            let a = Matrix::<f32>::zeros(3, 4).unwrap();
            let b = Matrix::<f32>::zeros(5, 2).unwrap();
            match ctx.matmul(&a, &b) {
                Err(Error::InnerDimensionMismatch {
                    a_cols: 4,
                    b_rows: 5,
                    ..
                }) => Ok(()),
                other => Err(format!("{other:?}")),
            }
        }),
        gpu_trial("errors::tile_width_the_device_cannot_run", |ctx| {
            let a = Matrix::<f32>::zeros(8, 8).unwrap();
            let max = (ctx.props().max_threads_per_block as f64).sqrt() as u32;
            for tile in [0, max + 1] {
                match ctx.matmul_with(&a, &a, Kernel::TiledDynamic(tile)) {
                    Err(Error::UnsupportedTile { tile: t, .. }) if t == tile => {}
                    other => return Err(format!("tile {tile}: {other:?}")),
                }
            }
            Ok(())
        }),
        gpu_trial("errors::grid_too_large", |ctx| {
            // K = 0, so nothing is allocated; M needs more blocks along y than the grid has.
            let m = ctx.props().max_grid_dim.1 as usize * Kernel::Naive.block().1 as usize + 1;
            let a = Matrix::<f32>::zeros(m, 0).unwrap();
            let b = Matrix::<f32>::zeros(0, 1).unwrap();
            match ctx.matmul_with(&a, &b, Kernel::Naive) {
                Err(Error::ShapeTooLarge { .. }) => Ok(()),
                other => Err(format!("{other:?}")),
            }
        }),
        gpu_trial(
            "errors::wrong_output_shape_leaves_output_untouched",
            |ctx| {
                let a = ctx.upload(&random_matrix::<f32>(4, 5, 1)).map_err(fail)?;
                let b = ctx.upload(&random_matrix::<f32>(5, 6, 2)).map_err(fail)?;
                let poison = Matrix::from_vec(6, 4, vec![42.0f32; 24]).unwrap();
                let mut c = ctx.upload(&poison).map_err(fail)?;
                match ctx.matmul_device(&a, &b, &mut c, None) {
                    Err(Error::OutputShapeMismatch {
                        expected_rows: 4,
                        expected_cols: 6,
                        ..
                    }) => {}
                    other => return Err(format!("{other:?}")),
                }
                let after = ctx.download(&c).map_err(fail)?;
                if after != poison {
                    return Err("the output changed".into());
                }
                Ok(())
            },
        ),
        gpu_trial("errors::matrix_of_another_context", |ctx| {
            let other = Context::new(0).map_err(fail)?;
            let a = other.upload(&random_matrix::<f32>(2, 2, 1)).map_err(fail)?;
            let b = ctx.upload(&random_matrix::<f32>(2, 2, 2)).map_err(fail)?;
            let mut c = ctx.zeros::<f32>(2, 2).map_err(fail)?;
            match ctx.matmul_device(&a, &b, &mut c, None) {
                Err(Error::ForeignMatrix) => Ok(()),
                other => Err(format!("{other:?}")),
            }
        }),
        gpu_trial("errors::device_ordinal_out_of_range", |_| {
            let count = rgemm::device_count().map_err(fail)?;
            match Context::new(count) {
                Err(Error::NoDevice { ordinal, count: c }) if ordinal == count && c == count => {
                    Ok(())
                }
                other => Err(format!("{other:?}")),
            }
        }),
    ]
}

fn main() {
    let args = Arguments::from_args();
    if let Err(reason) = rgemm_tests::gpu() {
        eprintln!(
            "gpu tests: no GPU ({reason}); {}",
            if rgemm_tests::gpu_required() {
                "REQUIRE_GPU=1: they fail"
            } else {
                "they are ignored"
            }
        );
    }
    let mut trials = properties();
    trials.extend([
        stream_k_whole_and_split(),
        occupancy(),
        choice(),
        tuner(),
        streams(),
        ndarray_interop(),
        precision(),
        executor_agrees(),
        run_to_run(),
        interop(),
    ]);
    trials.extend(errors());
    let make = |name: String, test: rgemm_tests::forms::FormTest| {
        gpu_trial(name, move |ctx| test(&Backend::Gpu(ctx.clone())))
    };
    trials.extend(rgemm_tests::backend_trials(
        &make,
        (cases(24), cases(12), 300),
        (cases(12), cases(6), 300),
        true,
    ));
    trials.push(gpu_trial(
        "lists_error::a_stride_on_a_list",
        lists_with_a_stride,
    ));
    libtest_mimic::run(&args, trials).exit();
}

/// The tuner: off, the rule decides and nothing is timed; on, a new bucket is timed on
/// scratch buffers (the caller's C, with beta = 1, still gets exactly `A B + C`), the
/// choice is remembered for the bucket, saved, loaded into another context, and used there
/// with the tuner off; a bad file is a typed error.
fn tuner() -> Trial {
    gpu_trial("tuner::times_on_scratch_saves_and_loads", |_| {
        // A context of its own: tuning on the shared one would tune the products other
        // tests run meanwhile, and their buckets would show up in this one's text.
        let ctx = &Context::new(0).map_err(fail)?;
        let (m, n, k) = (200, 300, 64);
        let a = random_matrix::<f32>(m, k, 1);
        let b = random_matrix::<f32>(k, n, 2);
        let c0 = random_matrix::<f32>(m, n, 3);
        let (da, db) = (ctx.upload(&a).map_err(fail)?, ctx.upload(&b).map_err(fail)?);
        let mut dc = ctx.upload(&c0).map_err(fail)?;
        ctx.set_tuning(true);
        let plan = ctx
            .gemm(da.view(), db.view(), dc.view_mut())
            .beta(1.0)
            .run()
            .map_err(fail)?
            .ok_or("nothing ran")?;
        ctx.set_tuning(false);
        let text = ctx.tuning_text();
        let line = text
            .lines()
            .find(|l| l.starts_with("f32 exact 0 0 256 512 64 1 "))
            .ok_or_else(|| format!("no tuned line for the bucket: {text:?}"))?;
        if !line.ends_with(&format!(" {}", plan.kernel)) {
            return Err(format!("ran {}, remembered {line}", plan.kernel));
        }
        // C = A B + C exactly as the reference says, though the tuner timed kernels.
        let got = ctx.download(&dc).map_err(fail)?;
        let ab = rgemm::matmul_reference(&a, &b).map_err(fail)?;
        for (i, (g, (x, c))) in got
            .as_slice()
            .iter()
            .zip(ab.as_slice().iter().zip(c0.as_slice()))
            .enumerate()
        {
            let want = x + *c as f64;
            if ((*g as f64) - want).abs() > 1e-4 * (1.0 + want.abs()) {
                return Err(format!("C[{i}] = {g}, want {want}"));
            }
        }
        // Saved, loaded into a fresh context, used there without timing.
        let path = std::env::temp_dir().join(format!("rgemm-tuning-{}.txt", std::process::id()));
        ctx.save_tuning(&path).map_err(fail)?;
        let other = Context::new(0).map_err(fail)?;
        let loaded = other.load_tuning(&path).map_err(fail)?;
        if loaded == 0 || other.tuning_text() != text {
            return Err(format!(
                "loaded {loaded}: {:?} != {text:?}",
                other.tuning_text()
            ));
        }
        // Another shape of the same bucket runs the loaded choice, with the tuner off.
        let (x, y) = (
            random_matrix::<f32>(230, 60, 4),
            random_matrix::<f32>(60, 400, 5),
        );
        let (dx, dy) = (
            other.upload(&x).map_err(fail)?,
            other.upload(&y).map_err(fail)?,
        );
        let mut dz = other.zeros::<f32>(230, 400).map_err(fail)?;
        let there = other
            .gemm(dx.view(), dy.view(), dz.view_mut())
            .beta(1.0)
            .run()
            .map_err(fail)?;
        if there.as_ref().map(|p| p.kernel) != Some(plan.kernel) {
            return Err(format!(
                "the loaded choice {} was not used: {there:?}",
                plan.kernel
            ));
        }
        std::fs::write(&path, "f32 exact 0 0 256 512 64 1 no_such_kernel\n").map_err(fail)?;
        let bad = other.load_tuning(&path);
        let _ = std::fs::remove_file(&path);
        match bad {
            Err(Error::Tuning(_)) => Ok(()),
            other => Err(format!("a bad tuning file gave {other:?}")),
        }
    })
}

/// Two contexts on two streams of one device (`fork`): products queued from two threads at
/// once are each right; `wait_for` orders a product on one stream after an upload on the
/// other; `from_cudarc` runs on the caller's own context and stream; a stream of another
/// CUDA context is a typed error.
fn streams() -> Trial {
    gpu_trial("streams::two_streams_concurrently_and_in_order", |ctx| {
        let other = ctx.fork().map_err(fail)?;
        let run = |c: &Context, seed: u64| -> Result<(), String> {
            for i in 0..6 {
                let (m, n, k) = (300 + i, 200 + 7 * i, 150 + 3 * i);
                let a = random_matrix::<f32>(m, k, seed + i as u64);
                let b = random_matrix::<f32>(k, n, seed + 100 + i as u64);
                let (da, db) = (c.upload(&a).map_err(fail)?, c.upload(&b).map_err(fail)?);
                let mut dc = c.zeros::<f32>(m, n).map_err(fail)?;
                c.gemm(da.view(), db.view(), dc.view_mut())
                    .run()
                    .map_err(fail)?;
                check_product(&a, &b, &c.download(&dc).map_err(fail)?)?;
            }
            Ok(())
        };
        std::thread::scope(|s| {
            let one = s.spawn(|| run(ctx, 1));
            let two = s.spawn(|| run(&other, 2));
            one.join().map_err(|_| "thread panicked".to_string())??;
            two.join().map_err(|_| "thread panicked".to_string())?
        })?;
        // An upload on one stream, the product on the other after `wait_for`.
        let a = random_matrix::<f32>(512, 512, 9);
        let da = ctx.upload(&a).map_err(fail)?;
        other.wait_for(ctx).map_err(fail)?;
        let mut dc = other.zeros::<f32>(512, 512).map_err(fail)?;
        other
            .gemm(da.view(), da.view().t(), dc.view_mut())
            .run()
            .map_err(fail)?;
        let at = Matrix::from_fn(512, 512, |r, c| a.get(c, r).unwrap()).map_err(fail)?;
        check_product(&a, &at, &other.download(&dc).map_err(fail)?)?;
        // The caller's own cudarc context and stream.
        let cuda = rgemm::cudarc::driver::CudaContext::new(0).map_err(fail)?;
        let theirs =
            Context::from_cudarc(cuda.clone(), cuda.new_stream().map_err(fail)?).map_err(fail)?;
        let b = random_matrix::<f32>(512, 64, 10);
        let c = theirs.matmul(&a, &b).map_err(fail)?;
        check_product(&a, &b, &c)?;
        match ctx.on_stream(cuda.new_stream().map_err(fail)?) {
            Err(Error::ForeignStream) => Ok(()),
            other => Err(format!("a foreign stream gave {:?}", other.map(|_| ()))),
        }
    })
}

/// ndarray views in (standard, transposed, sliced with steps), arrays out, checked against
/// the reference.
fn ndarray_interop() -> Trial {
    gpu_trial("ndarray::views_in_arrays_out", |ctx| {
        use rgemm::ndarray::{Array2, s};
        let a =
            Array2::<f32>::from_shape_fn((97, 130), |(i, j)| ((i * 7 + j * 3) % 13) as f32 - 6.0);
        let b = Array2::<f32>::from_shape_fn((97, 61), |(i, j)| ((i * 5 + j) % 11) as f32 - 5.0);
        let to_matrix = |v: &rgemm::ndarray::ArrayView2<f32>| {
            Matrix::from_fn(v.nrows(), v.ncols(), |r, c| v[[r, c]]).map_err(fail)
        };
        // A^T B (A read in place, column-major), and a stepped slice of A times B's rows.
        let cases = [
            (a.t(), b.view()),
            (a.slice(s![..;2, ..97]), b.slice(s![.., ..])),
        ];
        for (x, y) in cases {
            let got = ctx.matmul_ndarray(&x, &y).map_err(fail)?;
            let (xm, ym) = (to_matrix(&x)?, to_matrix(&y)?);
            let want = rgemm::matmul_reference(&xm, &ym).map_err(fail)?;
            for ((r, c), g) in got.indexed_iter() {
                if *g as f64 != want.get(r, c).unwrap() {
                    return Err(format!("C[{r}][{c}] = {g}, want {:?}", want.get(r, c)));
                }
            }
        }
        Ok(())
    })
}

/// A list of views is its own batch: adding a strided batch to it is an error, and an
/// empty list does nothing.
fn lists_with_a_stride(ctx: &std::sync::Arc<Context>) -> Result<(), String> {
    let a = ctx
        .upload(&Matrix::<f32>::random(4, 4, 1).map_err(fail)?)
        .map_err(fail)?;
    let mut c = ctx.zeros::<f32>(4, 4).map_err(fail)?;
    let got = ctx
        .gemm_batched([a.view()], [a.view()], [c.view_mut()])
        .batch(rgemm::Batch::strided(2, (0, 0, 16)))
        .run();
    if !matches!(got, Err(rgemm::Error::BatchMismatch { .. })) {
        return Err(format!("a stride on a list: {got:?}"));
    }
    let none: [rgemm::DeviceView<f32>; 0] = [];
    let empty = ctx
        .gemm_batched(none, none, Vec::<rgemm::DeviceViewMut<f32>>::new())
        .run();
    match empty {
        Ok(None) => Ok(()),
        other => Err(format!("an empty list: {other:?}")),
    }
}
