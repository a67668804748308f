// ocl_attention_ops.cpp - scaled_dot_product_attention on the flash-style
// kernels of runtime/ops/attention.c. PyTorch's composite SDPA asks
// _fused_sdp_choice_stub which backend to use; for the cases the kernels
// cover (4-D, no dropout, masks none/causal/bool/additive, head dims <= 256,
// grouped-query heads) it answers "overrideable", which runs
// _scaled_dot_product_fused_attention_overrideable (forward: output and
// logsumexp) and, under autograd, its _backward. Everything else (dropout,
// a mask that needs a gradient, nested tensors, other ranks) takes the
// math path, which is itself native ops.
//
// Also the serving ops torch.ops.torch_ocl.reshape_and_cache and
// torch.ops.torch_ocl.paged_attention (runtime/ops/paged_attention.c):
// writes into a paged KV cache and ragged attention over block tables.
#include <ATen/Context.h>
#include <ATen/ExpandUtils.h>
#include <ATen/SDPBackend.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/grad_mode.h>
#include <ATen/native/transformers/attention.h>
#include <ATen/ops/scaled_dot_product_attention.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/where.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <limits>
#include <utility>

#include "dense_strides.h"
#include "ocl_common.h"
#include "tocl/attention.h"
#include "ocl_complex_route.h"

namespace torch_ocl {
namespace {

using at::Tensor;

bool is_ocl(const Tensor& t, const Tensor& q) {
  return t.device() == q.device() && !t.is_nested();
}

// Whether the flash kernels take this call (else the math path does). Sizes
// are compared as SymInts: under torch.compile the choice runs on fake
// tensors with symbolic batch and sequence sizes, and reading them as ints
// would specialise the graph to one size. Head dims are read as ints (they
// stay static in practice; a symbolic one specialises, which is right: the
// kernels are built per head dim).
bool flash_covers(const Tensor& q, const Tensor& k, const Tensor& v, const std::optional<Tensor>& mask,
                  double dropout_p, bool is_causal, bool enable_gqa) {
  if (!at::globalContext().userEnabledOverrideableSDP() || dropout_p > 0)
    return false;
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4 || q.is_nested() || !is_ocl(k, q) || !is_ocl(v, q))
    return false;
  if (q.scalar_type() != k.scalar_type() || q.scalar_type() != v.scalar_type())
    return false;
  c10::SymInt B = q.sym_size(0), L = q.sym_size(2), S = k.sym_size(2);
  int64_t Hq = q.sym_size(1).guard_int(__FILE__, __LINE__), Hk = k.sym_size(1).guard_int(__FILE__, __LINE__);
  int64_t D = q.sym_size(3).guard_int(__FILE__, __LINE__), Dv = v.sym_size(3).guard_int(__FILE__, __LINE__);
  if (k.sym_size(0) != B || v.sym_size(0) != B || v.sym_size(1) != Hk || v.sym_size(2) != S ||
      k.sym_size(3) != D)
    return false;
  if (Hk != Hq && (!enable_gqa || Hk == 0 || Hq % Hk != 0))
    return false;
  if (Hq == 0 || B == 0 || L == 0 || S == 0)
    return false;
  if (mask.has_value() && mask->defined()) {
    const Tensor& m = *mask;
    if (is_causal || !is_ocl(m, q) || m.dim() > 4 || (m.requires_grad() && at::GradMode::is_enabled()))
      return false;
    if (m.scalar_type() != at::kBool && m.scalar_type() != q.scalar_type())
      return false;
    std::vector<c10::SymInt> want{B, c10::SymInt(Hq), L, S};
    if (!at::is_expandable_to(m.sym_sizes(), c10::SymIntArrayRef(want)))
      return false;
  }
  return tocl_attn_supported(device_index(q.device()), to_tocl_dtype(q.scalar_type()), D, Dv) != 0;
}

// The forward's output in the layout the meta function gives it
// (alloc_with_matching_layout in torch/_meta_registrations.py): q's dim order,
// dense. A compiled graph views the output as its fake tensor was laid out,
// so the real one must be laid out the same.
Tensor alloc_like_query(const Tensor& q, int64_t Dv) {
  if (Dv == q.size(3))
    return at::empty_like(q);
  std::array<int64_t, 4> shape{q.size(0), q.size(1), q.size(2), Dv};
  std::vector<int64_t> strides = dense_strides_like(q, shape);
  return at::empty_strided(shape, strides, q.options());
}

int64_t fused_sdp_choice(const Tensor& q, const Tensor& k, const Tensor& v, const std::optional<Tensor>& mask,
                         double dropout_p, bool is_causal, std::optional<double> scale, bool enable_gqa) {
  auto b = flash_covers(q, k, v, mask, dropout_p, is_causal, enable_gqa) ? at::SDPBackend::overrideable
                                                                           : at::SDPBackend::math;
  return static_cast<int64_t>(b);
}

// The mask as the kernels read it: additive, q's dtype, viewed as
// [B, Hq, L, S] (stride 0 where it broadcasts); undefined for none.
Tensor additive_mask(const Tensor& m, const Tensor& q, int64_t S) {
  if (!m.defined())
    return m;
  Tensor a = m;
  if (m.scalar_type() == at::kBool)
    a = at::where(m, 0.0, -std::numeric_limits<double>::infinity()).to(q.scalar_type());
  else if (m.scalar_type() != q.scalar_type())
    a = m.to(q.scalar_type());
  return a.expand({q.size(0), q.size(1), q.size(2), S});
}

tocl_attn_desc make_desc(const Tensor& q, std::optional<double> scale, bool is_causal) {
  tocl_attn_desc d{};
  d.scale = scale.has_value() ? *scale : 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  d.causal = is_causal;
  return d;
}

// tocl_tensor pointer of a defined tensor, or NULL.
struct TT {
  tocl_tensor t{};
  bool def = false;
  explicit TT(const Tensor& x) : def(x.defined()) {
    if (def)
      t = to_tocl_tensor(x);
  }
  const tocl_tensor* p() const { return def ? &t : nullptr; }
};

at::ScalarType lse_dtype(const Tensor& q) { return q.scalar_type() == at::kDouble ? at::kDouble : at::kFloat; }

void check_inputs(const Tensor& q, const Tensor& k, const Tensor& v, double dropout_p, const char* op) {
  TORCH_CHECK(dropout_p == 0.0, op, ": dropout is not supported by the ocl flash kernels (dropout_p=", dropout_p,
              "); scaled_dot_product_attention routes dropout to the math path");
  TORCH_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4, op, ": expected 4-D query, key and value, got ", q.dim(),
              "-D, ", k.dim(), "-D and ", v.dim(), "-D");
}

// Whether the runtime can put t's (batch, head) pairs in one GEMM batch
// (runtime/ops/attention_gemm.c, att_folds): one batch item, or a batch
// stride of heads x head stride.
bool folds(const Tensor& t) { return t.size(0) == 1 || t.stride(0) == t.size(1) * t.stride(1); }

std::tuple<Tensor, Tensor, Tensor, Tensor, c10::SymInt, c10::SymInt, Tensor, Tensor, Tensor> sdpa_forward(
    const Tensor& q, const Tensor& k, const Tensor& v, const std::optional<Tensor>& attn_bias, double dropout_p,
    bool is_causal, bool return_debug_mask, std::optional<double> scale) {
  const char* op = "_scaled_dot_product_fused_attention_overrideable";
  check_inputs(q, k, v, dropout_p, op);
  TORCH_CHECK(!return_debug_mask, op, ": return_debug_mask is not supported on ocl");
  c10::DeviceGuard guard(q.device());
  int64_t B = q.size(0), Hq = q.size(1), L = q.size(2), S = k.size(2), Dv = v.size(3);
  Tensor out = alloc_like_query(q, Dv);
  Tensor lse = at::empty({B, Hq, L}, q.options().dtype(lse_dtype(q)));
  Tensor mask = additive_mask(attn_bias.has_value() ? *attn_bias : Tensor(), q, S);
  tocl_attn_desc d = make_desc(q, scale, is_causal);
  // On the route by matrix products, operands that do not fold make the
  // runtime loop over the batch items, and at short sequences each step's
  // launches cost more than its work (a BERT-style layer's [8, 4, 128, 64]
  // views of one qkv projection: 16 products and 8 row kernels instead of 2
  // and 1). Dense copies cost O(L d) against the products' O(L S d). The
  // other routes read any strides in one launch.
  int dev = device_index(q.device());
  const char* env = std::getenv("TORCH_OCL_ATTENTION_DENSE");  // =0: the runtime loops (tests, comparisons)
  bool allowed = !(env && (!std::strcmp(env, "0") || !std::strcmp(env, "off")));
  bool dense = allowed && B > 1 && !tocl_attn_forward_in_place(dev, to_tocl_dtype(q.scalar_type())) &&
               !(folds(q) && folds(k) && folds(v) && folds(out));
  Tensor qd = dense && !folds(q) ? q.contiguous() : q, kd = dense && !folds(k) ? k.contiguous() : k;
  Tensor vd = dense && !folds(v) ? v.contiguous() : v;
  Tensor od = dense && !folds(out) ? at::empty({B, Hq, L, Dv}, q.options()) : out;
  TT tq(qd), tk(kd), tv(vd), tm(mask), to(od), tl(lse);
  TOCL_CHECK(tocl_attn_forward(dev, current_stream(dev), &d, tq.p(), tk.p(), tv.p(), tm.p(), to.p(), tl.p()));
  if (!od.is_same(out))
    out.copy_(od);
  Tensor seed = at::empty({}, q.options().dtype(at::kLong)), offset = at::empty({}, q.options().dtype(at::kLong));
  return {out, lse, Tensor(), Tensor(), c10::SymInt(L), c10::SymInt(S), seed, offset, Tensor()};
}

std::tuple<Tensor, Tensor, Tensor, Tensor> sdpa_backward(
    const Tensor& grad_out, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& attn_bias,
    std::array<bool, 4> grad_input_mask, const Tensor& out, const Tensor& lse, const Tensor& cum_seq_q,
    const Tensor& cum_seq_k, c10::SymInt max_q, c10::SymInt max_k, double dropout_p, bool is_causal,
    const Tensor& philox_seed, const Tensor& philox_offset, std::optional<double> scale) {
  const char* op = "_scaled_dot_product_fused_attention_overrideable_backward";
  check_inputs(q, k, v, dropout_p, op);
  TORCH_CHECK(!grad_input_mask[3], op, ": the gradient of attn_mask is not supported on ocl; a mask that requires "
              "grad makes scaled_dot_product_attention use the math path");
  c10::DeviceGuard guard(q.device());
  Tensor gq = at::empty_like(q), gk = at::empty_like(k), gv = at::empty_like(v);
  if (!grad_out.defined())
    return {gq.zero_(), gk.zero_(), gv.zero_(), Tensor()};
  Tensor delta = at::empty_like(lse, at::MemoryFormat::Contiguous);
  Tensor mask = additive_mask(attn_bias, q, k.size(2));
  Tensor ls = lse.contiguous();
  tocl_attn_desc d = make_desc(q, scale, is_causal);
  TT tq(q), tk(k), tv(v), tm(mask), to(out), tl(ls), tg(grad_out), tgq(gq), tgk(gk), tgv(gv), td(delta);
  int dev = device_index(q.device());
  TOCL_CHECK(tocl_attn_backward(dev, current_stream(dev), &d, tq.p(), tk.p(), tv.p(), tm.p(), to.p(), tl.p(), tg.p(),
                                tgq.p(), tgk.p(), tgv.p(), td.p()));
  return {grad_input_mask[0] ? gq : Tensor(), grad_input_mask[1] ? gk : Tensor(), grad_input_mask[2] ? gv : Tensor(),
          Tensor()};
}

void check_same_device(const Tensor& t, const Tensor& ref, const char* what, const char* op) {
  TORCH_CHECK(t.device() == ref.device(), op, ": ", what, " is on ", t.device(), ", expected ", ref.device());
}

// ---- a decoding step's cache growth and attention (compile/attention_append.py) ----

// torch_ocl::attention_append: (sdpa(q, cat(kc, kn, 2), cat(vc, vn, 2)),
// that key cat, that value cat), no mask, no dropout, not causal: one
// launch where the one-row kernel applies (tocl_attn_append_usable), else
// the cat pair and the attention it replaced. The same bits either way.
std::tuple<Tensor, Tensor, Tensor> attention_append(const Tensor& q, const Tensor& kc, const Tensor& kn,
                                                    const Tensor& vc, const Tensor& vn, std::optional<double> scale) {
  const char* op = "torch_ocl::attention_append";
  for (const Tensor* t : {&kc, &kn, &vc, &vn})
    check_same_device(*t, q, "a key or value operand", op);
  c10::DeviceGuard guard(q.device());
  int dev = device_index(q.device());
  TT tq(q), tkc(kc), tkn(kn), tvc(vc), tvn(vn);
  bool fused = q.dim() == 4 && kc.dim() == 4 && kn.dim() == 4 && vc.dim() == 4 && vn.dim() == 4 &&
               tocl_attn_append_usable(dev, tq.p(), tkc.p(), tkn.p(), tvc.p(), tvn.p());
  if (!fused) {
    static auto pair = c10::Dispatcher::singleton()
                           .findSchemaOrThrow("torch_ocl::cat_pair", "")
                           .typed<std::tuple<Tensor, Tensor>(at::TensorList, at::TensorList, int64_t)>();
    auto [k, v] = pair.call({kc, kn}, {vc, vn}, 2);
    // Through the composite, which picks the route as the traced call did
    // (the overrideable kernels, or the math path for what they do not
    // cover, e.g. no query rows).
    Tensor out = at::scaled_dot_product_attention(q, k, v, std::nullopt, 0.0, false, scale,
                                                  q.dim() > 1 && k.dim() > 1 && q.size(1) != k.size(1));
    return {out, k, v};
  }
  int64_t B = q.size(0), Hq = q.size(1), L = q.size(2), S = kc.size(2) + kn.size(2);
  Tensor k = at::empty({B, kc.size(1), S, kc.size(3)}, kc.options());  // contiguous, as cat_pair's
  Tensor v = at::empty({B, vc.size(1), S, vc.size(3)}, vc.options());
  Tensor out = alloc_like_query(q, vc.size(3));
  Tensor lse = at::empty({B, Hq, L}, q.options().dtype(lse_dtype(q)));
  tocl_attn_desc d = make_desc(q, scale, false);
  TT to(out), tl(lse), tk(k), tv(v);
  TOCL_CHECK(tocl_attn_forward_append(dev, current_stream(dev), &d, tq.p(), tkc.p(), tkn.p(), tvc.p(), tvn.p(),
                                      to.p(), tl.p(), tk.p(), tv.p()));
  return {out, k, v};
}

// ---- paged attention (serving) ----

void reshape_and_cache(const Tensor& key, const Tensor& value, const Tensor& key_cache, const Tensor& value_cache,
                       const Tensor& slot_mapping) {
  const char* op = "torch_ocl::reshape_and_cache";
  const std::pair<const Tensor*, const char*> operands[] = {
      {&value, "value"}, {&key_cache, "key_cache"}, {&value_cache, "value_cache"}, {&slot_mapping, "slot_mapping"}};
  for (const auto& [t, w] : operands)
    check_same_device(*t, key, w, op);
  TORCH_CHECK(key.dim() == 3 && value.sizes() == key.sizes(), op, ": key and value must be [tokens, kv heads, "
              "head dim] of one shape, got ", key.sizes(), " and ", value.sizes());
  TORCH_CHECK(key_cache.dim() == 4 && value_cache.sizes() == key_cache.sizes(), op, ": key_cache and value_cache "
              "must be [blocks, block size, kv heads, head dim] of one shape, got ", key_cache.sizes(), " and ",
              value_cache.sizes());
  TORCH_CHECK(slot_mapping.dim() == 1 && slot_mapping.size(0) == key.size(0), op, ": slot_mapping must be [tokens]");
  TORCH_CHECK(key.scalar_type() == key_cache.scalar_type() && value.scalar_type() == key.scalar_type() &&
              value_cache.scalar_type() == key.scalar_type(), op, ": key, value and caches must share a dtype");
  if (key.numel() == 0)
    return;
  c10::DeviceGuard guard(key.device());
  Tensor slots = slot_mapping.to(at::kLong);
  TT tk(key), tv(value), tkc(key_cache), tvc(value_cache), ts(slots);
  int dev = device_index(key.device());
  TOCL_CHECK(tocl_paged_cache_write(dev, current_stream(dev), tk.p(), tv.p(), tkc.p(), tvc.p(), ts.p()));
}

Tensor paged_attention(const Tensor& query, const Tensor& key_cache, const Tensor& value_cache,
                       const Tensor& block_table, const Tensor& cu_seqlens_q, const Tensor& seqlens_k, double scale,
                       bool causal, int64_t window) {
  const char* op = "torch_ocl::paged_attention";
  const std::pair<const Tensor*, const char*> operands[] = {{&key_cache, "key_cache"},
                                                            {&value_cache, "value_cache"},
                                                            {&block_table, "block_table"},
                                                            {&cu_seqlens_q, "cu_seqlens_q"},
                                                            {&seqlens_k, "seqlens_k"}};
  for (const auto& [t, w] : operands)
    check_same_device(*t, query, w, op);
  TORCH_CHECK(query.dim() == 3, op, ": query must be [tokens, heads, head dim], got ", query.sizes());
  TORCH_CHECK(key_cache.dim() == 4 && value_cache.sizes() == key_cache.sizes(), op, ": key_cache and value_cache "
              "must be [blocks, block size, kv heads, head dim] of one shape");
  TORCH_CHECK(block_table.dim() == 2 && cu_seqlens_q.dim() == 1 && seqlens_k.dim() == 1 &&
              cu_seqlens_q.size(0) == block_table.size(0) + 1 && seqlens_k.size(0) == block_table.size(0), op,
              ": expected block_table [N, max blocks], cu_seqlens_q [N + 1], seqlens_k [N]; got ",
              block_table.sizes(), ", ", cu_seqlens_q.sizes(), ", ", seqlens_k.sizes());
  for (const Tensor* t : {&block_table, &cu_seqlens_q, &seqlens_k})
    TORCH_CHECK(at::isIntegralType(t->scalar_type(), false), op, ": block_table, cu_seqlens_q and seqlens_k must "
                "be integer tensors, got ", t->scalar_type());
  c10::DeviceGuard guard(query.device());
  Tensor out = at::empty(query.sizes(), query.options());
  if (query.numel() == 0)
    return out;
  Tensor bt = block_table.to(at::kInt), cu = cu_seqlens_q.to(at::kInt).contiguous();
  Tensor kl = seqlens_k.to(at::kInt).contiguous();
  tocl_paged_desc d{scale, causal ? 1 : 0, window};
  TT tq(query), tkc(key_cache), tvc(value_cache), tbt(bt), tcu(cu), tkl(kl), to(out);
  int dev = device_index(query.device());
  TOCL_CHECK(tocl_paged_attention(dev, current_stream(dev), &d, tq.p(), tkc.p(), tvc.p(), tbt.p(), tcu.p(), tkl.p(),
                                  to.p()));
  return out;
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(torch_ocl, m) {
  m.def("reshape_and_cache(Tensor key, Tensor value, Tensor(a!) key_cache, Tensor(b!) value_cache, "
        "Tensor slot_mapping) -> ()");
  m.def("paged_attention(Tensor query, Tensor key_cache, Tensor value_cache, Tensor block_table, "
        "Tensor cu_seqlens_q, Tensor seqlens_k, float scale, bool causal=True, int window=0) -> Tensor");
  m.def("attention_append(Tensor q, Tensor k_cache, Tensor k_new, Tensor v_cache, Tensor v_new, "
        "float? scale=None) -> (Tensor, Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(torch_ocl, PrivateUse1, m) {
  m.impl("reshape_and_cache", TORCH_FN(reshape_and_cache));
  m.impl("paged_attention", TORCH_FN(paged_attention));
  m.impl("attention_append", TORCH_FN(attention_append));
}

// The CPU's flash attention entry points (called by name, e.g. by code
// written for the CPU and by export): the same kernels, its (output,
// logsumexp) and gradient triple.
std::tuple<Tensor, Tensor> sdpa_flash_for_cpu(const Tensor& q, const Tensor& k, const Tensor& v, double dropout_p,
                                              bool is_causal, const std::optional<Tensor>& attn_mask,
                                              std::optional<double> scale) {
  auto r = sdpa_forward(q, k, v, attn_mask, dropout_p, is_causal, false, scale);
  return {std::get<0>(r), std::get<1>(r)};
}

std::tuple<Tensor, Tensor, Tensor> sdpa_flash_for_cpu_backward(const Tensor& grad_out, const Tensor& q,
                                                               const Tensor& k, const Tensor& v, const Tensor& out,
                                                               const Tensor& lse, double dropout_p, bool is_causal,
                                                               const std::optional<Tensor>& attn_mask,
                                                               std::optional<double> scale) {
  auto r = sdpa_backward(grad_out, q, k, v, attn_mask.has_value() ? *attn_mask : Tensor(), {true, true, true, false},
                         out, lse, Tensor(), Tensor(), 0, 0, dropout_p, is_causal, Tensor(), Tensor(), scale);
  return {std::get<0>(r), std::get<1>(r), std::get<2>(r)};
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  RoutedLibrary m(lib);
  m.impl("_fused_sdp_choice", TORCH_FN(fused_sdp_choice));
  m.impl("_scaled_dot_product_flash_attention_for_cpu", TORCH_FN(sdpa_flash_for_cpu));
  m.impl("_scaled_dot_product_flash_attention_for_cpu_backward", TORCH_FN(sdpa_flash_for_cpu_backward));
  m.impl("_scaled_dot_product_fused_attention_overrideable", TORCH_FN(sdpa_forward));
  m.impl("_scaled_dot_product_fused_attention_overrideable_backward", TORCH_FN(sdpa_backward));
}

}  // namespace torch_ocl

// The composite SDPA consults this stub (keyed on device type), not the
// _fused_sdp_choice operator registered above.
namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(_fused_sdp_choice_stub, &torch_ocl::fused_sdp_choice);
}  // namespace at::native
