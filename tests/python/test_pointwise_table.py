"""The pointwise table (adapter/aten/ocl_pointwise_table.cpp) as Python sees it.

torch_ocl._C._pointwise_table() lists every aten overload that the adapter
runs as exactly one IR op over a TensorIterator, as (overload, IR op,
iterator kind, dtypes); the same rows register the kernels, and the
torch.compile lowering reads it to know which aten ops are pure pointwise IR
ops. Here the table is held against what it claims:

- each overload is an aten overload with an ocl (PrivateUse1) kernel, and
  each out= overload is one the out= check leaves to its TensorIterator;
- each IR op is a row of the IR op table (runtime/codegen/ir_ops.c) whose
  arity is the iterator kind's (one input for unary kinds, two otherwise);
- each functional overload computes what the CPU computes on float32,
  int32 and bool inputs, and refuses the inputs the CPU refuses (a row whose
  dtype set is narrower than the CPU's fails here).
"""

import pathlib
import re

import pytest
import torch
import torch_ocl  # noqa: F401

ROOT = pathlib.Path(__file__).resolve().parents[2]
TABLE = torch_ocl._C._pointwise_table()
ITER_KINDS = {"unary": 1, "unary_float": 1, "unary_bool": 1, "binary": 2, "binary_float": 2, "compare": 2}
DTYPES = {"float16", "bfloat16", "float32", "float64", "uint8", "int8", "int16", "int32", "int64", "bool"}


def _ir_arity():
    """IR op name -> arity, read from the op table's rows in the C source."""
    src = (ROOT / "runtime" / "codegen" / "ir_ops.c").read_text()
    arity = {}
    for m in re.finditer(r"\b(UNARY_FLOAT|BINARY_FLOAT)\(TOCL_IR_\w+,\s*\"(\w+)\"", src):
        arity[m.group(2)] = 1 if m.group(1) == "UNARY_FLOAT" else 2
    # SPECIAL1 (unary special function), POLY (polynomial in x of degree n)
    for m in re.finditer(r"\b(SPECIAL1|POLY)\(TOCL_IR_\w+,\s*\"(\w+)\"", src):
        arity[m.group(2)] = 1 if m.group(1) == "SPECIAL1" else 2
    # ROW, ROWH, PREDICATE, SPECIAL, ...: (op, name, arity, ...)
    for m in re.finditer(r"\b[A-Z]+\(TOCL_IR_\w+,\s*\"(\w+)\",\s*(\d)", src):
        arity[m.group(1)] = int(m.group(2))
    return arity


IR_ARITY = _ir_arity()


def _op(name):
    base, _, overload = name.partition(".")
    return getattr(getattr(torch.ops.aten, base), overload or "default")


def test_table_is_well_formed():
    assert len(TABLE) > 100
    names = [row[0] for row in TABLE]
    assert len(names) == len(set(names)), "an overload is listed twice"
    for name, ir, kind, dtypes in TABLE:
        assert kind in ITER_KINDS, (name, kind)
        assert dtypes and set(dtypes) <= DTYPES, (name, dtypes)


@pytest.mark.parametrize("name", [row[0] for row in TABLE])
def test_overload_has_an_ocl_kernel(name):
    op = _op(name)
    assert torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), "PrivateUse1"), name


def test_out_overloads_are_left_to_their_iterator():
    how = dict(r.split(" ") for r in torch.ops.torch_ocl._out_checks())
    outs = [row[0] for row in TABLE if _op(row[0])._schema.is_mutable and any(
        a.is_out for a in _op(row[0])._schema.arguments)]
    assert outs, "the table lists no out= overload"
    for name in outs:
        assert how.get(name) == "iterator", (name, how.get(name))


def test_ir_ops_exist_with_the_iterator_arity():
    assert len(IR_ARITY) > 50, "could not read the IR op table"
    for name, ir, kind, _ in TABLE:
        assert ir in IR_ARITY, (name, ir)
        assert IR_ARITY[ir] == ITER_KINDS[kind], (name, ir, IR_ARITY[ir], kind)


def _inputs(kind, dtype):
    g = torch.Generator().manual_seed(0)
    if dtype == torch.bool:
        a = torch.rand(5, 3, generator=g) > 0.5
        b = torch.rand(5, 3, generator=g) > 0.5
    elif dtype.is_floating_point:
        a = (torch.rand(5, 3, generator=g) * 0.8 + 0.1).to(dtype)  # inside every op's domain
        b = (torch.rand(5, 3, generator=g) * 0.8 + 0.1).to(dtype)
    else:
        a = torch.randint(1, 5, (5, 3), generator=g).to(dtype)
        b = torch.randint(1, 4, (5, 3), generator=g).to(dtype)
    return (a,) if ITER_KINDS[kind] == 1 else (a, b)


FUNCTIONAL = [row for row in TABLE if not _op(row[0])._schema.is_mutable]


def _args_for(name, kind, dtype):
    schema = _op(name)._schema
    ins = _inputs(kind, dtype)
    params = [a for a in schema.arguments if not a.kwarg_only]
    args = []
    for a, t in zip(params, ins):
        args.append(t if str(a.type) == "Tensor" else t.flatten()[0].item())
    return args


@pytest.mark.parametrize("row", FUNCTIONAL, ids=[row[0] for row in FUNCTIONAL])
def test_functional_overload_matches_cpu(row):
    name, _, kind, dtypes = row
    op = _op(name)
    for dt in ("float32", "int32", "bool"):
        dtype = getattr(torch, dt)
        args = _args_for(name, kind, dtype)
        try:
            expect = op(*args)
        except (RuntimeError, NotImplementedError) as e:
            cpu_error = e
        else:
            cpu_error = None
        dev_args = [a.to("ocl") if isinstance(a, torch.Tensor) else a for a in args]
        if cpu_error is not None:  # the CPU's kernel refuses this dtype: so must ocl's
            with pytest.raises((RuntimeError, NotImplementedError)):
                op(*dev_args)
            continue
        got = op(*dev_args)
        assert got.device.type == "ocl"
        torch.testing.assert_close(got.cpu(), expect, equal_nan=True, atol=1e-5, rtol=1e-4)
