//! GPU tests: every kernel x element type against the CPU reference (property tests on
//! random shapes), the textbook's fixed cases, occupancy against the driver, error paths.
//!
//! A libtest-mimic harness, so a test can be reported ignored at run time, with the reason,
//! when there is no GPU (and failed instead under `REQUIRE_GPU=1`).
//! Case count: `PROPTEST_CASES` (default 48) per kernel x type.
use libtest_mimic::{Arguments, Trial};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use rgemm::{Context, Element, Error, FixedTile, Kernel, Matrix, bf16, f16};
use rgemm_tests::{check_product, fail, gpu_trial, random_matrix};

/// Which kernel a property test drives; `Auto` is [`Context::matmul`]'s own choice and
/// `Dynamic` draws its tile width per case.
#[derive(Clone, Copy, Debug)]
enum Under {
    Fixed(Kernel),
    Dynamic,
    Auto,
}

impl Under {
    fn name(&self) -> String {
        match self {
            Under::Fixed(k) => k.to_string(),
            Under::Dynamic => "tiled_dyn".into(),
            Under::Auto => "auto".into(),
        }
    }
}

/// Side lengths from 1 to 300, biased toward the cases that break tiling: primes, tile
/// multiples and one either side, and very thin (1..=3).
fn side() -> impl Strategy<Value = usize> {
    let primes = prop::sample::select(vec![2usize, 3, 5, 7, 13, 31, 61, 97, 127, 211, 257, 293]);
    let near_tiles = (
        prop::sample::select(vec![8usize, 16, 32, 64, 96, 128, 256]),
        -1i64..=1,
    )
        .prop_map(|(t, d)| (t as i64 + d) as usize);
    prop_oneof![
        3 => 1usize..=300,
        2 => primes,
        3 => near_tiles,
        2 => 1usize..=3,
    ]
}

fn property<T: Element>(under: Under) -> Trial {
    let name = format!("property::{}::{}", under.name(), T::NAME);
    gpu_trial(name, move |ctx| {
        let cases = std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(48);
        let mut runner = TestRunner::new(Config {
            cases,
            failure_persistence: None,
            ..Config::default()
        });
        let strategy = (side(), side(), side(), any::<u64>(), 1u32..=32);
        runner
            .run(&strategy, |(m, n, k, seed, tile)| {
                let a = random_matrix::<T>(m, k, seed);
                let b = random_matrix::<T>(k, n, seed ^ 0x9e37_79b9);
                let c = match under {
                    Under::Fixed(kernel) => ctx.matmul_with(&a, &b, kernel),
                    Under::Dynamic => ctx.matmul_with(&a, &b, Kernel::TiledDynamic(tile)),
                    Under::Auto => ctx.matmul(&a, &b),
                }
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
                check_product(&a, &b, &c).map_err(TestCaseError::fail)
            })
            .map_err(|e| e.to_string())
    })
}

fn properties() -> Vec<Trial> {
    let mut unders: Vec<Under> = Kernel::FIXED.into_iter().map(Under::Fixed).collect();
    unders.extend([Under::Dynamic, Under::Auto]);
    unders
        .into_iter()
        .flat_map(|u| {
            [
                property::<f32>(u),
                property::<f64>(u),
                property::<f16>(u),
                property::<bf16>(u),
            ]
        })
        .collect()
}

fn exact<T: Element>(
    ctx: &Context,
    a: &Matrix<T>,
    b: &Matrix<T>,
    kernel: Kernel,
) -> Result<(), String> {
    let c = ctx.matmul_with(a, b, kernel).map_err(fail)?;
    let want = rgemm::matmul_reference(a, b).map_err(fail)?;
    let got: Vec<f64> = c
        .as_slice()
        .iter()
        .map(|v| rgemm::Scalar::to_f64(*v))
        .collect();
    if got != want.as_slice() {
        return Err(format!("{kernel}: got {got:?}, want {:?}", want.as_slice()));
    }
    Ok(())
}

/// The chapter's worked examples, with small integers so every result is exact.
fn textbook() -> Vec<Trial> {
    vec![
        gpu_trial("textbook::4x4_with_2x2_tiles", |ctx| {
            let a = Matrix::from_fn(4, 4, |r, c| (r * 4 + c) as f32).unwrap();
            let b = Matrix::from_fn(4, 4, |r, c| (r as f32) - 2.0 * c as f32).unwrap();
            exact(ctx, &a, &b, Kernel::TiledDynamic(2))?;
            exact(ctx, &a, &b, Kernel::Naive)
        }),
        gpu_trial("textbook::3x3_with_tile_width_2", |ctx| {
            // 3 is not a multiple of 2: the second phase and the edge blocks are half empty.
            let a = Matrix::from_vec(3, 3, vec![1.0f32, 2., 3., 4., 5., 6., 7., 8., 9.]).unwrap();
            let b = Matrix::from_vec(3, 3, vec![9.0f32, 8., 7., 6., 5., 4., 3., 2., 1.]).unwrap();
            let c = ctx
                .matmul_with(&a, &b, Kernel::TiledDynamic(2))
                .map_err(fail)?;
            let want = [30.0f32, 24., 18., 84., 69., 54., 138., 114., 90.];
            if c.as_slice() != want {
                return Err(format!("got {:?}, want {want:?}", c.as_slice()));
            }
            Ok(())
        }),
        gpu_trial("textbook::every_kernel_and_type_exact_on_integers", |ctx| {
            fn ints<T: Element>(ctx: &Context) -> Result<(), String> {
                let a = Matrix::from_fn(37, 19, |r, c| {
                    T::from_f64(((r * 7 + c * 3) % 9) as f64 - 4.0)
                })
                .unwrap();
                let b = Matrix::from_fn(19, 45, |r, c| T::from_f64(((r * 5 + c) % 7) as f64 - 3.0))
                    .unwrap();
                for kernel in Kernel::FIXED
                    .into_iter()
                    .chain([Kernel::TiledDynamic(5), Kernel::TiledDynamic(32)])
                {
                    exact(ctx, &a, &b, kernel)?;
                }
                Ok(())
            }
            ints::<f32>(ctx)?;
            ints::<f64>(ctx)?;
            ints::<f16>(ctx)?;
            ints::<bf16>(ctx)
        }),
    ]
}

fn zero_sized() -> Trial {
    gpu_trial("shapes::zero_sized_dimensions_follow_the_maths", |ctx| {
        for (m, n, k) in [(0, 5, 3), (5, 0, 3), (0, 0, 0), (4, 6, 0), (1, 1, 0)] {
            let a = Matrix::<f32>::zeros(m, k).unwrap();
            let b = Matrix::<f32>::zeros(k, n).unwrap();
            for kernel in Kernel::FIXED.into_iter().chain([Kernel::TiledDynamic(3)]) {
                let c = ctx.matmul_with(&a, &b, kernel).map_err(fail)?;
                if c.shape() != (m, n) || c.as_slice().iter().any(|v| *v != 0.0) {
                    return Err(format!("{kernel} {m}x{n}x{k}: {:?}", c));
                }
            }
        }
        // K = 0 really writes zeros: start from a poisoned output.
        let a = Matrix::<f64>::zeros(3, 0).unwrap();
        let b = Matrix::<f64>::zeros(0, 2).unwrap();
        let (da, db) = (ctx.upload(&a).map_err(fail)?, ctx.upload(&b).map_err(fail)?);
        let mut dc = ctx
            .upload(&Matrix::from_vec(3, 2, vec![f64::NAN; 6]).unwrap())
            .map_err(fail)?;
        ctx.matmul_device(&da, &db, &mut dc, Some(Kernel::Tiled(FixedTile::W16)))
            .map_err(fail)?;
        let c = ctx.download(&dc).map_err(fail)?;
        if c.as_slice() != [0.0; 6] {
            return Err(format!("K = 0 must give zeros, got {:?}", c.as_slice()));
        }
        Ok(())
    })
}

/// Every output element is written: poison C, multiply, look for poison.
fn writes_every_element() -> Trial {
    gpu_trial("shapes::every_output_element_is_written", |ctx| {
        for kernel in Kernel::FIXED.into_iter().chain([Kernel::TiledDynamic(7)]) {
            let (m, n, k) = (67, 129, 33);
            let a = ctx.upload(&random_matrix::<f32>(m, k, 1)).map_err(fail)?;
            let b = ctx.upload(&random_matrix::<f32>(k, n, 2)).map_err(fail)?;
            let mut c = ctx
                .upload(&Matrix::from_vec(m, n, vec![f32::NAN; m * n]).unwrap())
                .map_err(fail)?;
            ctx.matmul_device(&a, &b, &mut c, Some(kernel))
                .map_err(fail)?;
            let c = ctx.download(&c).map_err(fail)?;
            if let Some(i) = c.as_slice().iter().position(|v| v.is_nan()) {
                return Err(format!("{kernel}: C[{}][{}] never written", i / n, i % n));
            }
        }
        Ok(())
    })
}

fn occupancy() -> Trial {
    gpu_trial("occupancy::matches_the_driver", |ctx| {
        fn each<T: Element>(ctx: &Context) -> Result<(), String> {
            for kernel in Kernel::FIXED
                .into_iter()
                .chain([Kernel::TiledDynamic(12), Kernel::TiledDynamic(24)])
            {
                let ours = ctx.occupancy::<T>(kernel).map_err(fail)?;
                let driver = ctx.driver_blocks_per_sm::<T>(kernel).map_err(fail)?;
                if ours.blocks_per_sm != driver {
                    return Err(format!(
                        "{kernel} {}: ours {ours:?}, driver {driver} blocks/SM",
                        T::NAME
                    ));
                }
            }
            Ok(())
        }
        each::<f32>(ctx)?;
        each::<f64>(ctx)?;
        each::<f16>(ctx)?;
        each::<bf16>(ctx)
    })
}

fn choice() -> Trial {
    gpu_trial("choice::matmul_reports_the_kernel_it_chose", |ctx| {
        let kernel = ctx.choose_kernel::<f32>(300, 200, 100).map_err(fail)?;
        let Kernel::Tiled(tile) = kernel else {
            return Err(format!("expected a fixed tiled kernel, got {kernel}"));
        };
        let plan = ctx.plan::<f32>(kernel, 300, 200, 100).map_err(fail)?;
        let t = tile.width();
        if plan.block != (t, t, 1) || plan.grid != (200u32.div_ceil(t), 300u32.div_ceil(t), 1) {
            return Err(format!("launch rules broken: {plan:?}"));
        }
        if plan.shared_bytes != 2 * t * t * 4 {
            return Err(format!("shared bytes: {plan:?}"));
        }
        // No other fixed tile reaches a higher occupancy on this device.
        for other in FixedTile::ALL {
            let occ = ctx.occupancy::<f32>(Kernel::Tiled(other)).map_err(fail)?;
            if occ.threads_per_sm > plan.occupancy.threads_per_sm {
                return Err(format!(
                    "{other:?} has higher occupancy than the chosen {tile:?}"
                ));
            }
        }
        let (a, b) = (
            random_matrix::<f32>(300, 100, 5),
            random_matrix::<f32>(100, 200, 6),
        );
        let (da, db) = (ctx.upload(&a).map_err(fail)?, ctx.upload(&b).map_err(fail)?);
        let mut dc = ctx.zeros::<f32>(300, 200).map_err(fail)?;
        let ran = ctx.matmul_device(&da, &db, &mut dc, None).map_err(fail)?;
        if ran != plan {
            return Err(format!("ran {ran:?}, planned {plan:?}"));
        }
        check_product(&a, &b, &ctx.download(&dc).map_err(fail)?)
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
    trials.extend(textbook());
    trials.extend([zero_sized(), writes_every_element(), occupancy(), choice()]);
    trials.extend(errors());
    libtest_mimic::run(&args, trials).exit();
}
