// dense_strides.h - strides of a dense tensor of `shape` whose dimensions lie
// in memory in the order of `like`'s strides (outermost = largest stride;
// equal strides keep their logical order). What PyTorch's meta functions and
// TensorIterator give a new output that follows an input's layout: a real
// output laid out otherwise breaks a compiled graph's later views.
#pragma once

#include <ATen/core/Tensor.h>

#include <algorithm>
#include <numeric>
#include <vector>

namespace torch_ocl {

// Strides of a dense tensor of `shape` whose dimensions lie in memory in
// `order` (outermost first; a permutation of 0..shape.size()-1).
inline std::vector<int64_t> dense_strides_in_order(const std::vector<int64_t>& order, c10::IntArrayRef shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t st = 1;
  for (size_t i = order.size(); i-- > 0;) {
    strides[order[i]] = st;
    st *= shape[order[i]];
  }
  return strides;
}

inline std::vector<int64_t> dense_strides_like(const at::Tensor& like, c10::IntArrayRef shape) {
  std::vector<int64_t> order(shape.size());
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return like.stride(a) > like.stride(b); });
  return dense_strides_in_order(order, shape);
}

}  // namespace torch_ocl
