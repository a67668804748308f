// ocl_segment.cpp - the ATen glue of compiled pointwise segments: a spec of
// names from Python becomes a runtime segment at compile time; each call
// checks the inputs, allocates the outputs on the caching allocator and
// enqueues the segment's one kernel. The only torch-header translation unit
// of the compiled path.
#include "compile/ocl_segment.h"

#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <pybind11/stl.h>
#include <torch/csrc/autograd/python_variable.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "dense_strides.h"
#include "ocl_common.h"
#include "tocl/segment.h"

namespace py = pybind11;

namespace torch_ocl {
namespace {

struct Segment {
  tocl_segment* seg = nullptr;
  std::vector<c10::ScalarType> in_types, out_types;
  // Scalars given per call (symbolic sizes): (scalar index, argument index
  // after the tensors).
  std::vector<std::pair<int, int>> runtime_scalars;
  // Per output, the order of its dimensions in memory as the graph was
  // traced (outermost first), or nullopt where the trace did not say (then
  // layout_strides decides).
  std::vector<std::optional<std::vector<int64_t>>> orders;
  ~Segment() { tocl_seg_destroy(seg); }
};

// dtype names as torch prints them without the "torch." prefix.
const struct {
  const char* name;
  c10::ScalarType type;
} kDtypes[] = {{"bool", at::kBool},       {"uint8", at::kByte},    {"int8", at::kChar},
               {"int16", at::kShort},     {"int32", at::kInt},     {"int64", at::kLong},
               {"float16", at::kHalf},    {"bfloat16", at::kBFloat16}, {"float32", at::kFloat},
               {"float64", at::kDouble}};

c10::ScalarType scalar_type(const std::string& name) {
  for (const auto& d : kDtypes)
    if (name == d.name)
      return d.type;
  throw py::value_error("torch_ocl segment: unknown dtype '" + name + "'");
}

tocl_ir_op ir_op(const std::string& name) {
  for (int op = 0; op < TOCL_IR_OP_COUNT; op++)
    if (name == tocl_ir_op_name(static_cast<tocl_ir_op>(op)))
      return static_cast<tocl_ir_op>(op);
  throw py::value_error("torch_ocl segment: unknown IR op '" + name + "'");
}

using Ref = std::tuple<int, int>;
using NodeSpec = std::tuple<std::string, std::string, std::string, std::vector<Ref>>;

// spec: (input dtypes, [(value, dtype, call argument or -1)], [(IR op,
// common dtype, result dtype, [(ref kind, index)])], output node indices). Returns (handle, "") or
// (None, why) when the runtime refuses the segment (too big, no formula).
py::tuple compile_segment(const std::vector<std::string>& inputs, const std::vector<py::tuple>& scalars,
                          const std::vector<NodeSpec>& nodes, const std::vector<int>& outputs,
                          const std::vector<std::optional<std::vector<int64_t>>>& orders) {
  auto s = std::make_shared<Segment>();
  if (!orders.empty() && orders.size() != outputs.size())
    throw py::value_error("torch_ocl segment: one dimension order per output, or none");
  for (const auto& o : orders) {
    if (!o)
      continue;
    std::vector<bool> seen(o->size());
    for (int64_t d : *o) {
      if (d < 0 || d >= static_cast<int64_t>(o->size()) || seen[d])
        throw py::value_error("torch_ocl segment: a dimension order must be a permutation");
      seen[d] = true;
    }
  }
  s->orders = orders;
  std::vector<tocl_dtype> in_dt, sc_dt;
  std::vector<tocl_scalar> sc;
  for (const auto& n : inputs) {
    s->in_types.push_back(scalar_type(n));
    in_dt.push_back(to_tocl_dtype(s->in_types.back()));
  }
  for (const auto& t : scalars) {
    py::handle v = t[0];
    c10::Scalar value = py::isinstance<py::bool_>(v)  ? c10::Scalar(v.cast<bool>())
                        : py::isinstance<py::int_>(v) ? c10::Scalar(v.cast<int64_t>())
                                                      : c10::Scalar(v.cast<double>());
    sc.push_back(to_tocl_scalar(value));
    sc_dt.push_back(to_tocl_dtype(scalar_type(t[1].cast<std::string>())));
    int arg = t.size() > 2 ? t[2].cast<int>() : -1;
    if (arg >= 0)
      s->runtime_scalars.emplace_back(static_cast<int>(sc.size()) - 1, arg);
  }
  std::vector<tocl_seg_node> ns;
  for (const auto& [op, common, result, args] : nodes) {
    tocl_seg_node n{};
    n.op = ir_op(op);
    n.common = to_tocl_dtype(scalar_type(common));
    n.result = to_tocl_dtype(scalar_type(result));
    if (args.size() > 3)
      throw py::value_error("torch_ocl segment: a node takes at most 3 arguments");
    for (size_t k = 0; k < args.size(); k++)
      n.arg[k] = tocl_seg_ref{static_cast<tocl_seg_ref_kind>(std::get<0>(args[k])), std::get<1>(args[k])};
    ns.push_back(n);
  }
  for (int j : outputs) {
    if (j < 0 || j >= static_cast<int>(ns.size()))
      throw py::value_error("torch_ocl segment: output refers to no node");
    s->out_types.push_back(c10::ScalarType(scalar_type(std::get<2>(nodes[j]))));
  }
  tocl_seg_spec spec{static_cast<int>(in_dt.size()), in_dt.data(), static_cast<int>(sc.size()), sc.data(),
                     sc_dt.data(), static_cast<int>(ns.size()), ns.data(), static_cast<int>(outputs.size()),
                     outputs.data()};
  tocl_status st = tocl_seg_create(&spec, &s->seg);
  if (st == TOCL_E_UNSUPPORTED)
    return py::make_tuple(py::none(), std::string(tocl_last_error()));
  TOCL_CHECK(st);
  return py::make_tuple(py::cast(s), std::string());
}

// The outputs' strides where the trace gave no order (Segment.orders):
// dense, with dimensions in the order of the first
// input's strides if that input is already at the iteration shape and
// broadcasts no dimension (a permuted input gives a permuted output, as
// TensorIterator does, also when the input is a slice of a larger buffer such
// as q out of a fused qkv projection: the graph was traced with those
// strides, and a later view of the output relies on them); else contiguous
// (empty result).
std::vector<int64_t> layout_strides(const std::vector<const at::Tensor*>& ins, c10::IntArrayRef shape) {
  for (const at::Tensor* t : ins) {
    if (t->sizes() != shape)
      continue;
    if (t->is_contiguous())
      return {};
    for (int64_t d = 0; d < t->dim(); d++)
      if (t->stride(d) == 0 && t->size(d) > 1)
        return {};
    return dense_strides_like(*t, shape);
  }
  return {};
}

// Output k's strides: its traced order, else layout_strides' (empty:
// contiguous).
std::vector<int64_t> output_strides(const Segment& s, size_t k, const std::vector<const at::Tensor*>& ins,
                                    c10::IntArrayRef shape) {
  if (k < s.orders.size() && s.orders[k] && s.orders[k]->size() == shape.size())
    return dense_strides_in_order(*s.orders[k], shape);
  return layout_strides(ins, shape);
}

// None when the inputs are not what the segment was compiled for (not ocl
// tensors of its dtypes on one device) or the device refuses the kernel:
// the caller runs the segment's nodes one by one instead.
py::object run_segment(const Segment& s, py::tuple args) {
  size_t n = s.in_types.size();
  if (args.size() != n + s.runtime_scalars.size())
    throw py::value_error("torch_ocl segment: expected " + std::to_string(n) + " tensors and " +
                          std::to_string(s.runtime_scalars.size()) + " numbers, got " + std::to_string(args.size()) +
                          " arguments");
  std::vector<const at::Tensor*> ins(n);
  tocl_tensor tin[TOCL_IR_MAX_INPUTS];
  int dev = -1;
  for (size_t k = 0; k < n; k++) {
    PyObject* o = args[k].ptr();
    if (!THPVariable_Check(o))
      return py::none();
    const at::Tensor& t = THPVariable_Unpack(o);
    if (t.device().type() != c10::DeviceType::PrivateUse1 || t.scalar_type() != s.in_types[k] ||
        (dev >= 0 && t.device().index() != dev) || t.dim() > TOCL_TENSOR_MAX_DIMS)
      return py::none();
    dev = t.device().index();
    ins[k] = &t;
    tin[k] = to_tocl_tensor(t);
  }
  tocl_scalar sc[TOCL_IR_MAX_SCALARS];
  if (!s.runtime_scalars.empty()) {
    const tocl_ir_graph* g = tocl_seg_graph(s.seg);
    std::memcpy(sc, tocl_seg_scalars(s.seg), sizeof(tocl_scalar) * g->n_scalars);
    for (const auto& [k, j] : s.runtime_scalars) {
      py::handle v = args[n + j];
      if (py::isinstance<py::bool_>(v))
        sc[k] = to_tocl_scalar(c10::Scalar(v.cast<bool>()));
      else if (py::isinstance<py::int_>(v))
        sc[k] = to_tocl_scalar(c10::Scalar(v.cast<int64_t>()));
      else if (py::isinstance<py::float_>(v))
        sc[k] = to_tocl_scalar(c10::Scalar(v.cast<double>()));
      else
        return py::none();
    }
  }
  int nd = 0;
  int64_t sizes[TOCL_TENSOR_MAX_DIMS];
  TOCL_CHECK(tocl_seg_shape(s.seg, tin, &nd, sizes));
  c10::IntArrayRef shape(sizes, nd);
  auto opts = at::TensorOptions().device(c10::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(dev)));
  py::tuple result(s.out_types.size());
  std::vector<at::Tensor> outs;
  tocl_tensor tout[TOCL_IR_MAX_OUTPUTS];
  for (size_t k = 0; k < s.out_types.size(); k++) {
    auto o = opts.dtype(s.out_types[k]);
    std::vector<int64_t> strides = output_strides(s, k, ins, shape);
    outs.push_back(strides.empty() ? at::empty(shape, o) : at::empty_strided(shape, strides, o));
    tout[k] = to_tocl_tensor(outs.back());
  }
  tocl_status st = tocl_seg_run(s.seg, dev, current_stream(dev), tin, s.runtime_scalars.empty() ? nullptr : sc, tout);
  if (st == TOCL_E_UNSUPPORTED)
    return py::none();
  TOCL_CHECK(st);
  for (size_t k = 0; k < outs.size(); k++)
    result[k] = py::reinterpret_steal<py::object>(THPVariable_Wrap(std::move(outs[k])));
  return std::move(result);
}

}  // namespace

void register_segment_bindings(py::module_& m) {
  py::class_<Segment, std::shared_ptr<Segment>>(m, "_Segment")
      .def_property_readonly("n_inputs", [](const Segment& s) { return s.in_types.size(); })
      .def_property_readonly("n_outputs", [](const Segment& s) { return s.out_types.size(); })
      .def_property_readonly("n_runtime_scalars", [](const Segment& s) { return s.runtime_scalars.size(); })
      .def_property_readonly("n_ir_nodes", [](const Segment& s) { return tocl_seg_graph(s.seg)->n_nodes; });
  m.def("_compile_segment", &compile_segment, py::arg("inputs"), py::arg("scalars"), py::arg("nodes"),
        py::arg("outputs"), py::arg("orders") = std::vector<std::optional<std::vector<int64_t>>>{});
  m.def("_run_segment", &run_segment);
}

}  // namespace torch_ocl
