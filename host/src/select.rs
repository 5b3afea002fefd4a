//! Which kernel runs a product nobody named it for: [`Context::choose_for`], the rule's
//! (or the tuner's) choice for the product's form, and [`Context::choose`], `matmul`'s
//! choice for whole matrices, remembered per shape and kept among
//! [`Context::candidates_in`].
use crate::context::Context;
use crate::element::{Element, Output};
use crate::error::{Error, Result};
use crate::kernels::{Kernel, Precision};
use crate::normalize::Normalized;
use crate::view::{Batch, MatrixLayout};

impl Context {
    /// The kernels `matmul` chooses among for this shape: every kernel whose spec makes it a
    /// candidate for this shape (the textbook tiled kernels and every kernel past them;
    /// `thin` only for thin shapes) and that this device can launch for it. An error (the
    /// textbook kernel's) if none can.
    pub fn candidates<T: Element>(&self, m: usize, n: usize, k: usize) -> Result<Vec<Kernel>> {
        self.candidates_in::<T>(m, n, k, Precision::Exact)
    }

    /// [`Context::candidates`] among the kernels of `precision` (FP32 ones never compete
    /// with TF32 ones, either way).
    pub fn candidates_in<T: Element>(
        &self,
        m: usize,
        n: usize,
        k: usize,
        precision: Precision,
    ) -> Result<Vec<Kernel>> {
        let all: Vec<Kernel> = Kernel::FIXED
            .iter()
            .copied()
            .filter(|kernel| kernel.spec().precision == precision)
            .filter(|kernel| kernel.is_candidate(m, n))
            .filter(|kernel| kernel.launches::<T>(self.props(), (m, n, k)).is_ok())
            .collect();
        if all.is_empty() {
            if precision != Precision::Exact {
                // Why not: no kernel of this precision takes T, or what its launch says.
                let own = Kernel::FIXED
                    .into_iter()
                    .find(|kernel| kernel.spec().precision == precision && kernel.supports::<T>());
                let reason = match own.map(|kernel| kernel.launches::<T>(self.props(), (m, n, k))) {
                    None => "its kernels take f32 inputs".into(),
                    Some(Err(e)) => e.to_string(),
                    Some(Ok(_)) => "no kernel of it is a candidate for this shape".into(),
                };
                return Err(Error::UnsupportedPrecision {
                    precision: precision.name(),
                    element: T::NAME,
                    device: self.props().name.clone(),
                    reason,
                });
            }
            self.textbook_kernel::<T>()?
                .launches::<T>(self.props(), (m, n, k))?;
        }
        Ok(all)
    }

    /// The kernel `matmul` chose for this element type and shape, if it has run it.
    pub fn chosen_kernel<T: Element>(&self, m: usize, n: usize, k: usize) -> Option<Kernel> {
        self.chosen_kernel_for::<T, T::Out>(m, n, k)
    }

    /// The kernel `matmul` chose for inputs `T`, C of type `O` and this shape, if it has run
    /// it.
    pub fn chosen_kernel_for<T: Element, O: Output<T>>(
        &self,
        m: usize,
        n: usize,
        k: usize,
    ) -> Option<Kernel> {
        self.chosen_kernel_in::<T, O>(m, n, k, Precision::Exact)
    }

    /// The kernel [`Context::matmul_in`] chose for inputs `T`, C of type `O`, this shape and
    /// `precision`, if it has run it.
    pub fn chosen_kernel_in<T: Element, O: Output<T>>(
        &self,
        m: usize,
        n: usize,
        k: usize,
        precision: Precision,
    ) -> Option<Kernel> {
        let choices = self.choices.lock().unwrap_or_else(|e| e.into_inner());
        choices.get(&(O::SUFFIX, precision, m, n, k)).copied()
    }

    /// `matmul`'s choice for a plain product: remembered, tuned (see
    /// [`Context::set_tuning`]), or by rule (the element type, the shape and the device),
    /// then remembered for the shape. No timing unless the tuner is on, and then on scratch
    /// buffers.
    pub(crate) fn choose<T: Element, O: Output<T>>(
        &self,
        (m, n, k): (usize, usize, usize),
        precision: Precision,
    ) -> Result<Kernel> {
        if let Some(kernel) = self.chosen_kernel_in::<T, O>(m, n, k, precision) {
            return Ok(kernel);
        }
        // The launch's own errors first (a shape too large, no kernel of this precision).
        let candidates = self.candidates_in::<T>(m, n, k, precision)?;
        let layouts = (
            MatrixLayout::row_major(m, k),
            MatrixLayout::row_major(k, n),
            MatrixLayout::row_major(m, n),
        );
        let norm = Normalized::new(layouts, (m * k, k * n, m * n), Batch::ONE, (1.0, 0.0))?;
        let kernel = match self.choose_for::<T, O>(&norm, precision) {
            Ok(kernel) if candidates.contains(&kernel) || candidates.is_empty() => kernel,
            _ => candidates
                .first()
                .copied()
                .unwrap_or(self.textbook_kernel::<T>()?),
        };
        let mut choices = self.choices.lock().unwrap_or_else(|e| e.into_inner());
        choices.insert((O::SUFFIX, precision, m, n, k), kernel);
        Ok(kernel)
    }

    /// The textbook's choice: the tiled kernel with the fixed tile width (8, 16 or 32) that
    /// this device can launch at the highest occupancy (threads resident per SM, from its
    /// thread, block, shared-memory and register limits and the kernel's register count);
    /// among equals the widest, since each element of A and B is then read from global
    /// memory fewer times (`n / tile` and `m / tile`).
    pub fn textbook_kernel<T: Element>(&self) -> Result<Kernel> {
        let mut best: Option<(Kernel, u32)> = None;
        for kernel in [Kernel::Tiled8, Kernel::Tiled16, Kernel::Tiled32] {
            if kernel.check_device::<T>(self.props()).is_err() {
                continue;
            }
            let threads = self.occupancy::<T>(kernel)?.threads_per_sm;
            if best.is_none_or(|(_, t)| threads >= t) {
                best = Some((kernel, threads));
            }
        }
        best.map(|(kernel, _)| kernel)
            .ok_or_else(|| Error::UnsupportedTile {
                tile: 8,
                device: self.props().name.clone(),
                reason: "no tile width fits this device".into(),
            })
    }

    /// The kernel for a product nobody named: `matmul`'s timed choice for a plain product
    /// of a shape it has timed, else the first of [`crate::heuristic::preference`] that can
    /// launch it.
    pub(crate) fn choose_for<T: Element, O: Output<T>>(
        &self,
        norm: &Normalized,
        precision: Precision,
    ) -> Result<Kernel> {
        let p = &norm.problem;
        let (m, n, k) = (p.m as usize, p.n as usize, p.k as usize);
        let bytes = (std::mem::size_of::<T>(), std::mem::size_of::<O>());
        if norm.is_plain(bytes)
            && p.batch == 1
            && let Some(kernel) = self.chosen_kernel_in::<T, O>(m, n, k, precision)
        {
            return Ok(kernel);
        }
        let fits = |kernel: &Kernel| {
            let spec = kernel.spec();
            spec.precision == precision
                && (kernel.is_candidate(m, n) || *kernel == Kernel::Naive)
                && norm.check_kernel(*kernel, bytes).is_ok()
        };
        if let Some(kernel) = self.tuned::<T, O>(norm, precision, &fits)? {
            return Ok(kernel);
        }
        let narrow_c = std::mem::size_of::<O>() < std::mem::size_of::<T::Out>();
        let order = crate::heuristic::preference_for::<T>(self.props(), p, precision, narrow_c);
        order
            .into_iter()
            .filter(fits)
            .find(|kernel| kernel.launches_for::<T>(self.props(), *p).is_ok())
            .ok_or_else(|| match precision {
                Precision::Exact => Error::UnsupportedForm {
                    kernel: "any".into(),
                    reason: format!("no kernel of this device computes this product ({m}x{n}x{k})"),
                },
                _ => Error::UnsupportedPrecision {
                    precision: precision.name(),
                    element: T::NAME,
                    device: self.props().name.clone(),
                    reason: "no kernel of this precision computes this form of product".into(),
                },
            })
    }
}
