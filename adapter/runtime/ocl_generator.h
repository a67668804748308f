// ocl_generator.h - the per-device Philox4x32-10 generator: state is a seed
// and a counter offset, serialised as 16 bytes (seed, offset) like CUDA's,
// which is the layout DTensor's random-op tracking reads.
#pragma once

#include <ATen/core/Generator.h>
#include <c10/core/GeneratorImpl.h>

namespace torch_ocl {

struct OclGenerator final : c10::GeneratorImpl {
  explicit OclGenerator(c10::DeviceIndex device, uint64_t seed = c10::default_rng_seed_val);

  void set_current_seed(uint64_t seed) override;
  uint64_t current_seed() const override;
  uint64_t seed() override;  // new nondeterministic seed
  void set_offset(uint64_t offset) override;
  uint64_t get_offset() const override;
  void set_state(const c10::TensorImpl& new_state) override;
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override;
  static c10::DeviceType device_type() { return c10::DeviceType::PrivateUse1; }

  // Reserve `counters` Philox counters (4 values each); returns the offset
  // to use. Caller holds mutex_.
  uint64_t reserve(uint64_t counters);

 private:
  OclGenerator* clone_impl() const override;
  uint64_t seed_;
  uint64_t offset_ = 0;
};

const at::Generator& default_generator(int dev);

}  // namespace torch_ocl
