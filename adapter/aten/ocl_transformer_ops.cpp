// ocl_transformer_ops.cpp - the inference "fast path" ops that
// nn.TransformerEncoderLayer and nn.MultiheadAttention call for PrivateUse1
// devices in eval mode (torch lists the PrivateUse1 backend among the fast
// path's devices): _transformer_encoder_layer_fwd and
// _native_multi_head_attention.
//
// PyTorch's own kernels for them are CPU/CUDA-specific, so here each is
// composed from ops that are native on ocl (linear, layer_norm,
// scaled_dot_product_attention, softmax); no new kernel is needed and the
// results equal the modules' slow path, which the tests compare against.

#include <ATen/ATen.h>
#include <torch/library.h>

#include <cmath>
#include <limits>
#include <optional>
#include <tuple>
#include "ocl_complex_route.h"

namespace torch_ocl {
namespace {

// The fast path's mask: mask_type 0 is (L, S), 1 is a key padding mask (B, S),
// 2 is (B, H, L, S). A bool mask marks positions to ignore (the opposite of
// scaled_dot_product_attention's convention); a float mask is added.
at::Tensor attention_mask(const std::optional<at::Tensor>& mask, std::optional<int64_t> mask_type, int64_t batch,
                          int64_t src_len) {
  if (!mask.has_value() || !mask->defined())
    return at::Tensor();
  at::Tensor m = *mask;
  if (mask_type.value_or(-1) == 1)
    m = m.view({batch, 1, 1, src_len});
  return m.scalar_type() == at::kBool ? m.logical_not() : m;
}

// (B, T, E) -> (B, H, T, E / H)
at::Tensor split_heads(const at::Tensor& x, int64_t heads) {
  return x.view({x.size(0), x.size(1), heads, x.size(2) / heads}).transpose(1, 2);
}

struct Projected {
  at::Tensor q, k, v;
};

Projected project(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value, int64_t embed_dim,
                  int64_t heads, const at::Tensor& qkv_weight, const at::Tensor& qkv_bias) {
  TORCH_CHECK(query.dim() == 3 && key.dim() == 3 && value.dim() == 3,
              "expected (batch, sequence, embedding) query, key and value, got ", query.dim(), "-d, ", key.dim(),
              "-d and ", value.dim(), "-d");
  TORCH_CHECK(embed_dim % heads == 0, "embed_dim (", embed_dim, ") must be divisible by num_heads (", heads, ")");
  auto w = qkv_weight.chunk(3, 0);
  auto b = qkv_bias.chunk(3, 0);
  return {split_heads(at::linear(query, w[0], b[0]), heads), split_heads(at::linear(key, w[1], b[1]), heads),
          split_heads(at::linear(value, w[2], b[2]), heads)};
}

// (B, H, T, D) -> (B, T, E), then the output projection.
at::Tensor merge_heads(const at::Tensor& y, const at::Tensor& proj_weight, const at::Tensor& proj_bias) {
  auto merged = y.transpose(1, 2).reshape({y.size(0), y.size(2), y.size(1) * y.size(3)});
  return at::linear(merged, proj_weight, proj_bias);
}

std::tuple<at::Tensor, at::Tensor> native_multi_head_attention(
    const at::Tensor& query, const at::Tensor& key, const at::Tensor& value, int64_t embed_dim, int64_t num_head,
    const at::Tensor& qkv_weight, const at::Tensor& qkv_bias, const at::Tensor& proj_weight,
    const at::Tensor& proj_bias, const std::optional<at::Tensor>& mask, bool need_weights, bool average_attn_weights,
    std::optional<int64_t> mask_type) {
  auto p = project(query, key, value, embed_dim, num_head, qkv_weight, qkv_bias);
  auto m = attention_mask(mask, mask_type, query.size(0), key.size(1));
  if (!need_weights) {
    auto y = at::scaled_dot_product_attention(p.q, p.k, p.v, m.defined() ? std::optional<at::Tensor>(m) : std::nullopt);
    return {merge_heads(y, proj_weight, proj_bias), at::Tensor()};
  }
  // The weights are part of the result, so the score matrix is formed here.
  auto scores = at::matmul(p.q, p.k.transpose(-2, -1)) / std::sqrt(static_cast<double>(p.q.size(-1)));
  if (m.defined())
    scores = m.scalar_type() == at::kBool ? scores.masked_fill(m.logical_not(), -std::numeric_limits<double>::infinity())
                                          : scores + m;
  auto weights = at::softmax(scores, -1);
  auto out = merge_heads(at::matmul(weights, p.v), proj_weight, proj_bias);
  return {out, average_attn_weights ? weights.mean(1) : weights};
}

at::Tensor transformer_encoder_layer_fwd(
    const at::Tensor& src, int64_t embed_dim, int64_t num_heads, const at::Tensor& qkv_weight,
    const at::Tensor& qkv_bias, const at::Tensor& proj_weight, const at::Tensor& proj_bias, bool use_gelu,
    bool norm_first, double eps, const at::Tensor& norm_weight_1, const at::Tensor& norm_bias_1,
    const at::Tensor& norm_weight_2, const at::Tensor& norm_bias_2, const at::Tensor& ffn_weight_1,
    const at::Tensor& ffn_bias_1, const at::Tensor& ffn_weight_2, const at::Tensor& ffn_bias_2,
    const std::optional<at::Tensor>& mask, std::optional<int64_t> mask_type) {
  const int64_t normalized[1] = {embed_dim};
  const at::IntArrayRef shape(normalized, 1);
  auto self_attention = [&](const at::Tensor& x) {
    return std::get<0>(native_multi_head_attention(x, x, x, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight,
                                                   proj_bias, mask, false, true, mask_type));
  };
  auto feed_forward = [&](const at::Tensor& x) {
    auto h = at::linear(x, ffn_weight_1, ffn_bias_1);
    h = use_gelu ? at::gelu(h) : at::relu(h);
    return at::linear(h, ffn_weight_2, ffn_bias_2);
  };
  at::Tensor x = src;
  if (norm_first) {
    x = x + self_attention(at::layer_norm(x, shape, norm_weight_1, norm_bias_1, eps));
    x = x + feed_forward(at::layer_norm(x, shape, norm_weight_2, norm_bias_2, eps));
  } else {
    x = at::layer_norm(x + self_attention(x), shape, norm_weight_1, norm_bias_1, eps);
    x = at::layer_norm(x + feed_forward(x), shape, norm_weight_2, norm_bias_2, eps);
  }
  return x;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  m.impl("_native_multi_head_attention", native_multi_head_attention);
  m.impl("_transformer_encoder_layer_fwd", transformer_encoder_layer_fwd);
}

}  // namespace torch_ocl
