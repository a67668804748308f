// ocl_random.cpp - random ops from the device's Philox generator:
// reproducible for a seed, independent of layout and launch shape.
// uniform_/normal_, random_, bernoulli, exponential_/geometric_/cauchy_/
// log_normal_, normal with tensor mean/std, native_dropout, randperm and
// multinomial. Argument checks come from PyTorch's own DistributionTemplates
// (so errors match the CPU); the kernels are in kernels/philox.cl.
#include <ATen/Dispatch.h>
#include <ATen/ExpandUtils.h>
#include <ATen/core/DistributionsHelper.h>
#include <ATen/core/Generator.h>
#include <ATen/native/DistributionTemplates.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TensorFactories.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <cmath>
#include <limits>
#include <mutex>

#include "../runtime/ocl_generator.h"
#include "ocl_value_range.h"
#include "ocl_common.h"
#include "tocl/random.h"
#include "ocl_complex_route.h"

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

// NotImplementedError, as the CPU's and CUDA's floating-only dispatch raises.
void check_float(const at::Tensor& self, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()), "torch_ocl: ", op,
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

// --------------------------------------------------------------------------- other distributions

// Reserve `counters` Philox counters of the generator for device dev.
std::pair<uint64_t, uint64_t> reserve(const std::optional<at::Generator>& gen, int dev, uint64_t counters) {
  auto* g = at::get_generator_or_default<OclGenerator>(gen, default_generator(dev));
  std::lock_guard<std::mutex> lock(g->mutex_);
  return {g->current_seed(), g->reserve(counters)};
}

uint64_t groups_of_4(int64_t n) { return (static_cast<uint64_t>(n) + 3) / 4; }

// One tocl_op_random launch over self (p: dense float32 probabilities).
void launch_random(const at::Tensor& self, tocl_rand_kind kind, uint64_t range, int64_t base, double a, double b,
                   const std::optional<at::Generator>& gen, const at::Tensor* p = nullptr) {
  if (self.numel() == 0)
    return;
  c10::DeviceGuard guard(self.device());
  int dev = self.device().index();
  auto [seed, offset] = reserve(gen, dev, groups_of_4(self.numel()));
  tocl_rand_args args{kind, range, base, a, b};
  tocl_tensor t = to_tocl_tensor(self);
  tocl_tensor pt{};
  if (p)
    pt = to_tocl_tensor(*p);
  TOCL_CHECK(tocl_op_random(dev, tocl_stream_current(dev), &t, &args, p ? &pt : nullptr, seed, offset));
}

// True when any value of t (read as float32) is NaN or outside [lo, hi]:
// the CPU raises on such values, so this needs the answer on the host.
bool any_outside(const at::Tensor& t, double lo, double hi) {
  at::Tensor v = t.to(at::kFloat).contiguous();
  at::Tensor flag = at::zeros({1}, v.options().dtype(at::kInt));
  if (v.numel() == 0)
    return false;
  int dev = v.device().index();
  tocl_tensor tv = to_tocl_tensor(v), tf = to_tocl_tensor(flag);
  TOCL_CHECK(tocl_op_check_range(dev, tocl_stream_current(dev), &tv, lo, hi, &tf));
  return flag.item<int>() != 0;
}

// Kernel functors in the shape at::native::templates expects.
template <typename RNG>
struct RandomFromToKernel {
  void operator()(at::TensorIteratorBase& iter, uint64_t range, int64_t base, std::optional<at::Generator> gen) {
    launch_random(iter.tensor(0), TOCL_RANDK_FROM_TO, range, base, 0, 0, gen);
  }
  void operator()(at::TensorIteratorBase& iter, std::optional<at::Generator> gen) {
    auto t = iter.dtype();
    TORCH_CHECK(t == at::kLong || t == at::kDouble || t == at::kFloat || t == at::kBFloat16,
                "random_full_64_bits_range_kernel_cpu handles only int64, double, float and bfloat16");
    launch_random(iter.tensor(0), TOCL_RANDK_FROM_TO, 0, 0, 0, 0, gen);
  }
};

// random_() without bounds: [0, max] for integers, [0, 2^digits] for floats.
template <typename RNG>
struct RandomKernel {
  void operator()(at::TensorIteratorBase& iter, std::optional<at::Generator> gen) {
    uint64_t range = 0;
    AT_DISPATCH_ALL_TYPES_AND3(at::kHalf, at::kBFloat16, at::kBool, iter.dtype(), "random_kernel_cpu", [&] {
      if constexpr (std::is_same_v<scalar_t, bool>)
        range = 2;
      else if constexpr (std::is_integral_v<scalar_t>)
        range = static_cast<uint64_t>(std::numeric_limits<scalar_t>::max()) + 1;
      else
        range = (1ULL << std::numeric_limits<scalar_t>::digits) + 1;
    });
    launch_random(iter.tensor(0), TOCL_RANDK_FROM_TO, range, 0, 0, 0, gen);
  }
};

template <typename RNG>
struct ExponentialKernel {
  void operator()(at::TensorIteratorBase& iter, double lambda, std::optional<at::Generator> gen) {
    TORCH_CHECK(at::isFloatingType(iter.dtype()),
                "Exponential distribution is a continuous probability distribution. dtype must be a floating point "
                "but you specified ",
                iter.dtype());
    launch_random(iter.tensor(0), TOCL_RANDK_EXPONENTIAL, 0, 0, lambda, 0, gen);
  }
};

template <typename RNG>
struct GeometricKernel {
  void operator()(at::TensorIteratorBase& iter, double p, std::optional<at::Generator> gen) {
    AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, iter.dtype(), "geometric_cpu", [&] {});
    launch_random(iter.tensor(0), TOCL_RANDK_GEOMETRIC, 0, 0, p, 0, gen);
  }
};

template <typename RNG>
struct CauchyKernel {
  void operator()(at::TensorIteratorBase& iter, double median, double sigma, std::optional<at::Generator> gen) {
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, iter.dtype(), "cauchy_cpu", [&] {});
    launch_random(iter.tensor(0), TOCL_RANDK_CAUCHY, 0, 0, median, sigma, gen);
  }
};

template <typename RNG>
struct LogNormalKernel {
  void operator()(at::TensorIteratorBase& iter, double mean, double std, std::optional<at::Generator> gen) {
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, iter.dtype(), "log_normal_cpu", [&] {});
    launch_random(iter.tensor(0), TOCL_RANDK_LOG_NORMAL, 0, 0, mean, std, gen);
  }
};

template <typename RNG>
struct BernoulliKernel {
  void operator()(const at::TensorBase& self_base, double p, std::optional<at::Generator> gen) {
    at::Tensor self(self_base);
    AT_DISPATCH_ALL_TYPES_AND3(at::kBool, at::kBFloat16, at::kHalf, self.scalar_type(), "bernoulli_scalar_cpu_",
                               [&] {});
    // P(32 random bits < threshold) = threshold / 2^32
    auto threshold = static_cast<uint64_t>(std::nearbyint(p * 4294967296.0));
    launch_random(self, TOCL_RANDK_BERNOULLI, threshold, 0, 0, 0, gen);
  }
  void operator()(const at::TensorBase& self_base, const at::TensorBase& p_base, std::optional<at::Generator> gen) {
    at::Tensor self(self_base), p_(p_base);
    AT_DISPATCH_ALL_TYPES_AND3(at::kBool, at::kBFloat16, at::kHalf, self.scalar_type(), "bernoulli_tensor_cpu_self_",
                               [&] {});
    if (p_.scalar_type() != at::kDouble)
      AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, p_.scalar_type(), "bernoulli_tensor_cpu_p_", [&] {});
    at::Tensor p = p_.to(self.device(), at::kFloat).expand(self.sizes()).contiguous();
    TORCH_CHECK(!any_outside(p, 0, 1), "Expected p_in >= 0 && p_in <= 1 to be true, but got false.");
    launch_random(self, TOCL_RANDK_BERNOULLI_TENSOR, 0, 0, 0, 0, gen, &p);
  }
};

template <typename RNG>
struct NormalKernel {
  void operator()(at::Tensor& self, double mean, double std, std::optional<at::Generator> gen) {
    normal_(self, mean, std, gen);
  }
};

namespace T = at::native::templates;

at::Tensor& random_(at::Tensor& self, std::optional<at::Generator> gen) {
  return T::random_impl<RandomKernel, OclGenerator>(self, gen);
}
at::Tensor& random_from(at::Tensor& self, int64_t from, std::optional<int64_t> to,
                        std::optional<at::Generator> gen) {
  T::random_from_to_impl<RandomFromToKernel, OclGenerator>(self, from, to, gen);
  if (to)  // randint: the host knows the range (ocl_value_range.h)
    note_value_range(self, from, *to - 1);
  return self;
}
at::Tensor& random_to(at::Tensor& self, int64_t to, std::optional<at::Generator> gen) {
  return random_from(self, 0, to, gen);
}
at::Tensor& exponential_(at::Tensor& self, double lambda, std::optional<at::Generator> gen) {
  return T::exponential_impl_<ExponentialKernel, OclGenerator>(self, lambda, gen);
}
at::Tensor& geometric_(at::Tensor& self, double p, std::optional<at::Generator> gen) {
  return T::geometric_impl_<GeometricKernel, OclGenerator>(self, p, gen);
}
at::Tensor& cauchy_(at::Tensor& self, double median, double sigma, std::optional<at::Generator> gen) {
  return T::cauchy_impl_<CauchyKernel, OclGenerator>(self, median, sigma, gen);
}
at::Tensor& log_normal_(at::Tensor& self, double mean, double std, std::optional<at::Generator> gen) {
  return T::log_normal_impl_<LogNormalKernel, OclGenerator>(self, mean, std, gen);
}
at::Tensor& bernoulli_float(at::Tensor& self, double p, std::optional<at::Generator> gen) {
  return T::bernoulli_impl_<BernoulliKernel, OclGenerator>(self, p, gen);
}
at::Tensor& bernoulli_tensor(at::Tensor& self, const at::Tensor& p, std::optional<at::Generator> gen) {
  return T::bernoulli_impl_<BernoulliKernel, OclGenerator>(self, p, gen);
}
at::Tensor& bernoulli_out(const at::Tensor& self, std::optional<at::Generator> gen, at::Tensor& result) {
  return T::bernoulli_out_impl<BernoulliKernel, OclGenerator>(result, self, gen);
}

// ---------------------------------------------------------------------------- normal with tensor mean/std

void check_std_tensor(const at::Tensor& std) {
  TORCH_CHECK(!std.is_complex(), "normal expects standard deviation to be non-complex");
  TORCH_CHECK(!any_outside(std, 0, std::numeric_limits<double>::infinity()),
              "normal expects all elements of std >= 0.0");
}

at::Tensor& normal_tf_out(const at::Tensor& mean, double std, std::optional<at::Generator> gen, at::Tensor& out) {
  return T::normal_out_impl<NormalKernel, OclGenerator>(out, mean, std, gen);
}
at::Tensor normal_tf(const at::Tensor& mean, double std, std::optional<at::Generator> gen) {
  return T::normal_impl<NormalKernel, OclGenerator>(mean, std, gen);
}

at::Tensor& normal_ft_out(double mean, const at::Tensor& std, std::optional<at::Generator> gen, at::Tensor& out) {
  check_std_tensor(std);
  auto mean_tensor = at::full({}, mean, out.options());
  resize_out(out, at::infer_size(mean_tensor.sizes(), std.sizes()));
  normal_(out, 0, 1, gen);
  out.mul_(std).add_(mean_tensor);
  return out;
}
at::Tensor normal_ft(double mean, const at::Tensor& std, std::optional<at::Generator> gen) {
  at::Tensor ret = at::empty_like(std, at::MemoryFormat::Contiguous);
  return normal_ft_out(mean, std, gen, ret);
}

at::Tensor& normal_tt_out(const at::Tensor& mean, const at::Tensor& std, std::optional<at::Generator> gen,
                          at::Tensor& out) {
  check_std_tensor(std);
  resize_out(out, at::infer_size(mean.sizes(), std.sizes()));
  normal_(out, 0, 1, gen);
  out.mul_(std).add_(mean);
  return out;
}
at::Tensor normal_tt(const at::Tensor& mean, const at::Tensor& std, std::optional<at::Generator> gen) {
  check_std_tensor(std);
  at::Tensor ret = at::empty(at::infer_size(mean.sizes(), std.sizes()), mean.options(), at::MemoryFormat::Contiguous);
  return normal_tt_out(mean, std, gen, ret);
}

// ---------------------------------------------------------------------------- dropout

std::tuple<at::Tensor, at::Tensor> native_dropout(const at::Tensor& input, double p, std::optional<bool> train) {
  if (input.numel() == 0)
    return {input, at::empty_like(input)};
  if (!train.has_value() || *train) {
    double p1m = 1. - p;
    double scale = p1m == 0 ? 0. : 1. / p1m;  // p == 1 drops everything
    at::Tensor mask = at::empty_like(input, input.options().dtype(at::kBool));
    mask.bernoulli_(p1m);
    at::Tensor output = input.mul(mask).mul_(scale);
    return {output, mask};
  }
  return {input.clone(), at::ones_like(input, input.options().dtype(at::kBool))};
}

at::Tensor native_dropout_backward(const at::Tensor& grad, const at::Tensor& mask, double scale) {
  return at::mul(at::mul(grad, mask), scale);  // grad * mask * scale, as the CPU
}

// ---------------------------------------------------------------------------- randperm

at::Tensor& randperm_out(int64_t n, std::optional<at::Generator> gen, at::Tensor& result) {
  TORCH_CHECK(n >= 0, "n must be non-negative, got", n);
  TORCH_CHECK(!gen.has_value() || !gen->defined() || result.device() == gen->device(), "Expected a '",
              result.device(), "' generator device but found '", gen->device(), "'");
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, result.scalar_type(), "randperm_cpu", [&] {});
  at::native::check_supported_max_int_with_precision(n, result);
  result.resize_({n});
  if (n == 0)
    return result;
  c10::DeviceGuard guard(result.device());
  int dev = result.device().index();
  int64_t npad = tocl_rand_sort_length(n);
  at::Tensor keys = at::empty({npad}, result.options().dtype(at::kLong));
  at::Tensor vals = at::empty({npad}, result.options().dtype(at::kLong));
  auto [seed, offset] = reserve(gen, dev, groups_of_4(n));
  tocl_tensor t = to_tocl_tensor(result), tk = to_tocl_tensor(keys), tv = to_tocl_tensor(vals);
  TOCL_CHECK(tocl_op_randperm(dev, tocl_stream_current(dev), &t, &tk, &tv, seed, offset));
  return result;
}

// ---------------------------------------------------------------------------- multinomial

at::Tensor& multinomial_out(const at::Tensor& self, int64_t n_sample, bool with_replacement,
                            std::optional<at::Generator> gen, at::Tensor& result) {
  TORCH_CHECK(result.device() == self.device(), "multinomial arguments must have the same device");
  TORCH_CHECK(self.dim() > 0 && self.dim() <= 2, "prob_dist must be 1 or 2 dim");
  TORCH_CHECK(at::isFloatingType(self.scalar_type()),
              "multinomial only supports floating-point dtypes for input, got: ", self.scalar_type());
  TORCH_CHECK(result.scalar_type() == at::ScalarType::Long, "multinomial expects Long tensor out, got: ",
              result.scalar_type());
  TORCH_CHECK(n_sample > 0, "cannot sample n_sample <= 0 samples");
  int64_t n_categories = self.size(-1);
  TORCH_CHECK(with_replacement || (n_sample <= n_categories),
              "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  TORCH_CHECK(n_categories <= (int64_t{1} << 24), "number of categories cannot exceed 2^24");
  int64_t rows = self.dim() == 1 ? 1 : self.size(0);
  if (self.dim() == 1)
    result.resize_({n_sample});
  else
    result.resize_({rows, n_sample});
  if (result.numel() == 0)
    return result;

  c10::DeviceGuard guard(self.device());
  int dev = self.device().index();
  int stream = tocl_stream_current(dev);
  at::Tensor probs = self.to(at::kFloat).contiguous().view({rows, n_categories});
  at::Tensor cdf = at::empty({rows * n_categories}, probs.options());
  at::Tensor flags = at::zeros({3}, probs.options().dtype(at::kInt));
  tocl_tensor tp = to_tocl_tensor(probs), tc = to_tocl_tensor(cdf), tf = to_tocl_tensor(flags);
  TOCL_CHECK(tocl_op_multinomial_scan(dev, stream, &tp, &tc, &tf));
  // The CPU checks the distribution before drawing; the flags come to the host.
  at::Tensor f = flags.cpu();
  const int* fl = f.data_ptr<int>();
  bool race = !with_replacement || n_sample == 1;  // the CPU's fast path and its messages
  if (race) {
    TORCH_CHECK(!fl[0] && !fl[1], "probability tensor contains either `inf`, `nan` or element < 0");
  } else {
    TORCH_CHECK(!fl[0], "invalid multinomial distribution (encountering probability entry < 0)");
    TORCH_CHECK(!fl[1], "invalid multinomial distribution (encountering probability entry = infinity or NaN)");
  }
  TORCH_CHECK(!fl[2], "invalid multinomial distribution (sum of probabilities <= 0)");

  tocl_tensor tr = to_tocl_tensor(result);
  if (result.dim() == 1) {  // one row
    tr.ndim = 2;
    tr.sizes[1] = tr.sizes[0];
    tr.strides[1] = tr.strides[0];
    tr.sizes[0] = 1;
    tr.strides[0] = 0;
  }
  if (!race) {
    auto [seed, offset] = reserve(gen, dev, groups_of_4(rows * n_sample));
    TOCL_CHECK(tocl_op_multinomial(dev, stream, &tr, &tp, &tc, 1, nullptr, nullptr, seed, offset));
    return result;
  }
  int64_t npad = tocl_rand_sort_length(rows * n_categories);
  at::Tensor keys = at::empty({npad}, probs.options().dtype(at::kLong));
  at::Tensor vals = at::empty({npad}, probs.options().dtype(at::kLong));
  tocl_tensor tk = to_tocl_tensor(keys), tv = to_tocl_tensor(vals);
  auto [seed, offset] = reserve(gen, dev, groups_of_4(rows * n_categories));
  TOCL_CHECK(tocl_op_multinomial(dev, stream, &tr, &tp, &tc, 0, &tk, &tv, seed, offset));
  return result;
}

at::Tensor multinomial(const at::Tensor& self, int64_t n_sample, bool with_replacement,
                       std::optional<at::Generator> gen) {
  at::Tensor result = at::empty({0}, self.options().dtype(at::kLong));
  return multinomial_out(self, n_sample, with_replacement, gen, result);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  m.impl("uniform_", uniform_);
  m.impl("normal_", normal_);
  m.impl("random_", random_);
  m.impl("random_.from", random_from);
  m.impl("random_.to", random_to);
  m.impl("exponential_", exponential_);
  m.impl("geometric_", geometric_);
  m.impl("cauchy_", cauchy_);
  m.impl("log_normal_", log_normal_);
  m.impl("bernoulli_.float", bernoulli_float);
  m.impl("bernoulli_.Tensor", bernoulli_tensor);
  m.impl("bernoulli.out", bernoulli_out);
  m.impl("normal.Tensor_float", normal_tf);
  m.impl("normal.Tensor_float_out", normal_tf_out);
  m.impl("normal.float_Tensor", normal_ft);
  m.impl("normal.float_Tensor_out", normal_ft_out);
  m.impl("normal.Tensor_Tensor", normal_tt);
  m.impl("normal.Tensor_Tensor_out", normal_tt_out);
  m.impl("native_dropout", native_dropout);
  m.impl("native_dropout_backward", native_dropout_backward);
  m.impl("randperm.generator_out", randperm_out);
  m.impl("multinomial", multinomial);
  m.impl("multinomial.out", multinomial_out);
}

}  // namespace torch_ocl
