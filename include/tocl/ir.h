/* ir.h - the elementwise expression IR and its OpenCL C renderer.
 *
 * Every pointwise op is a small graph of nodes: leaves load a tensor operand
 * or take a scalar kernel argument; inner nodes apply an op from the op table
 * (runtime/codegen/ir_ops.c) to earlier nodes. Strict eager renders one op per
 * graph; fused eager and torch.compile append many ops to one graph before
 * rendering it. The renderer only produces text; it never calls OpenCL, so
 * it is tested without a device. Kernels are specialised on graph structure,
 * dtypes and iteration rank, never on sizes: sizes, strides and offsets are
 * kernel arguments. */
#ifndef TOCL_IR_H
#define TOCL_IR_H

#include <stddef.h>
#include <stdint.h>

#include "tocl/dtype.h"
#include "tocl/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TOCL_IR_MAX_NODES 128
#define TOCL_IR_MAX_INPUTS 16
#define TOCL_IR_MAX_SCALARS 64 /* fused eager chains carry one per scalar op */
#define TOCL_IR_MAX_OUTPUTS 8
#define TOCL_MAX_DIMS 16 /* iteration rank after collapsing dimensions */

/* The op table. Keep TOCL_IR_OP_COUNT last; every op has one row in
 * runtime/codegen/ir_ops.c giving its name, arity and OpenCL C formula. */
typedef enum tocl_ir_op {
    /* leaves */
    TOCL_IR_INPUT = 0, /* arg0: input operand index; loads and converts to compute type */
    TOCL_IR_SCALAR,    /* arg0: scalar argument index */
    /* conversions */
    TOCL_IR_CAST,      /* arg0 converted to node dtype (float->int truncates) */
    /* arithmetic */
    TOCL_IR_ADD,
    TOCL_IR_SUB,
    TOCL_IR_MUL,
    TOCL_IR_DIV,       /* true division; operands are floating */
    TOCL_IR_NEG,
    /* Appended by the pointwise op library (runtime/codegen/ir_ops.c has the
     * formulas). Integer division-like ops never trap: a zero divisor gives
     * a defined value (no host sync to raise, as on CUDA). */
    TOCL_IR_TRUNC_DIV,  /* division rounded toward zero */
    TOCL_IR_FLOOR_DIV,  /* Python // (floats as c10::div_floor_floating) */
    TOCL_IR_REMAINDER,  /* Python %: the sign of the divisor */
    TOCL_IR_FMOD,       /* C fmod: the sign of the dividend */
    TOCL_IR_POW,        /* integer pow: negative exponents as PyTorch's powi */
    TOCL_IR_ABS,
    TOCL_IR_SIGN,
    TOCL_IR_RECIPROCAL,
    TOCL_IR_SQRT,
    TOCL_IR_RSQRT,
    TOCL_IR_EXP,
    TOCL_IR_EXP2,
    TOCL_IR_EXPM1,
    TOCL_IR_LOG,
    TOCL_IR_LOG2,
    TOCL_IR_LOG10,
    TOCL_IR_LOG1P,
    TOCL_IR_SIN,
    TOCL_IR_COS,
    TOCL_IR_TAN,
    TOCL_IR_ASIN,
    TOCL_IR_ACOS,
    TOCL_IR_ATAN,
    TOCL_IR_SINH,
    TOCL_IR_COSH,
    TOCL_IR_TANH,
    TOCL_IR_ASINH,
    TOCL_IR_ACOSH,
    TOCL_IR_ATANH,
    TOCL_IR_ERF,
    TOCL_IR_ERFC,
    TOCL_IR_ERFINV,
    TOCL_IR_LGAMMA,
    TOCL_IR_DIGAMMA,
    TOCL_IR_SIGMOID,
    TOCL_IR_FLOOR,
    TOCL_IR_CEIL,
    TOCL_IR_ROUND,      /* half to even */
    TOCL_IR_TRUNC,
    TOCL_IR_FRAC,
    TOCL_IR_ATAN2,
    TOCL_IR_HYPOT,
    TOCL_IR_COPYSIGN,
    TOCL_IR_XLOGY,
    TOCL_IR_HEAVISIDE,
    TOCL_IR_MAXIMUM,    /* NaN-propagating */
    TOCL_IR_MINIMUM,
    TOCL_IR_FMAX,       /* NaN-ignoring */
    TOCL_IR_FMIN,
    TOCL_IR_BITWISE_AND,
    TOCL_IR_BITWISE_OR,
    TOCL_IR_BITWISE_XOR,
    TOCL_IR_BITWISE_NOT,
    TOCL_IR_LSHIFT,     /* out-of-range counts give 0, as PyTorch on the CPU */
    TOCL_IR_RSHIFT,     /* out-of-range counts shift out every bit but the sign */
    /* predicates: the result is bool */
    TOCL_IR_EQ,
    TOCL_IR_NE,
    TOCL_IR_LT,
    TOCL_IR_LE,
    TOCL_IR_GT,
    TOCL_IR_GE,
    TOCL_IR_LOGICAL_AND,
    TOCL_IR_LOGICAL_OR,
    TOCL_IR_LOGICAL_XOR,
    TOCL_IR_LOGICAL_NOT,
    TOCL_IR_ISNAN,
    TOCL_IR_ISINF,
    TOCL_IR_ISFINITE,
    TOCL_IR_ISPOSINF,
    TOCL_IR_ISNEGINF,
    TOCL_IR_SIGNBIT,
    /* selection and blends */
    TOCL_IR_WHERE,      /* arg0 ? arg1 : arg2 */
    TOCL_IR_LERP,       /* lerp(start, end, weight) as PyTorch's two-sided formula */
    /* activations and their gradients (x: input, g: incoming gradient) */
    TOCL_IR_GELU,               /* exact (erf) */
    TOCL_IR_GELU_TANH,
    TOCL_IR_GELU_BACKWARD,      /* (g, x) */
    TOCL_IR_GELU_TANH_BACKWARD, /* (g, x) */
    TOCL_IR_SILU,
    TOCL_IR_SILU_BACKWARD,      /* (g, x) */
    TOCL_IR_MISH,
    TOCL_IR_LOGSIGMOID,
    TOCL_IR_LOGSIGMOID_BACKWARD, /* (g, x) */
    TOCL_IR_SOFTPLUS,           /* (x, beta, threshold) */
    TOCL_IR_SOFTSHRINK,         /* (x, lambda) */
    TOCL_IR_HARDSHRINK,         /* (x, lambda) */
    TOCL_IR_SHRINK_BACKWARD,    /* (g, x, lambda): 0 inside [-lambda, lambda] */
    /* Storage rounding without the memory round trip: fused eager uses them
     * where an intermediate stored as float16/bfloat16 is read back by a
     * later op of the same kernel, so the result equals strict mode's. */
    TOCL_IR_ROUND_F16,          /* float -> nearest float16 (ties to even), as float */
    TOCL_IR_ROUND_BF16,         /* float -> nearest bfloat16 (ties to even; NaN quiet), as float */
    /* Special functions (runtime/codegen/ir_special.c), as PyTorch's CPU
     * kernels compute them. Binary ones take (x, n) for the polynomials,
     * whose degree n is truncated to an integer; (n, x) for polygamma.
     * Fused eager counts every op from here to TOCL_IR_FREXP_EXPONENT as a
     * libm call (runtime/fusion/defer_group.c). */
    TOCL_IR_I0,
    TOCL_IR_I0E,
    TOCL_IR_I1,
    TOCL_IR_I1E,
    TOCL_IR_BESSEL_J0,
    TOCL_IR_BESSEL_J1,
    TOCL_IR_BESSEL_Y0,
    TOCL_IR_BESSEL_Y1,
    TOCL_IR_MODIFIED_BESSEL_I0,
    TOCL_IR_MODIFIED_BESSEL_I1,
    TOCL_IR_MODIFIED_BESSEL_K0,
    TOCL_IR_MODIFIED_BESSEL_K1,
    TOCL_IR_SCALED_MODIFIED_BESSEL_K0,
    TOCL_IR_SCALED_MODIFIED_BESSEL_K1,
    TOCL_IR_SPHERICAL_BESSEL_J0,
    TOCL_IR_AIRY_AI,
    TOCL_IR_ERFCX,
    TOCL_IR_NDTRI,
    TOCL_IR_LOG_NDTR,
    TOCL_IR_ENTR,
    TOCL_IR_SINC,
    TOCL_IR_TRIGAMMA,
    TOCL_IR_POLYGAMMA,          /* (n, x), n >= 2 an integer */
    TOCL_IR_ZETA,               /* Hurwitz zeta (x, q) */
    TOCL_IR_IGAMMA,             /* regularised lower incomplete gamma (a, x) */
    TOCL_IR_IGAMMAC,            /* upper */
    TOCL_IR_XLOG1PY,
    TOCL_IR_LOGADDEXP,
    TOCL_IR_LOGADDEXP2,
    TOCL_IR_NEXTAFTER,
    TOCL_IR_NEXTAFTER_F16,      /* nextafter of float16 values held in float: one float16 step */
    TOCL_IR_NEXTAFTER_BF16,     /* one bfloat16 step */
    TOCL_IR_CHEBYSHEV_T,
    TOCL_IR_CHEBYSHEV_U,
    TOCL_IR_CHEBYSHEV_V,
    TOCL_IR_CHEBYSHEV_W,
    TOCL_IR_SHIFTED_CHEBYSHEV_T,
    TOCL_IR_SHIFTED_CHEBYSHEV_U,
    TOCL_IR_SHIFTED_CHEBYSHEV_V,
    TOCL_IR_SHIFTED_CHEBYSHEV_W,
    TOCL_IR_HERMITE_H,
    TOCL_IR_HERMITE_HE,
    TOCL_IR_LAGUERRE_L,
    TOCL_IR_LEGENDRE_P,
    TOCL_IR_FREXP_MANTISSA,     /* frexp's mantissa in [0.5, 1) */
    TOCL_IR_FREXP_EXPONENT,     /* frexp's exponent as a float (exact); cast it to int32 */
    TOCL_IR_OP_COUNT
} tocl_ir_op;

typedef struct tocl_ir_node {
    tocl_ir_op op;
    tocl_dtype dtype; /* compute dtype of the result (never F16/BF16) */
    int arg[3];       /* node indices, or operand/scalar index for leaves */
} tocl_ir_node;

typedef struct tocl_ir_graph {
    int n_nodes;
    tocl_ir_node nodes[TOCL_IR_MAX_NODES];
    int n_inputs;
    tocl_dtype input_dtypes[TOCL_IR_MAX_INPUTS];   /* storage dtypes */
    int n_scalars;
    tocl_dtype scalar_dtypes[TOCL_IR_MAX_SCALARS]; /* compute dtypes */
    int n_outputs;
    int output_nodes[TOCL_IR_MAX_OUTPUTS];
    tocl_dtype output_dtypes[TOCL_IR_MAX_OUTPUTS]; /* storage dtypes */
    int overflow; /* set when a builder call ran out of room */
} tocl_ir_graph;

/* Builders return the new node's index, or -1 (and set g->overflow) when a
 * table is full or an argument is invalid. */
void tocl_ir_init(tocl_ir_graph *g);
/* Copy the used part of src (its n_* entries of each table): a few hundred
 * bytes for a typical op instead of the whole 3 KB struct. What lies past
 * the counts in dst is left as it was; hashing, equality and rendering
 * read only the counted entries. */
void tocl_ir_copy(tocl_ir_graph *dst, const tocl_ir_graph *src);
int tocl_ir_input(tocl_ir_graph *g, tocl_dtype storage);
int tocl_ir_scalar(tocl_ir_graph *g, tocl_dtype compute);
int tocl_ir_cast(tocl_ir_graph *g, int a, tocl_dtype to);
/* Apply op; result dtype is `dtype` (the common compute dtype). */
int tocl_ir_unary(tocl_ir_graph *g, tocl_ir_op op, tocl_dtype dtype, int a);
int tocl_ir_binary(tocl_ir_graph *g, tocl_ir_op op, tocl_dtype dtype, int a, int b);
int tocl_ir_ternary(tocl_ir_graph *g, tocl_ir_op op, tocl_dtype dtype, int a, int b, int c);
/* Mark a node as output number n_outputs, stored as `storage`. */
int tocl_ir_output(tocl_ir_graph *g, int node, tocl_dtype storage);

/* Validate arity, argument ranges (arguments precede their node) and dtypes. */
tocl_status tocl_ir_validate(const tocl_ir_graph *g);
/* Structural hash: equal for graphs that render to the same text. */
uint64_t tocl_ir_hash(const tocl_ir_graph *g, int rank);
/* Name of an op ("add"), for messages and golden tests. */
const char *tocl_ir_op_name(tocl_ir_op op);

/* Render the kernel `tocl_ew` into buf. rank 0 renders the contiguous fast
 * path (one linear index for every operand); rank 1..TOCL_MAX_DIMS renders
 * the strided path. The kernel argument order is documented in
 * runtime/codegen/render.c and followed by runtime/launch/elementwise.c.
 * Returns TOCL_E_INVALID if buf is too small or the graph invalid. */
tocl_status tocl_ir_render(const tocl_ir_graph *g, int rank, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
