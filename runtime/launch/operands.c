/* operands.c - checking tensors, resolving them to (buffer, element offset),
 * and converting host scalars to kernel arguments: shared by every launch. */
#include <math.h>
#include <string.h>

#include "launch/launch.h"

tocl_status tocl_ops_check_tensor(const tocl_tensor *t, const char *what) {
    if (!t)
        return tocl_fail(TOCL_E_INVALID, "%s tensor is NULL", what);
    if ((int)t->dtype < 0 || t->dtype >= TOCL_NUM_DTYPES)
        return tocl_fail(TOCL_E_INVALID, "%s tensor has invalid dtype %d", what, (int)t->dtype);
    if (t->ndim < 0 || t->ndim > TOCL_TENSOR_MAX_DIMS)
        return tocl_fail(TOCL_E_INVALID, "%s tensor has %d dims; expected 0..%d", what, t->ndim,
                         TOCL_TENSOR_MAX_DIMS);
    int empty = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (t->sizes[d] < 0)
            return tocl_fail(TOCL_E_INVALID, "%s tensor has negative size %lld in dim %d", what,
                             (long long)t->sizes[d], d);
        /* Negative strides never come from PyTorch, and would need the bytes
         * before an address for the bounds check. */
        if (t->strides[d] < 0)
            return tocl_fail(TOCL_E_INVALID, "%s tensor has negative stride %lld in dim %d", what,
                             (long long)t->strides[d], d);
        empty |= t->sizes[d] == 0;
    }
    if (!empty && t->data == 0)
        return tocl_fail(TOCL_E_INVALID, "%s tensor has %lld elements but a null data address", what,
                         (long long)tocl_ops_numel(t));
    return TOCL_OK;
}

/* Resolve an operand to (buffer, element offset), checking it lies inside a
 * live block of a device sharing dev's context. */
tocl_status tocl_ops_resolve(int dev, const tocl_tensor *t, const char *what, int k, cl_mem *buf, cl_long *elem_off,
                           int *mem_dev) {
    size_t es = tocl_dtype_size(t->dtype), off = 0;
    uint64_t last = 0; /* largest element offset touched */
    for (int d = 0; d < t->ndim; d++)
        last += (uint64_t)(t->sizes[d] - 1) * (uint64_t)t->strides[d];
    size_t after = tocl_mem_bytes_after(t->data);
    if (after < (last + 1) * es)
        return tocl_fail(TOCL_E_INVALID, "%s %d: address 0x%llx with %llu elements of %s reach past its allocation "
                         "(%zu bytes left in the block)", what, k, (unsigned long long)t->data,
                         (unsigned long long)last + 1, tocl_dtype_name(t->dtype), after);
    TOCL_TRY(tocl_mem_resolve(t->data, mem_dev, buf, &off));
    if (off % es)
        return tocl_fail(TOCL_E_INVALID, "%s %d: byte offset %zu in its buffer is not a multiple of the %s element "
                         "size %zu", what, k, off, tocl_dtype_name(t->dtype), es);
    if (*mem_dev != dev && tocl_dev_context(*mem_dev) != tocl_dev_context(dev))
        return tocl_fail(TOCL_E_UNSUPPORTED, "%s %d lives on device %d, which does not share an OpenCL context with "
                         "device %d; copy it first", what, k, *mem_dev, dev);
    *elem_off = (cl_long)(off / es);
    return TOCL_OK;
}

static uint16_t f32_to_f16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u)
        return sign | 0x7e00u; /* quiet NaN */
    if (ax >= 0x477ff000u)
        return sign | 0x7c00u; /* >= 65520 rounds to infinity */
    if (ax < 0x38800000u) {    /* below 2^-14: a subnormal half, m * 2^-24 */
        float a;
        memcpy(&a, &ax, 4);
        return sign | (uint16_t)rint((double)a * 16777216.0); /* rint rounds half to even */
    }
    ax += 0xfffu + ((ax >> 13) & 1u); /* round to nearest even at bit 13 */
    return sign | (uint16_t)((ax - 0x38000000u) >> 13);
}

static uint16_t f32_to_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return 0x7fc0u; /* as c10::BFloat16 */
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

/* double -> int64 as a C cast would, without the undefined behaviour for
 * NaN and out-of-range values (those saturate; NaN gives 0). */
static int64_t f64_to_i64(double d) {
    if (d != d)
        return 0;
    if (d >= 9223372036854775807.0)
        return INT64_MAX;
    if (d <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)d;
}

void tocl_ops_scalar_bits(tocl_scalar v, tocl_dtype t, void *dst) {
    union { double d; int64_t i; unsigned char b[8]; } u; /* the widest dtype, aligned */
    unsigned char *out = u.b; /* dst gets the dtype's size */
    double f = v.is_float ? v.f : (double)v.i;
    int64_t i = v.is_float ? f64_to_i64(v.f) : v.i;
    memset(out, 0, sizeof u);
    switch (t) {
    case TOCL_BOOL: *(uint8_t *)out = v.is_float ? v.f != 0 : v.i != 0; break;
    case TOCL_U8: *(uint8_t *)out = (uint8_t)i; break; /* wraps modulo 256, as PyTorch */
    case TOCL_I8: *(int8_t *)out = (int8_t)(uint8_t)i; break;
    case TOCL_I16: *(int16_t *)out = (int16_t)(uint16_t)i; break;
    case TOCL_I32: *(int32_t *)out = (int32_t)(uint32_t)i; break;
    case TOCL_I64: *(int64_t *)out = i; break;
    case TOCL_F16: *(uint16_t *)out = f32_to_f16((float)f); break;
    case TOCL_BF16: *(uint16_t *)out = f32_to_bf16((float)f); break;
    case TOCL_F32: *(float *)out = (float)f; break;
    case TOCL_F64: *(double *)out = f; break;
    default: break;
    }
    memcpy(dst, out, tocl_dtype_size(t));
}

tocl_status tocl_ops_scratch_get(int dev, int stream, int64_t n, size_t esz, tocl_ops_scratch *s) {
    memset(s, 0, sizeof *s);
    TOCL_TRY(tocl_mem_alloc(dev, (size_t)(n > 0 ? n : 1) * esz, &s->addr));
    tocl_status st = stream != tocl_stream_current(dev) ? tocl_mem_record_stream(s->addr, stream) : TOCL_OK;
    int mdev;
    size_t boff = 0;
    if (st == TOCL_OK)
        st = tocl_mem_resolve(s->addr, &mdev, &s->buf, &boff);
    s->off = (cl_long)(boff / esz);
    if (st != TOCL_OK) {
        tocl_mem_free(s->addr);
        memset(s, 0, sizeof *s);
    }
    return st;
}
