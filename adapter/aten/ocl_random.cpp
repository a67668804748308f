// ocl_random.cpp - uniform_ and normal_ from the device's Philox generator:
// reproducible for a seed, independent of layout and launch shape.
#include <ATen/core/DistributionsHelper.h>
#include <ATen/core/Generator.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <mutex>

#include "../runtime/ocl_generator.h"
#include "ocl_common.h"

namespace torch_ocl {
namespace {

// Lock the generator, take (seed, offset) and advance by what this call uses.
std::pair<uint64_t, uint64_t> philox_args(const std::optional<at::Generator>& gen, const at::Tensor& self) {
  int dev = self.device().index();
  auto* g = at::get_generator_or_default<OclGenerator>(gen, default_generator(dev));
  std::lock_guard<std::mutex> lock(g->mutex_);
  uint64_t counters = (static_cast<uint64_t>(self.numel()) + 3) / 4;
  return {g->current_seed(), g->reserve(counters)};
}

void check_float(const at::Tensor& self, const char* op) {
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), "torch_ocl: ", op,
              " is implemented for floating dtypes on ocl, got ", self.scalar_type());
}

at::Tensor& uniform_(at::Tensor& self, double from, double to, std::optional<at::Generator> gen) {
  check_float(self, "uniform_");
  TORCH_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from,
              " > to=", to);
  if (self.numel() == 0)
    return self;
  c10::DeviceGuard guard(self.device());
  auto [seed, offset] = philox_args(gen, self);
  int dev = self.device().index();
  tocl_tensor t = to_tocl_tensor(self);
  TOCL_CHECK(tocl_op_uniform(dev, tocl_stream_current(dev), &t, from, to, seed, offset));
  return self;
}

at::Tensor& normal_(at::Tensor& self, double mean, double std, std::optional<at::Generator> gen) {
  check_float(self, "normal_");
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  if (self.numel() == 0)
    return self;
  c10::DeviceGuard guard(self.device());
  auto [seed, offset] = philox_args(gen, self);
  int dev = self.device().index();
  tocl_tensor t = to_tocl_tensor(self);
  TOCL_CHECK(tocl_op_normal(dev, tocl_stream_current(dev), &t, mean, std, seed, offset));
  return self;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("uniform_", uniform_);
  m.impl("normal_", normal_);
}

}  // namespace torch_ocl
