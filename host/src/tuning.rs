//! The tuner's table: the tuned kernel of each shape bucket, loaded from a file or timed
//! ([`crate::tuner`]).
use crate::element::{Element, Output};
use crate::kernels::{Kernel, Precision};
use crate::normalize::Normalized;
use std::collections::HashMap;

/// The key a tuned choice is remembered under.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Bucket {
    /// Entry suffix of the input and output types (`f32`, `bf16_bf16`, ...).
    pub types: String,
    pub precision: Precision,
    /// `TRANSPOSED_A | TRANSPOSED_B` of the kernels' problem.
    pub layout: u32,
    pub plain: bool,
    /// `m`, `n`, `k`, batch, each rounded up to a power of two.
    pub dims: [u64; 4],
}

impl Bucket {
    pub(crate) fn of<T: Element, O: Output<T>>(norm: &Normalized, precision: Precision) -> Self {
        let p = &norm.problem;
        let bytes = (std::mem::size_of::<T>(), std::mem::size_of::<O>());
        let up = |x: u32| (x.max(1) as u64).next_power_of_two();
        Bucket {
            types: O::SUFFIX.to_string(),
            precision,
            layout: p.layout,
            plain: norm.is_plain(bytes),
            dims: [up(p.m), up(p.n), up(p.k), up(p.batch)],
        }
    }

    /// One line of a tuning file: `types precision layout plain m n k batch kernel`.
    pub(crate) fn line(&self, kernel: Kernel) -> String {
        let [m, n, k, b] = self.dims;
        format!(
            "{} {} {} {} {m} {n} {k} {b} {kernel}",
            self.types,
            self.precision.name(),
            self.layout,
            self.plain as u8
        )
    }

    pub(crate) fn parse(line: &str) -> Option<(Self, Kernel)> {
        let w: Vec<&str> = line.split_whitespace().collect();
        let [types, precision, layout, plain, m, n, k, b, kernel] = w[..] else {
            return None;
        };
        let precision = [Precision::Exact, Precision::Tf32, Precision::Tf32x3]
            .into_iter()
            .find(|p| p.name() == precision)?;
        let num = |s: &str| s.parse::<u64>().ok();
        Some((
            Bucket {
                types: types.to_string(),
                precision,
                layout: layout.parse().ok()?,
                plain: plain == "1",
                dims: [num(m)?, num(n)?, num(k)?, num(b)?],
            },
            kernel.parse().ok()?,
        ))
    }
}

/// The tuner's table: off (the rule decides) until [`Context::set_tuning`] turns it on;
/// tuned choices, loaded or timed, are used either way.
#[derive(Debug, Default)]
pub(crate) struct Tuning {
    pub on: bool,
    pub table: HashMap<Bucket, Kernel>,
}
