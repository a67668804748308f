/* copy_fill.c - tocl_op_copy and tocl_op_fill: raw memory operations when
 * the layout allows, otherwise a one-node elementwise graph. */
#include <string.h>

#include "fusion/defer.h"
#include "launch/launch.h"

static tocl_status same_shape(const tocl_tensor *dst, const tocl_tensor *src) {
    if (dst->ndim != src->ndim)
        return tocl_fail(TOCL_E_INVALID, "copy: source has %d dims but destination has %d; expand the source to "
                         "the destination's shape (stride 0) first", src->ndim, dst->ndim);
    for (int d = 0; d < dst->ndim; d++)
        if (dst->sizes[d] != src->sizes[d])
            return tocl_fail(TOCL_E_INVALID, "copy: source size %lld differs from destination size %lld in dim %d",
                             (long long)src->sizes[d], (long long)dst->sizes[d], d);
    return TOCL_OK;
}

/* Dense in row-major order with no broadcast dimension: then element i of
 * the logical order is element i in memory, for both tensors alike. */
static int dense(const tocl_tensor *t) {
    for (int d = 0; d < t->ndim; d++)
        if (t->strides[d] == 0 && t->sizes[d] > 1)
            return 0;
    return tocl_ops_is_contiguous(t);
}

/* A load and store through the elementwise kernel keeps every bit (float16
 * and bfloat16 would canonicalise NaN payloads, bool would normalise). */
static int bits_survive_kernel(tocl_dtype t) { return t != TOCL_F16 && t != TOCL_BF16 && t != TOCL_BOOL; }

/* Converting, strided or kernel copies: INPUT -> CAST -> OUTPUT (the
 * builder adds the cast only when the compute dtypes differ). tocl_ew_run
 * reads a source on another device of the context after synchronising that
 * device. */
static tocl_status copy_kernel(int dev, int stream, const tocl_tensor *dst, const tocl_tensor *src) {
    tocl_ir_graph graph, *g = &graph; /* about 3 KB */
    tocl_ir_init(g);
    tocl_ir_output(g, tocl_ir_input(g, src->dtype), dst->dtype);
    tocl_status s = tocl_ew_run(dev, stream, g, dst, src, NULL);
    if (s != TOCL_OK)
        tocl_error_context("copying %s to %s on device %d", tocl_dtype_name(src->dtype), tocl_dtype_name(dst->dtype),
                           dev);
    return s;
}

tocl_status tocl_op_copy(int dev, int stream, const tocl_tensor *dst, const tocl_tensor *src) {
    TOCL_TRY(tocl_device_check(dev));
    TOCL_TRY(tocl_ops_check_tensor(dst, "copy destination"));
    TOCL_TRY(tocl_ops_check_tensor(src, "copy source"));
    TOCL_TRY(same_shape(dst, src));
    int64_t numel = tocl_ops_numel(dst);
    if (numel == 0)
        return TOCL_OK;
    if (dst->dtype == src->dtype && dense(dst) && dense(src)) {
        if (dst->data == src->data)
            return TOCL_OK; /* x.copy_(x) */
        /* Within one device, CPU drivers copy faster through the elementwise
         * kernel (PoCL: clEnqueueCopyBuffer 13.7 GB/s against 28 GB/s for a
         * kernel, 64 MiB); fused eager records it like any elementwise op. */
        if (tocl_mem_device_of(src->data) == dev && bits_survive_kernel(dst->dtype) &&
            (tocl_defer_active() || tocl_dev_props(dev)->kind == TOCL_DEVICE_CPU))
            return copy_kernel(dev, stream, dst, src);
        /* tocl_copy_d2d synchronises the source device when it differs. */
        return tocl_copy_d2d(dev, stream, dst->data, src->data, (size_t)numel * tocl_dtype_size(dst->dtype));
    }
    return copy_kernel(dev, stream, dst, src);
}

tocl_status tocl_op_fill(int dev, int stream, const tocl_tensor *dst, tocl_scalar value) {
    TOCL_TRY(tocl_device_check(dev));
    TOCL_TRY(tocl_ops_check_tensor(dst, "fill destination"));
    int64_t numel = tocl_ops_numel(dst);
    if (numel == 0)
        return TOCL_OK;
    if (dense(dst) && !(tocl_defer_active() && bits_survive_kernel(dst->dtype))) {
        /* clEnqueueFillBuffer with the value's bit pattern in dst's dtype
         * (rounded to nearest even for float16/bfloat16). */
        unsigned char bits[8];
        tocl_ops_scalar_bits(value, dst->dtype, bits);
        size_t es = tocl_dtype_size(dst->dtype);
        return tocl_mem_fill(dev, stream, dst->data, bits, es, (size_t)numel * es);
    }
    /* Strided (or recorded by fused eager): the scalar passes in dst's compute dtype, so the host does
     * the one conversion and the kernel only rounds to storage. */
    tocl_ir_graph graph, *g = &graph; /* about 3 KB */
    tocl_ir_init(g);
    tocl_ir_output(g, tocl_ir_scalar(g, tocl_dtype_compute(dst->dtype)), dst->dtype);
    tocl_status s = tocl_ew_run(dev, stream, g, dst, NULL, &value);
    if (s != TOCL_OK)
        tocl_error_context("filling a strided %s tensor on device %d", tocl_dtype_name(dst->dtype), dev);
    return s;
}
