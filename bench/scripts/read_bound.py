# The fastest read of a K x N bf16 matrix this GPU gives by CUDA events, one call at a
# time, as a floor for the decode products (H100 and H200, 2026-11-25: section 3 of
# docs/bench/2026-11-25-h100-h200-decode-tma-tail.txt): a Triton kernel that reads every
# element once (sums each program's block), 24 block shapes, medians of 50; with the
# matrix left in L2 between calls (as rgemm-bench times) and with L2 flushed (a 256 MB
# write before each call). torch's x @ B (cuBLAS) beside it.
# Run on the GPU machine: python3 bench/scripts/read_bound.py
import torch, triton, triton.language as tl

@triton.jit
def read_all(x, out, n, BLOCK: tl.constexpr, PER: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(PER):
        offs = (pid * PER + i) * BLOCK + tl.arange(0, BLOCK)
        acc += tl.load(x + offs, mask=offs < n, other=0.0).to(tl.float32)
    tl.store(out + pid, tl.sum(acc))

def med(f, flush, reps=50):
    for _ in range(5): f()
    ts = []
    for _ in range(reps):
        if flush is not None: flush.zero_()
        s, e = torch.cuda.Event(True), torch.cuda.Event(True)
        s.record(); f(); e.record(); e.synchronize()
        ts.append(s.elapsed_time(e) * 1e3)
    ts.sort(); return ts[len(ts) // 2]

dev = torch.cuda.get_device_name()
flushbuf = torch.empty(256 << 20, dtype=torch.uint8, device='cuda')
for K, N in [(4096, 4096), (8192, 8192), (8192, 28672)]:
    B = torch.randn(K, N, device='cuda').to(torch.bfloat16)
    n = B.numel(); nbytes = 2 * n
    out = torch.empty(1 << 20, device='cuda')
    for flush in (None, flushbuf):
        best = None
        for BLOCK in (1024, 2048, 4096):
            for PER in (1, 2, 4, 8):
                for w in (4, 8):
                    progs = triton.cdiv(n, BLOCK * PER)
                    f = lambda: read_all[(progs,)](B, out, n, BLOCK=BLOCK, PER=PER, num_warps=w)
                    t = med(f, flush)
                    if best is None or t < best[0]: best = (t, BLOCK, PER, w)
        t = best[0]
        row = f"{dev} read {K}x{N} bf16 ({nbytes/1e6:.0f} MB) L2 {'flushed' if flush is not None else 'kept  '}: {t:.1f} us = {nbytes/t/1e6:.2f} TB/s (BLOCK {best[1]} PER {best[2]} warps {best[3]})"
        for M in (1, 4, 16):
            x = torch.randn(M, K, device='cuda').to(torch.bfloat16)
            tm = med(lambda: x @ B, flush)
            row += f"; torch {M}x{N}x{K} {tm:.1f} us ({nbytes/tm/1e6:.2f})"
        print(row, flush=True)
