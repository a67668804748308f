// ocl_value_range.cpp - the facts ocl_value_range.h describes: a small table
// (the last few integer tensors noted), keyed by storage. Each entry holds a
// weak reference to its storage, so a storage freed and another allocated at
// the same address never matches an old entry.
#include "ocl_value_range.h"

#include <c10/core/StorageImpl.h>
#include <c10/util/intrusive_ptr.h>

#include <array>
#include <atomic>
#include <mutex>
#include <optional>

namespace torch_ocl {
namespace {

struct Fact {
  std::optional<c10::weak_intrusive_ptr<c10::StorageImpl>> storage;  // empty: a free slot
  int64_t version = 0, lo = 0, hi = 0;
  c10::ScalarType dtype = c10::ScalarType::Undefined;
};

// Targets of the last few batches, a few cached tensors: 32 is plenty, and
// a miss only costs the wait the check always cost.
constexpr size_t kFacts = 32;
std::mutex g_mu;
std::array<Fact, kFacts> g_facts;
size_t g_next;
std::atomic<int64_t> g_checks[2][2];  // [kind][spared, waited]

bool trackable(const at::Tensor& t) {
  return t.defined() && t.device().type() == c10::DeviceType::PrivateUse1 &&
         at::isIntegralType(t.scalar_type(), /*includeBool=*/false) && !t.is_inference() && t.has_storage();
}

// t's elements are exactly its storage's bytes (a fact about t is one about the storage).
bool covers_storage(const at::Tensor& t) {
  return t.storage_offset() == 0 && t.is_non_overlapping_and_dense() &&
         static_cast<size_t>(t.numel()) * t.element_size() == t.storage().nbytes();
}

Fact* find(const at::Tensor& t) {
  const c10::StorageImpl* s = t.storage().unsafeGetStorageImpl();
  for (auto& f : g_facts)
    if (f.storage && f.storage->_unsafe_get_target() == s && !f.storage->expired())
      return &f;
  return nullptr;
}

// t's fact while it still holds: same dtype, version counter unmoved.
const Fact* current(const at::Tensor& t) {
  const Fact* f = find(t);
  return f && f->dtype == t.scalar_type() && f->version == t._version() ? f : nullptr;
}

}  // namespace

void note_value_range(const at::Tensor& t, int64_t lo, int64_t hi) {
  if (!trackable(t) || !covers_storage(t) || lo > hi)
    return;
  std::lock_guard<std::mutex> g(g_mu);
  Fact* f = find(t);
  if (!f) {
    f = &g_facts[g_next];
    g_next = (g_next + 1) % kFacts;
  }
  f->storage = t.storage().getWeakStorageImpl();
  f->version = t._version();
  f->lo = lo;
  f->hi = hi;
  f->dtype = t.scalar_type();
}

bool values_known_within(const at::Tensor& t, int64_t lo, int64_t hi) {
  if (!trackable(t))
    return false;
  std::lock_guard<std::mutex> g(g_mu);
  const Fact* f = current(t);
  return f && f->lo >= lo && f->hi <= hi;
}

void note_copied_range(const at::Tensor& dst, const at::Tensor& src) {
  if (!trackable(dst) || !trackable(src) || dst.scalar_type() != src.scalar_type() || !covers_storage(dst))
    return;
  int64_t lo, hi;
  {
    std::lock_guard<std::mutex> g(g_mu);
    const Fact* f = current(src);
    if (!f)
      return;
    lo = f->lo, hi = f->hi;
  }
  note_value_range(dst, lo, hi);
}

void count_check(CheckKind kind, bool spared) {
  g_checks[static_cast<int>(kind)][spared ? 0 : 1].fetch_add(1, std::memory_order_relaxed);
}

CheckCounts check_counts(CheckKind kind) {
  auto& c = g_checks[static_cast<int>(kind)];
  return {c[0].load(), c[1].load()};
}

}  // namespace torch_ocl
