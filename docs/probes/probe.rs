// Runner for the PTX probes (docs/probes/fp64_pipe.py): a cudarc binary (cudarc 0.19, features
// driver + nvrtc + dynamic-loading). probe PTXFILE ENTRY GRIDX GRIDY BLOCK SHARED M N K REPS
// launches ENTRY(a, b, c, m, n, k) and prints the median of REPS CUDA-event-timed runs after 3
// warm-ups, and 2 m n k / time.
use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use cudarc::driver::sys::{CUevent_flags, CUfunction_attribute_enum as FuncAttr};
use cudarc::nvrtc::Ptx;
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let ptx = std::fs::read_to_string(&a[1]).unwrap();
    let name = &a[2];
    let p = |i: usize| a[i].parse::<u32>().unwrap();
    let (gx, gy, block, shared, m, n, k, reps) = (p(3), p(4), p(5), p(6), p(7), p(8), p(9), p(10) as usize);
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let module = ctx.load_module(Ptx::from_src(ptx)).unwrap();
    let f = module.load_function(name).unwrap();
    if shared > 48 * 1024 {
        f.set_attribute(FuncAttr::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared as i32).unwrap();
    }
    let elems = |r: u32, c: u32| (r as usize * c as usize).max(1);
    let da = stream.memcpy_stod(&vec![1.0f64; elems(m, k)]).unwrap();
    let db = stream.memcpy_stod(&vec![1.0f64; elems(k, n)]).unwrap();
    let mut dc = stream.alloc_zeros::<f64>(elems(m, n)).unwrap();
    let cfg = LaunchConfig { grid_dim: (gx, gy, 1), block_dim: (block, 1, 1), shared_mem_bytes: shared };
    let mut run = || {
        let mut l = stream.launch_builder(&f);
        l.arg(&da).arg(&db).arg(&mut dc).arg(&m).arg(&n).arg(&k);
        // SAFETY: the arguments are the probe kernel's (a, b, c, m, n, k) in its order, the
        // buffers hold m x k, k x n and m x n elements, and the grid covers C.
        unsafe { l.launch(cfg) }.unwrap();
    };
    for _ in 0..3 { run(); }
    stream.synchronize().unwrap();
    let mut t = vec![];
    for _ in 0..reps {
        let s = ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).unwrap();
        let e = ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).unwrap();
        s.record(&stream).unwrap();
        run();
        e.record(&stream).unwrap();
        e.synchronize().unwrap();
        t.push(s.elapsed_ms(&e).unwrap() as f64);
    }
    t.sort_by(f64::total_cmp);
    let ms = t[t.len() / 2];
    let flops = 2.0 * m as f64 * n as f64 * k as f64;
    let c = stream.memcpy_dtov(&dc).unwrap();
    println!("{name} {} grid {gx}x{gy} block {block} shared {shared} mnk {m} {n} {k}: {ms:.3} ms {:.2} TFLOP/s c[0]={}", a[1], flops / ms / 1e9, c[0]);
}
