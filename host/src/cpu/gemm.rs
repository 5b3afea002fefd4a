//! The GEMM kernels on the CPU executor: the same kernel bodies, the same launch rules
//! ([`Kernel::launches`]) as on the GPU.
use super::executor::{CpuExecutor, CpuLaunch};
use crate::element::{Element, Output};
use crate::error::{Error, Result};
use crate::kernels::{Kernel, Launches};
use crate::matrix::Matrix;
use crate::normalize::{Indexed, Normalized};
use crate::props::DeviceProps;
use crate::reference::{check_output_shape, check_product_shape};
use crate::view::{Batch, MatrixView, MatrixViewMut};
use rgemm_kernels::device::host::GlobalRegion;
use rgemm_kernels::host_bodies::HostBodies;
use rgemm_kernels::problem::Gemm;

/// Raw pointers a kernel closure shares across the executor's OS threads; the kernels'
/// indexing keeps threads' writes to distinct elements.
#[derive(Clone, Copy)]
struct Shared<T>(T);
// SAFETY: only `Gemm`'s raw pointers and plain-data problem are wrapped; a launch's threads
// write disjoint elements of C and the workspace (counters by atomics) and only read A and B.
unsafe impl<T> Sync for Shared<T> {}
// SAFETY: as for `Sync`: the pointers are to buffers that outlive the launch's threads.
unsafe impl<T> Send for Shared<T> {}

impl<T: Copy> Shared<T> {
    /// Through a method, so closures capture the whole wrapper, not its field.
    fn get(&self) -> T {
        self.0
    }
}

/// The kernels' view of the buffers `(a, b, c, workspace)` as element type `D` sees them.
fn gemm_of<D: rgemm_kernels::element::Element, T, O>(
    (a, b, c, w): (*const T, *const T, *mut O, *mut u128),
    p: rgemm_kernels::problem::Problem,
) -> Shared<Gemm<D>> {
    let (a, b, c, workspace) = (a.cast(), b.cast(), c.cast(), w.cast());
    Shared(Gemm {
        a,
        b,
        c,
        workspace,
        p,
    })
}

fn region<T>(data: &[T]) -> GlobalRegion {
    GlobalRegion {
        addr: data.as_ptr() as usize,
        bytes: std::mem::size_of_val(data),
    }
}

impl CpuExecutor {
    /// The launch limits the CPU executor applies: the device given to
    /// [`CpuExecutor::emulating`], else those of a Hopper GPU (1024 threads and up to 227 KiB
    /// of shared memory per block) with one SM per worker thread.
    pub fn props(&self) -> DeviceProps {
        if let Some(props) = self.emulated() {
            return props.clone();
        }
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
        self.matmul_as(a, b)
    }

    /// [`CpuExecutor::matmul`] with C of type `O`, as
    /// [`Context::matmul_as`](crate::Context::matmul_as).
    pub fn matmul_as<O: Output<T>, T: Element>(
        &self,
        a: &Matrix<T>,
        b: &Matrix<T>,
    ) -> Result<Matrix<O>> {
        self.product(a, b, Kernel::Tiled16)
    }

    /// `A * B` with `kernel`, run on the CPU exactly as it would be launched on the GPU.
    /// Shapes and zero-sized dimensions as [`Context::matmul`](crate::Context::matmul).
    pub fn matmul_with<T: Element>(
        &self,
        a: &Matrix<T>,
        b: &Matrix<T>,
        kernel: Kernel,
    ) -> Result<Matrix<T::Out>> {
        self.product(a, b, kernel)
    }

    /// A new C of type `O` from `kernel`, the launch checked before C is allocated.
    fn product<T: Element, O: Output<T>>(
        &self,
        a: &Matrix<T>,
        b: &Matrix<T>,
        kernel: Kernel,
    ) -> Result<Matrix<O>> {
        let (m, n, _) = check_product_shape(a, b)?;
        kernel.launches::<T>(&self.props(), (m, n, a.cols()))?;
        let mut c = Matrix::<O>::zeros(m, n)?;
        self.matmul_into(a, b, &mut c, kernel)?;
        Ok(c)
    }

    /// `C = A * B` into an existing `C` with `kernel`, as
    /// [`Context::matmul_device`](crate::Context::matmul_device) does on the GPU: every
    /// element of C is written (whatever it held), and on error C is left untouched. C's
    /// type chooses the output type ([`Output`]): `f32`, or for 16-bit inputs their own.
    pub fn matmul_into<T: Element, O: Output<T>>(
        &self,
        a: &Matrix<T>,
        b: &Matrix<T>,
        c: &mut Matrix<O>,
        kernel: Kernel,
    ) -> Result<()> {
        let (m, n, k) = check_product_shape(a, b)?;
        check_output_shape(c.shape(), m, n)?;
        kernel.launches::<T>(&self.props(), (m, n, k))?;
        if m == 0 || n == 0 {
            return Ok(());
        }
        let ab = (a.as_slice(), b.as_slice());
        let operands = (ab.0.as_ptr() as u64, ab.1.as_ptr() as u64);
        let problem = rgemm_kernels::problem::Problem::row_major(m as u32, n as u32, k as u32);
        let (kernel, launches) = kernel.running::<T>(&self.props(), problem, operands)?;
        // Work on a copy, so a fault leaves C as it was.
        let mut out = c.as_slice().to_vec();
        self.run_launches::<T, O>(kernel, ab, (0, 0, 0), &mut out, &launches)?;
        *c = Matrix::from_vec(m, n, out)?;
        Ok(())
    }

    /// `C = alpha op(A) op(B) + beta C` over host views and a strided batch with `kernel`,
    /// launched as [`Context::gemm`](crate::Context::gemm) launches it on the GPU: the
    /// same checks, the same problem block, the same kernel body. On error C is untouched.
    pub fn gemm<T: Element, O: Output<T>>(
        &self,
        kernel: Kernel,
        (alpha, beta): (f64, f64),
        (a, b): (&MatrixView<T>, &MatrixView<T>),
        c: &mut MatrixViewMut<O>,
        batch: Batch,
    ) -> Result<()> {
        let layouts = (a.layout, b.layout, c.layout);
        let lens = (a.data.len(), b.data.len(), c.data.len());
        let norm = Normalized::new(layouts, lens, batch, (alpha, beta))?;
        norm.check_kernel(kernel, (std::mem::size_of::<T>(), std::mem::size_of::<O>()))?;
        let ab = norm.ordered(a.data, b.data);
        let at = |data: &[T], offset: usize| data.as_ptr().wrapping_add(offset) as u64;
        let operands = (at(ab.0, norm.offsets.0), at(ab.1, norm.offsets.1));
        let (kernel, launches) = kernel.running::<T>(&self.props(), norm.problem, operands)?;
        if norm.nothing {
            return Ok(());
        }
        let mut out = c.data.to_vec();
        self.run_launches::<T, O>(kernel, ab, norm.offsets, &mut out, &launches)?;
        c.data.copy_from_slice(&out);
        Ok(())
    }

    /// A batch of independent products over lists of host views with `kernel`, as
    /// [`Context::gemm_batched`](crate::Context::gemm_batched) launches it on the GPU: the
    /// same checks, the same table of offsets, one launch. On error every C is untouched.
    pub fn gemm_batched<T: Element, O: Output<T>>(
        &self,
        kernel: Kernel,
        (alpha, beta): (f64, f64),
        (a, b): (&[MatrixView<T>], &[MatrixView<T>]),
        c: &mut [MatrixViewMut<O>],
    ) -> Result<()> {
        let la: Vec<_> = a.iter().map(|v| (v.layout, v.data.len())).collect();
        let lb: Vec<_> = b.iter().map(|v| (v.layout, v.data.len())).collect();
        let lc: Vec<_> = c.iter().map(|v| (v.layout, v.data.len())).collect();
        let Some(indexed) = Indexed::new((&la, &lb, &lc), (alpha, beta))? else {
            return Ok(());
        };
        let norm = &indexed.norm;
        norm.check_kernel(kernel, (std::mem::size_of::<T>(), std::mem::size_of::<O>()))?;
        if norm.nothing {
            // (The launch's own errors first, as a product with work gets them.)
            return kernel
                .launches_for::<T>(&self.props(), norm.problem)
                .map(drop);
        }
        // Work on copies, so a fault leaves every C as it was.
        let mut outs: Vec<Vec<O>> = c.iter().map(|c| c.data.to_vec()).collect();
        let starts: Vec<_> = (a.iter().zip(b).zip(&mut outs))
            .map(|((a, b), out)| {
                let (a, b) = (a.data.as_ptr() as u64, b.data.as_ptr() as u64);
                (a, b, out.as_mut_ptr() as u64)
            })
            .collect();
        let (first, table) = indexed.table::<T, O>(&starts)?;
        let operands = (first.0, first.1);
        let (kernel, mut launches) = kernel.running::<T>(&self.props(), norm.problem, operands)?;
        let table = table.unwrap_or_default();
        launches.problem.batch_table = match table.is_empty() {
            true => 0,
            false => table.as_ptr() as u64,
        };
        let mut globals: Vec<_> = a.iter().chain(b).map(|v| region(v.data)).collect();
        globals.extend(outs.iter().map(|out| region(out)));
        globals.push(region(&table));
        let ptrs = (first.0 as *const T, first.1 as *const T, first.2 as *mut O);
        self.run_launches_at::<T, O>(kernel, ptrs, globals, &launches)?;
        for (c, out) in c.iter_mut().zip(&outs) {
            c.data.copy_from_slice(out);
        }
        Ok(())
    }

    /// Runs `launches` of `kernel` over A, B (the kernel's, from element `offsets.0` and
    /// `.1`) and `out` (C, from `offsets.2`), with a workspace of its own.
    fn run_launches<T: Element, O: Output<T>>(
        &self,
        kernel: Kernel,
        (a, b): (&[T], &[T]),
        offsets: (usize, usize, usize),
        out: &mut [O],
        launches: &Launches,
    ) -> Result<()> {
        let ptrs = (
            a.as_ptr().wrapping_add(offsets.0),
            b.as_ptr().wrapping_add(offsets.1),
            out.as_mut_ptr().wrapping_add(offsets.2),
        );
        let globals = vec![region(a), region(b), region(out)];
        self.run_launches_at::<T, O>(kernel, ptrs, globals, launches)
    }

    /// Runs `launches` of `kernel` on the kernel's A, B and C at `(a, b, c)`, whose
    /// accesses must fall in `globals` (the workspace is added), with a workspace of its
    /// own.
    fn run_launches_at<T: Element, O: Output<T>>(
        &self,
        kernel: Kernel,
        (a, b, c): (*const T, *const T, *mut O),
        mut globals: Vec<GlobalRegion>,
        launches: &Launches,
    ) -> Result<()> {
        let p = &launches.problem;
        // 16-byte aligned, as a device allocation is (tensor maps and packed operands).
        let bytes = launches.workspace.max(1) * std::mem::size_of::<T::Out>();
        let mut workspace = vec![0u128; bytes.div_ceil(16)];
        let base = workspace.as_mut_ptr() as u64;
        let caller = (a as u64, b as u64);
        let (ptrs, main_problem) = launches.main_operands(caller, base);
        if let Some(maps) = kernel.spec().tma {
            let size = std::mem::size_of::<T>();
            match crate::tma::emulated_maps(maps, ptrs, &main_problem, size) {
                // SAFETY: a TMA kernel's `launches.workspace` starts with `TensorMaps::BYTES`
                // (its maps), so the local `workspace` holds `maps.len()` bytes, apart from `maps`.
                Some(maps) => unsafe {
                    let to = workspace.as_mut_ptr().cast::<u8>();
                    std::ptr::copy_nonoverlapping(maps.as_ptr(), to, maps.len());
                },
                // Host memory need not be aligned as device buffers are: the kernel's
                // other path computes only the dense product (`runs_as` chose the other
                // kernel where there is no such path).
                None if !p.is_dense_unscaled()
                    || launches.pack.is_some()
                    || maps.otherwise.is_some() =>
                {
                    return Err(Error::UnsupportedForm {
                        kernel: kernel.to_string(),
                        reason: "its tensor maps need 16-byte aligned operands, and these host buffers are not".into(),
                    });
                }
                None => {}
            }
        }
        globals.push(region(&workspace));
        let at = workspace.as_mut_ptr();
        let gemm = gemm_of::<O::Device, _, _>((a, b, c, at), launches.problem);
        let name = kernel.entry_for::<T, O>();
        // (The kernel's element types were checked against its spec: a body exists.)
        let body = O::Device::body(kernel.id()).ok_or_else(|| Error::UnsupportedKernel {
            kernel: kernel.to_string(),
            device: "the CPU executor".into(),
            reason: format!("it has no body for {}", T::NAME),
        })?;
        // A pack runs the entry named as the main one's, on the operands as stored; a fix-up
        // the one named by C's type (`Output::Second`): C and the workspace are its own
        // types, A and B it reads as stored.
        let pack_config = launches.pack_config(a as u64);
        if let Some(config) = pack_config {
            let pack =
                O::Device::fixup_body(kernel.id()).ok_or_else(|| Error::UnsupportedKernel {
                    kernel: kernel.to_string(),
                    device: "the CPU executor".into(),
                    reason: format!("it has no pack body for {}", O::SUFFIX),
                })?;
            let name = kernel.fixup_entry_for::<T, O>().unwrap_or_default();
            // Its workspace starts where the packed operands' offsets count from.
            let pack_at = at
                .cast::<u8>()
                .wrapping_add(launches.pack_at())
                .cast::<u128>();
            let packs = gemm_of::<O::Device, _, _>((a, b, c, pack_at), launches.problem);
            self.launch(&CpuLaunch::of(&name, &config, &globals), &move || {
                // SAFETY: as below; the pack reads the caller's A and B and writes the
                // workspace from `pack_at`, which `launches` sized for it.
                unsafe { pack(packs.get().this_product()) }
            })?;
        }
        let second = gemm_of::<O::Second, _, _>((a, b, c, at), launches.problem);
        let second_body = O::Second::fixup_body(kernel.id());
        if launches.fixup.is_some() && second_body.is_none() {
            return Err(Error::UnsupportedKernel {
                kernel: kernel.to_string(),
                device: "the CPU executor".into(),
                reason: format!("it has no second-launch body for C of {}", O::SUFFIX),
            });
        }
        let main = Shared(Gemm::<O::Device> {
            a: ptrs.0 as *const _,
            b: ptrs.1 as *const _,
            p: main_problem,
            ..gemm.get()
        });
        self.launch(
            &CpuLaunch::of(&name, &launches.main, &globals).in_clusters(kernel.spec().cluster()),
            &move || {
                // SAFETY: the buffers hold what the problem reads and writes (checked by the
                // callers), of layout-identical types (O::Device is the device twin of T
                // with C in O), the workspace what `launches` asks for; the launch follows
                // `kernel`'s spec. The executor checks every access against `globals`.
                unsafe { body(main.get().this_product()) }
            },
        )?;
        if let (Some(cfg), Some(fixup)) = (launches.fixup, second_body) {
            let name = kernel.fixup_entry_for::<T, O>().unwrap_or_default();
            self.launch(&CpuLaunch::of(&name, &cfg, &globals), &move || {
                // SAFETY: as above; the main launch wrote the parts it adds.
                unsafe { fixup(second.get().this_product()) }
            })?;
        }
        Ok(())
    }
}
