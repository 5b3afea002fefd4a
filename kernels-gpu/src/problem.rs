//! The one kernel interface: every entry point takes the same parameters, four pointers and
//! one `#[repr(C)]` problem block, `(a, b, c, workspace, problem)`, so a new feature adds a
//! field to [`Problem`] rather than a new entry point signature.
//!
//! Why the pointers are not inside the block: rustc passes a by-value struct to a
//! `ptx-kernel` as an array of integers, so a pointer read from it is an integer cast to a
//! generic pointer, and every access through it compiles to a generic `ld`/`st` (checked:
//! `ld.b32` where a pointer parameter gives `ld.global.b32`, and no 16-byte global vectors).
//! A pointer parameter tells LLVM that it points to global memory.

use crate::element::Element;

/// The problem block: shape, layouts and scalars of one product `C = alpha op(A) op(B) +
/// beta C`. Identical layout for every element type (88 bytes), so the host fills one
/// struct for any entry.
///
/// Packed to 4-byte alignment on purpose: rustc passes a by-value struct to a kernel in
/// pieces of its alignment, and with 8-byte pieces `m`, `n` and `k` came out of shifts and
/// masks of 64-bit loads; LLVM then lost that they were 32-bit, turned address multiplies
/// (`mul.wide.u32`) into 64-bit ones, and the f64 `async_copy` and `paired_lanes` kernels
/// ran 5% slower (H200). With 4-byte pieces each `u32` field is one `ld.param.b32`.
///
/// Every kernel reads `m`, `n`, `k`, `tile`, `ctas` and the batch fields (the entry point
/// moves A, B and C to product `blockIdx.z` of the batch, see `entry_points!`). The kernels
/// whose spec says `strided` ([`KernelSpec`](crate::catalogue::KernelSpec)) also read the
/// leading dimensions,
/// `layout` ([`Strides`]) and `alpha`/`beta` ([`Scale`]); for the others the host sets
/// what row-major, dense `C = A B` means ([`Problem::row_major`]).
#[repr(C, packed(4))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Problem {
    /// C is `m x n`; the inner dimension is `k`.
    pub m: u32,
    pub n: u32,
    pub k: u32,
    /// Elements between consecutive rows of A, B and C (row-major: `k`, `n`, `n`).
    pub lda: u32,
    pub ldb: u32,
    pub ldc: u32,
    /// Bit 0 ([`TRANSPOSED_A`]): A is stored `k x m` (element `(i, p)` of the product's A at
    /// `a[p * lda + i]`); bit 1 ([`TRANSPOSED_B`]): B is stored `n x k` (`(p, j)` at
    /// `b[j * ldb + p]`). 0: both row-major as they are.
    pub layout: u32,
    /// `tiled_dyn`'s tile width (the block is `tile x tile`); 0 for other kernels.
    pub tile: u32,
    /// `stream_k`'s sharing blocks (one wave); 0 for other kernels.
    pub ctas: u32,
    /// Products in the batch (1: a single product).
    pub batch: u32,
    /// Elements between consecutive products of a batch, per operand (0: shared).
    pub batch_stride_a: u64,
    pub batch_stride_b: u64,
    pub batch_stride_c: u64,
    /// A batch of independent products (cuBLAS's `gemmBatched`): the global address of
    /// `batch` entries `[a, b, c]` of `i64`, product `z`'s operands as element offsets from
    /// the entry's `a`, `b` and `c` (product 0's, so entry 0 is zeros), in place of the
    /// strides; 0 for a strided batch. Offsets rather than pointers: an address computed
    /// from a pointer parameter stays a global one to LLVM (`ld.global`), one loaded from
    /// memory would be generic.
    pub batch_table: u64,
    /// `C = alpha A B + beta C` (1 and 0: `C = A B`).
    pub alpha: f64,
    pub beta: f64,
}

/// [`Problem::layout`] bit: A is read transposed.
pub const TRANSPOSED_A: u32 = 1;
/// [`Problem::layout`] bit: B is read transposed.
pub const TRANSPOSED_B: u32 = 2;

/// Where the elements of A, B and C are, as the strided kernels read them: `op(A)` is `m x
/// k`, its element `(i, p)` at `a[i * lda + p]`, or `a[p * lda + i]` when `a_t`; `op(B)` is
/// `k x n`, `(p, j)` at `b[p * ldb + j]`, or `b[j * ldb + p]` when `b_t`; C's `(i, j)` at
/// `c[i * ldc + j]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Strides {
    pub lda: u32,
    pub ldb: u32,
    pub ldc: u32,
    pub a_t: bool,
    pub b_t: bool,
}

impl Strides {
    /// Index of `op(A)`'s element `(i, p)`.
    #[inline(always)]
    pub fn a(&self, i: u32, p: u32) -> usize {
        match self.a_t {
            false => i as usize * self.lda as usize + p as usize,
            true => p as usize * self.lda as usize + i as usize,
        }
    }

    /// Index of `op(B)`'s element `(p, j)`.
    #[inline(always)]
    pub fn b(&self, p: u32, j: u32) -> usize {
        match self.b_t {
            false => p as usize * self.ldb as usize + j as usize,
            true => j as usize * self.ldb as usize + p as usize,
        }
    }

    /// Index of C's element `(i, j)`.
    #[inline(always)]
    pub fn c(&self, i: u32, j: u32) -> usize {
        i as usize * self.ldc as usize + j as usize
    }
}

/// `alpha` and `beta` in the accumulator type: the epilogue stores `alpha acc + beta c`,
/// and reads C only when `beta != 0` (BLAS: with `beta = 0` C's old values, NaN included,
/// never reach the result).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scale<A> {
    pub alpha: A,
    pub beta: A,
}

impl Problem {
    /// Whether it is dense, row-major `C = A B` (leading dimensions the row lengths, nothing
    /// transposed, alpha 1, beta 0): the product every kernel computes.
    #[inline(always)]
    pub fn is_dense_unscaled(&self) -> bool {
        self.is_dense_unscaled_as(0, self.n)
    }

    /// Whether it is dense `C = A B` with B stored transposed, `n x k` row-major (`ldb = k`,
    /// A and C row-major and dense, alpha 1, beta 0): how PyTorch stores a layer's weight.
    #[inline(always)]
    pub fn is_dense_unscaled_b_transposed(&self) -> bool {
        self.is_dense_unscaled_as(TRANSPOSED_B, self.k)
    }

    /// Dense and unscaled with these layout bits and B's rows `ldb` apart.
    #[inline(always)]
    fn is_dense_unscaled_as(&self, layout: u32, ldb: u32) -> bool {
        let (alpha, beta) = (self.alpha, self.beta);
        self.lda == self.k
            && self.ldb == ldb
            && self.ldc == self.n
            && self.layout == layout
            && alpha == 1.0
            && beta == 0.0
    }

    /// The strides and orientations of A, B and C.
    #[inline(always)]
    pub fn strides(&self) -> Strides {
        let layout = self.layout;
        Strides {
            lda: self.lda,
            ldb: self.ldb,
            ldc: self.ldc,
            a_t: layout & TRANSPOSED_A != 0,
            b_t: layout & TRANSPOSED_B != 0,
        }
    }

    /// `alpha` and `beta` rounded to the accumulator type.
    #[inline(always)]
    pub fn scale<A: crate::element::Accumulator>(&self) -> Scale<A> {
        let (alpha, beta) = (self.alpha, self.beta);
        Scale {
            alpha: A::from_f64(alpha),
            beta: A::from_f64(beta),
        }
    }

    /// Row-major `C = A B` for an `m x k` A and a `k x n` B, dense, one product.
    pub const fn row_major(m: u32, n: u32, k: u32) -> Self {
        Self {
            m,
            n,
            k,
            lda: k,
            ldb: n,
            ldc: n,
            layout: 0,
            tile: 0,
            ctas: 0,
            batch: 1,
            batch_stride_a: 0,
            batch_stride_b: 0,
            batch_stride_c: 0,
            batch_table: 0,
            alpha: 1.0,
            beta: 0.0,
        }
    }
}

/// One launch's arguments as a kernel body sees them: the entry point's parameters, together.
#[derive(Clone, Copy)]
pub struct Gemm<T: Element> {
    pub a: *const T,
    pub b: *const T,
    pub c: *mut T::Out,
    /// Scratch memory of the kernels that need it (`stream_k`'s partial sums); null otherwise.
    pub workspace: *mut T::Acc,
    pub p: Problem,
}

impl<T: Element> Gemm<T> {
    /// `(a, b, c, m, n, k)`: what a body computing row-major `C = A B` reads.
    #[inline(always)]
    #[allow(clippy::type_complexity)]
    pub fn plain(&self) -> (*const T, *const T, *mut T::Out, u32, u32, u32) {
        (self.a, self.b, self.c, self.p.m, self.p.n, self.p.k)
    }

    /// The operands of this block's product of the batch, `blockIdx.z` (every entry point
    /// starts here, and the CPU executor before each body).
    ///
    /// # Safety
    /// The buffers hold `p.batch` products `batch_stride_*` elements apart.
    #[inline(always)]
    pub unsafe fn this_product(self) -> Self {
        self.product(crate::device::thread::block_idx_z())
    }

    /// The operands of product `z` of the batch (a kernel walking the batch itself): `z`
    /// strides on, or where the batch's table says.
    #[inline(always)]
    pub fn product(self, z: u32) -> Self {
        let p = self.p;
        let (oa, ob, oc) = match p.batch_table {
            0 => return self.strided_product(z),
            table => {
                let (table, at) = (table as usize as *const u64, 3 * z as usize);
                // SAFETY: the host wrote `batch` entries there (`Problem::batch_table`).
                unsafe {
                    use crate::device::global::load;
                    (load(table, at), load(table, at + 1), load(table, at + 2))
                }
            }
        };
        // wrapping (a table's offsets may be negative, as u64): the executor checks each
        // access against the launch's buffers.
        Self {
            a: self.a.wrapping_add(oa as usize),
            b: self.b.wrapping_add(ob as usize),
            c: self.c.wrapping_add(oc as usize),
            ..self
        }
    }

    /// The operands of product `z` of a strided batch: for the kernels that never take a
    /// table (the TMA kernels, whose maps give the batch a third dimension), so their tile
    /// loops carry no branch for it.
    #[inline(always)]
    pub fn strided_product(self, z: u32) -> Self {
        let z = z as usize;
        let p = self.p;
        let (sa, sb, sc) = (p.batch_stride_a, p.batch_stride_b, p.batch_stride_c);
        // wrapping: the executor checks each access against the launch's buffers.
        Self {
            a: self.a.wrapping_add(z * sa as usize),
            b: self.b.wrapping_add(z * sb as usize),
            c: self.c.wrapping_add(z * sc as usize),
            ..self
        }
    }

    /// Where C goes and how it is finished (strided kernels' epilogues).
    #[inline(always)]
    pub fn c_out(&self) -> COut<T::Acc, T::Out> {
        COut {
            c: self.c,
            ldc: self.p.ldc,
            scale: self.p.scale(),
            out: T::out,
            back: T::out_widen,
        }
    }
}

/// C as an epilogue writes it: the pointer, its leading dimension, alpha and beta, and the
/// conversions between the accumulator and C's type. Every store of a strided kernel goes
/// through [`COut::finish`], so alpha and beta are applied in one place.
#[derive(Clone, Copy)]
pub struct COut<A, O> {
    pub c: *mut O,
    pub ldc: u32,
    pub scale: Scale<A>,
    pub out: fn(A) -> O,
    pub back: fn(O) -> A,
}

impl<A: crate::element::Accumulator, O: crate::element::Output> COut<A, O> {
    /// Plain stores of accumulators into a `ld`-wide row-major buffer of the accumulator type
    /// (partial sums in a workspace): no scaling.
    #[inline(always)]
    pub fn raw(c: *mut A, ld: u32) -> COut<A, A> {
        COut {
            c,
            ldc: ld,
            scale: Scale {
                alpha: A::ONE,
                beta: A::ZERO,
            },
            out: |x| x,
            back: |x| x,
        }
    }

    /// `alpha acc + beta C[at]` (C read only when beta is not zero), in C's type.
    ///
    /// # Safety
    /// `at..at + N` are elements of C this thread owns; 16-byte aligned for `N = 4`, 8-byte
    /// for `N = 2` (of `O`'s size times N).
    #[inline(always)]
    pub unsafe fn finish<const N: usize>(&self, at: usize, acc: [A; N]) -> [O; N] {
        let Scale { alpha, beta } = self.scale;
        let mut v = acc.map(|x| alpha * x);
        if beta != A::ZERO {
            // SAFETY: the caller's contract: `at..at + N` are elements of C this thread
            // owns, aligned as `load_n` needs for N = 4 or 2.
            let old: [O; N] = unsafe { crate::device::global::load_n(self.c.cast_const(), at) };
            for j in 0..N {
                v[j] = v[j].mul_add(beta, (self.back)(old[j]));
            }
        }
        v.map(self.out)
    }

    /// `beta C` for [`COut::blend`]: C's elements `at..at + N` in the accumulator type, or
    /// zeros, not read, where beta is 0. Apart from `finish` so that an epilogue can load
    /// all of a batch of C's elements before it stores any (a load after a store to the
    /// same buffer waits for it).
    ///
    /// # Safety
    /// As [`COut::finish`].
    #[inline(always)]
    pub unsafe fn old<const N: usize>(&self, at: usize) -> [A; N] {
        if self.scale.beta == A::ZERO {
            return [A::ZERO; N];
        }
        // SAFETY: the caller's contract: `at..at + N` are elements of C this thread owns,
        // aligned as `load_n` needs for N = 4 or 2.
        let old: [O; N] = unsafe { crate::device::global::load_n(self.c.cast_const(), at) };
        old.map(self.back)
    }

    /// `alpha acc + beta old`, in C's type, `old` from [`COut::old`] (as [`COut::finish`];
    /// `finish` keeps its own body: the register-capped kernels' PTX depends on it).
    #[inline(always)]
    pub fn blend<const N: usize>(&self, acc: [A; N], old: [A; N]) -> [O; N] {
        let Scale { alpha, beta } = self.scale;
        let mut v = acc.map(|x| alpha * x);
        if beta != A::ZERO {
            for j in 0..N {
                v[j] = v[j].mul_add(beta, old[j]);
            }
        }
        v.map(self.out)
    }

    /// Stores `acc`, finished, at element `at`.
    ///
    /// # Safety
    /// As [`COut::finish`].
    #[inline(always)]
    pub unsafe fn put(&self, at: usize, acc: A) {
        // SAFETY: the caller's contract is `finish`'s.
        let [v] = unsafe { self.finish::<1>(at, [acc]) };
        // SAFETY: element `at` of C, which this thread owns (the caller's contract).
        unsafe { crate::device::global::store(self.c, at, v) };
    }

    /// Stores 4 accumulators, finished, as one 16-byte-aligned vector at `at`.
    ///
    /// # Safety
    /// As [`COut::finish`].
    #[inline(always)]
    pub unsafe fn put4(&self, at: usize, acc: [A; 4]) {
        // SAFETY: the caller's contract is `finish`'s.
        let v = unsafe { self.finish::<4>(at, acc) };
        // SAFETY: `at..at + 4` of C, owned by this thread and group-aligned (the caller's
        // contract), as `store4` needs.
        unsafe { crate::device::global::store4(self.c, at, v) };
    }

    /// Stores 2 accumulators, finished, as one aligned vector at `at`.
    ///
    /// # Safety
    /// As [`COut::finish`].
    #[inline(always)]
    pub unsafe fn put2(&self, at: usize, acc: [A; 2]) {
        // SAFETY: the caller's contract is `finish`'s.
        let v = unsafe { self.finish::<2>(at, acc) };
        // SAFETY: `at..at + 2` of C, owned by this thread and pair-aligned (the caller's
        // contract), as `store2` needs.
        unsafe { crate::device::global::store2(self.c, at, v) };
    }
}

/// A kernel body: what the entry points of one kernel run, for element type `T`.
pub type Body<T> = unsafe fn(Gemm<T>);

/// Declares one `extern "ptx-kernel"` entry point per element type for a kernel body taking
/// [`Gemm`]: every entry has the parameters `(a, b, c, workspace, problem)`.
///
/// `entry_points!(strided body; ..)`: entries that move to product `blockIdx.z` of a strided
/// batch only ([`Gemm::strided_product`]): the TMA kernels, which never take a batch's
/// table, keep their code free of its branch.
macro_rules! entry_points {
    (@declared $body:ident; strided entries $($name:ident: $elem:ty),+ $(,)? $(;)?) => {
        $crate::problem::entry_points!(strided $body; $($name: $elem),+);
    };
    (@declared $body:ident; entries $($name:ident: $elem:ty),+ $(,)? $(;)?) => {
        $crate::problem::entry_points!($body; $($name: $elem),+);
    };
    (strided $body:ident; $($name:ident: $elem:ty),* $(,)?) => {
        $crate::problem::entry_points!(@move strided_product, $body; $($name: $elem),*);
    };
    ($body:ident; $($name:ident: $elem:ty),* $(,)?) => {
        $crate::problem::entry_points!(@move product, $body; $($name: $elem),*);
    };
    (@move $to:ident, $body:ident; $($name:ident: $elem:ty),*) => {
        $(
            #[cfg(target_arch = "nvptx64")]
            /// # Safety
            /// `a`, `b` and `c` hold `p.batch` products as `p` lays them out (row-major `m x
            /// k`, `k x n`, `m x n` unless the kernel's forms say otherwise); the launch
            /// follows the kernel's spec (`catalogue.rs`), its grid `p.batch` deep.
            #[unsafe(no_mangle)]
            pub unsafe extern "ptx-kernel" fn $name(
                a: *const $elem,
                b: *const $elem,
                c: *mut <$elem as $crate::element::Element>::Out,
                workspace: *mut <$elem as $crate::element::Element>::Acc,
                p: $crate::problem::Problem,
            ) {
                let g = $crate::problem::Gemm { a, b, c, workspace, p };
                let z = $crate::device::thread::block_idx_z();
                // SAFETY: the body's contract is this entry point's (its `# Safety` refers
                // here); `$to` moved the operands to this block's product `z` of the batch.
                unsafe { $body(g.$to(z)) }
            }
        )*
        /// The body for the CPU executor, by element type: only the types it has entry points
        /// for, so the host compiles no body for a type the kernel does not take.
        #[cfg(not(target_arch = "nvptx64"))]
        pub mod $body {
            /// The entry points' `f16` (the GPU's own type) on the host.
            #[allow(non_camel_case_types, dead_code)]
            type f16 = $crate::element::F16;
            /// The element types as the kernel's file names them.
            #[allow(unused_imports)]
            use super::*;

            /// `super::$body` as a body of `D`, where it has an entry point for `D`.
            // Not inlined: the body (itself inlined here) then stays in this module's
            // codegen unit, and the kernels' units build side by side. Inlined into
            // `host_bodies`, every body fell into one unit, optimised on one core.
            #[inline(never)]
            pub fn host<D: $crate::element::Element>() -> Option<$crate::problem::Body<D>> {
                $(
                    if core::any::TypeId::of::<D>() == core::any::TypeId::of::<$elem>() {
                        let body: $crate::problem::Body<$elem> = super::$body;
                        // SAFETY: `D` is `$elem` (equal type ids), so the two pointer types
                        // are one type.
                        return Some(unsafe {
                            core::mem::transmute::<
                                $crate::problem::Body<$elem>,
                                $crate::problem::Body<D>,
                            >(body)
                        });
                    }
                )*
                None
            }
        }
    };
}
pub(crate) use entry_points;

/// Declares a kernel that is one part's body with its parameters: its spec, the body and its
/// entry points, in one place.
///
/// ```ignore
/// kernel! {
///     SPEC = wide_tile::spec(..).with_ptx(..);
///     fn dmma(Gemm<f64>) = wide_tile::strided::<f64, Dmma, Dmma, Steps8, 128, 64, 16, 3, 4>;
///     entries dmma_f64: f64;
/// }
/// ```
///
/// The body's safety rests on the spec: a comment above the declaration says why the launch
/// the spec describes (threads, grid, shared memory, workspace) is the one the part needs.
/// `strided entries` declares the entries as `entry_points!(strided ..)` does. A kernel with
/// its own body declares `fn name;` and writes `name` beside the declaration, its safety
/// contract in its `# Safety`.
macro_rules! kernel {
    (
        $(#[$spec_attr:meta])*
        $spec:ident = $spec_value:expr;
        $(#[$attr:meta])*
        fn $body:ident $(<$t:ident: $bound:path>)? ($gemm:ty) = $part:expr;
        $($entries:tt)+
    ) => {
        $(#[$spec_attr])*
        pub const $spec: $crate::catalogue::KernelSpec = $spec_value;

        $(#[$attr])*
        /// # Safety
        /// See the entry points; the launch follows the spec declared with it.
        #[inline(always)]
        pub unsafe fn $body $(<$t: $bound>)? (gemm: $gemm) {
            // SAFETY: the entry point's contract holds and the launch follows the spec, which
            // gives the part what its contract asks (the comment at the declaration says how).
            unsafe { $part(gemm) }
        }

        $crate::problem::entry_points!(@declared $body; $($entries)+);
    };
    (
        $(#[$spec_attr:meta])*
        $spec:ident = $spec_value:expr;
        fn $body:ident;
        $($entries:tt)+
    ) => {
        $(#[$spec_attr])*
        pub const $spec: $crate::catalogue::KernelSpec = $spec_value;
        $crate::problem::entry_points!(@declared $body; $($entries)+);
    };
}
pub(crate) use kernel;
