// ocl_hooks.cpp - PrivateUse1 hooks (availability, generators, pointer ->
// device, pinned memory, storage resize) and the Philox generator.
#include <ATen/Context.h>
#include <ATen/core/GeneratorForPrivateuseone.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/StorageImpl.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/CallOnce.h>

#include <cstring>
#include <deque>
#include <mutex>
#include <random>

#include "ocl_allocator.h"
#include "ocl_common.h"
#include "ocl_generator.h"

namespace torch_ocl {

OclGenerator::OclGenerator(c10::DeviceIndex device, uint64_t seed)
    : c10::GeneratorImpl(c10::Device(c10::DeviceType::PrivateUse1, device),
                         c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)),
      seed_(seed) {}

void OclGenerator::set_current_seed(uint64_t seed) {
  seed_ = seed;
  offset_ = 0;
}
uint64_t OclGenerator::current_seed() const { return seed_; }
uint64_t OclGenerator::seed() {
  uint64_t s = (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  set_current_seed(s);
  return s;
}
void OclGenerator::set_offset(uint64_t offset) { offset_ = offset; }
uint64_t OclGenerator::get_offset() const { return offset_; }

void OclGenerator::set_state(const c10::TensorImpl& state) {
  TORCH_CHECK_TYPE(state.dtype() == caffe2::TypeMeta::Make<uint8_t>() && state.numel() == 16,
                   "torch_ocl: RNG state must be a uint8 tensor of 16 bytes (seed, offset), got ",
                   state.numel(), " elements of ", state.dtype());
  const auto* p = static_cast<const uint8_t*>(state.data());
  std::memcpy(&seed_, p, 8);
  std::memcpy(&offset_, p + 8, 8);
}

c10::intrusive_ptr<c10::TensorImpl> OclGenerator::get_state() const {
  auto t = c10::make_intrusive<c10::TensorImpl>(
      c10::Storage(c10::Storage::use_byte_size_t(), 16, c10::GetCPUAllocator(), true),
      c10::DispatchKeySet(c10::DispatchKey::CPU), caffe2::TypeMeta::Make<uint8_t>());
  t->set_sizes_contiguous({16});
  auto* p = static_cast<uint8_t*>(t->mutable_data());
  std::memcpy(p, &seed_, 8);
  std::memcpy(p + 8, &offset_, 8);
  return t;
}

uint64_t OclGenerator::reserve(uint64_t counters) {
  uint64_t o = offset_;
  offset_ += counters;
  return o;
}

OclGenerator* OclGenerator::clone_impl() const {
  auto* g = new OclGenerator(device().index(), seed_);
  g->offset_ = offset_;
  return g;
}

const at::Generator& default_generator(int dev) {
  static std::once_flag once;
  static std::deque<at::Generator> gens;  // deque: references stay valid
  std::call_once(once, [] {
    for (int d = 0; d < tocl_device_count(); d++)
      gens.emplace_back(at::make_generator<OclGenerator>(static_cast<c10::DeviceIndex>(d)));
  });
  TOCL_CHECK(tocl_device_check(dev));
  return gens.at(static_cast<size_t>(dev));
}

namespace {

struct OclHooks final : at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return tocl_device_count() > 0; }
  bool hasPrimaryContext(c10::DeviceIndex d) const override { return d >= 0 && d < tocl_device_count(); }
  const at::Generator& getDefaultGenerator(c10::DeviceIndex d) const override {
    return default_generator(d < 0 ? current_device() : d);
  }
  at::Generator getNewGenerator(c10::DeviceIndex d = -1) const override {
    return at::make_generator<OclGenerator>(d < 0 ? static_cast<c10::DeviceIndex>(current_device()) : d);
  }
  at::Device getDeviceFromPtr(void* p) const override {
    int dev = tocl_mem_device_of(reinterpret_cast<tocl_addr>(p));
    TORCH_CHECK(dev >= 0, "torch_ocl: pointer ", p, " is not inside a live ocl allocation");
    return at::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(dev));
  }
  bool isPinnedPtr(const void* p) const override { return tocl_host_is_pinned(p) != 0; }
  at::Allocator* getPinnedMemoryAllocator() const override { return pinned_allocator(); }

  // Grow or shrink a storage on the device: new block, device-side copy of
  // the bytes that survive, then swap. Never a host memcpy on device addresses.
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override {
    c10::StorageImpl* impl = storage.unsafeGetStorageImpl();
    TORCH_CHECK(impl->resizable(), "torch_ocl: trying to resize storage that is not resizable");
    size_t old = impl->nbytes();
    c10::DataPtr fresh = device_allocator()->allocate(newsize);
    size_t keep = std::min(old, newsize);
    if (keep && impl->data()) {
      int dev = tocl_mem_device_of(reinterpret_cast<tocl_addr>(fresh.get()));
      TOCL_CHECK(tocl_copy_d2d(dev, tocl_stream_current(dev), reinterpret_cast<tocl_addr>(fresh.get()),
                               reinterpret_cast<tocl_addr>(impl->data()), keep));
    }
    impl->set_data_ptr_noswap(std::move(fresh));
    impl->set_nbytes(newsize);
  }
};

struct RegisterHooks {
  RegisterHooks() { at::RegisterPrivateUse1HooksInterface(new OclHooks()); }
} register_hooks;

}  // namespace

}  // namespace torch_ocl
