"""torch.save / torch.load of ocl tensors, state_dicts and shared storages."""

import io

import pytest
import torch
from torch import nn

from conftest import ALL_DTYPES, dtype_id, make_cpu

OCL = "ocl"

native = pytest.mark.usefixtures("no_fallback")


def save_load(obj, *, tmp_path=None, **load_kw):
    if tmp_path is None:
        buf = io.BytesIO()
        torch.save(obj, buf)
        buf.seek(0)
        return torch.load(buf, **load_kw)
    f = tmp_path / "obj.pt"
    torch.save(obj, f)
    return torch.load(f, **load_kw)


def assert_same(actual, expected):
    assert actual.dtype == expected.dtype
    assert actual.shape == expected.shape
    torch.testing.assert_close(actual.cpu(), expected.cpu(), rtol=0, atol=0, equal_nan=True)


@native
@pytest.mark.parametrize("weights_only", [True, False])
@pytest.mark.parametrize("target", ["bytesio", "file"])
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_round_trip(dtype, target, weights_only, tmp_path):
    a = make_cpu((5, 7), dtype)
    x = a.to(OCL)
    y = save_load(x, tmp_path=tmp_path if target == "file" else None, weights_only=weights_only)
    assert y.device == x.device
    assert y.data_ptr() != x.data_ptr()
    assert_same(y, a)


MAP_LOCATIONS = {
    "None": (None, "ocl:0"),
    "ocl": ("ocl", "ocl:0"),
    "ocl:0": ("ocl:0", "ocl:0"),
    "cpu": ("cpu", "cpu"),
    "device_cpu": (torch.device("cpu"), "cpu"),
    "device_ocl0": (torch.device("ocl:0"), "ocl:0"),
    "dict_to_cpu": ({"ocl:0": "cpu"}, "cpu"),
    "lambda_cpu": (lambda storage, loc: storage, "cpu"),
}


@native
@pytest.mark.parametrize("weights_only", [True, False])
@pytest.mark.parametrize("name", list(MAP_LOCATIONS))
def test_map_location(name, weights_only):
    loc, expected_dev = MAP_LOCATIONS[name]
    a = make_cpu((4, 4), torch.float32)
    y = save_load(a.to(OCL), map_location=loc, weights_only=weights_only)
    assert y.device == torch.device(expected_dev)
    assert_same(y, a)


@native
@pytest.mark.parametrize("weights_only", [True, False])
@pytest.mark.parametrize("loc", ["ocl:1", torch.device("ocl:1"), {"ocl:0": "ocl:1"}], ids=["str", "device", "dict"])
def test_map_location_second_device(two_devices, loc, weights_only):
    a = make_cpu((6,), torch.int64)
    y = save_load(a.to("ocl:0"), map_location=loc, weights_only=weights_only)
    assert y.device == torch.device("ocl:1")
    assert_same(y, a)


@native
def test_saved_on_second_device_loads_there(two_devices):
    _, d1 = two_devices
    a = make_cpu((3, 3), torch.float16)
    y = save_load(a.to(d1))
    assert y.device == d1
    assert_same(y, a)
    z = save_load(a.to(d1), map_location="ocl:0")
    assert z.device == torch.device("ocl:0")
    assert_same(z, a)


@native
@pytest.mark.parametrize("weights_only", [True, False])
def test_cpu_tensor_loaded_onto_ocl(weights_only):
    a = make_cpu((8,), torch.bfloat16)
    y = save_load(a, map_location="ocl", weights_only=weights_only)
    assert y.device.type == "ocl"
    assert_same(y, a)


@native
def test_non_contiguous_and_offset_tensors():
    base = make_cpu((6, 8), torch.float32)
    x = base.to(OCL)
    objs = {"t": x.t(), "step": x[:, ::3], "offset": x[2:], "zero_dim": x[1, 1], "empty": x[:0]}
    y = save_load(objs)
    for k, v in objs.items():
        assert y[k].device == v.device
        assert y[k].stride() == v.stride(), k
        assert y[k].storage_offset() == v.storage_offset(), k
        assert_same(y[k], v.cpu())


@native
@pytest.mark.parametrize("weights_only", [True, False])
def test_views_share_storage_after_load(weights_only):
    x = torch.arange(10.0).to(OCL)
    y = save_load({"x": x, "tail": x[2:], "t": x.view(2, 5).t()}, weights_only=weights_only)
    lx, tail, t = y["x"], y["tail"], y["t"]
    assert tail.untyped_storage().data_ptr() == lx.untyped_storage().data_ptr()
    assert t.untyped_storage().data_ptr() == lx.untyped_storage().data_ptr()
    assert tail.storage_offset() == 2
    assert tail.data_ptr() == lx.data_ptr() + 2 * lx.element_size()
    assert_same(tail, torch.arange(2.0, 10.0))
    lx.fill_(-1)  # a write through one is seen through the others
    assert_same(tail, torch.full((8,), -1.0))
    assert_same(t, torch.full((5, 2), -1.0))


def test_views_share_storage_after_load_map_cpu():
    x = torch.arange(10.0).to(OCL)
    y = save_load([x, x[2:]], map_location="cpu")
    assert y[1].untyped_storage().data_ptr() == y[0].untyped_storage().data_ptr()
    y[0].zero_()
    assert (y[1] == 0).all()


@native
def test_mixed_devices_in_one_object(two_devices):
    d0, d1 = two_devices
    obj = {"cpu": torch.ones(2), "ocl0": torch.full((2,), 2.0, device=d0), "ocl1": torch.full((2,), 3.0, device=d1)}
    y = save_load(obj)
    assert y["cpu"].device.type == "cpu"
    assert y["ocl0"].device == d0
    assert y["ocl1"].device == d1
    for k in obj:
        assert_same(y[k], obj[k].cpu())


def test_storage_device_type_recorded():
    buf = io.BytesIO()
    torch.save(torch.ones(3, device=OCL), buf)
    # the pickle records the location tag of the storage
    assert b"ocl:0" in buf.getvalue()


# --------------------------------------------------------------------------- modules


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(5, 4)
        self.fc2 = nn.Linear(4, 3, bias=False)
        self.bn = nn.BatchNorm1d(3)


@pytest.mark.parametrize("weights_only", [True, False])
@pytest.mark.parametrize("map_location", [None, "cpu", "ocl"], ids=str)
def test_state_dict_round_trip(map_location, weights_only, tmp_path):
    torch.manual_seed(0)
    src = Net()
    ref = {k: v.clone() for k, v in src.state_dict().items()}
    src = src.to(OCL)
    sd = src.state_dict()
    assert all(v.device.type == "ocl" for v in sd.values())
    torch.save(sd, tmp_path / "sd.pt")
    loaded = torch.load(tmp_path / "sd.pt", map_location=map_location, weights_only=weights_only)
    assert list(loaded) == list(ref)
    for k, v in loaded.items():
        assert v.device.type == ("cpu" if map_location == "cpu" else "ocl"), k
        assert_same(v, ref[k])

    fresh = Net().to(OCL)
    result = fresh.load_state_dict(loaded)
    assert not result.missing_keys and not result.unexpected_keys
    for k, v in fresh.state_dict().items():
        assert v.device.type == "ocl"
        assert_same(v, ref[k])
    # the module's parameters keep their identity and device
    assert fresh.fc1.weight.device.type == "ocl"


def test_whole_module_round_trip():
    torch.manual_seed(1)
    m = Net().to(OCL)
    y = save_load(m, weights_only=False)
    assert isinstance(y, Net)
    assert y.fc1.weight.device.type == "ocl"
    for (k, a), (_, b) in zip(m.state_dict().items(), y.state_dict().items()):
        assert_same(b, a.cpu())


def test_parameter_round_trip():
    p = nn.Parameter(torch.arange(6.0).to(OCL))
    y = save_load(p)
    assert isinstance(y, nn.Parameter) and y.requires_grad
    assert y.device.type == "ocl"
    assert_same(y.detach(), torch.arange(6.0))


def test_load_state_dict_from_cpu_checkpoint_into_ocl_model():
    torch.manual_seed(2)
    cpu_model = Net()
    sd = save_load(cpu_model.state_dict())
    m = Net().to(OCL)
    m.load_state_dict(sd)
    for k, v in m.state_dict().items():
        assert v.device.type == "ocl"
        assert_same(v, cpu_model.state_dict()[k])


def test_large_tensor_round_trip(tmp_path):
    a = torch.randn(1 << 20, generator=torch.Generator().manual_seed(0))
    y = save_load(a.to(OCL), tmp_path=tmp_path)
    assert_same(y, a)


@native
def test_saving_a_view_saves_the_whole_storage():
    x = torch.arange(10.0).to(OCL)
    y = save_load(x[2:5])
    assert y.storage_offset() == 2
    assert y.untyped_storage().nbytes() == x.untyped_storage().nbytes()
    assert_same(y, torch.arange(2.0, 5.0))


@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")
def test_untyped_storage_round_trip():
    x = torch.arange(6, dtype=torch.int32).to(OCL)
    s = save_load(x.untyped_storage(), weights_only=False)  # comes back as a uint8 TypedStorage, as on the CPU
    assert s.device.type == "ocl"
    assert s.nbytes() == 24
    y = torch.empty(0, dtype=torch.uint8, device=OCL).set_(s).view(torch.int32)
    assert_same(y, torch.arange(6, dtype=torch.int32))
