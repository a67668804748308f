// ocl_amp_ops.cpp - mixed precision: the autocast cast policies for the
// AutocastPrivateUse1 key, and the two kernels behind torch.amp.GradScaler:
// _amp_foreach_non_finite_check_and_unscale_ and _amp_update_scale_.
//
// PyTorch registers autocast wrappers for CUDA, CPU, XPU, MPS, ... but not
// for PrivateUse1, so torch.autocast("ocl") gets CUDA's op lists from the
// shared AT_FORALL_* macros here: matmul/linear/conv in the lower dtype;
// softmax, norms, losses, exp/log and reductions in float32; mixed inputs of
// the promote ops in the widest dtype; every other op falls through.
//
// Neither waits on the host. The non-finite check is a reduction per grad
// (any(!isfinite(x)) into one bool slot per tensor) next to an elementwise
// unscale; one last reduction over the slots sets found_inf. The scale update
// is one elementwise kernel over the one-element scale, growth tracker and
// found_inf, with the CPU kernel's branches as selects.
#include <ATen/ATen.h>
#include <ATen/TensorIterator.h>
#include <ATen/autocast_mode.h>
#include <torch/library.h>

#include <optional>
#include <vector>

#include "ocl_elementwise.h"
#include "tocl/device.h"
#include "tocl/reduce.h"
#include "ocl_complex_route.h"

namespace torch_ocl {
namespace {

using at::Tensor;

void check_one(const Tensor& t, const char* name, c10::ScalarType dt, const char* dt_name, const Tensor& like) {
  TORCH_CHECK(t.numel() == 1, name, " must be a 1-element tensor.");
  TORCH_CHECK(t.scalar_type() == dt, name, " must be a ", dt_name, " tensor.");
  TORCH_CHECK(t.device() == like.device(), name, " must be on ", like.device(), " but is on ", t.device(), ".");
}

// dst (bool slot, a 0-dim view) = any(!isfinite(src)) over every element.
void any_non_finite(const Tensor& src, const Tensor& dst) {
  tocl_ir_graph g;
  tocl_ir_init(&g);
  int x = tocl_ir_input(&g, to_tocl_dtype(src.scalar_type()));
  int bad = tocl_ir_unary(&g, TOCL_IR_LOGICAL_NOT, TOCL_I32,  // no bool formula for logical_not
                          tocl_ir_unary(&g, TOCL_IR_ISFINITE, tocl_dtype_compute(to_tocl_dtype(src.scalar_type())), x));
  tocl_ir_output(&g, bad, TOCL_BOOL);
  TORCH_CHECK(!g.overflow, "torch_ocl: internal error building the non-finite check");
  tocl_reduce_desc d{TOCL_REDUCE_ANY, TOCL_BOOL, TOCL_REDUCE_MAP_NONE, TOCL_REDUCE_FINAL_NONE, 0, 0, &g, 0};
  int64_t nd = src.dim();
  // The output has the input's rank with size 1 in every (reduced) dim.
  tocl_tensor out = to_tocl_tensor(dst.as_strided(std::vector<int64_t>(nd, 1), std::vector<int64_t>(nd, 0)));
  tocl_tensor in = to_tocl_tensor(src);
  int dev = src.device().index();
  TOCL_CHECK(tocl_reduce_run(dev, tocl_stream_current(dev), &d, 1, &out, 1, &in, nullptr));
}

// t *= inv_scale (inv_scale a one-element device tensor), computed in t's
// compute dtype as the CPU kernel does.
void unscale(const Tensor& t, const Tensor& inv_scale) {
  at::TensorIteratorConfig cfg;
  cfg.check_all_same_dtype(false).resize_outputs(false).add_output(t).add_const_input(t).add_const_input(inv_scale);
  auto iter = cfg.build();
  EwGraph g(iter, t.scalar_type());
  g.output(0, g.binary(TOCL_IR_MUL, g.input(0), g.input(1)));
  g.run();
}

void non_finite_check_and_unscale(at::TensorList self, Tensor& found_inf, const Tensor& inv_scale) {
  if (self.empty())
    return;
  const Tensor& first = self[0];
  check_one(inv_scale, "inv_scale", at::kFloat, "float", first);
  check_one(found_inf, "found_inf", at::kFloat, "float", first);
  for (const Tensor& t : self) {
    TORCH_CHECK(t.device() == first.device(), "one of scaled_grads was not on ", first.device(), " (got ",
                t.device(), ").");
    TORCH_CHECK(t.layout() == at::kStrided, "one of scaled_grads was not a strided tensor.");
    TORCH_CHECK(at::isFloatingType(t.scalar_type()),
                "\"_amp_foreach_non_finite_check_and_unscale\" not implemented for '", t.scalar_type(), "'");
  }
  c10::DeviceGuard guard(first.device());
  Tensor inv = inv_scale.reshape({});
  Tensor flags = at::empty({static_cast<int64_t>(self.size())}, first.options().dtype(at::kBool));
  for (size_t i = 0; i < self.size(); i++) {
    // Check before unscaling: the check reads the grad as it came in.
    any_non_finite(self[i], flags[static_cast<int64_t>(i)]);
    unscale(self[i], inv);
  }
  // found_inf = any(flags) ? 1 : found_inf. Pre-zeroing found_inf is the caller's job.
  Tensor any = at::empty({}, flags.options());
  {
    tocl_ir_graph g;
    tocl_ir_init(&g);
    tocl_ir_output(&g, tocl_ir_input(&g, TOCL_BOOL), TOCL_BOOL);
    tocl_reduce_desc d{TOCL_REDUCE_ANY, TOCL_BOOL, TOCL_REDUCE_MAP_NONE, TOCL_REDUCE_FINAL_NONE, 0, 0, &g, 0};
    tocl_tensor out = to_tocl_tensor(any.as_strided({1}, {0}));
    tocl_tensor in = to_tocl_tensor(flags);
    int dev = first.device().index();
    TOCL_CHECK(tocl_reduce_run(dev, tocl_stream_current(dev), &d, 1, &out, 1, &in, nullptr));
  }
  Tensor fi = found_inf.reshape({});
  at::TensorIteratorConfig cfg;
  cfg.check_all_same_dtype(false).resize_outputs(false).add_output(fi).add_const_input(any).add_const_input(fi);
  auto iter = cfg.build();
  EwGraph g(iter, at::kFloat);
  g.output(0, g.ternary(TOCL_IR_WHERE, g.raw_input(0), g.scalar(1.0), g.input(1)));
  g.run();
}

// As PyTorch's CPU/CUDA kernels: on found_inf scale *= backoff and the
// tracker resets; otherwise the tracker counts up and at growth_interval the
// scale grows (unless that overflows float32) and the tracker resets. The
// product is taken in float64 where the device has it, as on the CPU; without
// fp64 it is rounded in float32 (equal whenever the factor is a float, as the
// usual 2.0 and 0.5 are).
Tensor& update_scale(Tensor& self, Tensor& growth_tracker, const Tensor& found_inf, double growth_factor,
                     double backoff_factor, int64_t growth_interval) {
  check_one(self, "current_scale", at::kFloat, "float", self);
  check_one(growth_tracker, "growth_tracker", at::kInt, "int", self);
  check_one(found_inf, "found_inf", at::kFloat, "float", self);
  c10::DeviceGuard guard(self.device());
  Tensor sc = self.reshape({}), tr = growth_tracker.reshape({}), fi = found_inf.reshape({});
  at::TensorIteratorConfig cfg;
  cfg.check_all_same_dtype(false).resize_outputs(false);
  cfg.add_output(sc).add_output(tr).add_const_input(sc).add_const_input(tr).add_const_input(fi);
  auto iter = cfg.build();
  EwGraph g(iter, at::kFloat);
  int s = g.input(0), t = g.raw_input(1), found = g.binary(TOCL_IR_NE, g.input(2), g.scalar(0.0));
  int succ = g.binary(TOCL_IR_ADD, t, g.scalar(1, TOCL_I32), TOCL_I32);
  int grow = g.binary(TOCL_IR_EQ, g.cast(succ, TOCL_I64), g.scalar(growth_interval, TOCL_I64), TOCL_I64);
  // float scale * double factor, rounded once to float as on the CPU.
  tocl_device_props props;
  TOCL_CHECK(tocl_device_props_get(self.device().index(), &props));
  tocl_dtype wide = props.has_fp64 ? TOCL_F64 : TOCL_F32;
  auto times = [&](double f) {
    return g.cast(g.binary(TOCL_IR_MUL, g.cast(s, wide), g.scalar(f, wide), wide), TOCL_F32);
  };
  int grown = times(growth_factor);
  grown = g.ternary(TOCL_IR_WHERE, g.unary(TOCL_IR_ISFINITE, grown), grown, s);
  int backed = times(backoff_factor);
  int zero = g.scalar(0, TOCL_I32);
  g.output(0, g.ternary(TOCL_IR_WHERE, found, backed, g.ternary(TOCL_IR_WHERE, grow, grown, s)));
  g.output(1, g.ternary(TOCL_IR_WHERE, found, zero, g.ternary(TOCL_IR_WHERE, grow, zero, succ, TOCL_I32), TOCL_I32));
  g.run();
  return self;
}

Tensor binary_cross_entropy_refused(const Tensor&, const Tensor&, const std::optional<Tensor>&, int64_t) {
  TORCH_CHECK(false,
              "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast: a sigmoid "
              "computed in float16/bfloat16 right before them loses the precision they need. Use "
              "torch.nn.functional.binary_cross_entropy_with_logits or torch.nn.BCEWithLogitsLoss, which are safe "
              "to autocast, or compute the loss outside the autocast region.");
}

}  // namespace

namespace autocast_policies {
using namespace at;  // the AT_FORALL_* signatures name Tensor, Scalar, ... unqualified

TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFallthrough());
}

TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
#define TOCL_AC_LOW(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
#define TOCL_AC_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
#define TOCL_AC_FP32_OPT(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32_set_opt_dtype)
#define TOCL_AC_PROMOTE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)
  AT_FORALL_LOWER_PRECISION_FP(TOCL_AC_LOW)
  AT_FORALL_FP32(TOCL_AC_FP32)
  AT_FORALL_FP32_SET_OPT_DTYPE(TOCL_AC_FP32_OPT)
  AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(KERNEL_DIFFERENT_REDISPATCH_SIGNATURE_PRIVATEUSEONE)
  AT_FORALL_PROMOTE(TOCL_AC_PROMOTE)
#undef TOCL_AC_LOW
#undef TOCL_AC_FP32
#undef TOCL_AC_FP32_OPT
#undef TOCL_AC_PROMOTE
  m.impl("binary_cross_entropy", binary_cross_entropy_refused);
}

}  // namespace autocast_policies

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  m.impl("_amp_foreach_non_finite_check_and_unscale_", non_finite_check_and_unscale);
  m.impl("_amp_update_scale_", update_scale);
}

}  // namespace torch_ocl
