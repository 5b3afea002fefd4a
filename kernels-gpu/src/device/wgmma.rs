//! Hopper's warpgroup matrix multiply-accumulate, `wgmma.mma_async` (sm_90a only): the four
//! warps of a warpgroup (128 threads, warps `4 i .. 4 i + 3` of the block) compute
//! `D += A B` for a 64 x N tile of D with K = 16 (16-bit types; K = 8 for TF32, whose
//! operands are both K-major, [`m64n256k8_tf32`]), reading A and B from shared memory through
//! 64-bit matrix descriptors, asynchronously: the instruction returns at once and
//! [`wait_group`] says when its results (and its reads of shared memory) are done.
//!
//! - **Descriptors** ([`Descriptor`]): start address, leading- and stride-dimension byte
//!   offsets (LBO, SBO; 16-byte units), swizzle mode. The swizzle is a function of the shared
//!   address: with 128-byte swizzling the 16-byte chunk `c` (address bits 4..6) of a 128-byte
//!   row becomes `c ^ r`, `r` being address bits 7..9, so a swizzle atom (8 rows of 128
//!   bytes) starts at a multiple of 1024 bytes.
//! - **Canonical layouts** for 16-bit elements with a swizzle of `W` bytes (128, 64 or 32):
//!   *K-major* (A as row-major `M x K` stores it): row `mn` of the operand at
//!   `(mn / 8) SBO + (mn % 8) W`, its 16 K elements contiguous in it (LBO unused).
//!   *MN-major* (B as row-major `K x N` stores it, the instruction's transpose immediate set):
//!   `W / 2` consecutive MN elements per row, K row `k` of an atom at `(k % 8) W`, the next 8
//!   K rows `SBO` further, the next `W / 2` MN elements `LBO` further.
//! - **D** (f32): as `mma.m16n8k16`'s C per warp, warp `w` holding rows `16 w ..`: with
//!   g = lane / 4, t = lane % 4, register `4 j + 2 h + e` is row `16 w + g + 8 h`, column
//!   `8 j + 2 t + e`.
//! - **Order**: [`fence`] before the first `wgmma` of a batch (after the accumulators were
//!   touched by other instructions), then the `wgmma`s, [`commit_group`], and
//!   [`wait_group`]`::<N>` before the accumulators are read or their shared tiles overwritten.
//!   Shared memory written by ordinary stores or `cp.async` must be made visible to the
//!   asynchronous proxy first ([`fence_proxy_async`], then a barrier).
//!
//! On the host (CPU executor) a `wgmma` meets its warpgroup: each warp hands in its
//! descriptors (which must agree across the warp), then all 128 threads wait for each other,
//! and each thread computes its own 128 elements of D from shared memory, decoding the
//! descriptors and the swizzle as above. A warpgroup one of whose threads does not arrive is
//! a fault naming both places; an unsupported descriptor (no swizzle, a base offset) is a
//! fault too. Arithmetic: each element's 16 products are added in K order with f32 fused
//! multiply-adds, as `mma.sync`'s emulation (`super::mma`). The host runs the instruction at
//! once, so it cannot see a kernel that overwrites a tile before its `wait_group`.

/// A shared-memory matrix descriptor (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Descriptor(pub u64);

/// The swizzle modes of a descriptor (bits 62..63).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Swizzle {
    B128 = 1,
    B64 = 2,
    B32 = 3,
}

impl Descriptor {
    /// The operand at shared address `start` (a multiple of 16), with the byte offsets
    /// `lbo` and `sbo` (multiples of 16, below 256 KiB).
    #[inline(always)]
    pub const fn new(start: u32, lbo: u32, sbo: u32, swizzle: Swizzle) -> Self {
        const fn field(bytes: u32) -> u64 {
            ((bytes >> 4) & 0x3FFF) as u64
        }
        Descriptor(field(start) | field(lbo) << 16 | field(sbo) << 32 | (swizzle as u64) << 62)
    }

    /// The same operand `bytes` further on (a multiple of 16, inside the 14-bit address).
    #[inline(always)]
    pub const fn advanced(self, bytes: u32) -> Self {
        Descriptor(self.0 + (bytes >> 4) as u64)
    }
}

/// The first `$len` accumulator registers, as the instructions name them (`%0` ..), after
/// `$m`'s arguments: 128 for `m64n256`, 96 for `m64n192`, 64 for `m64n128`, 32 for `m64n64`,
/// 16 for `m64n32`, 8 for `m64n16`.
#[cfg(target_arch = "nvptx64")]
macro_rules! with_accumulators {
    (8, $m:ident!($($args:tt)*)) => { $m!($($args)*; 0 1 2 3 4 5 6 7) };
    (16, $m:ident!($($args:tt)*)) => {
        $m!($($args)*; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15)
    };
    ($len:tt, $m:ident!($($args:tt)*)) => {
        with_accumulators!(@ $len, $m!($($args)*);
            [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31]
            [32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60
             61 62 63]
            [64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 90 91 92
             93 94 95]
            [96 97 98 99 100 101 102 103 104 105 106 107 108 109 110 111 112 113 114 115 116 117
             118 119 120 121 122 123 124 125 126 127])
    };
    (@ 32, $m:ident!($($args:tt)*); [$($r:tt)*] $($more:tt)*) => { $m!($($args)*; $($r)*) };
    (@ 64, $m:ident!($($args:tt)*); [$($r:tt)*] [$($s:tt)*] $($more:tt)*) => {
        $m!($($args)*; $($r)* $($s)*)
    };
    (@ 96, $m:ident!($($args:tt)*); [$($r:tt)*] [$($s:tt)*] [$($t:tt)*] $($more:tt)*) => {
        $m!($($args)*; $($r)* $($s)* $($t)*)
    };
    (@ 128, $m:ident!($($args:tt)*); [$($r:tt)*] [$($s:tt)*] [$($t:tt)*] [$($u:tt)*]) => {
        $m!($($args)*; $($r)* $($s)* $($t)* $($u)*)
    };
}

/// An instruction that only orders the accumulators: they are named as operands (in a PTX
/// comment) so that the compiler keeps them in place around it.
#[cfg(target_arch = "nvptx64")]
macro_rules! pinning {
    ($text:literal, $acc:ident, $($konst:ident = $value:expr)?; $first:literal $($i:literal)*) => {
        core::arch::asm!(
            $text,
            concat!("// {", $first, "}", $(" {", $i, "}",)*),
            inout(reg32) $acc[$first], $(inout(reg32) $acc[$i],)*
            $($konst = const $value,)?
        )
    };
}

/// `wgmma` of `$shape` (`m64n256k16`, `m64n192k16`, `m64n128k16`, `m64n64k16`) on 16-bit operands, D += A B, with the
/// transpose immediates `A_MN` and `B_MN`.
#[cfg(target_arch = "nvptx64")]
macro_rules! mma_asm {
    ($shape:literal, $ty:literal, $acc:ident, $a:ident, $b:ident; $first:literal $($i:literal)*) => {
        core::arch::asm!(
            concat!(
                "{{ .reg .pred %wg_d; setp.ne.b32 %wg_d, {one}, 0; ",
                "wgmma.mma_async.sync.aligned.", $shape, ".f32.", $ty, ".", $ty,
                " {{{", $first, "}", $(", {", $i, "}",)* "}}, {a}, {b}, %wg_d, 1, 1, {ta}, {tb}; }}"
            ),
            inout(reg32) $acc[$first], $(inout(reg32) $acc[$i],)*
            a = in(reg64) $a,
            b = in(reg64) $b,
            one = in(reg32) 1u32,
            ta = const A_MN as u32,
            tb = const B_MN as u32,
        )
    };
}

/// `wgmma` of `$shape` (`m64n256k8`, `m64n128k8`) on TF32 operands, D = A B + (D where
/// `$scale_d` is not 0): no transpose immediates (TF32 reads both operands K-major). A is
/// `$a_text` with its operands `[..]`: a descriptor (`"{a}" [a = in(reg64) a,]`) or four
/// registers.
#[cfg(target_arch = "nvptx64")]
macro_rules! mma_tf32_asm {
    (
        $shape:literal, $acc:ident, $a_text:literal [$($a:tt)*], $b:ident, $scale_d:expr;
        $first:literal $($i:literal)*
    ) => {
        core::arch::asm!(
            concat!(
                "{{ .reg .pred %wg_d; setp.ne.b32 %wg_d, {scale_d}, 0; ",
                "wgmma.mma_async.sync.aligned.", $shape, ".f32.tf32.tf32",
                " {{{", $first, "}", $(", {", $i, "}",)* "}}, ", $a_text, ", {b}, %wg_d, 1, 1; }}"
            ),
            inout(reg32) $acc[$first], $(inout(reg32) $acc[$i],)*
            $($a)*
            b = in(reg64) $b,
            scale_d = in(reg32) $scale_d,
        )
    };
}

/// A warpgroup's accumulators of one `wgmma` shape: 128 registers a thread for
/// `m64n256`, 96 for `m64n192`, 64 for `m64n128`, 32 for `m64n64`, 16 for `m64n32`, 8 for
/// `m64n16`. [`fence`] and [`wait_group`] name them all, so that the compiler keeps them in
/// place around the asynchronous instructions.
pub trait Accumulators {
    /// `wgmma.fence.sync.aligned` over these registers.
    fn fence(&mut self);
    /// `wgmma.wait_group.sync.aligned N` over these registers.
    fn wait<const N: u32>(&mut self);
}

macro_rules! accumulators {
    ($len:tt) => {
        impl Accumulators for [f32; $len] {
            #[inline(always)]
            fn fence(&mut self) {
                #[cfg(target_arch = "nvptx64")]
                // SAFETY: an ordering instruction over registers; every thread of the
                // warpgroup runs it.
                unsafe {
                    let acc = self;
                    with_accumulators!($len, pinning!("wgmma.fence.sync.aligned;", acc,))
                }
            }

            #[inline(always)]
            fn wait<const N: u32>(&mut self) {
                #[cfg(target_arch = "nvptx64")]
                // SAFETY: waits for this warpgroup's own operations.
                unsafe {
                    let acc = self;
                    with_accumulators!(
                        $len,
                        pinning!("wgmma.wait_group.sync.aligned {n};", acc, n = N)
                    )
                }
            }
        }
    };
}
accumulators!(128);
accumulators!(96);
accumulators!(64);
accumulators!(32);
accumulators!(16);
accumulators!(8);

/// `wgmma.fence.sync.aligned`: orders this thread's earlier accesses to the accumulators
/// before the next `wgmma`.
#[inline(always)]
pub fn fence(acc: &mut impl Accumulators) {
    acc.fence()
}

instructions! {
    /// `wgmma.commit_group.sync.aligned`: closes the batch of `wgmma`s issued since the last.
    fn commit_group() = "wgmma.commit_group.sync.aligned;";
}

/// `wgmma.wait_group.sync.aligned N`: waits until at most `N` batches are in flight; the
/// accumulators of the others are then final and their shared tiles free.
#[inline(always)]
pub fn wait_group<const N: u32>(acc: &mut impl Accumulators) {
    acc.wait::<N>()
}

/// Keeps `wgmma` A fragments alive (and in their registers) up to here: call it after the
/// [`wait_group`] that retires the operations reading them, so that the register allocator
/// gives their registers to nothing else while those operations may still read them (the
/// compiler does not know that `wgmma` reads its A registers asynchronously). No
/// instruction.
#[inline(always)]
pub fn keep_alive(a: &[[u32; 4]; 2]) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: an empty statement naming registers.
    unsafe {
        core::arch::asm!(
            "// keep {0} {1} {2} {3} {4} {5} {6} {7}",
            in(reg32) a[0][0], in(reg32) a[0][1], in(reg32) a[0][2], in(reg32) a[0][3],
            in(reg32) a[1][0], in(reg32) a[1][1], in(reg32) a[1][2], in(reg32) a[1][3],
            options(nomem, nostack, preserves_flags),
        )
    }
    #[cfg(not(target_arch = "nvptx64"))]
    let _ = a;
}

instructions! {
    /// `fence.proxy.async.shared::cta`: this thread's completed writes to shared memory
    /// (stores, landed `cp.async` copies) become visible to the asynchronous proxy that
    /// `wgmma` reads through. A barrier after it extends that to the block's writes.
    fn fence_proxy_async() = "fence.proxy.async.shared::cta;";
}

/// The f32 at shared address `at` rounded to TF32 (`cvt.rna.tf32.f32`, as
/// `super::mma::round_tf32`): an element of an A fragment for [`m64n256k8_tf32_rs`], read
/// from a tile that TMA copied as the caller stored it (`wgmma` itself would drop the low
/// 13 mantissa bits: truncation).
///
/// On the host the bytes must be ready for this thread, as a `wgmma` read (no TMA copy into
/// them pending, or delivered in a phase it has not waited for): a fault otherwise.
///
/// # Safety
/// `at` is a multiple of 4 inside the block's shared memory.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn load_tf32(at: u32) -> u32 {
    let bits: u32;
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: the caller's contract: 4 aligned bytes of shared memory.
    unsafe {
        core::arch::asm!(
            "ld.shared.b32 {x}, [{at}];",
            at = in(reg32) at,
            x = out(reg32) bits,
            options(nostack, readonly, preserves_flags),
        );
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        super::host::check_async_read(at, 4);
        // SAFETY: 4 bytes inside the block's shared region (checked by `shared_byte`).
        bits = unsafe {
            super::host::shared_byte(at, 4)
                .cast::<u32>()
                .read_unaligned()
        };
    }
    super::mma::round_tf32(f32::from_bits(bits))
}

macro_rules! mma_k16 {
    (
        $(#[$doc:meta])* $name:ident, $shape:literal, $len:tt, $ty:literal,
        $widen:expr
    ) => {
        $(#[$doc])*
        ///
        /// `A_MN` and `B_MN` are the transpose immediates: A (64 x 16) is MN-major where
        /// `A_MN` (K-major otherwise), B (16 x 256) where `B_MN`.
        ///
        /// # Safety
        /// Every thread of the warpgroup calls it with the same descriptors, after
        /// [`fence`]; A and B lie in the block's shared memory as the descriptors say,
        /// written and made visible to the asynchronous proxy before the last barrier, and
        /// stay unchanged until a [`wait_group`] covers this operation; the accumulators are
        /// not touched before it.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn $name<const A_MN: bool, const B_MN: bool>(
            acc: &mut [f32; $len],
            a: Descriptor,
            b: Descriptor,
        ) {
            #[cfg(target_arch = "nvptx64")]
            {
                let (a, b) = (a.0, b.0);
                // SAFETY: reads A and B through the descriptors and writes only `acc`'s
                // registers; the caller's contract makes the operands valid and stable and
                // the call warpgroup-wide.
                unsafe { with_accumulators!($len, mma_asm!($shape, $ty, acc, a, b)) }
            }
            #[cfg(not(target_arch = "nvptx64"))]
            emulate(acc, ASource::Shared(a, A_MN), (b, B_MN), Operand::Bits16($widen))
        }
    };
}

mma_k16!(
    /// `wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16`, D += A B (row-major A and
    /// B: A K-major, B N-major).
    m64n256k16_bf16,
    "m64n256k16",
    128,
    "bf16",
    |bits| f32::from_bits((bits as u32) << 16)
);
mma_k16!(
    /// `wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16`, as [`m64n256k16_bf16`].
    m64n256k16_f16,
    "m64n256k16",
    128,
    "f16",
    |bits| half::f16::from_bits(bits).to_f32()
);
mma_k16!(
    /// `wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16`: as [`m64n256k16_bf16`] on a
    /// 64 x 192 tile of D (96 accumulators a thread, registers `4 j + 2 h + e` for `j < 24`;
    /// B 16 x 192: three 64-column panels MN-major, or 192 rows K-major).
    m64n192k16_bf16,
    "m64n192k16",
    96,
    "bf16",
    |bits| f32::from_bits((bits as u32) << 16)
);
mma_k16!(
    /// `wgmma.mma_async.sync.aligned.m64n192k16.f32.f16.f16`, as [`m64n192k16_bf16`].
    m64n192k16_f16,
    "m64n192k16",
    96,
    "f16",
    |bits| half::f16::from_bits(bits).to_f32()
);
mma_k16!(
    /// `wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16`: as [`m64n256k16_bf16`] on a
    /// 64 x 128 tile of D (64 accumulators a thread, registers `4 j + 2 h + e` for `j < 16`;
    /// B 16 x 128: two 64-column panels MN-major, or 128 rows K-major).
    m64n128k16_bf16,
    "m64n128k16",
    64,
    "bf16",
    |bits| f32::from_bits((bits as u32) << 16)
);
mma_k16!(
    /// `wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16`: as [`m64n256k16_bf16`] on a
    /// 64 x 64 tile of D (32 accumulators a thread, registers `4 j + 2 h + e` for `j < 8`;
    /// B 16 x 64: one 64-column panel MN-major, or 64 rows K-major).
    m64n64k16_bf16,
    "m64n64k16",
    32,
    "bf16",
    |bits| f32::from_bits((bits as u32) << 16)
);
mma_k16!(
    /// `wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16`, as [`m64n64k16_bf16`].
    m64n64k16_f16,
    "m64n64k16",
    32,
    "f16",
    |bits| half::f16::from_bits(bits).to_f32()
);
mma_k16!(
    /// `wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16`, as [`m64n128k16_bf16`].
    m64n128k16_f16,
    "m64n128k16",
    64,
    "f16",
    |bits| half::f16::from_bits(bits).to_f32()
);

mma_k16!(
    /// `wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16`: as [`m64n256k16_bf16`] on a
    /// 64 x 32 tile of D (16 accumulators a thread, registers `4 j + 2 h + e` for `j < 4`;
    /// B 16 x 32: 32 rows K-major). With the operands turned over (D = C^T), C's rows are
    /// its 32 columns: the decode kernels' shape.
    m64n32k16_bf16,
    "m64n32k16",
    16,
    "bf16",
    |bits| f32::from_bits((bits as u32) << 16)
);
mma_k16!(
    /// `wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16`, as [`m64n32k16_bf16`].
    m64n32k16_f16,
    "m64n32k16",
    16,
    "f16",
    |bits| half::f16::from_bits(bits).to_f32()
);
mma_k16!(
    /// `wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16`: as [`m64n32k16_bf16`] on a
    /// 64 x 16 tile of D (8 accumulators a thread, registers `4 j + 2 h + e` for `j < 2`).
    m64n16k16_bf16,
    "m64n16k16",
    8,
    "bf16",
    |bits| f32::from_bits((bits as u32) << 16)
);
mma_k16!(
    /// `wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16`, as [`m64n16k16_bf16`].
    m64n16k16_f16,
    "m64n16k16",
    8,
    "f16",
    |bits| half::f16::from_bits(bits).to_f32()
);

/// `wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32`, D += A B for a 64 x 256 x 8 tile
/// of TF32 operands (32-bit elements of which the instruction reads the sign, exponent and
/// upper 10 mantissa bits), both K-major: one 32-byte K slice of 128-byte rows, as
/// `m64n256k16`'s K-major operands. The host reads the same 19 bits (the low 13 dropped).
///
/// # Safety
/// As [`m64n256k16_bf16`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn m64n256k8_tf32(acc: &mut [f32; 128], a: Descriptor, b: Descriptor) {
    #[cfg(target_arch = "nvptx64")]
    {
        let (a, b) = (a.0, b.0);
        // SAFETY: reads A and B through the descriptors and writes only `acc`'s registers;
        // the caller's contract makes the operands valid and stable and the call
        // warpgroup-wide.
        unsafe {
            with_accumulators!(
                128,
                mma_tf32_asm!("m64n256k8", acc, "{a}" [a = in(reg64) a,], b, 1u32)
            )
        }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    emulate(acc, ASource::Shared(a, false), (b, false), Operand::Tf32)
}

/// [`m64n256k8_tf32`] with A from registers: this thread's fragment of the warpgroup's
/// 64 x 8 A, as `mma.sync`'s m16n8k8 TF32 A in each warp (warp `w` rows `16 w ..`; with
/// g = lane / 4, t = lane % 4: `a[0]` row g, column t; `a[1]` row g + 8; `a[2]` and `a[3]`
/// the same rows, column t + 4), TF32 bit patterns; B from shared memory, K-major.
///
/// # Safety
/// As [`m64n256k16_bf16`] for B and the accumulators; every thread of the warpgroup calls
/// it with the same descriptor.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn m64n256k8_tf32_rs(acc: &mut [f32; 128], a: [u32; 4], b: Descriptor) {
    #[cfg(target_arch = "nvptx64")]
    {
        let b = b.0;
        // SAFETY: reads B through its descriptor, A from registers, and writes only
        // `acc`'s; the caller's contract makes B valid and stable and the call
        // warpgroup-wide.
        unsafe {
            with_accumulators!(
                128,
                mma_tf32_asm!(
                    "m64n256k8",
                    acc,
                    "{{{a0}, {a1}, {a2}, {a3}}}" [
                        a0 = in(reg32) a[0],
                        a1 = in(reg32) a[1],
                        a2 = in(reg32) a[2],
                        a3 = in(reg32) a[3],
                    ],
                    b,
                    1u32
                )
            )
        }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    emulate(acc, ASource::Registers(a), (b, false), Operand::Tf32)
}

/// `wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32`: as [`m64n256k8_tf32`] on a
/// 64 x 128 tile of D (64 accumulators a thread, registers `4 j + 2 h + e` for `j < 16`),
/// and D = A B where `accumulate` is false (the instruction's `scale-d` predicate: the
/// accumulators' old values are not read).
///
/// # Safety
/// As [`m64n256k16_bf16`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn m64n128k8_tf32(acc: &mut [f32; 64], a: Descriptor, b: Descriptor, accumulate: bool) {
    #[cfg(target_arch = "nvptx64")]
    {
        let (a, b, scale_d) = (a.0, b.0, accumulate as u32);
        // SAFETY: reads A and B through the descriptors and writes only `acc`'s registers;
        // the caller's contract makes the operands valid and stable and the call
        // warpgroup-wide.
        unsafe {
            with_accumulators!(
                64,
                mma_tf32_asm!("m64n128k8", acc, "{a}" [a = in(reg64) a,], b, scale_d)
            )
        }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        if !accumulate {
            acc.fill(0.0);
        }
        emulate(acc, ASource::Shared(a, false), (b, false), Operand::Tf32)
    }
}

/// The element types the host's `wgmma` reads: 16-bit ones (K = 16 per instruction), widened
/// by the function, or TF32 in 32-bit words (K = 8).
#[cfg(not(target_arch = "nvptx64"))]
#[derive(Clone, Copy)]
enum Operand {
    Bits16(fn(u16) -> f32),
    Tf32,
}

#[cfg(not(target_arch = "nvptx64"))]
impl Operand {
    const fn bytes(self) -> usize {
        match self {
            Operand::Bits16(_) => 2,
            Operand::Tf32 => 4,
        }
    }
}

/// Where element `(mn, k)` of an operand lies in shared memory (a byte offset of the block's
/// shared region), as its descriptor says; `mn_major` is the transpose immediate.
#[cfg(not(target_arch = "nvptx64"))]
pub fn element_address(d: Descriptor, mn: u32, k: u32, mn_major: bool) -> usize {
    element_address_of(d, (mn, k), mn_major, 2)
}

/// [`element_address`] for elements of `bytes` (2, or 4 for TF32, K-major only).
#[cfg(not(target_arch = "nvptx64"))]
pub fn element_address_of(
    d: Descriptor,
    (mn, k): (u32, u32),
    mn_major: bool,
    bytes: usize,
) -> usize {
    let field = |shift: u32| (((d.0 >> shift) & 0x3FFF) << 4) as usize;
    let (start, lbo, sbo) = (field(0), field(16), field(32));
    let base_offset = (d.0 >> 49) & 7;
    assert!(
        base_offset == 0,
        "wgmma descriptor {:#x}: a matrix base offset ({base_offset}) is not emulated",
        d.0
    );
    let width: usize = match d.0 >> 62 {
        1 => 128,
        2 => 64,
        3 => 32,
        _ => panic!(
            "wgmma descriptor {:#x}: the unswizzled (interleaved) layout is not emulated",
            d.0
        ),
    };
    let (mn, k) = (mn as usize, k as usize);
    assert!(
        !mn_major || bytes == 2,
        "wgmma descriptor {:#x}: MN-major operands are 16-bit only",
        d.0
    );
    let plain = if mn_major {
        let per_row = width / 2;
        start + (mn / per_row) * lbo + (k / 8) * sbo + (k % 8) * width + (mn % per_row) * 2
    } else {
        start + (mn / 8) * sbo + (mn % 8) * width + k * bytes
    };
    plain ^ (((plain >> 7) & (width / 16 - 1)) << 4)
}

/// Where a host `wgmma` takes A from: shared memory through a descriptor (MN-major where
/// the flag says), or this thread's four registers of a TF32 A fragment
/// ([`m64n256k8_tf32_rs`]).
#[cfg(not(target_arch = "nvptx64"))]
#[derive(Clone, Copy)]
enum ASource {
    Shared(Descriptor, bool),
    Registers([u32; 4]),
}

/// The host's `wgmma` (see the module documentation).
#[cfg(not(target_arch = "nvptx64"))]
#[track_caller]
fn emulate(acc: &mut [f32], a: ASource, (b, b_mn): (Descriptor, bool), operand: Operand) {
    use super::host::{check_async_reads, current, lane_id, warp_exchange, warpgroup_meet};
    let words = |d: Descriptor| [d.0 as u32, (d.0 >> 32) as u32];
    let [b0, b1] = words(b);
    // Each lane hands in B's descriptor and A's (or its A fragment); the descriptors must
    // agree across the warp.
    let (mine, shared) = match a {
        ASource::Shared(d, _) => {
            let [a0, a1] = words(d);
            ([b0, b1, a0, a1, 0, 0, 0, 0, 0, 0, 0, 0], 4)
        }
        ASource::Registers(f) => ([b0, b1, f[0], f[1], f[2], f[3], 0, 0, 0, 0, 0, 0], 2),
    };
    let all = warp_exchange(mine);
    if let Some(other) = all.iter().position(|w| w[..shared] != mine[..shared]) {
        panic!(
            "wgmma: lane {} and lane {other} of a warp hand in different descriptors",
            lane_id()
        );
    }
    warpgroup_meet();
    // Every chunk it reads must be ready for this thread: no TMA copy into it pending or
    // delivered in a phase this thread has not waited for. (K-major: each MN row's two
    // 16-byte chunks; MN-major: each K row's 128-byte rows, which the swizzle permutes
    // within.)
    let (bytes, depth) = (operand.bytes(), 32 / operand.bytes() as u32);
    let address = |d: Descriptor, mn: u32, k: u32, mn_major: bool| {
        element_address_of(d, (mn, k), mn_major, bytes)
    };
    let check = |d: Descriptor, mn_major: bool, rows: u32| {
        if mn_major {
            check_async_reads((0..16).flat_map(|k| {
                (0..rows)
                    .step_by(64)
                    .map(move |mn| ((element_address(d, mn, k, true) & !127) as u32, 128))
            }));
        } else {
            check_async_reads((0..rows).flat_map(|mn| {
                [0, depth / 2].map(|k| ((address(d, mn, k, false) & !15) as u32, 16))
            }));
        }
    };
    if let ASource::Shared(d, mn_major) = a {
        check(d, mn_major, 64);
    }
    // (A thread holds half a row of D: B has twice as many MN rows as it has registers.)
    check(b, b_mn, 2 * acc.len() as u32);
    let me = current();
    let value = |word: u32| -> f32 {
        match operand {
            Operand::Bits16(widen) => widen(word as u16),
            // (The instruction reads the top 19 bits.)
            Operand::Tf32 => f32::from_bits(word & !0x1FFF),
        }
    };
    let read = |at: usize| -> f32 {
        assert!(
            at + bytes <= me.shared_len,
            "wgmma operand out of bounds: byte {at} of a {}-byte shared region",
            me.shared_len
        );
        // SAFETY: inside the block's shared region (checked above), which lives as long as
        // the block.
        value(unsafe {
            match operand {
                Operand::Bits16(_) => me.shared.add(at).cast::<u16>().read_unaligned() as u32,
                Operand::Tf32 => me.shared.add(at).cast::<u32>().read_unaligned(),
            }
        })
    };
    let linear = me.thread_idx[0]
        + me.block_dim[0] * (me.thread_idx[1] + me.block_dim[1] * me.thread_idx[2]);
    let warp = (linear / 32) % 4;
    let (g, t) = (lane_id() / 4, lane_id() % 4);
    // Element (row, k) of A, `row` this warp's (`16 warp + g + 8 h`): from shared memory, or
    // from the fragment of lane `4 g + k % 4` (registers: `h` + 2 (k / 4), as `mma.sync`'s
    // m16n8k8 TF32 A).
    let a_at = |row: u32, k: u32| -> f32 {
        match a {
            ASource::Shared(d, mn_major) => read(address(d, row, k, mn_major)),
            ASource::Registers(_) => {
                let (gr, h) = ((row % 16) % 8, (row % 16) / 8);
                let lane = (4 * gr + k % 4) as usize;
                value(all[lane][2 + (h + 2 * (k / 4)) as usize])
            }
        }
    };
    // Accumulator `r` is row `16 warp + g + 8 h` and column `8 j + 2 t + e` of D (`j = r /
    // 4`, `h = (r / 2) % 2`, `e = r % 2`): this thread's two rows of A and its columns of B
    // (`2 j + e`), each element read once, then summed in K order.
    fn sums<const K: usize>(
        acc: &mut [f32],
        a_at: impl Fn(u32, u32) -> f32,
        b_at: impl Fn(u32, u32) -> f32,
        (row, col): (u32, u32),
    ) {
        let rows: [[f32; K]; 2] =
            core::array::from_fn(|h| core::array::from_fn(|k| a_at(row + 8 * h as u32, k as u32)));
        let cols: [[f32; K]; 64] = core::array::from_fn(|c| {
            let (j, e) = (c as u32 / 2, c as u32 % 2);
            match 2 * c < acc.len() {
                true => core::array::from_fn(|k| b_at(col + 8 * j + e, k as u32)),
                false => [0.0; K],
            }
        });
        super::host_sums::fused_sums(acc, &rows, &cols[..acc.len().div_ceil(2)]);
    }
    let b_at = |col: u32, k: u32| read(address(b, col, k, b_mn));
    let corner = (16 * warp + g, 2 * t);
    match depth {
        16 => sums::<16>(acc, a_at, b_at, corner),
        8 => sums::<8>(acc, a_at, b_at, corner),
        _ => unreachable!("wgmma reads K = 16 of 16-bit operands or 8 of TF32"),
    }
}

instructions! {
    /// `setmaxnreg.dec.sync.aligned.u32 N`: this warpgroup gives registers back to the
    /// block's pool, down to `N` per thread (a multiple of 8 from 24 to 256), for a warpgroup
    /// that issues copies and needs few. Every thread of the warpgroup calls it. No-op on the
    /// host.
    fn release_registers<const N>() = "setmaxnreg.dec.sync.aligned.u32 {N};";
    /// `setmaxnreg.inc.sync.aligned.u32 N`: this warpgroup takes registers from the pool, up
    /// to `N` per thread, waiting until others have released them. As [`release_registers`].
    fn claim_registers<const N>() = "setmaxnreg.inc.sync.aligned.u32 {N};";
}
