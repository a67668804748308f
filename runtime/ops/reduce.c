/* reduce.c - tocl_reduce_run, the reduction op of eager mode: check the
 * operands, let fused eager's recorded ops that compute an input join the
 * prologue when their kernel is built, then launch (launch/reduce.c). */
#include <stdio.h>

#include "fusion/defer.h"
#include "codegen/ir_internal.h"
#include "launch/reduce_launch.h"

tocl_status tocl_reduce_run(int dev, int stream, const tocl_reduce_desc *d, int n_out, const tocl_tensor *outs,
                            int n_in, const tocl_tensor *ins, const tocl_scalar *scalars) {
    const tocl_ir_graph *g = NULL;
    TOCL_TRY(tocl_reduce_check(dev, d, n_out, outs, n_in, ins, scalars, &g));
    if (tocl_ops_numel(&outs[0]) == 0)
        return TOCL_OK;
    tocl_dtype od[2] = {outs[0].dtype, n_out > 1 ? outs[1].dtype : TOCL_I64};
    static _Thread_local tocl_red_space sp;
    static _Thread_local tocl_defer_prologue fp;
    int fused = 0;
    if (d->fuse_producer && tocl_defer_active() &&
        tocl_defer_reduce_begin(dev, stream, n_out, outs, n_in, ins, g, scalars, &fp)) {
        /* The iteration space comes from the inputs; a prologue over none
         * (a recorded fill: torch.ones(n).sum()) iterates over the tensor
         * the fill would have written, whose strides the kernel ignores. */
        if (fp.n_in > 0)
            tocl_reduce_collapse(&sp, d, n_out, outs, fp.n_in, fp.ins);
        else
            tocl_reduce_collapse(&sp, d, n_out, outs, 1, ins);
        fused = sp.kr <= TOCL_MAX_DIMS && sp.rr <= TOCL_MAX_DIMS &&
                (!tocl_ir_uses_f64(&fp.g) || tocl_dev_props(dev)->has_fp64);
        tocl_status ks = TOCL_OK;
        if (fused)
            ks = tocl_reduce_kernel_ready(dev, d, &fp.g, n_out, od, sp.kr, sp.rr, tocl_defer_sync_build(), &fused);
        TOCL_TRY(tocl_defer_reduce_end(fused && ks == TOCL_OK));
        if (fused && ks == TOCL_OK) {
            tocl_defer_count_reduction();
            tocl_red_resolved pre = {fp.n_pre, fp.bufs, fp.offs};
            return tocl_reduce_launch(dev, stream, d, &fp.g, n_out, outs, fp.n_in, fp.ins, fp.sc, &sp, &pre, 1);
        }
        if (ks != TOCL_OK) {
            /* Strict builds: the fused kernel did not build. Run the
             * reduction as without the switch, then report it. */
            static _Thread_local char msg[8192];
            snprintf(msg, sizeof msg, "%s", tocl_last_error());
            tocl_reduce_collapse(&sp, d, n_out, outs, n_in, ins);
            TOCL_TRY(tocl_reduce_launch(dev, stream, d, g, n_out, outs, n_in, ins, scalars, &sp, NULL, 0));
            return tocl_fail(ks, "%s", msg);
        }
    }
    tocl_reduce_collapse(&sp, d, n_out, outs, n_in, ins);
    return tocl_reduce_launch(dev, stream, d, g, n_out, outs, n_in, ins, scalars, &sp, NULL, 0);
}
