// ocl_guard.cpp - c10 DeviceGuardImpl for PrivateUse1: current device,
// streams (runtime stream indices are c10 stream ids) and events.
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "ocl_common.h"

namespace torch_ocl {

static thread_local int tl_current_device = 0;

int current_device() { return tl_current_device; }

int device_index(const c10::Device& d) { return d.has_index() ? d.index() : tl_current_device; }

int current_stream(int dev) { return tocl_stream_current(dev); }

static void check_device(int dev) { TOCL_CHECK(tocl_device_check(dev)); }

namespace {

struct OclGuardImpl final : c10::impl::DeviceGuardImplInterface {
  static constexpr c10::DeviceType static_type = c10::DeviceType::PrivateUse1;

  c10::DeviceType type() const override { return static_type; }

  c10::Device exchangeDevice(c10::Device d) const override {
    c10::Device old = getDevice();
    if (d.index() != old.index())
      setDevice(d);
    return old;
  }
  c10::Device getDevice() const override {
    return c10::Device(static_type, static_cast<c10::DeviceIndex>(tl_current_device));
  }
  void setDevice(c10::Device d) const override {
    TORCH_CHECK(d.type() == static_type, "torch_ocl: expected an ocl device, got ", d);
    int idx = d.has_index() ? d.index() : 0;
    check_device(idx);
    tl_current_device = idx;
  }
  void uncheckedSetDevice(c10::Device d) const noexcept override {
    if (d.has_index())
      tl_current_device = d.index();
  }

  c10::Stream stream_of(int dev, int id) const {
    return c10::Stream(c10::Stream::UNSAFE, c10::Device(static_type, static_cast<c10::DeviceIndex>(dev)),
                       static_cast<c10::StreamId>(id));
  }
  c10::Stream getStream(c10::Device d) const override {
    int dev = device_index(d);
    return stream_of(dev, tocl_stream_current(dev));
  }
  c10::Stream getDefaultStream(c10::Device d) const override { return stream_of(device_index(d), 0); }
  c10::Stream getStreamFromGlobalPool(c10::Device d, bool /*high_priority*/ = false) const override {
    int dev = device_index(d), s = 0;
    TOCL_CHECK(tocl_stream_from_pool(dev, &s));
    return stream_of(dev, s);
  }
  c10::Stream getNewStream(c10::Device d, int /*priority*/ = 0) const override {
    return getStreamFromGlobalPool(d);
  }
  c10::Stream exchangeStream(c10::Stream s) const override {
    int dev = s.device_index();
    c10::Stream old = stream_of(dev, tocl_stream_current(dev));
    TOCL_CHECK(tocl_stream_set_current(dev, static_cast<int>(s.id())));
    return old;
  }
  // Dtypes ocl tensors hold with native kernels (torch.accelerator.
  // get_device_capability()["supported_dtypes"]): float64 and complex128
  // only where the device has cl_khr_fp64. complex64/128 have native
  // storage, copies, arithmetic and FFT (their other ops take the CPU
  // fallback, counted); complex32, quantized and wide unsigned types are
  // not claimed.
  c10::DeviceCapability getDeviceCapability(c10::Device d) const override {
    int dev = device_index(d);
    tocl_device_props p{};
    TOCL_CHECK(tocl_device_props_get(dev, &p));
    c10::DeviceCapability cap;
    auto ok = [&](c10::ScalarType t) {
      bool wide = t == c10::ScalarType::Double || t == c10::ScalarType::ComplexDouble;
      bool held = is_supported_dtype(t) || t == c10::ScalarType::ComplexFloat || t == c10::ScalarType::ComplexDouble;
      return held && (!wide || p.has_fp64);
    };
#define TOCL_CAPABILITY(_1, n) cap.capability_data.supported_scalar_types.has_##n = ok(c10::ScalarType::n);
    AT_FORALL_SCALAR_TYPES_WITH_COMPLEX_AND_QINTS(TOCL_CAPABILITY)
#undef TOCL_CAPABILITY
    return cap;
  }
  c10::DeviceIndex deviceCount() const noexcept override {
    return static_cast<c10::DeviceIndex>(tocl_device_count());
  }

  // Events: the void* is a tocl_event*, created on first record.
  void record(void** event, const c10::Stream& stream, const c10::DeviceIndex device_index,
              const c10::EventFlag /*flag*/) const override {
    TORCH_CHECK(device_index == -1 || device_index == stream.device_index(),
                "torch_ocl: event device ", int(device_index), " does not match stream device ",
                int(stream.device_index()));
    if (!*event) {
      tocl_event* e = nullptr;
      TOCL_CHECK(tocl_event_create(&e));
      *event = e;
    }
    TOCL_CHECK(tocl_event_record(static_cast<tocl_event*>(*event), stream.device_index(),
                                 static_cast<int>(stream.id())));
  }
  void block(void* event, const c10::Stream& stream) const override {
    if (!event)
      return;
    TOCL_CHECK(tocl_event_block(static_cast<tocl_event*>(event), stream.device_index(),
                                static_cast<int>(stream.id())));
  }
  bool queryEvent(void* event) const override {
    if (!event)
      return true;
    int done = 0;
    TOCL_CHECK(tocl_event_query(static_cast<tocl_event*>(event), &done));
    return done != 0;
  }
  void destroyEvent(void* event, const c10::DeviceIndex /*device_index*/) const noexcept override {
    tocl_event_destroy(static_cast<tocl_event*>(event));
  }
  void synchronizeEvent(void* event) const override {
    if (event)
      TOCL_CHECK(tocl_event_sync(static_cast<tocl_event*>(event)));
  }
  double elapsedTime(void* start, void* end, const c10::DeviceIndex /*device_index*/) const override {
    TORCH_CHECK(start && end, "torch_ocl: both events must be recorded before elapsed_time()");
    double ms = 0;
    TOCL_CHECK(tocl_event_elapsed_ms(static_cast<tocl_event*>(start), static_cast<tocl_event*>(end), &ms));
    return ms;
  }

  bool queryStream(const c10::Stream& s) const override {
    int done = 0;
    TOCL_CHECK(tocl_stream_query(s.device_index(), static_cast<int>(s.id()), &done));
    return done != 0;
  }
  void synchronizeStream(const c10::Stream& s) const override {
    TOCL_CHECK(tocl_stream_sync(s.device_index(), static_cast<int>(s.id())));
  }
  void synchronizeDevice(const c10::DeviceIndex device_index) const override {
    TOCL_CHECK(tocl_device_sync(device_index < 0 ? tl_current_device : device_index));
  }
  void recordDataPtrOnStream(const c10::DataPtr& data_ptr, const c10::Stream& s) const override {
    if (data_ptr.get())
      TOCL_CHECK(tocl_mem_record_stream(reinterpret_cast<tocl_addr>(data_ptr.get()), static_cast<int>(s.id())));
  }
};

}  // namespace

C10_REGISTER_GUARD_IMPL(PrivateUse1, OclGuardImpl);

}  // namespace torch_ocl
