/* dtype.c - sizes and names of element types. */
#include "tocl/dtype.h"

static const struct {
    const char *name;
    size_t size;
    int is_float;
} dtype_table[TOCL_NUM_DTYPES] = {
    [TOCL_BOOL] = {"bool", 1, 0},    [TOCL_U8] = {"uint8", 1, 0},
    [TOCL_I8] = {"int8", 1, 0},      [TOCL_I16] = {"int16", 2, 0},
    [TOCL_I32] = {"int32", 4, 0},    [TOCL_I64] = {"int64", 8, 0},
    [TOCL_F16] = {"float16", 2, 1},  [TOCL_BF16] = {"bfloat16", 2, 1},
    [TOCL_F32] = {"float32", 4, 1},  [TOCL_F64] = {"float64", 8, 1},
};

static int valid(tocl_dtype t) { return (int)t >= 0 && t < TOCL_NUM_DTYPES; }

size_t tocl_dtype_size(tocl_dtype t) { return valid(t) ? dtype_table[t].size : 0; }
const char *tocl_dtype_name(tocl_dtype t) { return valid(t) ? dtype_table[t].name : "invalid"; }
int tocl_dtype_is_float(tocl_dtype t) { return valid(t) && dtype_table[t].is_float; }
tocl_dtype tocl_dtype_compute(tocl_dtype t) { return (t == TOCL_F16 || t == TOCL_BF16) ? TOCL_F32 : t; }
