"""Sort/search family on ocl against the CPU: sort (stable indices exactly as
the CPU's), argsort, msort, topk, kthvalue, median, nanmedian, mode,
searchsorted, bucketize, histc, bincount, unique, unique_consecutive, isin.

Every test runs under no_fallback, so a CPU fallback fails it. Ops whose
index choice among ties is unspecified (topk, kthvalue, median, mode) are
checked by value and by self.gather(indices) == values."""

import pytest
import torch
import torch_ocl  # noqa: F401

from conftest import ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, dtype_id, make_cpu

OCL = "ocl"
NAN = float("nan")
INF = float("inf")

# Ops of this family; gradient tests allow other (backward) ops to fall back,
# never these.
FAMILY = ("sort", "topk", "kthvalue", "median", "nanmedian", "mode", "searchsorted", "bucketize", "histc",
          "bincount", "unique", "isin")


def same(a, b):
    """Exact equality (NaN == NaN), dtype and shape included."""
    a, b = a.cpu(), b.cpu()
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    assert a.shape == b.shape, (a.shape, b.shape)
    if a.is_floating_point():
        assert torch.equal(torch.isnan(a), torch.isnan(b)), (a, b)
        a, b = torch.nan_to_num(a, nan=0.0), torch.nan_to_num(b, nan=0.0)
    assert torch.equal(a, b), (a, b)


def dup_cpu(shape, dtype, seed=0):
    """Values with many duplicates."""
    return make_cpu(shape, dtype, low=-4, high=5, seed=seed)


def special_f32(n, seed=0):
    """float32 values with NaN, +-inf, -0.0/+0.0 and duplicates."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(-20, 20, (n,), generator=g).float() / 4
    r = torch.randint(0, 20, (n,), generator=g)
    x[r == 0] = NAN
    x[r == 1] = INF
    x[r == 2] = -INF
    x[r == 3] = -0.0
    return x


def check_selected(xc, dim, vals, idx, want_vals, keepdim=True):
    """values equal the CPU's and indices point at them."""
    same(vals, want_vals)
    vals, idx = vals.cpu(), idx.cpu()
    if xc.dim() == 0:
        assert idx.item() == 0
        return
    g = xc.gather(dim, idx if keepdim else idx.unsqueeze(dim))
    g = g if keepdim else g.squeeze(dim)
    same(g, vals)


# ---------------- sort, argsort, msort ----------------


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_sort_dtypes(dtype, no_fallback):
    x = dup_cpu((6, 37), dtype)
    xo = x.to(OCL)
    for dim in (0, 1, -1):
        for desc in (False, True):
            v, i = torch.sort(xo, dim=dim, descending=desc, stable=True)
            cv, ci = torch.sort(x, dim=dim, descending=desc, stable=True)
            same(v, cv)
            same(i, ci)
            v, i = torch.sort(xo, dim=dim, descending=desc)  # stable=False: any valid order
            same(v, cv)
            same(x.gather(dim, i.cpu()), cv)
    same(torch.argsort(xo, dim=0, stable=True), torch.argsort(x, dim=0, stable=True))
    same(torch.msort(xo), torch.msort(x))


@pytest.mark.parametrize("n,rows", [(1, 3), (2, 5), (3, 4), (5, 7), (1000, 3), (70000, 1), (3, 2000), (513, 9)])
def test_sort_sizes_nan_inf(n, rows, no_fallback):
    x = special_f32(n * rows, seed=n).reshape(rows, n)
    xo = x.to(OCL)
    for desc in (False, True):
        v, i = torch.sort(xo, dim=1, descending=desc, stable=True)
        cv, ci = torch.sort(x, dim=1, descending=desc, stable=True)
        same(v, cv)
        same(i, ci)
    if n >= 1000:  # long int64 rows take the 64-bit key path through the merges
        y = torch.randint(-(2 ** 62), 2 ** 62, (rows, n))
        y[:, ::7] = 5
        v, i = torch.sort(y.to(OCL), stable=True, descending=True)
        cv, ci = torch.sort(y, stable=True, descending=True)
        same(v, cv)
        same(i, ci)


def test_sort_layouts_and_out(no_fallback):
    x = dup_cpu((4, 5, 6), torch.float32)
    xo = x.to(OCL)
    for view in (lambda t: t.transpose(0, 2), lambda t: t[:, ::2, 1:], lambda t: t[1], lambda t: t.permute(2, 0, 1),
                 lambda t: t[:, :1].expand(4, 3, 6)):
        for dim in (0, 1, -1):
            v, i = torch.sort(view(xo), dim=dim, stable=True)
            cv, ci = torch.sort(view(x), dim=dim, stable=True)
            same(v, cv)
            same(i, ci)
    # out= into fresh, wrongly sized and non-contiguous outputs
    v, i = torch.empty(0, device=OCL), torch.empty(0, dtype=torch.long, device=OCL)
    r = torch.sort(xo, dim=1, descending=True, stable=True, out=(v, i))
    cv, ci = torch.sort(x, dim=1, descending=True, stable=True)
    assert r[0] is v and r[1] is i
    same(v, cv)
    same(i, ci)
    vb = torch.zeros(6, 5, 4, device=OCL).transpose(0, 2)
    ib = torch.zeros(6, 5, 4, dtype=torch.long, device=OCL).transpose(0, 2)
    torch.sort(xo, dim=-1, stable=True, out=(vb, ib))
    cv, ci = torch.sort(x, dim=-1, stable=True)
    same(vb, cv)
    same(ib, ci)
    # 0-dim, empty, many dims (more than the kernel's batch dims)
    for t in (torch.tensor(3.5), torch.empty(0), torch.empty(3, 0, 2), dup_cpu((2,) * 13, torch.float32)):
        for dim in ([0] if t.dim() <= 1 else [0, -1]):
            v, i = torch.sort(t.to(OCL), dim=dim, stable=True)
            cv, ci = torch.sort(t, dim=dim, stable=True)
            same(v, cv)
            same(i, ci)
    # sorting into the input itself
    y = xo.clone()
    torch.sort(y, dim=1, stable=True, out=(y, torch.empty(0, dtype=torch.long, device=OCL)))
    same(y, torch.sort(x, dim=1, stable=True)[0])


# ---------------- topk ----------------


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_topk(dtype, no_fallback):
    x = dup_cpu((7, 33), dtype)
    xo = x.to(OCL)
    if dtype == torch.bool:  # as on the CPU
        with pytest.raises(RuntimeError, match="topk does not support bool dtypes"):
            torch.topk(xo, 2)
        return
    for dim in (0, 1):
        for k in (0, 1, 5, 7):
            for largest in (True, False):
                v, i = torch.topk(xo, k, dim=dim, largest=largest)
                cv, _ = torch.topk(x, k, dim=dim, largest=largest)
                check_selected(x, dim, v, i, cv)
    v, i = torch.topk(xo, 4, dim=1, sorted=False)
    cv, _ = torch.topk(x, 4, dim=1)
    same(v.cpu().sort(dim=1, descending=True)[0], cv)
    same(x.gather(1, i.cpu()), v.cpu())


def test_topk_special_and_out(no_fallback):
    x = special_f32(3 * 1500).reshape(3, 1500)
    xo = x.to(OCL)
    for largest in (True, False):
        v, i = torch.topk(xo, 50, largest=largest)
        cv, _ = torch.topk(x, 50, largest=largest)
        check_selected(x, 1, v, i, cv)
    v, i = torch.empty(0, device=OCL), torch.empty(0, dtype=torch.long, device=OCL)
    torch.topk(xo.t(), 2, dim=0, out=(v, i))
    check_selected(x.t(), 0, v, i, torch.topk(x.t(), 2, dim=0)[0])
    for t, k in ((torch.tensor(2.0), 1), (torch.tensor(2.0), 0), (torch.empty(0, 4), 2), (torch.empty(4, 0), 0)):
        v, i = torch.topk(t.to(OCL), k, dim=-1)
        cv, ci = torch.topk(t, k, dim=-1)
        same(v, cv)
        same(i, ci)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        torch.topk(xo, 1501)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        torch.topk(xo, -1)


# ---------------- kthvalue, median, nanmedian, mode ----------------


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_kthvalue_median_mode(dtype, no_fallback):
    x = dup_cpu((6, 11), dtype)
    xo = x.to(OCL)
    for dim in (0, 1, -1):
        for keepdim in (False, True):
            if dtype != torch.bool:  # kthvalue/median are not implemented for bool on the CPU
                for k in (1, 3, x.shape[dim]):
                    v, i = torch.kthvalue(xo, k, dim=dim, keepdim=keepdim)
                    check_selected(x, dim, v, i, torch.kthvalue(x, k, dim=dim, keepdim=keepdim)[0], keepdim)
                v, i = torch.median(xo, dim=dim, keepdim=keepdim)
                check_selected(x, dim, v, i, torch.median(x, dim=dim, keepdim=keepdim)[0], keepdim)
                if dtype.is_floating_point:
                    v, i = torch.nanmedian(xo, dim=dim, keepdim=keepdim)
                    check_selected(x, dim, v, i, torch.nanmedian(x, dim=dim, keepdim=keepdim)[0], keepdim)
            v, i = torch.mode(xo, dim=dim, keepdim=keepdim)
            cv, ci = torch.mode(x, dim=dim, keepdim=keepdim)
            check_selected(x, dim, v, i, cv, keepdim)
    if dtype != torch.bool:
        same(torch.median(xo), torch.median(x))
        same(torch.median(xo[:, ::2].t()), torch.median(x[:, ::2].t()))
        if dtype.is_floating_point:
            same(torch.nanmedian(xo), torch.nanmedian(x))


def test_median_nan_and_edges(no_fallback):
    x = torch.tensor([[3.0, NAN, 1.0, NAN, 2.0], [1.0, 1.0, 2.0, 2.0, 0.0], [NAN, NAN, NAN, 1.0, 2.0],
                      [NAN, NAN, NAN, NAN, NAN]])
    xo = x.to(OCL)
    for op in (torch.median, torch.nanmedian):
        v, i = op(xo, 1)
        cv, ci = op(x, 1)
        same(v, cv)
        same(x.gather(1, i.cpu().unsqueeze(1)).squeeze(1), cv)
        if op is torch.median:  # a NaN result points at the row's first NaN, as on the CPU
            same(i.cpu()[torch.isnan(cv)], ci[torch.isnan(cv)])
        same(op(xo), op(x))
    # long rows, the special values, odd and even lengths
    for n in (1, 2, 999, 1000):
        y = special_f32(3 * n, seed=n).reshape(3, n)
        for op in (torch.median, torch.nanmedian):
            same(op(y.to(OCL), 1)[0], op(y, 1)[0])
        same(torch.kthvalue(y.to(OCL), (n + 1) // 2, 1)[0], torch.kthvalue(y, (n + 1) // 2, 1)[0])
    # 0-dim, empty
    t = torch.tensor(2.5)
    for op in (lambda a: torch.median(a, 0), lambda a: torch.kthvalue(a, 1), lambda a: torch.mode(a),
               lambda a: torch.nanmedian(a, 0)):
        v, i = op(t.to(OCL))
        cv, ci = op(t)
        same(v, cv)
        same(i, ci)
    same(torch.median(torch.empty(0, device=OCL)), torch.median(torch.empty(0)))
    v, i = torch.median(torch.empty(0, 3, device=OCL), 1)
    same(v, torch.empty(0))
    for op, msg in ((lambda a: torch.median(a, 1), "median"), (lambda a: torch.mode(a, 1), "mode"),
                    (lambda a: torch.kthvalue(a, 1, 1), "kthvalue")):
        with pytest.raises(IndexError, match=msg + r"\(\): Expected reduction dim 1 to have non-zero size"):
            op(torch.empty(3, 0, device=OCL))
    with pytest.raises(RuntimeError, match=r"kthvalue\(\): selected number k out of range for dimension 1"):
        torch.kthvalue(xo, 6, 1)
    # out= forms
    v, i = torch.empty(0, device=OCL), torch.empty(0, dtype=torch.long, device=OCL)
    torch.median(xo[:2], 1, keepdim=True, out=(v, i))
    same(v, torch.median(x[:2], 1, keepdim=True)[0])
    v, i = torch.empty(0, device=OCL), torch.empty(0, dtype=torch.long, device=OCL)
    torch.kthvalue(xo[1:2], 2, 1, out=(v, i))
    same(v, torch.kthvalue(x[1:2], 2, 1)[0])
    m = torch.tensor([[1, 2, 2, 1, 3, 3], [5, 5, 4, 4, 4, 5]])
    v, i = torch.mode(m.to(OCL), 1)
    same(v, torch.tensor([1, 4]))
    same(i, torch.tensor([3, 4]))  # last occurrence of the smallest most frequent value


# ---------------- searchsorted, bucketize ----------------


@pytest.mark.parametrize("dtype", [d for d in ALL_DTYPES if d != torch.bool], ids=dtype_id)
def test_searchsorted(dtype, no_fallback):
    bd = torch.sort(dup_cpu((4, 9), dtype), dim=1)[0]
    vals = make_cpu((4, 7), dtype, low=-6, high=7, seed=1)
    for right in (False, True):
        for out_int32 in (False, True):
            r = torch.searchsorted(bd.to(OCL), vals.to(OCL), right=right, out_int32=out_int32)
            same(r, torch.searchsorted(bd, vals, right=right, out_int32=out_int32))
            r = torch.bucketize(vals.to(OCL), bd[0].to(OCL), right=right, out_int32=out_int32)
            same(r, torch.bucketize(vals, bd[0], right=right, out_int32=out_int32))
    same(torch.searchsorted(bd.to(OCL), vals.to(OCL), side="right"), torch.searchsorted(bd, vals, side="right"))
    # 1-D boundaries with N-D values, sorter, scalar values
    raw = dup_cpu((12,), dtype, seed=3)
    srt = torch.argsort(raw, stable=True)
    v3 = make_cpu((2, 3, 5), dtype, low=-6, high=7, seed=4)
    same(torch.searchsorted(raw.to(OCL), v3.to(OCL), sorter=srt.to(OCL)), torch.searchsorted(raw, v3, sorter=srt))
    same(torch.searchsorted(bd[1].to(OCL), v3.to(OCL)), torch.searchsorted(bd[1], v3))
    same(torch.searchsorted(bd[1].to(OCL), 2), torch.searchsorted(bd[1], 2))
    same(torch.bucketize(3, bd[1].to(OCL), right=True), torch.bucketize(3, bd[1], right=True))


def test_searchsorted_special(no_fallback):
    bd = torch.tensor([1.0, 2.0, 2.0, 3.0, INF, NAN])
    v = torch.tensor([[2.0, 0.0, 5.0, NAN, -INF, INF, 2.5]])
    for right in (False, True):
        same(torch.searchsorted(bd.to(OCL), v.to(OCL), right=right), torch.searchsorted(bd, v, right=right))
    # mixed dtypes promote; non-contiguous and 0-dim values; out=
    bi = torch.tensor([0, 2, 4, 6, 8])
    vf = torch.tensor([[1.5, 2.0], [7.9, -1.0]]).t()
    same(torch.searchsorted(bi.to(OCL), vf.to(OCL)), torch.searchsorted(bi, vf))
    same(torch.searchsorted(bi.to(OCL), torch.tensor(5).to(OCL)), torch.searchsorted(bi, torch.tensor(5)))
    out = torch.empty(0, dtype=torch.int32, device=OCL)
    torch.searchsorted(bi.to(OCL), vf.to(OCL), out_int32=True, out=out)
    same(out, torch.searchsorted(bi, vf, out_int32=True))
    out = torch.empty(0, dtype=torch.long, device=OCL)
    torch.bucketize(vf.to(OCL), bi.to(OCL), out=out)
    same(out, torch.bucketize(vf, bi))
    big = torch.sort(special_f32(70000))[0]
    vals = special_f32(3000, seed=5)
    same(torch.searchsorted(big.to(OCL), vals.to(OCL)), torch.searchsorted(big, vals))
    same(torch.searchsorted(torch.empty(0, device=OCL), vals.to(OCL)), torch.searchsorted(torch.empty(0), vals))
    same(torch.searchsorted(bi.to(OCL), torch.empty(0, 3, dtype=torch.long, device=OCL)),
         torch.searchsorted(bi, torch.empty(0, 3, dtype=torch.long)))
    with pytest.raises(RuntimeError, match="sorter index out of range"):
        torch.searchsorted(bi.to(OCL), vf.to(OCL), sorter=torch.tensor([0, 1, 2, 3, 5], device=OCL))
    with pytest.raises(RuntimeError, match="side and right can't be set to opposites"):
        torch.searchsorted(bi.to(OCL), vf.to(OCL), side="left", right=True)
    with pytest.raises(RuntimeError, match="boundaries tensor must be 1 dimension"):
        torch.bucketize(vf.to(OCL), vf.to(OCL))


# ---------------- histc, bincount ----------------


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)
def test_histc(dtype, no_fallback):
    x = make_cpu((40, 7), dtype)
    xo = x.to(OCL)
    for bins, lo, hi in ((10, 0, 0), (7, -20, 30), (1, 0, 0), (100, -50.5, 99.5), (3, 5, 5)):
        same(torch.histc(xo, bins, lo, hi), torch.histc(x, bins, lo, hi))
    y = torch.tensor([1.0, 2.0, NAN, 3.0, INF, -INF, 4.0, 0.0]).to(dtype)
    same(torch.histc(y.to(OCL), 4, 0, 4), torch.histc(y, 4, 0, 4))
    same(torch.histc(xo.t(), 5), torch.histc(x.t(), 5))
    same(torch.histc(torch.empty(0, dtype=dtype, device=OCL), 4), torch.histc(torch.empty(0, dtype=dtype), 4))
    same(torch.histc(torch.full((3,), 2.0, dtype=dtype, device=OCL), 4), torch.histc(torch.full((3,), 2.0,
                                                                                                 dtype=dtype), 4))
    out = torch.empty(0, dtype=dtype, device=OCL)
    torch.histc(xo, 6, -10, 10, out=out)
    same(out, torch.histc(x, 6, -10, 10))
    with pytest.raises(RuntimeError, match=r"torch.histc: range of \[.*\] is not finite"):
        torch.histc(y.to(OCL), 4)
    with pytest.raises(RuntimeError, match="max must be larger than min"):
        torch.histc(xo, 4, 3, 1)
    with pytest.raises(RuntimeError, match="bins must be > 0"):
        torch.histc(xo, -1)


def test_histc_int_and_bincount(no_fallback):
    # Integer histc works off the CPU (as on CUDA; Hugging Face's MoE layers use it on int32 expert
    # ids): the counts equal the CPU's histc of the values in double, in the input's dtype.
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        torch.histc(torch.tensor([True, False], device=OCL), 4)
    for dtype in INT_DTYPES:
        x = make_cpu((300,), dtype, low=0, high=40)
        xo = x.to(OCL)
        for bins, lo, hi in ((8, 0, 7), (40, 0, 39), (7, 3, 30), (5, 0, 0)):
            same(torch.histc(xo, bins, lo, hi), torch.histc(x.double(), bins, lo, hi).to(dtype))
        same(torch.bincount(xo), torch.bincount(x))
        same(torch.bincount(xo, minlength=60), torch.bincount(x, minlength=60))
        same(torch.bincount(xo[::3]), torch.bincount(x[::3]))
    x = make_cpu((5000,), torch.int64, low=0, high=700)
    w = torch.randn(5000, generator=torch.Generator().manual_seed(1))
    for wt in (w, w.double(), (w * 10).long(), w.half()):
        same(torch.bincount(x.to(OCL), wt.to(OCL)), torch.bincount(x, wt))  # bitwise: same summation order
    same(torch.bincount(x.to(OCL), w.to(OCL), minlength=900), torch.bincount(x, w, minlength=900))
    e = torch.empty(0, dtype=torch.long)
    same(torch.bincount(e.to(OCL)), torch.bincount(e))
    same(torch.bincount(e.to(OCL), minlength=4), torch.bincount(e, minlength=4))
    same(torch.bincount(e.to(OCL), torch.empty(0, device=OCL), minlength=2), torch.bincount(e, torch.empty(0),
                                                                                             minlength=2))
    with pytest.raises(RuntimeError, match="bincount only supports 1-d non-negative integral inputs"):
        torch.bincount(torch.tensor([1, -3], device=OCL))
    with pytest.raises(RuntimeError, match="bincount only supports 1-d non-negative integral inputs"):
        torch.bincount(torch.tensor([[1, 3]], device=OCL))
    with pytest.raises(RuntimeError, match="minlength should be >= 0"):
        torch.bincount(torch.tensor([1, 3], device=OCL), minlength=-1)
    with pytest.raises(RuntimeError, match="weights should be 1-d and have the same length as input"):
        torch.bincount(torch.tensor([1, 3], device=OCL), torch.ones(3, device=OCL))
    with pytest.raises(NotImplementedError, match="not implemented for 'Float'"):
        torch.bincount(torch.tensor([1.0, 3.0], device=OCL))


# ---------------- unique, unique_consecutive ----------------


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_unique(dtype, no_fallback):
    x = dup_cpu((5, 13), dtype)
    xo = x.to(OCL)
    for inv in (False, True):
        for cnt in (False, True):
            r = torch.unique(xo, return_inverse=inv, return_counts=cnt)
            c = torch.unique(x, return_inverse=inv, return_counts=cnt)
            for a, b in zip(r if isinstance(r, tuple) else (r,), c if isinstance(c, tuple) else (c,)):
                same(a, b)
            r = torch.unique_consecutive(xo, return_inverse=inv, return_counts=cnt)
            c = torch.unique_consecutive(x, return_inverse=inv, return_counts=cnt)
            for a, b in zip(r if isinstance(r, tuple) else (r,), c if isinstance(c, tuple) else (c,)):
                same(a, b)
    # sorted=False: the CPU order is unspecified; ours is sorted
    u, i = torch.unique(xo.t(), sorted=False, return_inverse=True)
    same(u.cpu()[i.cpu()], x.t())
    same(u.cpu().sort()[0], torch.unique(x))
    same(torch.unique_consecutive(xo.t()), torch.unique_consecutive(x.t()))


def test_unique_special(no_fallback):
    x = special_f32(70000)
    same(torch.unique(x.to(OCL)), torch.unique(x))
    u, i, c = torch.unique(x.to(OCL), return_inverse=True, return_counts=True)
    cu, ci, cc = torch.unique(x, return_inverse=True, return_counts=True)
    same(u, cu)
    same(c, cc)
    # every NaN is its own group; which NaN gets which group is unspecified
    same(u.cpu()[i.cpu()], x)
    same(i.cpu()[~torch.isnan(x)], ci[~torch.isnan(x)])
    for args in ({}, {"return_inverse": True, "return_counts": True}):
        r = torch.unique_consecutive(x.sort()[0].to(OCL), **args)
        c = torch.unique_consecutive(x.sort()[0], **args)
        for a, b in zip(r if isinstance(r, tuple) else (r,), c if isinstance(c, tuple) else (c,)):
            same(a, b)
    for t in (torch.tensor(3), torch.empty(0), torch.empty(0, 3)):
        for a, b in zip(torch.unique(t.to(OCL), return_inverse=True, return_counts=True),
                        torch.unique(t, return_inverse=True, return_counts=True)):
            same(a, b)
        for a, b in zip(torch.unique_consecutive(t.to(OCL), return_inverse=True, return_counts=True),
                        torch.unique_consecutive(t, return_inverse=True, return_counts=True)):
            same(a, b)
    for a, b in zip(torch._unique2(x[:50].to(OCL), True, False, False), torch._unique2(x[:50], True, False, False)):
        same(a, b)
    y = torch.tensor([1, 1, 2, 2, 2, 3])
    for a, b in zip(torch.unique_consecutive(y.to(OCL), return_counts=True, dim=0),
                    torch.unique_consecutive(y, return_counts=True, dim=0)):
        same(a, b)


# ---------------- isin ----------------


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_isin(dtype, no_fallback):
    el = dup_cpu((6, 7), dtype)
    te = dup_cpu((5,), dtype, seed=2)
    if dtype == torch.bool:  # as on the CPU
        with pytest.raises(RuntimeError, match="Unsupported input type encountered for isin"):
            torch.isin(el.to(OCL), te.to(OCL))
        return
    for invert in (False, True):
        for au in (False, True):
            same(torch.isin(el.to(OCL), te.to(OCL), invert=invert, assume_unique=au),
                 torch.isin(el, te, invert=invert, assume_unique=au))
        same(torch.isin(el.to(OCL).t(), te.to(OCL), invert=invert), torch.isin(el.t(), te, invert=invert))
    s = el[0, 0].item()
    same(torch.isin(el.to(OCL), s), torch.isin(el, s))
    same(torch.isin(s, te.to(OCL)), torch.isin(s, te))
    out = torch.empty(0, dtype=torch.bool, device=OCL)
    torch.isin(el.to(OCL), te.to(OCL), out=out)
    same(out, torch.isin(el, te))


def test_isin_special(no_fallback):
    el = torch.tensor([NAN, 0.0, -0.0, 1.0, INF, 2.5])
    te = torch.tensor([NAN, -0.0, INF])
    same(torch.isin(el.to(OCL), te.to(OCL)), torch.isin(el, te))
    big_e, big_t = special_f32(5000, seed=1), special_f32(70000, seed=2)
    same(torch.isin(big_e.to(OCL), big_t.to(OCL)), torch.isin(big_e, big_t))
    ei, tf = torch.tensor([1, 2, 3]), torch.tensor([1.5, 2.0])  # promotion to float
    same(torch.isin(ei.to(OCL), tf.to(OCL)), torch.isin(ei, tf))
    same(torch.isin(ei.to(OCL), 2.0), torch.isin(ei, 2.0))
    same(torch.isin(torch.empty(0, device=OCL), te.to(OCL)), torch.isin(torch.empty(0), te))
    same(torch.isin(el.to(OCL), torch.empty(0, device=OCL), invert=True), torch.isin(el, torch.empty(0), invert=True))
    same(torch.isin(torch.tensor(1.0, device=OCL), te.to(OCL)), torch.isin(torch.tensor(1.0), te))


# ---------------- gradients ----------------


def test_gradients():
    """Backward of sort/topk/median/kthvalue values against the CPU. The
    forward ops must stay on ocl; the backward formulas' helpers (scatter,
    index_put, ...) belong to other op families and may fall back."""
    old = torch_ocl.get_fallback_policy()
    torch_ocl.reset_fallback_stats()
    torch_ocl.set_fallback_policy("silent")
    try:
        x = make_cpu((4, 9), torch.float64, seed=3)
        g = make_cpu((4, 9), torch.float64, seed=4)
        ops = [
            (lambda t: torch.sort(t, dim=1, stable=True)[0], lambda o: g),
            (lambda t: torch.sort(t, dim=0, descending=True)[0], lambda o: g),
            (lambda t: torch.topk(t, 3, dim=1)[0], lambda o: g[:, :3]),
            (lambda t: torch.median(t, dim=1)[0], lambda o: g[:, 0]),
            (lambda t: torch.median(t), lambda o: g[0, 0]),
            (lambda t: torch.kthvalue(t, 2, dim=0)[0], lambda o: g[0]),
            (lambda t: torch.nanmedian(t, dim=1, keepdim=True)[0], lambda o: g[:, :1]),
        ]
        for f, gf in ops:
            xc = x.clone().requires_grad_()
            xo = x.to(OCL).requires_grad_()
            oc, oo = f(xc), f(xo)
            (gc,) = torch.autograd.grad(oc, xc, gf(oc))
            (go,) = torch.autograd.grad(oo, xo, gf(oc).to(OCL))
            same(go, gc)
    finally:
        torch_ocl.set_fallback_policy(old if old in ("warn", "error", "silent") else "warn")
    stats = torch_ocl.fallback_stats()
    assert not [op for op in stats if any(f in op for f in FAMILY)], stats
