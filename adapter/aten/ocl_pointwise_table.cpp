// ocl_pointwise_table.cpp - the pointwise table: every aten overload that is
// exactly one IR op (runtime/codegen/ir_ops.c) over a TensorIterator, as one
// row (overloads -> IR op, iterator kind, dtype set). The same rows register
// the kernels and are exported to Python (ocl_pointwise_table.h), so what the
// torch.compile lowering reads is what eager runs. Ops with extra checks,
// parameters or formulas of several IR nodes stay hand-written in the family
// files (ocl_unary_ops.cpp, ocl_binary_ops.cpp, ...); add, sub, mul and div
// run through run_binary (alpha, no dtype check) in ocl_binary_ops.cpp.
#include <torch/library.h>

#include <type_traits>
#include <utility>

#include "ocl_pointwise.h"
#include "ocl_pointwise_table.h"
#include "ocl_complex_route.h"

namespace torch_ocl {
namespace {

// The arguments of a row's overloads after the first tensor: a tensor, or a
// Python number on one side (wrapped as a 0-dim CPU tensor, Binary::fn_s).
enum class Args { Tensors, TensorScalar, ScalarTensor };

struct Row {
  // Overload names, nullptr where the overload is not registered (it is
  // composite, or does not exist).
  const char* fn;
  const char* inplace;
  const char* out;
  tocl_ir_op op;
  Iter iter;
  unsigned dtypes;  // what the iterator's common dtype may be (check_dtype)
  Args args = Args::Tensors;
};

constexpr unsigned kAll = kDtAll, kNoBool = kDtNoBool, kFloat = kDtFloat, kIntBool = kDtInt | kDtBool,
                   kNoHalf = kDtNoHalf;
constexpr Iter U = Iter::Unary, UF = Iter::UnaryFloat, B = Iter::Binary, BF = Iter::BinaryFloat, C = Iter::Compare;
constexpr Args TS = Args::TensorScalar, ST = Args::ScalarTensor;

constexpr Row kTable[] = {
    // unary math; abs and abs_ decompose into abs.out
    {nullptr, nullptr, "abs.out", TOCL_IR_ABS, U, kNoBool},
    {"sign", "sign_", "sign.out", TOCL_IR_SIGN, U, kAll},
    {"sgn", "sgn_", "sgn.out", TOCL_IR_SIGN, U, kAll},
    {"reciprocal", "reciprocal_", "reciprocal.out", TOCL_IR_RECIPROCAL, UF, kAll},
    {"sqrt", "sqrt_", "sqrt.out", TOCL_IR_SQRT, UF, kAll},
    {"rsqrt", "rsqrt_", "rsqrt.out", TOCL_IR_RSQRT, UF, kAll},
    {"exp", "exp_", "exp.out", TOCL_IR_EXP, UF, kAll},
    {"exp2", "exp2_", "exp2.out", TOCL_IR_EXP2, UF, kAll},
    {"expm1", "expm1_", "expm1.out", TOCL_IR_EXPM1, UF, kAll},
    {"log", "log_", "log.out", TOCL_IR_LOG, UF, kAll},
    {"log2", "log2_", "log2.out", TOCL_IR_LOG2, UF, kAll},
    {"log10", "log10_", "log10.out", TOCL_IR_LOG10, UF, kAll},
    {"log1p", "log1p_", "log1p.out", TOCL_IR_LOG1P, UF, kAll},
    {"sin", "sin_", "sin.out", TOCL_IR_SIN, UF, kAll},
    {"cos", "cos_", "cos.out", TOCL_IR_COS, UF, kAll},
    {"tan", "tan_", "tan.out", TOCL_IR_TAN, UF, kAll},
    {"asin", "asin_", "asin.out", TOCL_IR_ASIN, UF, kAll},
    {"acos", "acos_", "acos.out", TOCL_IR_ACOS, UF, kAll},
    {"atan", "atan_", "atan.out", TOCL_IR_ATAN, UF, kAll},
    {"sinh", "sinh_", "sinh.out", TOCL_IR_SINH, UF, kAll},
    {"cosh", "cosh_", "cosh.out", TOCL_IR_COSH, UF, kAll},
    {"tanh", "tanh_", "tanh.out", TOCL_IR_TANH, UF, kAll},
    {"asinh", "asinh_", "asinh.out", TOCL_IR_ASINH, UF, kAll},
    {"acosh", "acosh_", "acosh.out", TOCL_IR_ACOSH, UF, kAll},
    {"atanh", "atanh_", "atanh.out", TOCL_IR_ATANH, UF, kAll},
    {"erf", "erf_", "erf.out", TOCL_IR_ERF, UF, kAll},
    {"erfc", "erfc_", "erfc.out", TOCL_IR_ERFC, UF, kAll},
    {"erfinv", "erfinv_", "erfinv.out", TOCL_IR_ERFINV, UF, kAll},
    {"lgamma", "lgamma_", "lgamma.out", TOCL_IR_LGAMMA, UF, kAll},
    {"digamma", "digamma_", "digamma.out", TOCL_IR_DIGAMMA, UF, kAll},
    {"sigmoid", "sigmoid_", "sigmoid.out", TOCL_IR_SIGMOID, UF, kAll},
    {"floor", "floor_", "floor.out", TOCL_IR_FLOOR, U, kNoBool},
    {"ceil", "ceil_", "ceil.out", TOCL_IR_CEIL, U, kNoBool},
    {"round", "round_", "round.out", TOCL_IR_ROUND, U, kNoBool},
    {"trunc", "trunc_", "trunc.out", TOCL_IR_TRUNC, U, kNoBool},
    {"frac", "frac_", "frac.out", TOCL_IR_FRAC, U, kFloat},
    {"bitwise_not", "bitwise_not_", "bitwise_not.out", TOCL_IR_BITWISE_NOT, U, kIntBool},
    // activations that are one table op
    {"silu", "silu_", "silu.out", TOCL_IR_SILU, U, kFloat},
    {"mish", "mish_", "mish.out", TOCL_IR_MISH, U, kFloat},
    // binary arithmetic (add, sub, mul, div: ocl_binary_ops.cpp)
    {"floor_divide", "floor_divide_.Tensor", "floor_divide.out", TOCL_IR_FLOOR_DIV, B, kNoBool},
    {"remainder.Tensor", "remainder_.Tensor", "remainder.Tensor_out", TOCL_IR_REMAINDER, B, kNoBool},
    {"remainder.Scalar_Tensor", nullptr, nullptr, TOCL_IR_REMAINDER, B, kNoBool, ST},
    {"fmod.Tensor", "fmod_.Tensor", "fmod.Tensor_out", TOCL_IR_FMOD, B, kNoBool},
    {"pow.Tensor_Tensor", "pow_.Tensor", "pow.Tensor_Tensor_out", TOCL_IR_POW, B, kNoBool},
    {"atan2", "atan2_", "atan2.out", TOCL_IR_ATAN2, BF, kAll},
    {"hypot", "hypot_", "hypot.out", TOCL_IR_HYPOT, B, kFloat},
    {"copysign.Tensor", "copysign_.Tensor", "copysign.out", TOCL_IR_COPYSIGN, BF, kAll},
    {"xlogy.Tensor", "xlogy_.Tensor", "xlogy.OutTensor", TOCL_IR_XLOGY, BF, kAll},
    {"maximum", nullptr, "maximum.out", TOCL_IR_MAXIMUM, B, kAll},
    {"minimum", nullptr, "minimum.out", TOCL_IR_MINIMUM, B, kAll},
    {"fmax", nullptr, "fmax.out", TOCL_IR_FMAX, B, kAll},
    {"fmin", nullptr, "fmin.out", TOCL_IR_FMIN, B, kAll},
    {"clamp_min.Tensor", "clamp_min_.Tensor", "clamp_min.Tensor_out", TOCL_IR_MAXIMUM, B, kAll},
    {"clamp_max.Tensor", "clamp_max_.Tensor", "clamp_max.Tensor_out", TOCL_IR_MINIMUM, B, kAll},
    // bitwise ops and shifts
    {"bitwise_and.Tensor", "bitwise_and_.Tensor", "bitwise_and.Tensor_out", TOCL_IR_BITWISE_AND, B, kIntBool},
    {"bitwise_or.Tensor", "bitwise_or_.Tensor", "bitwise_or.Tensor_out", TOCL_IR_BITWISE_OR, B, kIntBool},
    {"bitwise_xor.Tensor", "bitwise_xor_.Tensor", "bitwise_xor.Tensor_out", TOCL_IR_BITWISE_XOR, B, kIntBool},
    {"bitwise_left_shift.Tensor", "bitwise_left_shift_.Tensor", "bitwise_left_shift.Tensor_out", TOCL_IR_LSHIFT, B,
     kDtInt},
    {"bitwise_right_shift.Tensor", "bitwise_right_shift_.Tensor", "bitwise_right_shift.Tensor_out", TOCL_IR_RSHIFT,
     B, kDtInt},
    {"__lshift__.Tensor", "__ilshift__.Tensor", nullptr, TOCL_IR_LSHIFT, B, kDtInt},
    {"__lshift__.Scalar", "__ilshift__.Scalar", nullptr, TOCL_IR_LSHIFT, B, kDtInt, TS},
    {"__rshift__.Tensor", "__irshift__.Tensor", nullptr, TOCL_IR_RSHIFT, B, kDtInt},
    {"__rshift__.Scalar", "__irshift__.Scalar", nullptr, TOCL_IR_RSHIFT, B, kDtInt, TS},
    // comparisons: the iterator promotes to the common dtype and stores the
    // bool result in the output's dtype; logical_* fn/in-place decompose into .out
    {"eq.Tensor", "eq_.Tensor", "eq.Tensor_out", TOCL_IR_EQ, C, kAll},
    {"eq.Scalar", "eq_.Scalar", "eq.Scalar_out", TOCL_IR_EQ, C, kAll, TS},
    {"ne.Tensor", "ne_.Tensor", "ne.Tensor_out", TOCL_IR_NE, C, kAll},
    {"ne.Scalar", "ne_.Scalar", "ne.Scalar_out", TOCL_IR_NE, C, kAll, TS},
    {"lt.Tensor", "lt_.Tensor", "lt.Tensor_out", TOCL_IR_LT, C, kAll},
    {"lt.Scalar", "lt_.Scalar", "lt.Scalar_out", TOCL_IR_LT, C, kAll, TS},
    {"le.Tensor", "le_.Tensor", "le.Tensor_out", TOCL_IR_LE, C, kAll},
    {"le.Scalar", "le_.Scalar", "le.Scalar_out", TOCL_IR_LE, C, kAll, TS},
    {"gt.Tensor", "gt_.Tensor", "gt.Tensor_out", TOCL_IR_GT, C, kAll},
    {"gt.Scalar", "gt_.Scalar", "gt.Scalar_out", TOCL_IR_GT, C, kAll, TS},
    {"ge.Tensor", "ge_.Tensor", "ge.Tensor_out", TOCL_IR_GE, C, kAll},
    {"ge.Scalar", "ge_.Scalar", "ge.Scalar_out", TOCL_IR_GE, C, kAll, TS},
    {nullptr, nullptr, "logical_and.out", TOCL_IR_LOGICAL_AND, C, kAll},
    {nullptr, nullptr, "logical_or.out", TOCL_IR_LOGICAL_OR, C, kAll},
    {nullptr, nullptr, "logical_xor.out", TOCL_IR_LOGICAL_XOR, C, kAll},
    // special functions (runtime/codegen/ir_special.c); integers promote to
    // float, and float16/bfloat16 are refused where the CPU refuses them
    {"i0", "i0_", "i0.out", TOCL_IR_I0, UF, kAll},
    {"special_i0e", nullptr, "special_i0e.out", TOCL_IR_I0E, UF, kAll},
    {"special_i1", nullptr, "special_i1.out", TOCL_IR_I1, UF, kAll},
    {"special_i1e", nullptr, "special_i1e.out", TOCL_IR_I1E, UF, kAll},
    {"special_bessel_j0", nullptr, "special_bessel_j0.out", TOCL_IR_BESSEL_J0, UF, kNoHalf},
    {"special_bessel_j1", nullptr, "special_bessel_j1.out", TOCL_IR_BESSEL_J1, UF, kNoHalf},
    {"special_bessel_y0", nullptr, "special_bessel_y0.out", TOCL_IR_BESSEL_Y0, UF, kNoHalf},
    {"special_bessel_y1", nullptr, "special_bessel_y1.out", TOCL_IR_BESSEL_Y1, UF, kNoHalf},
    {"special_modified_bessel_i0", nullptr, "special_modified_bessel_i0.out", TOCL_IR_MODIFIED_BESSEL_I0, UF,
     kNoHalf},
    {"special_modified_bessel_i1", nullptr, "special_modified_bessel_i1.out", TOCL_IR_MODIFIED_BESSEL_I1, UF,
     kNoHalf},
    {"special_modified_bessel_k0", nullptr, "special_modified_bessel_k0.out", TOCL_IR_MODIFIED_BESSEL_K0, UF,
     kNoHalf},
    {"special_modified_bessel_k1", nullptr, "special_modified_bessel_k1.out", TOCL_IR_MODIFIED_BESSEL_K1, UF,
     kNoHalf},
    {"special_scaled_modified_bessel_k0", nullptr, "special_scaled_modified_bessel_k0.out",
     TOCL_IR_SCALED_MODIFIED_BESSEL_K0, UF, kNoHalf},
    {"special_scaled_modified_bessel_k1", nullptr, "special_scaled_modified_bessel_k1.out",
     TOCL_IR_SCALED_MODIFIED_BESSEL_K1, UF, kNoHalf},
    {"special_spherical_bessel_j0", nullptr, "special_spherical_bessel_j0.out", TOCL_IR_SPHERICAL_BESSEL_J0, UF,
     kNoHalf},
    {"special_airy_ai", nullptr, "special_airy_ai.out", TOCL_IR_AIRY_AI, UF, kNoHalf},
    {"special_erfcx", nullptr, "special_erfcx.out", TOCL_IR_ERFCX, UF, kNoHalf},
    {"special_ndtri", nullptr, "special_ndtri.out", TOCL_IR_NDTRI, UF, kNoHalf},
    {"special_log_ndtr", nullptr, "special_log_ndtr.out", TOCL_IR_LOG_NDTR, UF, kNoHalf},
    {"special_entr", nullptr, "special_entr.out", TOCL_IR_ENTR, UF, kAll},
    {"sinc", "sinc_", "sinc.out", TOCL_IR_SINC, UF, kAll},
    {"special_xlog1py", nullptr, "special_xlog1py.out", TOCL_IR_XLOG1PY, BF, kAll},
    {"special_zeta", nullptr, "special_zeta.out", TOCL_IR_ZETA, BF, kNoHalf},
    {"igamma", "igamma_", "igamma.out", TOCL_IR_IGAMMA, B, kFloat},
    {"igammac", "igammac_", "igammac.out", TOCL_IR_IGAMMAC, B, kFloat},
    {"logaddexp", nullptr, "logaddexp.out", TOCL_IR_LOGADDEXP, B, kFloat},
    {"logaddexp2", nullptr, "logaddexp2.out", TOCL_IR_LOGADDEXP2, B, kFloat},
    {"special_chebyshev_polynomial_t", nullptr, "special_chebyshev_polynomial_t.out", TOCL_IR_CHEBYSHEV_T, BF,
     kNoHalf},
    {"special_chebyshev_polynomial_u", nullptr, "special_chebyshev_polynomial_u.out", TOCL_IR_CHEBYSHEV_U, BF,
     kNoHalf},
    {"special_chebyshev_polynomial_v", nullptr, "special_chebyshev_polynomial_v.out", TOCL_IR_CHEBYSHEV_V, BF,
     kNoHalf},
    {"special_chebyshev_polynomial_w", nullptr, "special_chebyshev_polynomial_w.out", TOCL_IR_CHEBYSHEV_W, BF,
     kNoHalf},
    {"special_shifted_chebyshev_polynomial_t", nullptr, "special_shifted_chebyshev_polynomial_t.out",
     TOCL_IR_SHIFTED_CHEBYSHEV_T, BF, kNoHalf},
    {"special_shifted_chebyshev_polynomial_u", nullptr, "special_shifted_chebyshev_polynomial_u.out",
     TOCL_IR_SHIFTED_CHEBYSHEV_U, BF, kNoHalf},
    {"special_shifted_chebyshev_polynomial_v", nullptr, "special_shifted_chebyshev_polynomial_v.out",
     TOCL_IR_SHIFTED_CHEBYSHEV_V, BF, kNoHalf},
    {"special_shifted_chebyshev_polynomial_w", nullptr, "special_shifted_chebyshev_polynomial_w.out",
     TOCL_IR_SHIFTED_CHEBYSHEV_W, BF, kNoHalf},
    {"special_hermite_polynomial_h", nullptr, "special_hermite_polynomial_h.out", TOCL_IR_HERMITE_H, BF, kNoHalf},
    {"special_hermite_polynomial_he", nullptr, "special_hermite_polynomial_he.out", TOCL_IR_HERMITE_HE, BF,
     kNoHalf},
    {"special_laguerre_polynomial_l", nullptr, "special_laguerre_polynomial_l.out", TOCL_IR_LAGUERRE_L, BF,
     kNoHalf},
    {"special_legendre_polynomial_p", nullptr, "special_legendre_polynomial_p.out", TOCL_IR_LEGENDRE_P, BF,
     kNoHalf},
};
constexpr size_t kRows = sizeof(kTable) / sizeof(kTable[0]);

constexpr bool is_unary(Iter k) { return k == Iter::Unary || k == Iter::UnaryFloat || k == Iter::UnaryBool; }

// The out overload of every row builds its iterator over the out argument
// before anything writes it (TOCL_ITER_OUT, ocl_iter_out.h).
template <class Fn, class Inplace, class Out>
void register_forms(RoutedLibrary& m, const Row& r, Fn fn, Inplace inplace, Out out) {
  if (r.fn)
    m.impl(r.fn, fn);
  if constexpr (!std::is_same_v<Inplace, std::nullptr_t>)
    if (r.inplace)
      m.impl(r.inplace, inplace);
  if constexpr (!std::is_same_v<Out, std::nullptr_t>)
    if (r.out)
      TOCL_ITER_OUT(m, r.out, out);
}

template <size_t I>
void register_row(RoutedLibrary& m) {
  constexpr const Row& r = kTable[I];
  if constexpr (is_unary(r.iter)) {
    static_assert(r.args == Args::Tensors, "a unary row takes one tensor");
    using F = Unary<r.op, r.iter, r.dtypes>;
    register_forms(m, r, F::fn, F::inplace, F::out);
  } else {
    using F = Binary<r.op, r.iter, r.dtypes>;
    if constexpr (r.args == Args::Tensors)
      register_forms(m, r, F::fn, F::inplace, F::out);
    else if constexpr (r.args == Args::TensorScalar)
      register_forms(m, r, F::fn_s, F::inplace_s, F::out_s);
    else
      register_forms(m, r, F::fn_st, nullptr, F::out_st);
  }
}

template <size_t... I>
void register_rows(RoutedLibrary& m, std::index_sequence<I...>) {
  (register_row<I>(m), ...);
}

const char* iter_name(Iter k) {
  switch (k) {
    case Iter::Unary: return "unary";
    case Iter::UnaryFloat: return "unary_float";
    case Iter::UnaryBool: return "unary_bool";
    case Iter::Binary: return "binary";
    case Iter::BinaryFloat: return "binary_float";
    case Iter::Compare: return "compare";
  }
  return "invalid";
}

std::vector<std::string> dtype_names(unsigned d) {
  std::vector<std::string> v;
  if (d & kDtHalf)
    v.insert(v.end(), {"float16", "bfloat16"});
  if (d & kDtFloat32)
    v.insert(v.end(), {"float32", "float64"});
  if (d & kDtInt)
    v.insert(v.end(), {"uint8", "int8", "int16", "int32", "int64"});
  if (d & kDtBool)
    v.push_back("bool");
  return v;
}

}  // namespace

std::vector<PointwiseEntry> pointwise_table() {
  std::vector<PointwiseEntry> t;
  for (const Row& r : kTable)
    for (const char* name : {r.fn, r.inplace, r.out})
      if (name)
        t.emplace_back(name, tocl_ir_op_name(r.op), iter_name(r.iter), dtype_names(r.dtypes));
  return t;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  register_rows(m, std::make_index_sequence<kRows>());
}

}  // namespace torch_ocl
