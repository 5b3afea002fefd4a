//! The GEMM kernels on the CPU executor: the same kernel bodies, the same launch rules
//! ([`Kernel::launch_config`]) as on the GPU.
use super::executor::{CpuExecutor, CpuLaunch};
use crate::element::Element;
use crate::error::Result;
use crate::kernels::{FixedTile, Kernel, stream_k_ctas, stream_k_fixup_config, stream_k_workspace};
use crate::matrix::Matrix;
use crate::props::DeviceProps;
use crate::reference::check_product_shape;
use rgemm_kernels::async_copy::async_copy;
use rgemm_kernels::coarse::coarse;
use rgemm_kernels::device::host::GlobalRegion;
use rgemm_kernels::double_buffered::double_buffered;
use rgemm_kernels::element::Element as DeviceElement;
use rgemm_kernels::fragment_buffered::{fragment_buffered, fragment_buffered_k16};
use rgemm_kernels::paired_lanes::paired_lanes;
use rgemm_kernels::register_tiled::register_tiled;
use rgemm_kernels::stream_k::{stream_k, stream_k_fixup};
use rgemm_kernels::thin::thin;
use rgemm_kernels::vectorized::vectorized;
use rgemm_kernels::warp_tiled::{warp_tiled, warp_tiled_64, warp_tiled_k16};
use rgemm_kernels::{naive::naive, tiled::tiled, tiled::tiled_dyn};

/// A GEMM kernel body for device element `D`: `(a, b, c, m, n, k, tile)`.
type GemmBody<D> =
    unsafe fn(*const D, *const D, *mut <D as DeviceElement>::Acc, u32, u32, u32, u32);

/// The kernel body of `kernel`; `None` for `stream_k`, which takes a workspace and runs
/// as two launches ([`CpuExecutor::stream_k`]).
fn body<D: DeviceElement>(kernel: Kernel) -> Option<GemmBody<D>> {
    Some(match kernel {
        Kernel::Naive => |a, b, c, m, n, k, _| unsafe { naive::<D>(a, b, c, m, n, k) },
        Kernel::Tiled(FixedTile::W8) => {
            |a, b, c, m, n, k, _| unsafe { tiled::<D, 8>(a, b, c, m, n, k) }
        }
        Kernel::Tiled(FixedTile::W16) => {
            |a, b, c, m, n, k, _| unsafe { tiled::<D, 16>(a, b, c, m, n, k) }
        }
        Kernel::Tiled(FixedTile::W32) => {
            |a, b, c, m, n, k, _| unsafe { tiled::<D, 32>(a, b, c, m, n, k) }
        }
        Kernel::TiledDynamic(_) => {
            |a, b, c, m, n, k, t| unsafe { tiled_dyn::<D>(a, b, c, m, n, k, t) }
        }
        Kernel::Coarse => |a, b, c, m, n, k, _| unsafe { coarse::<D>(a, b, c, m, n, k) },
        Kernel::RegisterTiled => {
            |a, b, c, m, n, k, _| unsafe { register_tiled::<D>(a, b, c, m, n, k) }
        }
        Kernel::Vectorized => |a, b, c, m, n, k, _| unsafe { vectorized::<D>(a, b, c, m, n, k) },
        Kernel::DoubleBuffered => {
            |a, b, c, m, n, k, _| unsafe { double_buffered::<D>(a, b, c, m, n, k) }
        }
        Kernel::WarpTiled => |a, b, c, m, n, k, _| unsafe { warp_tiled::<D>(a, b, c, m, n, k) },
        Kernel::WarpTiledK16 => {
            |a, b, c, m, n, k, _| unsafe { warp_tiled_k16::<D>(a, b, c, m, n, k) }
        }
        Kernel::WarpTiled64 => {
            |a, b, c, m, n, k, _| unsafe { warp_tiled_64::<D>(a, b, c, m, n, k) }
        }
        Kernel::AsyncCopy => |a, b, c, m, n, k, _| unsafe { async_copy::<D>(a, b, c, m, n, k) },
        Kernel::PairedLanes => |a, b, c, m, n, k, _| unsafe { paired_lanes::<D>(a, b, c, m, n, k) },
        Kernel::Thin => |a, b, c, m, n, k, _| unsafe { thin::<D>(a, b, c, m, n, k) },
        Kernel::FragmentBuffered => {
            |a, b, c, m, n, k, _| unsafe { fragment_buffered::<D>(a, b, c, m, n, k) }
        }
        Kernel::FragmentBufferedK16 => {
            |a, b, c, m, n, k, _| unsafe { fragment_buffered_k16::<D>(a, b, c, m, n, k) }
        }
        Kernel::StreamK => return None,
    })
}

/// `stream_k_fixup` for device element `D`'s accumulator.
///
/// # Safety
/// As `stream_k_fixup`.
unsafe fn fixup_body<D: DeviceElement>(
    partials: *const D::Acc,
    c: *mut D::Acc,
    mnk: (u32, u32, u32),
    ctas: u32,
) {
    unsafe { stream_k_fixup::<D::Acc>(partials, c, mnk, ctas) }
}

/// Raw pointers a kernel closure shares across the executor's OS threads; the kernels'
/// indexing keeps threads' writes to distinct elements.
#[derive(Clone, Copy)]
struct Shared<T>(T);
// SAFETY: see above; reads are of buffers nobody writes during the launch.
unsafe impl<T> Sync for Shared<T> {}
unsafe impl<T> Send for Shared<T> {}

impl<T: Copy> Shared<T> {
    /// Through a method, so closures capture the whole wrapper, not its field.
    fn get(&self) -> T {
        self.0
    }
}

fn region<T>(data: &[T]) -> GlobalRegion {
    GlobalRegion {
        addr: data.as_ptr() as usize,
        bytes: std::mem::size_of_val(data),
    }
}

impl CpuExecutor {
    /// The launch limits the CPU executor applies: those of a Hopper GPU (1024 threads and
    /// up to 227 KiB of shared memory per block).
    pub fn props(&self) -> DeviceProps {
        DeviceProps {
            name: format!("CPU executor ({} worker threads)", self.workers()),
            // Every kernel's host version runs here, those of sm_80 included.
            compute_capability: (9, 0),
            multiprocessors: self.workers() as u32,
            warp_size: 32,
            max_threads_per_block: 1024,
            max_block_dim: (1024, 1024, 64),
            max_grid_dim: (i32::MAX as u32, 65535, 65535),
            max_threads_per_multiprocessor: 2048,
            max_blocks_per_multiprocessor: 32,
            shared_bytes_per_block: 48 * 1024,
            shared_bytes_per_block_optin: 227 * 1024,
            shared_bytes_per_multiprocessor: 228 * 1024,
            reserved_shared_bytes_per_block: 0,
            registers_per_block: 65536,
            registers_per_multiprocessor: 65536,
            clock_khz: 0,
            memory_clock_khz: 0,
            memory_bus_width_bits: 0,
        }
    }

    /// `A * B` with the 16 x 16 tiled kernel (the CPU has no occupancy to weigh).
    pub fn matmul<T: Element>(&self, a: &Matrix<T>, b: &Matrix<T>) -> Result<Matrix<T::Out>> {
        self.matmul_with(a, b, Kernel::Tiled(FixedTile::W16))
    }

    /// `A * B` with `kernel`, run on the CPU exactly as it would be launched on the GPU.
    /// Shapes and zero-sized dimensions as [`Context::matmul`](crate::Context::matmul).
    pub fn matmul_with<T: Element>(
        &self,
        a: &Matrix<T>,
        b: &Matrix<T>,
        kernel: Kernel,
    ) -> Result<Matrix<T::Out>> {
        let (m, n, k) = check_product_shape(a, b)?;
        let cfg = kernel.launch_config::<T>(&self.props(), m, n, k)?;
        let Some(f) = body::<T::Device>(kernel) else {
            return self.stream_k(a, b, cfg);
        };
        let mut out = Matrix::<T::Out>::zeros(m, n)?.into_vec();
        let globals = [region(a.as_slice()), region(b.as_slice()), region(&out)];
        let name = kernel.entry_name::<T>();
        let launch = CpuLaunch::of(&name, &cfg, &globals);
        let ptrs = Shared((
            a.as_slice().as_ptr().cast::<T::Device>(),
            b.as_slice().as_ptr().cast::<T::Device>(),
            out.as_mut_ptr().cast::<<T::Device as DeviceElement>::Acc>(),
        ));
        let (mu, nu, ku, tile) = (m as u32, n as u32, k as u32, kernel.tile().unwrap_or(0));
        self.launch(&launch, &move || {
            let (pa, pb, pc) = ptrs.get();
            // SAFETY: the buffers hold m*k, k*n and m*n elements of layout-identical types
            // (T::Device is T's device twin); the launch follows `kernel`'s launch rules.
            unsafe { f(pa, pb, pc, mu, nu, ku, tile) }
        })?;
        Matrix::from_vec(m, n, out)
    }

    /// `stream_k` as on the GPU: the main launch (grid `cfg`), then, where a tile is shared,
    /// the fix-up launch that adds its parts.
    fn stream_k<T: Element>(
        &self,
        a: &Matrix<T>,
        b: &Matrix<T>,
        cfg: cudarc::driver::LaunchConfig,
    ) -> Result<Matrix<T::Out>> {
        let (m, n, k) = (a.rows(), b.cols(), a.cols());
        let props = self.props();
        let fixup = stream_k_fixup_config::<T>(&props, (m, n, k));
        let slots = if fixup.is_some() {
            stream_k_workspace::<T>(&props)
        } else {
            1
        };
        let mut out = Matrix::<T::Out>::zeros(m, n)?.into_vec();
        let mut partials = Matrix::<T::Out>::zeros(1, slots)?.into_vec();
        let globals = [
            region(a.as_slice()),
            region(b.as_slice()),
            region(&out),
            region(&partials),
        ];
        type Acc<T> = <<T as Element>::Device as DeviceElement>::Acc;
        let ptrs = Shared((
            a.as_slice().as_ptr().cast::<T::Device>(),
            b.as_slice().as_ptr().cast::<T::Device>(),
            out.as_mut_ptr().cast::<Acc<T>>(),
            partials.as_mut_ptr().cast::<Acc<T>>(),
        ));
        let (mu, nu, ku) = (m as u32, n as u32, k as u32);
        let ctas = stream_k_ctas::<T>(&props);
        let name = Kernel::StreamK.entry_name::<T>();
        let launch = CpuLaunch::of(&name, &cfg, &globals);
        self.launch(&launch, &move || {
            let (pa, pb, pc, pp) = ptrs.get();
            // SAFETY: as `matmul_with`, and `partials` holds the workspace of this grid.
            unsafe { stream_k::<T::Device>(pa, pb, pc, (mu, nu, ku), (pp, ctas)) }
        })?;
        if let Some((name, cfg, ctas)) = fixup {
            let launch = CpuLaunch::of(&name, &cfg, &globals);
            self.launch(&launch, &move || {
                let (_, _, pc, pp) = ptrs.get();
                // SAFETY: the main launch above wrote the parts; C holds m*n elements.
                unsafe { fixup_body::<T::Device>(pp.cast_const(), pc, (mu, nu, ku), ctas) }
            })?;
        }
        Matrix::from_vec(m, n, out)
    }
}
