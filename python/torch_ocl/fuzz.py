"""Fused-eager fuzzer: random programs run on the CPU, in strict and in fused mode.

A program is a list of steps; each step is one line of ordinary PyTorch code
over named values ``v0, v1, ...`` (pointwise chains and DAGs, reductions,
broadcasts, views and as_strided, in-place ops on views, out= into aliases,
casts across every dtype, empty and 0-dim tensors, frees in the middle,
stream switches, host reads). It is generated from a seed while it runs on
the CPU, so operands are picked with shapes that fit; then the same lines run
on ocl in strict mode and in fused mode (in one process:
``torch_ocl.eager_mode``).

What must hold (the fused engine's promise, ``docs/fuzzing.md``):
  * every step raises on ocl exactly when it raises on the CPU, with the same
    exception type (message may differ), and strict and fused agree;
  * strict and fused are bit-identical, except where a floating reduction's
    input was computed by recorded ops (fused eager computes them in the
    reduction's prologue, a different summation order): those values and
    everything computed from them are compared within rounding;
  * ocl matches the CPU within the tolerance of the dtype (exactly for
    integers and bools that only exact values fed).
A value that a comparison or a float-to-int cast turned from an inexact float
into an integer or bool may flip at a tie: it is compared "mostly" (a few
elements may differ).

A failure is shrunk (steps removed while the same kind of failure remains)
and printed as a pytest test. ``python -m torch_ocl.fuzz --seconds 600``
fuzzes for as long as asked (``make fuzz``, ``FUZZ_SECONDS``, ``FUZZ_SEED``);
each batch runs in a child process so a crash or a hang is reported with its
seed instead of ending the run.
"""

import argparse
import math
import os
import random
import subprocess
import sys
import time
import traceback
import warnings

import torch

DTYPES = [torch.float32, torch.float32, torch.float32, torch.float16, torch.bfloat16, torch.float64,
          torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8, torch.bool]
SIZES = [1, 1, 2, 3, 4, 5, 7, 8, 16, 33, 0]
TOL = {torch.float16: 1e-2, torch.bfloat16: 3e-2, torch.float32: 1e-4, torch.float64: 1e-9}

# Levels of agreement a value is held to (per axis: vs the CPU, fused vs strict).
EXACT, CLOSE, MOSTLY = 0, 1, 2

# ---- the helpers a program's lines call (the namespace of every run) ------------------------


def _mk(dev, shape, dtype, seed):
    """A deterministic tensor: multiples of 1/8 for floats (casts truncate, half rounds), small ints."""
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        t = torch.randint(0, 2, shape, generator=g).bool()
    elif dtype.is_floating_point:
        t = (torch.randint(-40, 41, shape, generator=g).double() / 8).to(dtype)
    else:
        lo = 0 if dtype == torch.uint8 else -20
        t = torch.randint(lo, 21, shape, generator=g).to(dtype)
    return t.to(dev)


class _Env:
    """The names a program's lines see. On the CPU, stream switches and syncs are no-ops."""

    def __init__(self, dev):
        self.dev = dev
        self.streams = {}

    def namespace(self):
        return {"torch": torch, "dev": self.dev, "mk": lambda shape, dtype, seed: _mk(self.dev, shape, dtype, seed),
                "sw": self.switch, "sync": self.sync, "math": math}

    def switch(self, i):
        """Make stream i current; it first waits for the current one, so all work stays ordered
        (a program is a valid CUDA-semantics program: no stream race, no record_stream needed)."""
        if self.dev == "cpu":
            return
        cur = torch.ocl.current_stream()
        if i == 0:
            s = torch.ocl.default_stream()
        else:
            if i not in self.streams:
                self.streams[i] = torch.ocl.Stream()
            s = self.streams[i]
        s.wait_stream(cur)
        torch.ocl.set_stream(s)

    def sync(self):
        if self.dev != "cpu":
            torch.ocl.synchronize()


# ---- running a program -------------------------------------------------------------------


def _is_value(name, obj):
    return name.startswith("v") and name[1:].isdigit() and isinstance(obj, torch.Tensor)


def run(steps, dev, mode=None, sync_build=True):
    """Run the steps on dev ('cpu' or 'ocl'; mode 'strict'/'fused' for ocl).

    Returns (errors, values): errors[i] is the exception type name step i raised (or None);
    values maps each live value name to its CPU copy."""
    env = _Env(dev)
    ns = env.namespace()
    errors = []
    if dev == "cpu":
        for code, *_ in steps:
            errors.append(_exec(code, ns))
        return errors, {k: v.clone() for k, v in ns.items() if _is_value(k, v)}
    import torch_ocl
    from torch_ocl import fusion
    previous = torch_ocl.get_eager_mode()
    torch_ocl.set_eager_mode(mode)
    fusion.set_sync_build(sync_build)
    try:
        for code, *_ in steps:
            errors.append(_exec(code, ns))
        env.switch(0)
        values = {k: v.cpu() for k, v in ns.items() if _is_value(k, v)}
        torch.ocl.synchronize()
    finally:
        torch.ocl.set_stream(torch.ocl.default_stream())
        fusion.set_sync_build(False)
        torch_ocl.set_eager_mode(previous)
    return errors, values


_CODE = {}


def _exec(code, ns):
    c = _CODE.get(code)
    if c is None:
        c = _CODE[code] = compile(code, "<fuzz>", "exec")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(c, ns)
        return None
    except Exception as e:  # the step's error is part of the result
        if isinstance(e, NameError):  # a value a shrunk program no longer defines
            return "NameError"
        msg = str(e)
        if "not implemented for" in msg:
            return "NotImplemented:" + type(e).__name__
        return type(e).__name__


# ---- comparing ---------------------------------------------------------------------------


def _compare(a, b, level, dtype, floor_tol=0.0):
    """None if a and b agree at `level`, else a short description. floor_tol: the loosest
    tolerance of the program's dtypes (a float64 sum of float32 values is a float32-exact value)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return f"shape/dtype {tuple(a.shape)}/{a.dtype} vs {tuple(b.shape)}/{b.dtype}"
    if a.numel() == 0:
        return None
    if a.dtype == torch.bool:
        a, b = a.to(torch.uint8), b.to(torch.uint8)
    if not a.dtype.is_floating_point:
        bad = a.to(torch.int64) != b.to(torch.int64)
    else:
        a64, b64 = a.double(), b.double()
        nan_a, nan_b = torch.isnan(a64), torch.isnan(b64)
        if level == EXACT:
            bad = (nan_a != nan_b) | (~nan_a & ~nan_b & (a64 != b64))
        else:
            tol = max(TOL[dtype if dtype in TOL else torch.float32], floor_tol)
            finite = a64[torch.isfinite(a64)]
            scale = max(1.0, float(finite.abs().max())) if finite.numel() else 1.0
            close = torch.isclose(a64, b64, rtol=tol * 8, atol=tol * 8 * scale, equal_nan=True)
            bad = ~close
    n = int(bad.sum())
    if n == 0:
        return None
    if level == MOSTLY and n <= max(2, bad.numel() // 10):
        return None
    idx = bad.nonzero()[0].tolist()
    return f"{n}/{bad.numel()} elements differ, first at {idx}: {a[tuple(idx)].item()} vs {b[tuple(idx)].item()}"


def check(steps, sync_build=True):
    """Run a program three ways; a list of (kind, message) failures (empty: it passed)."""
    try:
        cpu_err, cpu = run(steps, "cpu")
    except Exception:
        return [("harness", traceback.format_exc(limit=3))]
    fails = []
    try:
        st_err, st = run(steps, "ocl", "strict")
        fu_err, fu = run(steps, "ocl", "fused", sync_build=sync_build)
    except Exception:
        return [("harness-ocl", traceback.format_exc(limit=3))]
    for i, (c, s, f) in enumerate(zip(cpu_err, st_err, fu_err)):
        code = steps[i][0]
        if s != f:
            fails.append(("error-fused", f"step {i} `{code}`: strict {s}, fused {f}"))
        cs = c.split(":")[-1] if c else None
        if c != s and not (c and c.startswith("NotImplemented")):
            fails.append(("error-cpu", f"step {i} `{code}`: cpu {c}, ocl {s}"))
        elif c and c.startswith("NotImplemented") and s is not None and s != cs and not s.startswith("NotImpl"):
            fails.append(("error-cpu", f"step {i} `{code}`: cpu {c}, ocl {s}"))
    levels = propagate(steps, cpu_err)
    code = "\n".join(s[0] for s in steps)
    floor_tol = max([TOL[d] for d in TOL if str(d) in code or d == torch.float32])
    for name in sorted(set(cpu) & set(st) & set(fu), key=lambda n: int(n[1:])):
        lc, lf = levels.get(name, (MOSTLY, MOSTLY))
        m = _compare(st[name], fu[name], lf, st[name].dtype, floor_tol)
        if m:
            fails.append(("fused-vs-strict", f"{name}: {m}"))
        m = _compare(cpu[name], st[name], lc, cpu[name].dtype, floor_tol)
        if m:
            fails.append(("ocl-vs-cpu", f"{name}: {m}"))
    return fails


def propagate(steps, errors):
    """The agreement level of each value, from the steps' kinds (see the module's docstring).

    A step is (code, kind, out, uses, dtype): kind is 'input', 'pw' (pointwise, out new),
    'red' (floating reduction: reassociates), 'exact-red' (integer, min/max, index results),
    'discrete' (a float turned into int/bool: compare, cast), 'view' (out aliases uses[0]),
    'inplace' (writes out, which may be a view), 'free', 'other' (no value)."""
    group = {}   # value -> storage group id
    level = {}   # group -> (cpu level, fused level)
    nxt = [0]

    def new_group(lv):
        nxt[0] += 1
        level[nxt[0]] = lv
        return nxt[0]

    def lv_of(names):
        c = f = EXACT
        for n in names:
            g = group.get(n)
            if g is None:
                continue
            c, f = max(c, level[g][0]), max(f, level[g][1])
        return c, f

    for (code, kind, out, uses, is_float), err in zip(steps, errors):
        if err is not None or kind == "other":
            continue
        c, f = lv_of(uses)
        if kind == "input":
            group[out] = new_group((EXACT, EXACT))
            continue
        if kind == "free":
            group.pop(out, None)
            continue
        if kind == "view":
            if uses and uses[0] in group:
                group[out] = group[uses[0]]
            continue
        if kind == "red":
            c, f = max(c, CLOSE), max(f, CLOSE)
        elif is_float:
            c = max(c, CLOSE)
        else:  # an integer or bool result: exact, unless an inexact float decided it (a tie may flip)
            c = MOSTLY if c >= CLOSE else c
            f = MOSTLY if f >= CLOSE else f
        if kind == "inplace":
            old = group.get(out)
            if old is None:
                continue
            oc, of = level[old]
            level[old] = (max(oc, c), max(of, f))
        else:
            group[out] = new_group((c, f))
    return {n: level[g] for n, g in group.items()}


# ---- generating --------------------------------------------------------------------------

UNARY = [  # (template, float only?, kind when the operand is floating)
    ("{x}.neg()", False), ("{x}.abs()", False), ("torch.sin({x})", True), ("torch.exp({x}.clamp(max=8))", True),
    ("torch.tanh({x})", True), ("torch.sigmoid({x})", True), ("torch.relu({x})", False),
    ("torch.sqrt({x})", True), ("torch.floor({x})", False), ("torch.round({x})", False),
    ("{x}.reciprocal()", True), ("{x}.square()", False), ("({x} * 0.5)", False), ("({x} + 1.25)", False),
    ("{x}.clamp(-2, 2)", False), ("torch.logical_not({x})", False), ("torch.bitwise_not({x})", False),
    ("torch.sign({x})", False), ("torch.nn.functional.gelu({x})", True), ("torch.nn.functional.silu({x})", True),
    ("torch.log1p({x}.abs())", True), ("({x} * 2)", False), ("(-{x} + 3)", False), ("({x} - 1)", False),
]
BINARY = [
    "({a} + {b})", "({a} - {b})", "({a} * {b})", "({a} / {b})", "torch.maximum({a}, {b})", "torch.minimum({a}, {b})",
    "torch.where({a} > {b}, {a}, {b})", "torch.add({a}, {b}, alpha=2)", "torch.atan2({a}, {b})",
    "torch.bitwise_and({a}, {b})", "torch.logical_or({a}, {b})", "torch.hypot({a}, {b})",
    # The sign of a NaN made by an invalid operation (sqrt(-1)) is unspecified (IEEE 754 6.3): x86's
    # scalar unit makes -NaN, its vector unit and PoCL's kernels may make +NaN. copysign would expose it.
    "torch.copysign({a}, torch.nan_to_num({b}))", "torch.lerp({a}, {b}, 0.25)", "torch.addcmul({a}, {a}, {b}, value=0.5)",
]
COMPARE = ["({a} > {b})", "({a} == {b})", "({a} <= {b})", "({a} != {b})"]
# 0-dim tensors live on the program's device: a CPU 0-dim tensor is accepted only by some ops on
# accelerators (CUDA too), so the CPU run cannot be the reference for it.
SCALARS = ["2", "-1", "0.5", "3", "True", "1e-3", "torch.tensor(1.5, device=dev)",
           "torch.tensor(2, dtype=torch.int32, device=dev)"]
REDUCE_FLOAT = ["{x}.sum({d})", "{x}.sum({d}, keepdim=True)", "{x}.mean({d})", "{x}.sum()",
                "{x}.prod({d})", "{x}.var({d})", "{x}.sum({d}, dtype=torch.float64)", "{x}.mean()",
                "torch.nn.functional.softmax({x}, {d})", "{x}.cumsum({d})", "{x}.norm()",
                "torch.logsumexp({x}, {d})", "{x}.std()"]
REDUCE_EXACT = ["{x}.amax({d})", "{x}.amin({d}, keepdim=True)", "{x}.argmax({d})", "{x}.any({d})",
                "{x}.all()", "{x}.max({d}).values", "{x}.amax()"]


class _Gen:
    def __init__(self, seed, n_steps):
        self.r = random.Random(seed)
        self.seed = seed
        self.n_steps = n_steps
        self.steps = []
        self.ns = _Env("cpu").namespace()
        self.next_name = 0
        self.stream = 0

    # live tensors on the CPU replay
    def live(self):
        return [k for k, v in self.ns.items() if _is_value(k, v)]

    def name(self):
        n = f"v{self.next_name}"
        self.next_name += 1
        return n

    def emit(self, code, kind, out, uses):
        """Run the line on the CPU; keep it if it ran (or, sometimes, if it raised)."""
        before = {k for k in self.ns}
        err = _exec(code, self.ns)
        if err is not None and self.r.random() > 0.1:
            for k in set(self.ns) - before:
                del self.ns[k]
            return False
        t = self.ns.get(out) if out else None
        is_float = isinstance(t, torch.Tensor) and t.dtype.is_floating_point  # the result's (or target's) dtype
        self.steps.append((code, kind, out, list(uses), is_float))
        return True

    def holds(self, cond, if_raises):
        """A condition on the program's CPU values, for the generator to steer by."""
        try:
            return bool(eval(cond, self.ns))
        except Exception:
            return if_raises

    def shape(self, base=None):
        r = self.r
        if base is not None and r.random() < 0.7:
            s = list(base)
            for i in range(len(s)):
                if r.random() < 0.3:
                    s[i] = 1
            while s and r.random() < 0.2:
                s.pop(0)
            return tuple(s)
        rank = r.choice([0, 1, 1, 2, 2, 2, 3, 3, 4])
        return tuple(r.choice(SIZES) if r.random() < 0.9 else 1 for _ in range(rank))

    def view_expr(self, x, t):
        """A view of value x (tensor t): (expr, description) or None."""
        r = self.r
        d = t.dim()
        choices = ["t", "slice", "unsq", "expand", "perm", "as_strided", "diag", "reshape", "narrow", "select"]
        kind = r.choice(choices)
        if d == 0:
            return f"{x}.unsqueeze(0)" if kind != "expand" else f"{x}.expand(3, 2)"
        i = r.randrange(d)
        n = t.shape[i]
        if kind == "t" and d >= 2:
            j = r.randrange(d)
            return f"{x}.transpose({i}, {j})"
        if kind == "slice" and n > 0:
            a = r.randrange(n)
            b = r.randrange(a, n + 1)
            step = r.choice([1, 1, 2, 3])
            idx = ", ".join([":"] * i + [f"{a}:{b}:{step}"])
            return f"{x}[{idx}]"
        if kind == "unsq":
            return f"{x}.unsqueeze({r.randrange(d + 1)})"
        if kind == "expand":
            sizes = [s if s != 1 or r.random() < 0.5 else r.choice([2, 3, 5]) for s in t.shape]
            if r.random() < 0.3:
                sizes = [r.choice([2, 3])] + sizes
            return f"{x}.expand({', '.join(map(str, sizes))})"
        if kind == "perm":
            p = list(range(d))
            r.shuffle(p)
            return f"{x}.permute({', '.join(map(str, p))})"
        if kind == "as_strided" and t.numel() > 0 and t.is_contiguous():
            numel = t.numel()
            rank = r.choice([1, 2, 2, 3])
            size = [r.choice([1, 2, 3, 4]) for _ in range(rank)]
            stride = [r.choice([0, 1, 2, 3, 5]) for _ in range(rank)]
            span = sum((s - 1) * st for s, st in zip(size, stride))
            if span >= numel:
                return None
            off = t.storage_offset() + r.randrange(numel - span)
            return f"{x}.as_strided({tuple(size)}, {tuple(stride)}, {off})"
        if kind == "diag" and d >= 2:
            return f"{x}.diagonal(0, {i}, {(i + 1) % d})"
        if kind == "reshape" and t.is_contiguous():
            return f"{x}.view(-1)" if r.random() < 0.5 else f"{x}.reshape({t.numel()}, 1)"
        if kind == "narrow" and n > 0:
            a = r.randrange(n)
            return f"{x}.narrow({i}, {a}, {r.randrange(n - a + 1)})"
        if kind == "select" and n > 0:
            return f"{x}.select({i}, {r.randrange(n)})"
        return None

    def operand(self, depth=1):
        """(expr, uses): a live value, maybe through a view or a pointwise op (a temporary)."""
        r = self.r
        live = self.live()
        x = r.choice(live)
        expr, uses = x, [x]
        p = r.random()
        if p < 0.25:
            v = self.view_expr(x, self.ns[x])
            if v:
                expr = v
        elif p < 0.45 and depth > 0:
            tmpl = r.choice(UNARY)[0]
            expr = tmpl.format(x=x)
        elif p < 0.55 and depth > 0:
            e2, u2 = self.operand(depth - 1)
            expr = r.choice(BINARY).format(a=x, b=e2)
            uses = uses + u2
        elif p < 0.6:
            dt = r.choice(DTYPES)
            if self.ns[x].dtype.is_floating_point and not dt.is_floating_point:
                # a NaN, inf or out-of-range float cast to an integer is undefined (C, OpenCL C,
                # PyTorch's CPU): strict and fused differed on it (seed 1000095)
                expr = f"torch.nan_to_num({x}).clamp(0, 100).to({dt})"
            else:
                expr = f"{x}.to({dt})"
        return expr, uses

    def step(self):
        r = self.r
        live = self.live()
        p = r.random()
        if not live or p < 0.06:
            out = self.name()
            base = self.ns[r.choice(live)].shape if live else None
            dt = r.choice(DTYPES)
            return self.emit(f"{out} = mk({self.shape(base)}, {dt}, {r.randrange(1000)})", "input", out, [])
        if p < 0.30:
            out = self.name()
            a, ua = self.operand()
            if r.random() < 0.6:
                b, ub = self.operand()
            else:
                b, ub = r.choice(SCALARS), []
            if r.random() < 0.5:
                a, b, ua, ub = b if ub else a, a if ub else b, ub if ub else ua, ua if ub else ub
            if r.random() < 0.15:
                return self.emit(f"{out} = {r.choice(COMPARE).format(a=a, b=b)}", "discrete", out, ua + ub)
            return self.emit(f"{out} = {r.choice(BINARY).format(a=a, b=b)}", "pw", out, ua + ub)
        if p < 0.42:
            out = self.name()
            a, ua = self.operand()
            tmpl = r.choice(UNARY)[0]
            return self.emit(f"{out} = {tmpl.format(x=a)}", "pw", out, ua)
        if p < 0.47:
            out = self.name()
            a, ua = self.operand(0)
            dt = r.choice(DTYPES)
            kind = "pw"
            if not dt.is_floating_point and self.ns[ua[0]].dtype.is_floating_point:
                a = f"torch.nan_to_num({a}).clamp(0, 100)"
                kind = "discrete"
            return self.emit(f"{out} = {a}.to({dt})", kind, out, ua)
        if p < 0.58:
            out = self.name()
            a, ua = self.operand()
            t = eval(a, self.ns)  # noqa: S307 (our own generated expression)
            d = r.randrange(-t.dim(), t.dim()) if t.dim() else 0
            if r.random() < 0.6:
                return self.emit(f"{out} = {r.choice(REDUCE_FLOAT).format(x=a, d=d)}",
                                 "red" if t.dtype.is_floating_point else "pw", out, ua)
            return self.emit(f"{out} = {r.choice(REDUCE_EXACT).format(x=a, d=d)}", "exact-red", out, ua)
        if p < 0.68:
            out = self.name()
            x = r.choice(live)
            v = self.view_expr(x, self.ns[x])
            return bool(v) and self.emit(f"{out} = {v}", "view", out, [x])
        if p < 0.82:  # in place, on the value or on a view of it
            x = r.choice(live)
            target = x
            if r.random() < 0.4:
                v = self.view_expr(x, self.ns[x])
                if v and ".expand(" not in v:
                    target = v
            b, ub = self.operand() if r.random() < 0.6 else (r.choice(SCALARS), [])
            q = r.random()
            if q < 0.5:
                op = r.choice(["add_", "mul_", "sub_", "div_", "clamp_min_", "maximum", "copy_"])
                if op == "maximum":
                    code = f"torch.maximum({target}, {b}, out={x})" if target == x else f"{target}.mul_({b})"
                else:
                    code = f"{target}.{op}({b})"
            elif q < 0.7:
                code = f"{target}.{r.choice(['neg_', 'abs_', 'sigmoid_', 'floor_', 'relu_', 'square_'])}()"
                ub = []
            elif q < 0.85:
                # x[...] = a 0-dim tensor that shares x's memory: PyTorch's __setitem__ fills from a
                # CPU value but copies from a device one, and that copy's overlap check raises (on
                # CUDA too). The CPU run cannot be the reference for it (fuzz seed 4).
                if self.holds(f"isinstance({b}, torch.Tensor) and ({b}).dim() == 0 and "
                              f"({b}).untyped_storage().data_ptr() == ({target}).untyped_storage().data_ptr()",
                              if_raises=False):
                    return False
                code = f"{target}[...] = {b}"
            else:  # out= into a value that may alias an operand
                a, ua = self.operand(0)
                # Only into a target of the result's shape: resizing a non-empty out= is deprecated,
                # and when an operand aliases the resized target (a view of it, broadcast) the result
                # depends on the order the elements are written (the CPU happens to hoist a broadcast
                # operand; a GPU does not). Fuzz seed 100143.
                # (a step that raises is kept as the error case it is)
                if not self.holds(f"tuple(torch.broadcast_shapes(torch.as_tensor({a}).shape, "
                                  f"torch.as_tensor({b}).shape)) == tuple(({target}).shape)", if_raises=True):
                    return False
                code = f"torch.{r.choice(['add', 'mul', 'sub', 'maximum'])}({a}, {b}, out={target})"
                ub = ub + ua
            return self.emit(code, "inplace", x, ub)
        if p < 0.88 and len(live) > 2:
            x = r.choice(live)
            return self.emit(f"del {x}", "free", x, [])
        if p < 0.93:
            i = r.choice([0, 1, 2]) if self.stream == 0 else r.choice([0, 0, 1, 2])
            self.stream = i
            return self.emit(f"sw({i})", "other", None, [])
        if p < 0.97:
            x = r.choice(live)
            out = self.name()
            return self.emit(f"{out} = {x}.sum().to(torch.float64)" if r.random() < 0.5 else f"_ = {x}.cpu()",
                             "red", out, [x])
        return self.emit("sync()", "other", None, [])

    def generate(self):
        r = self.r
        base = self.shape()
        for _ in range(r.randint(1, 3)):
            out = self.name()
            self.emit(f"{out} = mk({self.shape(base)}, {r.choice(DTYPES)}, {r.randrange(1000)})", "input", out, [])
        tries = 0
        while len(self.steps) < self.n_steps and tries < self.n_steps * 8:
            tries += 1
            try:
                self.step()
            except Exception:  # a generator expression evaluated on the CPU raised: skip it
                pass
        return self.steps


def generate(seed, n_steps=None):
    """The program of a seed: a list of (code, kind, out, uses, is_float) steps."""
    r = random.Random(seed * 7919 + 1)
    return _Gen(seed, n_steps or r.randint(4, 30)).generate()


# ---- shrinking and printing ----------------------------------------------------------------


def shrink(steps, kind, check_fn=None, budget_s=120.0):
    """Remove steps while `check_fn(steps)` still fails with the same kind (ddmin-style)."""
    check_fn = check_fn or check
    deadline = time.time() + budget_s

    def fails(cand):
        try:
            return any(k == kind for k, _ in check_fn(cand))
        except Exception:
            return False

    n = 2
    while len(steps) >= 2 and time.time() < deadline:
        chunk = max(1, len(steps) // n)
        removed = False
        for start in range(0, len(steps), chunk):
            cand = steps[:start] + steps[start + chunk:]
            if cand and fails(cand):
                steps = cand
                n = max(n - 1, 2)
                removed = True
                break
            if time.time() > deadline:
                break
        if not removed:
            if chunk == 1:
                break
            n = min(len(steps), n * 2)
    return steps


def as_test(steps, seed, failures):
    """A pytest function reproducing a failure."""
    lines = [f"def test_fuzz_seed_{seed}():",
             f"    # found by torch_ocl.fuzz, seed {seed}: {failures[0][0]}: {failures[0][1][:200]}",
             "    steps = ["]
    for s in steps:
        lines.append(f"        {s!r},")
    lines += ["    ]", "    assert fuzz.check(steps) == []"]
    return "\n".join(lines)


# ---- batches -------------------------------------------------------------------------------


def run_seeds(seeds, deadline=None, log=print, shrink_s=120.0, progress=None):
    """Check the program of each seed until the deadline; returns (programs run, [(seed, test text)])."""
    found = []
    n = 0
    for seed in seeds:
        if deadline is not None and time.time() > deadline:
            break
        if progress:
            progress(seed)
        steps = generate(seed)
        fails = check(steps, sync_build=seed % 4 != 3)
        n += 1
        if fails:
            kind = fails[0][0]
            log(f"seed {seed}: {len(fails)} failures, first {fails[0]}; shrinking {len(steps)} steps")
            small = shrink(steps, kind, budget_s=shrink_s)
            again = [f for f in check(small) if f[0] == kind] or fails
            text = as_test(small, seed, again)
            log(text)
            found.append((seed, text))
    return n, found


def _worker(args):
    """One child process: seeds from args.seed up, writing each seed before it runs it."""
    import torch_ocl  # noqa: F401
    deadline = time.time() + args.seconds

    def progress(seed):
        with open(args.status, "w") as f:
            f.write(str(seed))

    seeds = range(args.seed, args.seed + 10**9)
    n, found = run_seeds(seeds, deadline, log=lambda s: print(s, flush=True), progress=progress)
    print(f"WORKER programs={n} failures={len(found)}", flush=True)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seconds", type=float, default=float(os.environ.get("FUZZ_SECONDS", 300)))
    p.add_argument("--seed", type=int, default=int(os.environ.get("FUZZ_SEED", 0)))
    p.add_argument("--hang-s", type=float, default=600.0, help="a program running longer than this is a hang "
                   "(a cold program builds tens of kernels: minutes on a loaded 2-core machine)")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--status", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        return _worker(args)
    import tempfile
    end = time.time() + args.seconds
    seed = args.seed
    total = 0
    failures = []
    status = tempfile.mktemp(prefix="tocl_fuzz_")
    t0 = time.time()
    while time.time() < end:
        cmd = [sys.executable, "-m", "torch_ocl.fuzz", "--worker", "--seed", str(seed),
               "--seconds", str(max(1.0, end - time.time())), "--status", status]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        last_seed, last_change = seed, time.time()
        out_lines = []
        import threading
        reader = threading.Thread(target=lambda: out_lines.extend(iter(proc.stdout.readline, "")), daemon=True)
        reader.start()
        while proc.poll() is None:
            time.sleep(0.5)
            try:
                cur = int(open(status).read() or seed)
            except (OSError, ValueError):
                cur = last_seed
            if cur != last_seed:
                last_seed, last_change = cur, time.time()
            elif time.time() - last_change > args.hang_s:
                proc.kill()
                failures.append((cur, f"hang: seed {cur} ran over {args.hang_s:.0f} s"))
                print(f"seed {cur}: HANG (killed after {args.hang_s:.0f} s)", flush=True)
                break
        proc.wait()
        reader.join(timeout=5)
        for line in out_lines:
            if line.startswith("WORKER programs="):
                total += int(line.split()[1].split("=")[1])
            else:
                print(line, end="", flush=True)
                if line.startswith("seed ") and "failures" in line:
                    failures.append((int(line.split()[1].rstrip(":")), line.strip()))
        if proc.returncode not in (0, None) and not any(f[0] == last_seed and "hang" in f[1] for f in failures):
            failures.append((last_seed, f"crash: exit status {proc.returncode}"))
            print(f"seed {last_seed}: CRASH (exit status {proc.returncode}); rerun: "
                  f"python -m torch_ocl.fuzz --seed {last_seed} --seconds 1", flush=True)
        if proc.returncode != 0:
            try:
                total += int(open(status).read()) - seed
            except (OSError, ValueError):
                pass
        seed = last_seed + 1 if proc.returncode != 0 else seed
        if proc.returncode == 0:
            break
    try:
        os.unlink(status)
    except OSError:
        pass
    print(f"fuzz: {total} programs, seeds {args.seed}..{seed + total - 1 if total else seed}, "
          f"{len(failures)} failures, {time.time() - t0:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
