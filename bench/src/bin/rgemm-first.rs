//! The first products of a fresh process, timed on the host as a program meets them: the
//! context, then for each type asked for one product from the host's matrices to the
//! host's result, twice. The first of a type loads the PTX module its kernel is in, which
//! the driver compiles for the GPU (or takes from its compiled-code cache, which lives
//! between processes: run the program twice, and once with `CUDA_CACHE_DISABLE=1`).
//!
//! `rgemm-first --types f32,f64,bf16 --size 256`
use clap::Parser;
use rgemm::{Context, Element, Matrix, bf16, f16};
use std::process::ExitCode;
use std::time::Instant;

#[derive(Parser, Debug)]
#[command(
    version,
    about = "The first products of a fresh process, timed on the host",
    long_about = "The first products of a fresh process, timed on the host: the context, \
        then per type one product (upload, multiply, download) twice. The first of a type \
        loads and compiles the PTX module its kernel is in. Prints one line a step.\n\n\
        Exit status: 0 done, 1 a step failed, 2 usage error or no GPU.",
    after_help = "Example: rgemm-first --types f32,f64,bf16 --size 256"
)]
struct Args {
    /// Element types, in the order they are multiplied.
    #[arg(long, value_delimiter = ',', default_value = "f32,f64,bf16",
          value_parser = ["f32", "f64", "bf16", "f16"])]
    types: Vec<String>,
    /// Side of the square products.
    #[arg(long, default_value_t = 256)]
    size: usize,
    /// The GPU's ordinal.
    #[arg(long, default_value_t = 0)]
    device: usize,
}

/// Milliseconds since `start`.
fn ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

/// One product of `size` cubed from the host's matrices to the host's result, twice: the
/// milliseconds of each.
fn twice<T: Element>(ctx: &Context, size: usize) -> rgemm::Result<[f64; 2]> {
    let a = Matrix::<T>::random(size, size, 1)?;
    let b = Matrix::<T>::random(size, size, 2)?;
    let mut times = [0.0; 2];
    for t in &mut times {
        let start = Instant::now();
        ctx.matmul(&a, &b)?;
        *t = ms(start);
    }
    Ok(times)
}

fn main() -> ExitCode {
    let args = Args::parse();
    let start = Instant::now();
    let ctx = match Context::new(args.device) {
        Ok(ctx) => ctx,
        Err(e) => {
            eprintln!("rgemm-first: no GPU to measure ({e}). Nothing was measured.");
            return ExitCode::from(2);
        }
    };
    println!("context: {:.1} ms", ms(start));
    for t in &args.types {
        let times = match t.as_str() {
            "f32" => twice::<f32>(&ctx, args.size),
            "f64" => twice::<f64>(&ctx, args.size),
            "bf16" => twice::<bf16>(&ctx, args.size),
            _ => twice::<f16>(&ctx, args.size),
        };
        match times {
            Ok([first, second]) => println!(
                "{t} {0}x{0}x{0}: first {first:.1} ms, second {second:.1} ms",
                args.size
            ),
            Err(e) => {
                eprintln!("rgemm-first: {t}: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
