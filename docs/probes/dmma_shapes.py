"""PTX probe of the FP64 tensor cores' `mma.sync` shapes (2026-11-26, H200; docs/worklog/f64.md, `dmma_k4`).

Writes dmma_shapes.ptx: entries dmma_k4, dmma_k8, dmma_k16, each a loop of 16 independent
`mma.sync.aligned.m16n8k{4,8,16}.row.col.f64` per warp on register operands (no loads, no
barriers), to compare what the FP64 tensor pipe sustains for each shape. Run each with
probe.rs (beside this file):

    probe dmma_shapes.ptx dmma_k4 264 1 128 0 184 184 20000 10

(grid 264 x 1, 128 threads, no dynamic shared memory; the runner's m n only size C, one f64
per thread; k is the loop's trip count). FLOPs = warps * trips * 16 * 2 * 16 * 8 * K, with
warps = 264 * 128 / 32. H200: 66.7 (k4), 66.8 (k8), 66.9 (k16) TFLOP/s, also with 132 x 256
and 528 x 128 threads. Not a library kernel: a measuring tool, kept so the numbers can be
reproduced.
"""


def entry(name, k, chains=16):
    na, nb = {4: (2, 1), 8: (4, 2), 16: (8, 4)}[k]
    out = [
        f".visible .entry {name}(.param .u64 pa, .param .u64 pb, .param .u64 pc, "
        ".param .u32 pm, .param .u32 pn, .param .u32 pk)",
        "{",
        f" .reg .pred %p; .reg .b32 %r<8>; .reg .b64 %rd<4>; .reg .f64 %d<{4 * chains}>;"
        " .reg .f64 %a<8>; .reg .f64 %b<4>;",
        " ld.param.u64 %rd1,[pa]; ld.param.u64 %rd2,[pc]; ld.param.u32 %r1,[pk];",
        " cvta.to.global.u64 %rd1,%rd1; cvta.to.global.u64 %rd2,%rd2;",
    ]
    out += [f" ld.global.f64 %a{i},[%rd1+{8 * i}];" for i in range(8)]
    out += [f" ld.global.f64 %b{i},[%rd1+{64 + 8 * i}];" for i in range(4)]
    out += [f" mov.f64 %d{i}, 0d0000000000000000;" for i in range(4 * chains)]
    out += [" mov.u32 %r2, 0;", "LOOP:"]
    a = ",".join(f"%a{i}" for i in range(na))
    b = ",".join(f"%b{i}" for i in range(nb))
    for j in range(chains):
        d = ",".join(f"%d{4 * j + i}" for i in range(4))
        out.append(f" mma.sync.aligned.m16n8k{k}.row.col.f64.f64.f64.f64 {{{d}}}, {{{a}}}, {{{b}}}, {{{d}}};")
    out.append(" add.u32 %r2,%r2,1; setp.lt.u32 %p,%r2,%r1; @%p bra LOOP;")
    out += [f" add.f64 %d0,%d0,%d{i};" for i in range(1, 4 * chains)]
    out.append(
        " mov.u32 %r3,%tid.x; mov.u32 %r4,%ctaid.x; mov.u32 %r6,%ntid.x;"
        " mad.lo.u32 %r5,%r4,%r6,%r3; mul.wide.u32 %rd3,%r5,8; add.s64 %rd3,%rd2,%rd3;"
        " st.global.f64 [%rd3],%d0;"
    )
    out.append("}")
    return "\n".join(out)


if __name__ == "__main__":
    text = ".version 8.0\n.target sm_90a\n.address_size 64\n"
    text += "\n".join(entry(f"dmma_k{k}", k) for k in (4, 8, 16)) + "\n"
    with open("dmma_shapes.ptx", "w") as f:
        f.write(text)
