//! A product on the GPU through rgemm, built on stable Rust; without a GPU, the same kernel
//! on rgemm's CPU executor. Exits non-zero if the result is wrong.
use rgemm::{Context, CpuExecutor, Kernel, Matrix};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (m, n, k) = (256, 192, 320);
    let a = Matrix::from_fn(m, k, |r, c| ((r * 7 + c * 3) % 17) as f32 - 8.0)?;
    let b = Matrix::from_fn(k, n, |r, c| ((r * 5 + c * 11) % 13) as f32 - 6.0)?;
    // Small integers: every kernel's f32 sum is exact, so the check is equality.
    let expected = rgemm::matmul_reference(&a, &b)?;
    let (c, ran_on) = match Context::new(0) {
        Ok(ctx) => (ctx.matmul(&a, &b)?, ctx.props().name.clone()),
        Err(e) => {
            println!("no GPU ({e}): the CPU executor runs the kernel instead");
            let cpu = CpuExecutor::new();
            (cpu.matmul_with(&a, &b, Kernel::Tiled16)?, "the CPU executor".to_string())
        }
    };
    let wrong = c
        .as_slice()
        .iter()
        .zip(expected.as_slice())
        .filter(|(x, y)| **x as f64 != **y)
        .count();
    println!("{m}x{n}x{k} f32 on {ran_on}: {wrong} wrong elements");
    if wrong > 0 {
        return Err(format!("{wrong} elements differ from the reference").into());
    }
    Ok(())
}
