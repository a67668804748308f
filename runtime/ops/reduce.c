/* reduce.c - tocl_reduce_run, the reduction op of eager mode: check the
 * operands, let fused eager's recorded ops that compute an input join the
 * prologue when their kernel is built, then launch (launch/reduce.c). */
#include <stdio.h>

#include "fusion/defer.h"
#include "codegen/ir_internal.h"
#include "launch/reduce_launch.h"

/* Fused eager, a reduction that may take in the recorded ops computing an
 * input. The fused reduction is queued under fused eager's lock (defer.h),
 * inside which the allocator's lock is never taken: so the operands are
 * resolved first. *done = 0 when some operand lives on another device (the
 * caller launches as without fusion). */
static tocl_status run_fusing(int dev, int stream, const tocl_reduce_desc *d, const tocl_ir_graph *g, int n_out,
                              const tocl_tensor *outs, int n_in, const tocl_tensor *ins, const tocl_scalar *scalars,
                              int *done) {
    static _Thread_local tocl_red_space sp;
    static _Thread_local tocl_defer_prologue fp;
    cl_mem bufs[TOCL_RED_MAX_OPS], fbufs[TOCL_RED_MAX_OPS];
    cl_long offs[TOCL_RED_MAX_OPS], foffs[TOCL_RED_MAX_OPS];
    *done = 0;
    for (int k = 0; k < n_out + n_in; k++) {
        int is_out = k < n_out, mdev = dev;
        const tocl_tensor *t = is_out ? &outs[k] : &ins[k - n_out];
        bufs[k] = NULL;
        offs[k] = 0;
        if (!is_out && tocl_ops_numel(t) == 0)
            continue; /* nothing is read (the launch uses the output's buffer) */
        TOCL_TRY(tocl_ops_resolve(dev, t, is_out ? "output" : "input", is_out ? k : k - n_out, &bufs[k], &offs[k],
                                  &mdev));
        if (mdev != dev)
            return TOCL_OK;
    }
    *done = 1;
    tocl_red_resolved res = {bufs, offs};
    tocl_status ks = TOCL_OK;
    if (tocl_defer_reduce_begin(dev, stream, n_out, outs, n_in, ins, g, scalars, &fp)) {
        /* The iteration space comes from the inputs; a prologue over none
         * (a recorded fill: torch.ones(n).sum()) iterates over the tensor
         * the fill would have written, whose strides the kernel ignores. */
        if (fp.n_in > 0)
            tocl_reduce_collapse(&sp, d, n_out, outs, fp.n_in, fp.ins);
        else
            tocl_reduce_collapse(&sp, d, n_out, outs, 1, ins);
        int fused = sp.kr <= TOCL_MAX_DIMS && sp.rr <= TOCL_MAX_DIMS &&
                    (!tocl_ir_uses_f64(&fp.g) || tocl_dev_props(dev)->has_fp64);
        tocl_dtype od[2] = {outs[0].dtype, n_out > 1 ? outs[1].dtype : TOCL_I64};
        if (fused)
            ks = tocl_reduce_kernel_ready(dev, d, &fp.g, n_out, od, &sp, tocl_defer_sync_build(), &fused);
        int commit = fused && ks == TOCL_OK;
        tocl_status s = tocl_defer_reduce_end(commit);
        if (commit) {
            /* Still locked: queued before any other thread's work on the
             * stream (defer.h). Operands: the outputs, the group's inputs,
             * then the reduction's inputs other than the one they compute. */
            if (s == TOCL_OK) {
                int nf = 0;
                for (int k = 0; k < n_out; k++, nf++) {
                    fbufs[nf] = bufs[k];
                    foffs[nf] = offs[k];
                }
                for (int k = 0; k < fp.n_pre; k++, nf++) {
                    fbufs[nf] = fp.bufs[k];
                    foffs[nf] = fp.offs[k];
                }
                for (int a = 0; a < n_in; a++)
                    if (a != fp.input) {
                        fbufs[nf] = bufs[n_out + a];
                        foffs[nf++] = offs[n_out + a];
                    }
                tocl_red_resolved fres = {fbufs, foffs};
                tocl_defer_count_reduction();
                s = tocl_reduce_launch(dev, stream, d, &fp.g, n_out, outs, fp.n_in, fp.ins, fp.sc, &sp, &fres, 1);
            }
            tocl_defer_reduce_release();
            return s;
        }
    }
    /* Strict builds: a fused kernel that did not build is reported after
     * the reduction ran as without the switch. */
    static _Thread_local char msg[8192];
    if (ks != TOCL_OK)
        snprintf(msg, sizeof msg, "%s", tocl_last_error());
    tocl_reduce_collapse(&sp, d, n_out, outs, n_in, ins);
    TOCL_TRY(tocl_reduce_launch(dev, stream, d, g, n_out, outs, n_in, ins, scalars, &sp, &res, 0));
    return ks == TOCL_OK ? TOCL_OK : tocl_fail(ks, "%s", msg);
}

tocl_status tocl_reduce_run(int dev, int stream, const tocl_reduce_desc *d, int n_out, const tocl_tensor *outs,
                            int n_in, const tocl_tensor *ins, const tocl_scalar *scalars) {
    const tocl_ir_graph *g = NULL;
    TOCL_TRY(tocl_reduce_check(dev, d, n_out, outs, n_in, ins, scalars, &g));
    if (tocl_ops_numel(&outs[0]) == 0)
        return TOCL_OK;
    if (d->fuse_producer && tocl_defer_active()) {
        int done = 0;
        tocl_status s = run_fusing(dev, stream, d, g, n_out, outs, n_in, ins, scalars, &done);
        if (done || s != TOCL_OK)
            return s;
    }
    static _Thread_local tocl_red_space sp;
    tocl_reduce_collapse(&sp, d, n_out, outs, n_in, ins);
    return tocl_reduce_launch(dev, stream, d, g, n_out, outs, n_in, ins, scalars, &sp, NULL, 0);
}
