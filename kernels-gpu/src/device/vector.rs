//! Four consecutive elements moved as one access: 16 bytes for f32 (PTX `ld.v4.f32`), two
//! 16-byte halves for f64, 8 bytes for 16-bit types. The element index must be a multiple of
//! 4 and the buffer aligned to four elements (the kernels check this before taking a
//! vector path).

/// Packed groups of `$n` elements: the trait `$pack` of the types that have one, and
/// `$read` and `$write` of a group at a pointer as one access.
macro_rules! packs {
    ($(
        $(#[$doc:meta])*
        $pack:ident: $n:literal $what:literal, $read:ident, $write:ident;
    )*) => {$(
        $(#[$doc])*
        pub trait $pack: Copy {
            type Packed: Copy;
            fn unpack(p: Self::Packed) -> [Self; $n];
            fn pack(v: [Self; $n]) -> Self::Packed;
        }

        #[doc = concat!("Reads ", $n, " elements at `ptr` as one packed ", $what, ".")]
        ///
        /// # Safety
        #[doc = concat!(
            "`ptr` points to ", $n, " readable elements (aligned to the ", $what, " on the GPU)."
        )]
        #[inline(always)]
        pub(crate) unsafe fn $read<T: $pack>(ptr: *const T) -> [T; $n] {
            // SAFETY: the caller's readable elements (aligned on the GPU) are one
            // `T::Packed`, a `repr(C)` array of them (`pack!`).
            T::unpack(unsafe { read_packed(ptr.cast::<T::Packed>()) })
        }

        #[doc = concat!("Writes ", $n, " elements at `ptr` as one packed ", $what, ".")]
        ///
        /// # Safety
        #[doc = concat!(
            "`ptr` points to ", $n, " writable elements (aligned to the ", $what, " on the GPU)."
        )]
        #[inline(always)]
        pub(crate) unsafe fn $write<T: $pack>(ptr: *mut T, v: [T; $n]) {
            // SAFETY: the caller's writable elements (aligned on the GPU) are one
            // `T::Packed`, a `repr(C)` array of them (`pack!`).
            unsafe { write_packed(ptr.cast::<T::Packed>(), T::pack(v)) }
        }
    )*};
}

packs! {
    /// An element type with a packed, four-element-aligned group of itself.
    Pack4: 4 "group", read4, write4;
    /// An output type with a packed, two-element-aligned pair of itself (4 bytes for 16-bit
    /// types, 8 for f32, 16 for f64).
    Pack2: 2 "pair", read2, write2;
}

/// `$pack` (`Pack4` or `Pack2`: groups of `$n`) for each `$t`, packed as `$packed<$t>` (the
/// element types' own files use it for theirs, so this file names no element type).
macro_rules! pack {
    ($pack:ident, $n:literal, $packed:ident => $($t:ty),+) => {$(
        impl $crate::device::vector::$pack for $t {
            type Packed = $crate::device::vector::$packed<$t>;
            #[inline(always)]
            fn unpack(p: Self::Packed) -> [Self; $n] {
                p.0
            }
            #[inline(always)]
            fn pack(v: [Self; $n]) -> Self::Packed {
                $crate::device::vector::$packed(v)
            }
        }
    )+};
}
pub(crate) use pack;

/// Packed groups: `$n` elements aligned to `$align` bytes.
macro_rules! groups {
    ($($name:ident: $n:literal, $align:literal, $what:literal;)*) => {$(
        #[doc = concat!($n, " elements aligned to ", $align, " bytes (", $what, ").")]
        #[derive(Clone, Copy)]
        #[repr(C, align($align))]
        pub struct $name<T>(pub [T; $n]);
    )*};
}

groups! {
    Aligned8: 4, 8, "16-bit types";
    Aligned16: 4, 16, "f32";
    Aligned32: 4, 32, "f64";
    Pair4: 2, 4, "16-bit types";
    Pair8: 2, 8, "f32";
    Pair16: 2, 16, "f64";
}
pack!(Pack4, 4, Aligned16 => f32);
pack!(Pack4, 4, Aligned32 => f64);
pack!(Pack2, 2, Pair8 => f32);
pack!(Pack2, 2, Pair16 => f64);

/// Reads a packed value: aligned on the GPU; on the host, where buffers are only
/// element-aligned, unaligned.
///
/// # Safety
/// `ptr` points to a readable `P` (aligned on the GPU).
#[inline(always)]
pub(crate) unsafe fn read_packed<P: Copy>(ptr: *const P) -> P {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: the caller's contract: `ptr` is a readable `P`, aligned on the GPU.
    return unsafe { ptr.read() };
    #[cfg(not(target_arch = "nvptx64"))]
    // SAFETY: the caller's contract: `ptr` is a readable `P`; an unaligned read needs no
    // more.
    return unsafe { ptr.read_unaligned() };
}

/// Writes a packed value (see [`read_packed`]).
///
/// # Safety
/// `ptr` points to a writable `P` (aligned on the GPU).
#[inline(always)]
unsafe fn write_packed<P: Copy>(ptr: *mut P, v: P) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: the caller's contract: `ptr` is a writable `P`, aligned on the GPU.
    unsafe {
        ptr.write(v)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    // SAFETY: the caller's contract: `ptr` is a writable `P`; an unaligned write needs no
    // more.
    unsafe {
        ptr.write_unaligned(v)
    }
}

/// Whether `ptr` is aligned for packed groups of `T` (on the host any address will do).
#[inline(always)]
pub fn aligned4<T: Pack4>(ptr: *const T) -> bool {
    #[cfg(target_arch = "nvptx64")]
    return ptr as usize % align_of::<T::Packed>() == 0;
    #[cfg(not(target_arch = "nvptx64"))]
    return !ptr.is_null();
}

/// Whether `ptr` is 16-byte aligned, as `cp.async` of 16 bytes needs (on the host any
/// address will do).
#[inline(always)]
pub fn aligned16<T>(ptr: *const T) -> bool {
    #[cfg(target_arch = "nvptx64")]
    return (ptr as usize).is_multiple_of(16);
    #[cfg(not(target_arch = "nvptx64"))]
    return !ptr.is_null();
}

/// Whether the rows of a row-major matrix at `ptr` (`cols` elements each, `ld` apart) copy
/// as whole 16-byte chunks: both multiples of the chunk, and the start [`aligned16`].
#[inline(always)]
pub fn rows_in_chunks<T>(ptr: *const T, cols: u32, ld: u32) -> bool {
    let chunk = (16 / size_of::<T>()) as u32;
    cols.is_multiple_of(chunk) && ld.is_multiple_of(chunk) && aligned16(ptr)
}
