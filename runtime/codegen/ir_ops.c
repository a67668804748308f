/* ir_ops.c - the op table: one row per tocl_ir_op with its name, arity,
 * signature and OpenCL C formula per dtype class. Adding a pointwise op is
 * adding an enum value in include/tocl/ir.h and one row here. */
#include <stddef.h>

#include "codegen/ir_internal.h"
#include "codegen/ir_special.h"

/* "Not available for this dtype class": distinct from NULL, which for the
 * bool column means "same as the integer column". */
#define NA ""

/* Helpers: functions too long for one expression. Each is a template over
 * %T (see ir_internal.h), so float and double, or each integer type, get
 * their own copy. Integer division never traps: PoCL runs kernels as native
 * x86 code, where a zero divisor or MIN / -1 raises SIGFPE and kills the
 * process, so those divisors are answered before dividing. */
static const char h_trunc_div_int[] =
    "inline %T tocl_tdiv_%T(%T a, %T b)\n{\n"
    "    if (b == 0)\n        return 0;\n"
    "    if (b == -1)\n        return (%T)(0 - (%U)a);\n"
    "    return (%T)(a / b);\n}\n";

/* c10::div_floor_floating: floor of the exact quotient via fmod, so that
 * e.g. 1 // 0.1 is 9 like Python, and IEEE results for a zero divisor. */
static const char h_floor_div_float[] =
    "inline %T tocl_fdiv_%T(%T a, %T b)\n{\n"
    "    if (b == 0)\n        return a / b;\n"
    "    %T m = fmod(a, b);\n"
    "    %T d = (a - m) / b;\n"
    "    if (m != 0 && (b < 0) != (m < 0))\n        d -= 1;\n"
    "    if (d == 0)\n        return copysign((%T)0, a / b);\n"
    "    %T f = floor(d);\n"
    "    if (d - f > 0.5%F)\n        f += 1;\n"
    "    return f;\n}\n";

static const char h_floor_div_int[] =
    "inline %T tocl_fdiv_%T(%T a, %T b)\n{\n"
    "    if (b == 0)\n        return 0;\n"
    "    if (b == -1)\n        return (%T)(0 - (%U)a);\n"
    "    %T q = (%T)(a / b), r = (%T)(a % b);\n"
    "    return (r != 0 && (r < 0) != (b < 0)) ? (%T)(q - 1) : q;\n}\n";

static const char h_rem_float[] =
    "inline %T tocl_rem_%T(%T a, %T b)\n{\n"
    "    %T m = fmod(a, b);\n"
    "    if (m != 0 && (b < 0) != (m < 0))\n        m += b;\n"
    "    return m;\n}\n";

static const char h_rem_int[] =
    "inline %T tocl_rem_%T(%T a, %T b)\n{\n"
    "    if (b == 0 || b == -1)\n        return 0;\n"
    "    %T r = (%T)(a % b);\n"
    "    if (r != 0 && (r < 0) != (b < 0))\n        r += b;\n"
    "    return r;\n}\n";

/* PyTorch's powi: square-and-multiply, wrapping like the CPU (products in
 * the unsigned type, where wrapping is defined); negative exponents give
 * 1, +-1 or 0. */
static const char h_pow_int[] =
    "inline %T tocl_pow_%T(%T a, %T b)\n{\n"
    "    if (b < 0) {\n"
    "        if (a == 1)\n            return 1;\n"
    "        if (a == -1)\n            return (b & 1) ? (%T)-1 : (%T)1;\n"
    "        return 0;\n    }\n"
    "    %U r = 1, x = (%U)a;\n"
    "    while (b) {\n"
    "        if (b & 1)\n            r = (%U)(r * x);\n"
    "        b >>= 1;\n"
    "        x = (%U)(x * x);\n    }\n"
    "    return (%T)r;\n}\n";

/* Giles' single-precision approximation ("Approximating the erfinv
 * function", GPU Gems 2011) of |y|, then Newton steps. Up to |y| = 1/2 two
 * steps on erf bring it to full double precision. Beyond, erf(x) - y loses
 * the digits of 1 - |y| (exact there), and in double the polynomial, fitted
 * for float, is up to 12% off near 1 (erfinv(1 - 2^-53) came out 5.457 for
 * 5.8636); four steps on log(erfc(x)) - log(1 - |y|), nearly linear in x
 * out there, reach full double precision from that start (three: 4e-10). */
static const char h_erfinv[] =
    "inline %T tocl_erfinv_%T(%T y)\n{\n"
    "    if (!(fabs(y) < 1))\n"
    "        return fabs(y) == 1 ? copysign((%T)INFINITY, y) : (%T)NAN;\n"
    "    %T a = fabs(y), w = -log((1 - a) * (1 + a)), p;\n"
    "    if (w < 5) {\n"
    "        w -= 2.5%F;\n"
    "        p = 2.81022636e-08%F;\n"
    "        p = 3.43273939e-07%F + p * w;\n"
    "        p = -3.5233877e-06%F + p * w;\n"
    "        p = -4.39150654e-06%F + p * w;\n"
    "        p = 0.00021858087%F + p * w;\n"
    "        p = -0.00125372503%F + p * w;\n"
    "        p = -0.00417768164%F + p * w;\n"
    "        p = 0.246640727%F + p * w;\n"
    "        p = 1.50140941%F + p * w;\n"
    "    } else {\n"
    "        w = sqrt(w) - 3;\n"
    "        p = -0.000200214257%F;\n"
    "        p = 0.000100950558%F + p * w;\n"
    "        p = 0.00134934322%F + p * w;\n"
    "        p = -0.00367342844%F + p * w;\n"
    "        p = 0.00573950773%F + p * w;\n"
    "        p = -0.0076224613%F + p * w;\n"
    "        p = 0.00943887047%F + p * w;\n"
    "        p = 1.00167406%F + p * w;\n"
    "        p = 2.83297682%F + p * w;\n"
    "    }\n"
    "    %T x = p * a, k = 1.12837916709551257390%F;\n"
    "    if (a <= 0.5%F) {\n"
    "        for (int i = 0; i < 2; i++)\n"
    "            x -= (erf(x) - a) / (k * exp(-x * x));\n"
    "    } else {\n"
    "        %T lq = log(1 - a);\n"
    "        for (int i = 0; i < 4; i++) {\n"
    "            %T e = erfc(x);\n"
    "            x += (log(e) - lq) * e / (k * exp(-x * x));\n"
    "        }\n"
    "    }\n"
    "    return copysign(x, y);\n}\n";

/* calc_digamma of PyTorch: reflection for negative x, recurrence up to 10,
 * then the asymptotic series. The reflection term pi / tan(pi x) is taken
 * at r = x mod 1 in [-1/2, 1/2] (exact), and for |r| > 1/4 as
 * -pi tan(pi (r -+ 1/2)), so tan's argument stays within pi/4 where the
 * rounding of pi * r costs no more than an ulp. PyTorch's float version
 * computes this term in double; tan(pi * r) in float with r near -1 was off
 * by 2% at digamma(-3.999998) (-534916 for -524286.5). */
static const char h_digamma[] =
    "inline %T tocl_digamma_%T(%T x)\n{\n"
    "    if (x == 0)\n        return copysign((%T)INFINITY, -x);\n"
    "    %T result = 0;\n"
    "    if (x < 0) {\n"
    "        if (x == trunc(x))\n            return (%T)NAN;\n"
    "        %T r = x - trunc(x);\n"
    "        r -= rint(r);\n"
    "        %T pi = 3.14159265358979323846%F;\n"
    "        result = fabs(r) <= 0.25%F ? -pi / tan(pi * r) : pi * tan(pi * (r - copysign(0.5%F, r)));\n"
    "        x = 1 - x;\n    }\n"
    "    while (x < 10) {\n        result -= 1 / x;\n        x += 1;\n    }\n"
    "    if (x == 10)\n        return result + 2.25175258906672110764%F;\n"
    "    %T y = 0;\n"
    "    if (x < 1.0e17%F) {\n"
    "        %T z = 1 / (x * x);\n"
    "        y = 8.33333333333333333333E-2%F;\n"
    "        y = y * z - 2.10927960927960927961E-2%F;\n"
    "        y = y * z + 7.57575757575757575758E-3%F;\n"
    "        y = y * z - 4.16666666666666666667E-3%F;\n"
    "        y = y * z + 3.96825396825396825397E-3%F;\n"
    "        y = y * z - 8.33333333333333333333E-3%F;\n"
    "        y = y * z + 8.33333333333333333333E-2%F;\n"
    "        y *= z;\n    }\n"
    "    return result + log(x) - 0.5%F / x - y;\n}\n";

/* tanh of a variable (tocl_tanh_%T of the FASTMATH fragment, ir_special.c),
 * exactly +-1 where the true value rounds to it:
 * 1 - tanh(x) ~ 2 exp(-2x) is below half an ulp of 1 from x = 9.01 (float)
 * and 19.06 (double). PoCL's float tanh stops at 1 - 2^-24 there, which
 * gelu's tanh form turns into 0.5 x 2^-24 instead of 0 for large negative
 * x (-2.2e-5 at -745, -inf instead of NaN at -inf) and its gradient into
 * 1.00005 at x = 20. */
#define SAT_TANH(v) "tocl_tanh_%T(" v ")"

/* PyTorch's tanh-approximated gelu, x^3 formed first as its kernel does.
 * This and the other helpers calling the FASTMATH functions are
 * always_inline: with tocl_tanh_float inlined into it, PoCL left
 * tocl_gelu_tanh_float a call, one scalar call per element (4.5 ms instead
 * of 1.1 ms for 1M floats). */
static const char h_gelu_tanh[] =
    "inline __attribute__((always_inline)) %T tocl_gelu_tanh_%T(%T x)\n{\n"
    "    %T u = 0.79788456080286535588%F * (x + 0.044715%F * (x * x * x));\n"
    "    return 0.5%F * x * (1 + " SAT_TANH("u") ");\n}\n";

/* The gradients below follow PyTorch's CPU kernels term by term. */
static const char h_gelu_tanh_bw[] =
    "inline __attribute__((always_inline)) %T tocl_gelu_tanh_bw_%T(%T dy, %T x)\n{\n"
    "    %T kb = 0.79788456080286535588%F, kk = 0.044715%F;\n"
    "    %T x_sq = x * x;\n"
    "    %T u = kb * (x + kk * x_sq * x);\n"
    "    %T t = " SAT_TANH("u") ";\n"
    "    %T left = 0.5%F * x;\n"
    "    %T left_d = 0.5%F * (1 + t);\n"
    "    %T right_d = left * (1 - t * t) * (kb * (1 + 3 * kk * x_sq));\n"
    "    return dy * (left_d + right_d);\n}\n";

static const char h_silu_bw[] =
    "inline __attribute__((always_inline)) %T tocl_silu_bw_%T(%T dy, %T x)\n{\n"
    "    %T s = 1 / (1 + tocl_exp_%T(-x));\n"
    "    return dy * s * (1 + x * (1 - s));\n}\n";

static const char h_logsigmoid_bw[] =
    "inline __attribute__((always_inline)) %T tocl_logsigmoid_bw_%T(%T dy, %T x)\n{\n"
    "    %T z = tocl_exp_%T(-fabs(x));\n"
    "    return x < 0 ? (1 - z / (1 + z)) * dy : (z / (1 + z)) * dy;\n}\n";

/* Integer arithmetic relies on OpenCL C's usual conversions: char/short
 * operands promote to int and the assignment to the node's variable wraps
 * modulo 2^bits, which is what PyTorch's integer ops do. Rows list, in
 * order: name, arity, signature, float, integer and bool formulas, float
 * and integer helpers. */
#define ROW(op, name, arity, sig, ff, fi, fb) [op] = {name, arity, sig, ff, fi, fb, NULL, NULL, 0}
#define ROWH(op, name, arity, sig, ff, fi, fb, hf, hi) [op] = {name, arity, sig, ff, fi, fb, hf, hi, 0}
/* A floating op whose formula calls functions of the special-function
 * library (ir_special.h); `sf` names them. */
#define SPECIAL(op, name, arity, f, sf) [op] = {name, arity, TOCL_IR_SIG_SAME, f, NA, NA, NULL, NULL, sf}
#define SPECIAL1(op, name, fn, id) SPECIAL(op, name, 1, "tocl_sf_" fn "_%T(%0)", TOCL_SF_BIT(id))
/* The orthogonal polynomials P(x, n): the degree is truncated to an integer
 * (tocl_sf_degree) as the CPU's static_cast<int64_t> does. */
#define POLY(op, name, fn, id) \
    SPECIAL(op, name, 2, "tocl_sf_" fn "_%T(%0, tocl_sf_degree_%T(%1))", TOCL_SF_BIT(id) | TOCL_SF_BIT(DEGREE))
#define UNARY_FLOAT(op, name, f) ROW(op, name, 1, TOCL_IR_SIG_SAME, f, NA, NA)
/* Float ops whose formula or helper calls tocl_exp_%T, tocl_erf_%T ... (the
 * FASTMATH fragment of ir_special.c: vectorisable float32 versions of
 * builtins that PoCL runs 3-80x slower; double calls the builtins). */
#define FM TOCL_SF_BIT(FASTMATH)
#define FASTROW(op, name, arity, f) [op] = {name, arity, TOCL_IR_SIG_SAME, f, NA, NA, NULL, NULL, FM}
#define FASTROWH(op, name, arity, f, hf) [op] = {name, arity, TOCL_IR_SIG_SAME, f, NA, NA, hf, NULL, FM}
#define BINARY_FLOAT(op, name, f) ROW(op, name, 2, TOCL_IR_SIG_SAME, f, NA, NA)
#define PREDICATE(op, name, arity, f) ROW(op, name, arity, TOCL_IR_SIG_CMP, f, f, NULL)

/* Rounding as the store and load of float16 / bfloat16 storage do it
 * (render.c: vstore_half_rte + vload_half; tocl_f2bf + shift). */
static const char h_round_f16[] =
    "inline %T tocl_round_f16_%T(%T x)\n{\n"
    "    ushort h;\n"
    "    vstore_half_rte(x, 0, (__private half *)&h);\n"
    "    return (%T)vload_half(0, (__private const half *)&h);\n}\n";

static const char h_round_bf16[] =
    "inline %T tocl_round_bf16_%T(%T x)\n{\n"
    "    uint u = as_uint((float)x);\n"
    "    if ((u & 0x7fffffffu) > 0x7f800000u)\n        return (%T)as_float(0x7fc00000u);\n"
    "    return (%T)as_float(((u + 0x7fffu + ((u >> 16) & 1u)) >> 16) << 16);\n}\n";

static const char h_frexp_m[] =
    "inline %T tocl_frexp_m_%T(%T x)\n{\n"
    "    int e;\n"
    "    return frexp(x, &e);\n}\n";

static const char h_frexp_e[] =
    "inline %T tocl_frexp_e_%T(%T x)\n{\n"
    "    int e;\n"
    "    frexp(x, &e);\n"
    "    return (%T)e;\n}\n";

/* nextafter of float16 / bfloat16 values computed in float: a step of the
 * storage format's bits (as c10's Half and BFloat16 nextafter), away from
 * or toward zero; from zero the smallest subnormal with y's sign. */
static const char h_nextafter_f16[] =
    "inline %T tocl_nextafter_f16_%T(%T x, %T y)\n{\n"
    "    if (isnan(x) || isnan(y))\n        return x + y;\n"
    "    if (x == y)\n        return y;\n"
    "    if (x == 0)\n        return copysign((%T)5.9604644775390625e-08%F, y);\n"
    "    ushort h;\n"
    "    vstore_half_rte((float)x, 0, (__private half *)&h);\n"
    "    h = ((x < y) == (x > 0)) ? (ushort)(h + 1) : (ushort)(h - 1);\n"
    "    return (%T)vload_half(0, (__private const half *)&h);\n}\n";

static const char h_nextafter_bf16[] =
    "inline %T tocl_nextafter_bf16_%T(%T x, %T y)\n{\n"
    "    if (isnan(x) || isnan(y))\n        return x + y;\n"
    "    if (x == y)\n        return y;\n"
    "    if (x == 0)\n        return (%T)copysign(as_float(0x00010000u), (float)y);\n"
    "    uint u = as_uint((float)x);\n"
    "    u = ((x < y) == (x > 0)) ? u + 0x10000u : u - 0x10000u;\n"
    "    return (%T)as_float(u);\n}\n";

static const tocl_ir_op_info op_table[TOCL_IR_OP_COUNT] = {
    ROW(TOCL_IR_INPUT, "input", 0, TOCL_IR_SIG_LEAF, NULL, NULL, NULL),
    ROW(TOCL_IR_SCALAR, "scalar", 0, TOCL_IR_SIG_LEAF, NULL, NULL, NULL),
    /* CAST's text depends on both dtypes; render.c builds it (cast_expr). */
    ROW(TOCL_IR_CAST, "cast", 1, TOCL_IR_SIG_CAST, NULL, NULL, NULL),
    ROW(TOCL_IR_ADD, "add", 2, TOCL_IR_SIG_SAME, "(%0 + %1)", "(%0 + %1)", NULL),
    /* PyTorch refuses bool subtraction ("use ^ or logical_xor"). */
    ROW(TOCL_IR_SUB, "sub", 2, TOCL_IR_SIG_SAME, "(%0 - %1)", "(%0 - %1)", NA),
    ROW(TOCL_IR_MUL, "mul", 2, TOCL_IR_SIG_SAME, "(%0 * %1)", "(%0 * %1)", NULL),
    /* True division only: integer operands are cast to a floating type by
     * whoever builds the graph, as torch.div does. */
    ROW(TOCL_IR_DIV, "div", 2, TOCL_IR_SIG_SAME, "(%0 / %1)", NA, NA),
    /* PyTorch refuses negation of bool. */
    ROW(TOCL_IR_NEG, "neg", 1, TOCL_IR_SIG_SAME, "(-%0)", "(-%0)", NA),

    ROWH(TOCL_IR_TRUNC_DIV, "trunc_div", 2, TOCL_IR_SIG_SAME, "trunc(%0 / %1)", "tocl_tdiv_%T(%0, %1)", NA, NULL,
         h_trunc_div_int),
    ROWH(TOCL_IR_FLOOR_DIV, "floor_div", 2, TOCL_IR_SIG_SAME, "tocl_fdiv_%T(%0, %1)", "tocl_fdiv_%T(%0, %1)", NA,
         h_floor_div_float, h_floor_div_int),
    ROWH(TOCL_IR_REMAINDER, "remainder", 2, TOCL_IR_SIG_SAME, "tocl_rem_%T(%0, %1)", "tocl_rem_%T(%0, %1)", NA,
         h_rem_float, h_rem_int),
    ROW(TOCL_IR_FMOD, "fmod", 2, TOCL_IR_SIG_SAME, "fmod(%0, %1)",
        "((%1 == 0 || %1 == -1) ? (%T)0 : (%T)(%0 % %1))", NA),
    ROWH(TOCL_IR_POW, "pow", 2, TOCL_IR_SIG_SAME, "pow(%0, %1)", "tocl_pow_%T(%0, %1)", NA, NULL, h_pow_int),
    /* abs of an integer: OpenCL's abs returns the unsigned type, and the
     * conversion back wraps abs(MIN) to MIN as PyTorch does. */
    ROW(TOCL_IR_ABS, "abs", 1, TOCL_IR_SIG_SAME, "fabs(%0)", "abs(%0)", NA),
    /* NaN has sign 0, as on the CPU. */
    ROW(TOCL_IR_SIGN, "sign", 1, TOCL_IR_SIG_SAME, "(%T)((%0 > 0) - (%0 < 0))", "(%T)((%0 > 0) - (%0 < 0))", "%0"),
    UNARY_FLOAT(TOCL_IR_RECIPROCAL, "reciprocal", "(1.0%F / %0)"),
    UNARY_FLOAT(TOCL_IR_SQRT, "sqrt", "sqrt(%0)"),
    UNARY_FLOAT(TOCL_IR_RSQRT, "rsqrt", "rsqrt(%0)"),
    FASTROW(TOCL_IR_EXP, "exp", 1, "tocl_exp_%T(%0)"),
    UNARY_FLOAT(TOCL_IR_EXP2, "exp2", "exp2(%0)"),
    FASTROW(TOCL_IR_EXPM1, "expm1", 1, "tocl_expm1_%T(%0)"),
    FASTROW(TOCL_IR_LOG, "log", 1, "tocl_log_%T(%0)"),
    UNARY_FLOAT(TOCL_IR_LOG2, "log2", "log2(%0)"),
    UNARY_FLOAT(TOCL_IR_LOG10, "log10", "log10(%0)"),
    FASTROW(TOCL_IR_LOG1P, "log1p", 1, "tocl_log1p_%T(%0)"),
    UNARY_FLOAT(TOCL_IR_SIN, "sin", "sin(%0)"),
    UNARY_FLOAT(TOCL_IR_COS, "cos", "cos(%0)"),
    UNARY_FLOAT(TOCL_IR_TAN, "tan", "tan(%0)"),
    UNARY_FLOAT(TOCL_IR_ASIN, "asin", "asin(%0)"),
    UNARY_FLOAT(TOCL_IR_ACOS, "acos", "acos(%0)"),
    UNARY_FLOAT(TOCL_IR_ATAN, "atan", "atan(%0)"),
    UNARY_FLOAT(TOCL_IR_SINH, "sinh", "sinh(%0)"),
    UNARY_FLOAT(TOCL_IR_COSH, "cosh", "cosh(%0)"),
    FASTROW(TOCL_IR_TANH, "tanh", 1, SAT_TANH("%0")),
    UNARY_FLOAT(TOCL_IR_ASINH, "asinh", "asinh(%0)"),
    UNARY_FLOAT(TOCL_IR_ACOSH, "acosh", "acosh(%0)"),
    UNARY_FLOAT(TOCL_IR_ATANH, "atanh", "atanh(%0)"),
    FASTROW(TOCL_IR_ERF, "erf", 1, "tocl_erf_%T(%0)"),
    FASTROW(TOCL_IR_ERFC, "erfc", 1, "tocl_erfc_%T(%0)"),
    ROWH(TOCL_IR_ERFINV, "erfinv", 1, TOCL_IR_SIG_SAME, "tocl_erfinv_%T(%0)", NA, NA, h_erfinv, NULL),
    UNARY_FLOAT(TOCL_IR_LGAMMA, "lgamma", "lgamma(%0)"),
    ROWH(TOCL_IR_DIGAMMA, "digamma", 1, TOCL_IR_SIG_SAME, "tocl_digamma_%T(%0)", NA, NA, h_digamma, NULL),
    FASTROW(TOCL_IR_SIGMOID, "sigmoid", 1, "(1.0%F / (1.0%F + tocl_exp_%T(-%0)))"),
    /* Rounding is the identity on integers (PyTorch returns a copy). */
    ROW(TOCL_IR_FLOOR, "floor", 1, TOCL_IR_SIG_SAME, "floor(%0)", "%0", NA),
    ROW(TOCL_IR_CEIL, "ceil", 1, TOCL_IR_SIG_SAME, "ceil(%0)", "%0", NA),
    ROW(TOCL_IR_ROUND, "round", 1, TOCL_IR_SIG_SAME, "rint(%0)", "%0", NA),
    ROW(TOCL_IR_TRUNC, "trunc", 1, TOCL_IR_SIG_SAME, "trunc(%0)", "%0", NA),
    UNARY_FLOAT(TOCL_IR_FRAC, "frac", "(%0 - trunc(%0))"),
    BINARY_FLOAT(TOCL_IR_ATAN2, "atan2", "atan2(%0, %1)"),
    BINARY_FLOAT(TOCL_IR_HYPOT, "hypot", "hypot(%0, %1)"),
    BINARY_FLOAT(TOCL_IR_COPYSIGN, "copysign", "copysign(%0, %1)"),
    FASTROW(TOCL_IR_XLOGY, "xlogy", 2, "(isnan(%1) ? %1 : (%0 == 0 ? (%T)0 : %0 * tocl_log_%T(%1)))"),
    ROW(TOCL_IR_HEAVISIDE, "heaviside", 2, TOCL_IR_SIG_SAME, "(%0 == 0 ? %1 : (%T)(%0 > 0))",
        "(%0 == 0 ? %1 : (%T)(%0 > 0))", NULL),
    ROW(TOCL_IR_MAXIMUM, "maximum", 2, TOCL_IR_SIG_SAME, "(isnan(%0) ? %0 : (isnan(%1) ? %1 : fmax(%0, %1)))",
        "max(%0, %1)", "(%0 || %1)"),
    ROW(TOCL_IR_MINIMUM, "minimum", 2, TOCL_IR_SIG_SAME, "(isnan(%0) ? %0 : (isnan(%1) ? %1 : fmin(%0, %1)))",
        "min(%0, %1)", "(%0 && %1)"),
    ROW(TOCL_IR_FMAX, "fmax", 2, TOCL_IR_SIG_SAME, "fmax(%0, %1)", "max(%0, %1)", "(%0 || %1)"),
    ROW(TOCL_IR_FMIN, "fmin", 2, TOCL_IR_SIG_SAME, "fmin(%0, %1)", "min(%0, %1)", "(%0 && %1)"),
    ROW(TOCL_IR_BITWISE_AND, "bitwise_and", 2, TOCL_IR_SIG_SAME, NA, "(%0 & %1)", NULL),
    ROW(TOCL_IR_BITWISE_OR, "bitwise_or", 2, TOCL_IR_SIG_SAME, NA, "(%0 | %1)", NULL),
    ROW(TOCL_IR_BITWISE_XOR, "bitwise_xor", 2, TOCL_IR_SIG_SAME, NA, "(%0 ^ %1)", NULL),
    ROW(TOCL_IR_BITWISE_NOT, "bitwise_not", 1, TOCL_IR_SIG_SAME, NA, "(~%0)", "(!%0)"),
    /* Shifts as PyTorch's CPU kernels: a count < 0 or >= the bit width gives
     * 0 for <<, and for >> the shift by width-1 (signed) or width. */
    ROW(TOCL_IR_LSHIFT, "lshift", 2, TOCL_IR_SIG_SAME, NA,
        "((%1 < 0 || %1 >= (long)(sizeof(%T) * 8)) ? (%T)0 : (%T)((%U)%0 << %1))", NA),
    ROW(TOCL_IR_RSHIFT, "rshift", 2, TOCL_IR_SIG_SAME, NA,
        "((%1 < 0 || %1 >= (long)(sizeof(%T) * 8) - ((%T)-1 < 0)) ? "
        "(%T)(%0 >> ((long)(sizeof(%T) * 8) - ((%T)-1 < 0))) : (%T)(%0 >> %1))", NA),

    PREDICATE(TOCL_IR_EQ, "eq", 2, "(%0 == %1)"),
    PREDICATE(TOCL_IR_NE, "ne", 2, "(%0 != %1)"),
    PREDICATE(TOCL_IR_LT, "lt", 2, "(%0 < %1)"),
    PREDICATE(TOCL_IR_LE, "le", 2, "(%0 <= %1)"),
    PREDICATE(TOCL_IR_GT, "gt", 2, "(%0 > %1)"),
    PREDICATE(TOCL_IR_GE, "ge", 2, "(%0 >= %1)"),
    PREDICATE(TOCL_IR_LOGICAL_AND, "logical_and", 2, "(%0 != 0 && %1 != 0)"),
    PREDICATE(TOCL_IR_LOGICAL_OR, "logical_or", 2, "(%0 != 0 || %1 != 0)"),
    PREDICATE(TOCL_IR_LOGICAL_XOR, "logical_xor", 2, "((%0 != 0) != (%1 != 0))"),
    PREDICATE(TOCL_IR_LOGICAL_NOT, "logical_not", 1, "(%0 == 0)"),
    ROW(TOCL_IR_ISNAN, "isnan", 1, TOCL_IR_SIG_CMP, "isnan(%0)", "false", NULL),
    ROW(TOCL_IR_ISINF, "isinf", 1, TOCL_IR_SIG_CMP, "isinf(%0)", "false", NULL),
    ROW(TOCL_IR_ISFINITE, "isfinite", 1, TOCL_IR_SIG_CMP, "isfinite(%0)", "true", NULL),
    ROW(TOCL_IR_ISPOSINF, "isposinf", 1, TOCL_IR_SIG_CMP, "(%0 == INFINITY)", "false", NULL),
    ROW(TOCL_IR_ISNEGINF, "isneginf", 1, TOCL_IR_SIG_CMP, "(%0 == -INFINITY)", "false", NULL),
    ROW(TOCL_IR_SIGNBIT, "signbit", 1, TOCL_IR_SIG_CMP, "signbit(%0)", "(%0 < 0)", "false"),

    ROW(TOCL_IR_WHERE, "where", 3, TOCL_IR_SIG_WHERE, "(%0 ? %1 : %2)", "(%0 ? %1 : %2)", NULL),
    /* PyTorch's lerp: from the nearer end, so weight 1 gives end exactly. */
    ROW(TOCL_IR_LERP, "lerp", 3, TOCL_IR_SIG_SAME,
        "(fabs(%2) < 0.5%F ? %0 + %2 * (%1 - %0) : %1 - (%1 - %0) * (1.0%F - %2))", NA, NA),

    FASTROW(TOCL_IR_GELU, "gelu", 1, "(%0 * 0.5%F * (1.0%F + tocl_erf_%T(%0 * 0.70710678118654752440%F)))"),
    FASTROWH(TOCL_IR_GELU_TANH, "gelu_tanh", 1, "tocl_gelu_tanh_%T(%0)", h_gelu_tanh),
    FASTROW(TOCL_IR_GELU_BACKWARD, "gelu_backward", 2,
           "(%0 * (0.5%F * (1.0%F + tocl_erf_%T(%1 * 0.70710678118654752440%F)) + "
           "%1 * 0.39894228040143267794%F * tocl_exp_%T(-0.5%F * %1 * %1)))"),
    FASTROWH(TOCL_IR_GELU_TANH_BACKWARD, "gelu_tanh_backward", 2, "tocl_gelu_tanh_bw_%T(%0, %1)", h_gelu_tanh_bw),
    FASTROW(TOCL_IR_SILU, "silu", 1, "(%0 / (1.0%F + tocl_exp_%T(-%0)))"),
    FASTROWH(TOCL_IR_SILU_BACKWARD, "silu_backward", 2, "tocl_silu_bw_%T(%0, %1)", h_silu_bw),
    FASTROW(TOCL_IR_MISH, "mish", 1, "(%0 * tocl_tanh_%T(tocl_log1p_%T(tocl_exp_%T(%0))))"),
    FASTROW(TOCL_IR_LOGSIGMOID, "logsigmoid", 1, "(fmin(%0, (%T)0) - tocl_log1p_%T(tocl_exp_%T(-fabs(%0))))"),
    FASTROWH(TOCL_IR_LOGSIGMOID_BACKWARD, "logsigmoid_backward", 2, "tocl_logsigmoid_bw_%T(%0, %1)",
            h_logsigmoid_bw),
    FASTROW(TOCL_IR_SOFTPLUS, "softplus", 3, "((%0 * %1) > %2 ? %0 : tocl_log1p_%T(tocl_exp_%T(%0 * %1)) / %1)"),
    ROW(TOCL_IR_SOFTSHRINK, "softshrink", 2, TOCL_IR_SIG_SAME,
        "(%0 > %1 ? %0 - %1 : (%0 < -%1 ? %0 + %1 : %0 * 0))", NA, NA),
    ROW(TOCL_IR_HARDSHRINK, "hardshrink", 2, TOCL_IR_SIG_SAME, "((%0 >= -%1 && %0 <= %1) ? (%T)0 : %0)", NA, NA),
    ROW(TOCL_IR_SHRINK_BACKWARD, "shrink_backward", 3, TOCL_IR_SIG_SAME, "((%1 >= -%2 && %1 <= %2) ? (%T)0 : %0)",
        NA, NA),
    ROWH(TOCL_IR_ROUND_F16, "round_f16", 1, TOCL_IR_SIG_SAME, "tocl_round_f16_%T(%0)", NA, NA, h_round_f16, NULL),
    ROWH(TOCL_IR_ROUND_BF16, "round_bf16", 1, TOCL_IR_SIG_SAME, "tocl_round_bf16_%T(%0)", NA, NA, h_round_bf16,
         NULL),

    SPECIAL1(TOCL_IR_I0, "i0", "i0", I0),
    SPECIAL1(TOCL_IR_I0E, "i0e", "i0e", I0E),
    SPECIAL1(TOCL_IR_I1, "i1", "i1", I1),
    SPECIAL1(TOCL_IR_I1E, "i1e", "i1e", I1E),
    SPECIAL1(TOCL_IR_BESSEL_J0, "bessel_j0", "bessel_j0", BESSEL_J0),
    SPECIAL1(TOCL_IR_BESSEL_J1, "bessel_j1", "bessel_j1", BESSEL_J1),
    SPECIAL1(TOCL_IR_BESSEL_Y0, "bessel_y0", "bessel_y0", BESSEL_Y0),
    SPECIAL1(TOCL_IR_BESSEL_Y1, "bessel_y1", "bessel_y1", BESSEL_Y1),
    SPECIAL1(TOCL_IR_MODIFIED_BESSEL_I0, "modified_bessel_i0", "modified_bessel_i0", MODIFIED_BESSEL_I0),
    SPECIAL1(TOCL_IR_MODIFIED_BESSEL_I1, "modified_bessel_i1", "modified_bessel_i1", MODIFIED_BESSEL_I1),
    SPECIAL1(TOCL_IR_MODIFIED_BESSEL_K0, "modified_bessel_k0", "modified_bessel_k0", MODIFIED_BESSEL_K0),
    SPECIAL1(TOCL_IR_MODIFIED_BESSEL_K1, "modified_bessel_k1", "modified_bessel_k1", MODIFIED_BESSEL_K1),
    SPECIAL1(TOCL_IR_SCALED_MODIFIED_BESSEL_K0, "scaled_modified_bessel_k0", "scaled_modified_bessel_k0",
             SCALED_MODIFIED_BESSEL_K0),
    SPECIAL1(TOCL_IR_SCALED_MODIFIED_BESSEL_K1, "scaled_modified_bessel_k1", "scaled_modified_bessel_k1",
             SCALED_MODIFIED_BESSEL_K1),
    SPECIAL1(TOCL_IR_SPHERICAL_BESSEL_J0, "spherical_bessel_j0", "spherical_bessel_j0", SPHERICAL_BESSEL_J0),
    SPECIAL1(TOCL_IR_AIRY_AI, "airy_ai", "airy_ai", AIRY_AI),
    SPECIAL1(TOCL_IR_ERFCX, "erfcx", "erfcx", ERFCX),
    SPECIAL1(TOCL_IR_NDTRI, "ndtri", "ndtri", NDTRI),
    SPECIAL1(TOCL_IR_LOG_NDTR, "log_ndtr", "log_ndtr", LOG_NDTR),
    FASTROW(TOCL_IR_ENTR, "entr", 1,
           "(isnan(%0) ? %0 : (%0 > 0 ? -%0 * tocl_log_%T(%0) : (%0 == 0 ? (%T)0 : (%T)-INFINITY)))"),
    /* pi * x rounded once, as the CPU forms it. */
    UNARY_FLOAT(TOCL_IR_SINC, "sinc",
                "(%0 == 0 ? (%T)1 : sin(3.14159265358979323846%F * %0) / (3.14159265358979323846%F * %0))"),
    SPECIAL1(TOCL_IR_TRIGAMMA, "trigamma", "trigamma", TRIGAMMA),
    SPECIAL(TOCL_IR_POLYGAMMA, "polygamma", 2,
            "((fmod(%0, (%T)2) != 0 ? (%T)1 : (%T)-1) * exp(lgamma(%0 + 1)) * tocl_sf_zeta_%T(%0 + 1, %1))",
            TOCL_SF_BIT(ZETA)),
    SPECIAL(TOCL_IR_ZETA, "zeta", 2, "tocl_sf_zeta_%T(%0, %1)", TOCL_SF_BIT(ZETA)),
    SPECIAL(TOCL_IR_IGAMMA, "igamma", 2, "tocl_sf_igamma_%T(%0, %1)", TOCL_SF_BIT(IGAMMA)),
    SPECIAL(TOCL_IR_IGAMMAC, "igammac", 2, "tocl_sf_igammac_%T(%0, %1)", TOCL_SF_BIT(IGAMMAC)),
    FASTROW(TOCL_IR_XLOG1PY, "xlog1py", 2, "(isnan(%1) ? %1 : (%0 == 0 ? (%T)0 : %0 * tocl_log1p_%T(%1)))"),
    /* The CPU's max(a, b) + log1p(exp(-|a - b|)); equal infinities are
     * returned as they are (inf - inf would be NaN). */
    FASTROW(TOCL_IR_LOGADDEXP, "logaddexp", 2,
           "((isinf(%0) && %0 == %1) ? %0 : (%0 < %1 ? %1 : %0) + tocl_log1p_%T(tocl_exp_%T(-fabs(%0 - %1))))"),
    BINARY_FLOAT(TOCL_IR_LOGADDEXP2, "logaddexp2",
                 "((isinf(%0) && %0 == %1) ? %0 : (%0 < %1 ? %1 : %0) + "
                 "log1p(exp2(-fabs(%0 - %1))) * 1.44269504088896340736%F)"),
    BINARY_FLOAT(TOCL_IR_NEXTAFTER, "nextafter", "nextafter(%0, %1)"),
    ROWH(TOCL_IR_NEXTAFTER_F16, "nextafter_f16", 2, TOCL_IR_SIG_SAME, "tocl_nextafter_f16_%T(%0, %1)", NA, NA,
         h_nextafter_f16, NULL),
    ROWH(TOCL_IR_NEXTAFTER_BF16, "nextafter_bf16", 2, TOCL_IR_SIG_SAME, "tocl_nextafter_bf16_%T(%0, %1)", NA, NA,
         h_nextafter_bf16, NULL),
    POLY(TOCL_IR_CHEBYSHEV_T, "chebyshev_polynomial_t", "chebyshev_polynomial_t", CHEBYSHEV_POLYNOMIAL_T),
    POLY(TOCL_IR_CHEBYSHEV_U, "chebyshev_polynomial_u", "chebyshev_polynomial_u", CHEBYSHEV_POLYNOMIAL_U),
    POLY(TOCL_IR_CHEBYSHEV_V, "chebyshev_polynomial_v", "chebyshev_polynomial_v", CHEBYSHEV_POLYNOMIAL_V),
    POLY(TOCL_IR_CHEBYSHEV_W, "chebyshev_polynomial_w", "chebyshev_polynomial_w", CHEBYSHEV_POLYNOMIAL_W),
    POLY(TOCL_IR_SHIFTED_CHEBYSHEV_T, "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_t",
         SHIFTED_CHEBYSHEV_POLYNOMIAL_T),
    POLY(TOCL_IR_SHIFTED_CHEBYSHEV_U, "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_u",
         SHIFTED_CHEBYSHEV_POLYNOMIAL_U),
    POLY(TOCL_IR_SHIFTED_CHEBYSHEV_V, "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_v",
         SHIFTED_CHEBYSHEV_POLYNOMIAL_V),
    POLY(TOCL_IR_SHIFTED_CHEBYSHEV_W, "shifted_chebyshev_polynomial_w", "shifted_chebyshev_polynomial_w",
         SHIFTED_CHEBYSHEV_POLYNOMIAL_W),
    POLY(TOCL_IR_HERMITE_H, "hermite_polynomial_h", "hermite_polynomial_h", HERMITE_POLYNOMIAL_H),
    POLY(TOCL_IR_HERMITE_HE, "hermite_polynomial_he", "hermite_polynomial_he", HERMITE_POLYNOMIAL_HE),
    POLY(TOCL_IR_LAGUERRE_L, "laguerre_polynomial_l", "laguerre_polynomial_l", LAGUERRE_POLYNOMIAL_L),
    POLY(TOCL_IR_LEGENDRE_P, "legendre_polynomial_p", "legendre_polynomial_p", LEGENDRE_POLYNOMIAL_P),
    /* frexp: OpenCL's frexp, which gives 0 as the exponent of 0, inf and
     * NaN as glibc does; the exponent is a float holding an integer (exact),
     * cast to int32 by whoever builds the graph. */
    ROWH(TOCL_IR_FREXP_MANTISSA, "frexp_mantissa", 1, TOCL_IR_SIG_SAME, "tocl_frexp_m_%T(%0)", NA, NA, h_frexp_m,
         NULL),
    ROWH(TOCL_IR_FREXP_EXPONENT, "frexp_exponent", 1, TOCL_IR_SIG_SAME, "tocl_frexp_e_%T(%0)", NA, NA, h_frexp_e,
         NULL),
};

const tocl_ir_op_info *tocl_ir_op_info_get(tocl_ir_op op) {
    if ((int)op < 0 || op >= TOCL_IR_OP_COUNT || !op_table[op].name)
        return NULL;
    return &op_table[op];
}

const char *tocl_ir_op_name(tocl_ir_op op) {
    const tocl_ir_op_info *info = tocl_ir_op_info_get(op);
    return info ? info->name : "invalid";
}

const char *tocl_ir_op_formula(tocl_ir_op op, tocl_dtype cls) {
    const tocl_ir_op_info *info = tocl_ir_op_info_get(op);
    if (!info || (int)cls < 0 || cls >= TOCL_NUM_DTYPES)
        return NULL;
    const char *f;
    if (tocl_dtype_is_float(cls))
        f = info->f_float;
    else if (cls == TOCL_BOOL)
        f = info->f_bool ? info->f_bool : info->f_int;
    else
        f = info->f_int;
    return (f && *f) ? f : NULL;
}

const char *tocl_ir_op_helper(tocl_ir_op op, tocl_dtype cls) {
    const tocl_ir_op_info *info = tocl_ir_op_info_get(op);
    if (!info || !tocl_ir_op_formula(op, cls))
        return NULL;
    return tocl_dtype_is_float(cls) ? info->h_float : info->h_int;
}
