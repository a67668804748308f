// ocl_pool_util.h - what pooling and upsampling share: spatial sizes, dense
// destinations, output memory formats and the counted CPU route for integer inputs.
#pragma once

#include <ATen/core/Tensor.h>

#include <array>
#include <optional>
#include <tuple>
#include <vector>

#include "fallback.h"
#include "ocl_common.h"

namespace torch_ocl::pool_util {

using OptD = std::optional<double>;
using OptI = std::optional<int64_t>;
using Arr3 = std::array<int64_t, 3>;

inline int dev_of(const at::Tensor& t) { return t.device().index(); }
inline int stream_of(const at::Tensor& t) { return tocl_stream_current(dev_of(t)); }

// Last n sizes of t right-aligned into {D, H, W} (leading 1s); nc := the rest.
inline Arr3 spatial(at::IntArrayRef sizes, int n, int64_t* nc) {
  Arr3 s{1, 1, 1};
  int64_t lead = 1;
  int nd = static_cast<int>(sizes.size());
  for (int i = 0; i < nd - n; i++)
    lead *= sizes[i];
  for (int i = 0; i < n; i++)
    s[3 - n + i] = sizes[nd - n + i];
  if (nc)
    *nc = lead;
  return s;
}

// x's sizes with the last n replaced by o.
inline std::vector<int64_t> with_spatial(at::IntArrayRef sizes, int n, at::IntArrayRef o) {
  std::vector<int64_t> v(sizes.begin(), sizes.end());
  for (int i = 0; i < n; i++)
    v[v.size() - n + i] = o[i];
  return v;
}

// Memory format of outputs: the input's when it is batched (4-d/5-d).
inline at::MemoryFormat fmt_of(const at::Tensor& x) {
  return x.dim() == 4 || x.dim() == 5 ? x.suggest_memory_format() : at::MemoryFormat::Contiguous;
}

// Dense destination: t itself, or a contiguous temporary copied back by done().
struct Dense {
  at::Tensor& dst;
  at::Tensor tmp;
  explicit Dense(at::Tensor& t) : dst(t), tmp(t.is_contiguous() ? t : at::empty(t.sizes(), t.options())) {}
  tocl_tensor tt() const { return to_tocl_tensor(tmp); }
  void done() {
    if (!tmp.is_same(dst))
      dst.copy_(tmp);
  }
};

inline void resize_fmt(at::Tensor& out, at::IntArrayRef sizes, at::MemoryFormat fmt) {
  if (resize_out(out, sizes) && fmt != at::MemoryFormat::Contiguous)
    out.unsafeGetTensorImpl()->empty_tensor_restride(fmt);
}

inline void check_float(const at::Tensor& t, const char* op) {
  TORCH_CHECK(at::isFloatingType(t.scalar_type()), "\"", op, "\" not implemented for '",
              c10::toString(t.scalar_type()), "'");
}

// Integer inputs: run on the CPU (counted and governed by the fallback
// policy, as the boxed fallback would) and copy into the outputs.
template <class F>
inline bool cpu_route(const char* name, const at::Tensor& input, std::initializer_list<at::Tensor*> outs, F&& f) {
  if (at::isFloatingType(input.scalar_type()))
    return false;
  note_fallback(name);
  auto res = f(input.cpu());
  size_t i = 0;
  for (at::Tensor* o : outs) {
    const at::Tensor& r = i == 0 ? std::get<0>(res) : std::get<1>(res);
    resize_out(*o, r.sizes());
    o->copy_(r);
    i++;
  }
  return true;
}

}  // namespace torch_ocl::pool_util
