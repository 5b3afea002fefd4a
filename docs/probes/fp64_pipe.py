"""PTX probes of the FP64 pipe (H200 findings in docs/worklog/simt.md, "The f64 SIMT ceiling").

Writes fp64_pipe.ptx: mainloops of one thread tile with nothing else in them (no global
loads, no barriers), to find what the FP64 pipe sustains as the loop's operands change.
Each entry takes (a, b, c, m, n, k) like the library's kernels; run it with 256 threads per
block, one block per SM (ask for 100 KiB of dynamic shared memory), grid 4 x the SM count
(entries for two blocks per SM: no dynamic shared memory, grid 8 x the SM count), k = K
steps (a multiple of 16); FLOPs = 2 * threads * TM * TN * k. probe.rs (beside this
file) is the runner used: a cudarc main that loads a PTX file, launches one entry and prints
the median time of CUDA-event-timed runs.

The B values held constant come from global loads at one address for all lanes, so ptxas
may keep them in uniform registers (it did for l8_0: DFMA R, R, UR, R). Not a library
kernel: a measuring tool, kept so the numbers can be reproduced.
"""
def kernel(name, TM=8, TN=8, la=8, lb=8, steps=16, dbA=True, dbB=True, order="rows",
           blocks_per_sm=1):
    """A TM x TN thread tile's mainloop and nothing else: per K step, la of A's TM values
    and lb of B's TN values come from shared memory (the others stay as loaded at the start),
    each fragment double-buffered or not; the DFMAs row by row ("rows") or with odd rows
    right to left ("snake"). blocks_per_sm > 1 asks ptxas for registers that let that many
    256-thread blocks share an SM (run it with no dynamic shared memory)."""
    L=[]; e=L.append
    e(f".visible .entry {name}(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u32 pm, .param .u32 pn, .param .u32 pk)")
    if blocks_per_sm > 1:
        e(f".maxntid 256, 1, 1\n.minnctapersm {blocks_per_sm}")
    e("{")
    e(f"  .reg .pred %p<4>; .reg .b32 %r<48>; .reg .b64 %rd<16>; .reg .f64 %acc<{TM*TN}>; .reg .f64 %fa<{2*TM}>; .reg .f64 %fb<{2*TN}>;")
    e("  .shared .align 16 .b8 smem[40960];")
    e("  ld.param.u64 %rd1, [pa]; ld.param.u64 %rd2, [pc]; ld.param.u32 %r1, [pk];")
    e("  mov.u32 %r2, %tid.x; mov.u32 %r3, %ctaid.x; mov.u32 %r4, %ntid.x; mad.lo.u32 %r5, %r3, %r4, %r2;")
    e("  cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2;")
    for i in range(2*TM): e(f"  ld.global.f64 %fa{i}, [%rd1+{8*(i%16)}];")
    for i in range(2*TN): e(f"  ld.global.f64 %fb{i}, [%rd1+{8*(i%16)+128}];")
    for i in range(TM*TN): e(f"  mov.f64 %acc{i}, 0d0000000000000000;")
    e("  mov.u32 %r6, smem; shl.b32 %r7, %r2, 7; and.b32 %r7, %r7, 32767; add.u32 %r8, %r6, %r7;")
    for i in range(8): e(f"  st.shared.v2.f64 [%r8+{16*i}], {{%fa0, %fa1}};")
    e("  bar.sync 0;")
    e("  and.b32 %r9, %r2, 31; shr.u32 %r10, %r9, 1; and.b32 %r10, %r10, 1; shr.u32 %r11, %r9, 4; and.b32 %r11, %r11, 1; shl.b32 %r11, %r11, 1; or.b32 %r12, %r10, %r11;")
    e("  and.b32 %r13, %r9, 1; shr.u32 %r14, %r9, 2; and.b32 %r14, %r14, 3; shl.b32 %r14, %r14, 1; or.b32 %r15, %r13, %r14;")
    e("  shr.u32 %r16, %r2, 5; and.b32 %r17, %r16, 1; shl.b32 %r17, %r17, 3; add.u32 %r15, %r15, %r17; shr.u32 %r18, %r16, 1; shl.b32 %r18, %r18, 2; add.u32 %r12, %r12, %r18;")
    e("  shl.b32 %r19, %r12, 4; add.u32 %r20, %r6, %r19;")
    e("  shl.b32 %r21, %r15, 4; add.u32 %r22, %r6, %r21; add.u32 %r22, %r22, 17408;")
    e("  mov.u32 %r23, 0;")
    e("LOOP:")
    for s in range(steps):
        cur=s%2
        ao = TM*cur if dbA else 0; an = TM*(1-cur) if dbA else 0
        bo = TN*cur if dbB else 0; bn = TN*(1-cur) if dbB else 0
        kk=(s+1)%steps
        # loads for next step (double-buffered) or this step (single: issued here, used below)
        for q in range(la//2):
            e(f"  ld.shared.v2.f64 {{%fa{an+2*q}, %fa{an+2*q+1}}}, [%r20+{kk*1088 + q*256}];")
        for q in range(lb//2):
            e(f"  ld.shared.v2.f64 {{%fb{bn+2*q}, %fb{bn+2*q+1}}}, [%r22+{kk*1408 + q*256}];")
        for i in range(TM):
            for jj in range(TN):
                j = TN-1-jj if (order=="snake" and i%2==1) else jj
                e(f"  fma.rn.f64 %acc{TN*i+j}, %fa{ao+i}, %fb{bo+j}, %acc{TN*i+j};")
    e(f"  add.u32 %r23, %r23, {steps};")
    e("  setp.lt.u32 %p1, %r23, %r1;")
    e("  @%p1 bra LOOP;")
    for i in range(1,TM*TN): e(f"  add.f64 %acc0, %acc0, %acc{i};")
    e("  mul.wide.u32 %rd3, %r5, 8; add.u64 %rd4, %rd2, %rd3; st.global.f64 [%rd4], %acc0;")
    e("  ret;"); e("}")
    return "\n".join(L)

hdr = ".version 8.0\n.target sm_80\n.address_size 64\n"
ENTRIES = [
    kernel("l8_8"), kernel("l8_6", lb=6), kernel("l8_4", lb=4), kernel("l8_2", lb=2),
    kernel("l8_0", lb=0), kernel("snake8", order="snake"),
    kernel("w10a", TN=10, lb=10, dbB=False),
    kernel("w12s", TN=12, lb=12, dbA=False, dbB=False),
    kernel("snake12", TN=12, lb=12, dbA=False, dbB=False, order="snake"),
    kernel("snake4x8", TM=4, la=4, order="snake"),
    kernel("snake4x8_2", TM=4, la=4, order="snake", blocks_per_sm=2),
]
if __name__ == "__main__":
    with open("fp64_pipe.ptx", "w") as f:
        f.write(hdr + "\n".join(ENTRIES))
