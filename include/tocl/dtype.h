/* dtype.h - element types the runtime understands, shared by ops and the IR. */
#ifndef TOCL_DTYPE_H
#define TOCL_DTYPE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Storage types. float16 and bfloat16 are storage formats: kernels load them
 * into float, compute in float and round back on store. */
typedef enum tocl_dtype {
    TOCL_BOOL = 0, /* stored as one byte, 0 or 1 */
    TOCL_U8,
    TOCL_I8,
    TOCL_I16,
    TOCL_I32,
    TOCL_I64,
    TOCL_F16,
    TOCL_BF16,
    TOCL_F32,
    TOCL_F64,
    TOCL_NUM_DTYPES
} tocl_dtype;

size_t tocl_dtype_size(tocl_dtype t);          /* bytes per element; 0 if invalid */
const char *tocl_dtype_name(tocl_dtype t);     /* "float32", "bfloat16", ... */
int tocl_dtype_is_float(tocl_dtype t);         /* F16, BF16, F32, F64 */
/* Type a value of t is computed in: float for F16/BF16, t itself otherwise. */
tocl_dtype tocl_dtype_compute(tocl_dtype t);

/* A host-side scalar argument: a double for floating kinds, an int64 for
 * integer and bool kinds (so int64 values never lose precision). */
typedef struct tocl_scalar {
    int is_float;
    double f;
    int64_t i;
} tocl_scalar;

#ifdef __cplusplus
}
#endif
#endif
