/* elementwise.c - tocl_ew_run, the elementwise op of eager mode: check and
 * resolve the operands (so errors surface at the op in both eager modes),
 * then hand the launch to fused eager, which records it, or launch it now
 * (launch/elementwise.c). tocl_ew_run_now always launches at once: compiled
 * segments are already merged graphs, and recording them would only add
 * host time. */
#include "fusion/defer.h"
#include "launch/launch.h"

#define MAX_OPERANDS TOCL_EW_MAX_OPERANDS

static tocl_status ew_run(int dev, int stream, const tocl_ir_graph *g, const tocl_tensor *outputs,
                          const tocl_tensor *inputs, const tocl_scalar *scalars, int may_defer) {
    TOCL_TRY(tocl_ew_check(dev, g, outputs, inputs, scalars));
    if (tocl_ops_numel(&outputs[0]) == 0)
        return TOCL_OK;
    const tocl_tensor *ops[MAX_OPERANDS];
    int nops = g->n_outputs + g->n_inputs;
    for (int k = 0; k < nops; k++)
        ops[k] = k < g->n_outputs ? &outputs[k] : &inputs[k - g->n_outputs];
    cl_mem bufs[MAX_OPERANDS];
    cl_long offs[MAX_OPERANDS];
    int in_dev[MAX_OPERANDS], other_dev = 0;
    for (int k = 0; k < nops; k++) {
        int is_out = k < g->n_outputs, mdev = dev;
        TOCL_TRY(tocl_ops_resolve(dev, ops[k], is_out ? "output" : "input", is_out ? k : k - g->n_outputs, &bufs[k],
                         &offs[k], &mdev));
        if (mdev != dev && is_out)
            return tocl_fail(TOCL_E_INVALID, "output %d lives on device %d, not on device %d that runs the op", k,
                             mdev, dev);
        in_dev[k] = mdev;
        other_dev |= mdev != dev;
    }
    /* Fused eager records the launch. Reads from another device take the
     * strict path below, which orders them across the two queues. */
    if (may_defer && !other_dev && tocl_defer_active()) {
        int recorded = 0;
        TOCL_TRY(tocl_defer_record(dev, stream, g, ops, bufs, offs, scalars, &recorded));
        if (recorded)
            return TOCL_OK;
    }
    /* An input from another device of the context is read directly, after
     * the work its device has queued (a device-side wait). */
    for (int k = g->n_outputs; k < nops; k++)
        if (in_dev[k] != dev)
            TOCL_TRY(tocl_stream_wait_stream(dev, stream, in_dev[k], tocl_stream_current(in_dev[k])));
    /* Taking the queue runs deferred work of this stream first. */
    cl_command_queue q;
    TOCL_TRY(tocl_queue_get(dev, stream, &q));
    TOCL_TRY(tocl_ew_launch(dev, stream, g, ops, bufs, offs, scalars, TOCL_EW_BUILD, NULL));
    /* Inputs read from another device: that device's later writes (or the
     * reuse of a freed block) must wait until this kernel has read them. */
    for (int k = g->n_outputs; k < nops; k++)
        if (in_dev[k] != dev)
            TOCL_TRY(tocl_stream_wait_stream(in_dev[k], tocl_stream_current(in_dev[k]), dev, stream));
    return TOCL_OK;
}

tocl_status tocl_ew_run(int dev, int stream, const tocl_ir_graph *g, const tocl_tensor *outputs,
                        const tocl_tensor *inputs, const tocl_scalar *scalars) {
    return ew_run(dev, stream, g, outputs, inputs, scalars, 1);
}

tocl_status tocl_ew_run_now(int dev, int stream, const tocl_ir_graph *g, const tocl_tensor *outputs,
                            const tocl_tensor *inputs, const tocl_scalar *scalars) {
    return ew_run(dev, stream, g, outputs, inputs, scalars, 0);
}
