"""How users name the backend: no backend at all, device_id, "oclgloo", and
the mixed string; sub-groups and device meshes inherit it."""

import os
import socket

import pytest
import torch
import torch.distributed as dist

from harness import run_world


def test_registered_for_the_ocl_device():
    assert "oclgloo" in dist.Backend.backend_list
    assert dist.Backend.default_device_backend_map["ocl"] == "oclgloo"
    assert dist.Backend.default_device_backend_map["cpu"] == "gloo"  # the CPU default is untouched
    assert set(dist.Backend.backend_capability["oclgloo"]) == {"cpu", "ocl"}


def _forms_world(rank, ws, port, form):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(ws))
    dev = torch.device("ocl", rank)
    kwargs = {"none": {}, "device_id": {"device_id": dev}, "name": {"backend": "oclgloo"},
              "mixed": {"backend": "cpu:gloo,ocl:oclgloo"}}[form]
    dist.init_process_group(**kwargs)
    import torch_ocl

    # dist.get_backend() echoes what was asked ("undefined" for nothing);
    # the backends the group runs are what counts.
    ours = torch_ocl._C._ProcessGroupOCL
    assert isinstance(dist.group.WORLD._get_backend(dev), ours), form
    if form in ("device_id", "name"):
        assert isinstance(dist.group.WORLD._get_backend(torch.device("cpu")), ours), form
    if form == "mixed":
        assert isinstance(dist.group.WORLD._get_backend(torch.device("cpu")), dist.ProcessGroupGloo)
    want = dist.get_backend()
    t = torch.full((3,), float(rank + 1), device=dev)
    dist.all_reduce(t)
    assert t.cpu().tolist() == [3.0] * 3
    if form != "none":  # CPU tensors need a CPU backend in the group (as with NCCL)
        c = torch.ones(2)
        dist.all_reduce(c)
        assert c.tolist() == [2.0, 2.0]
    sub = dist.new_group([0, 1])
    assert dist.get_backend(sub) == want, dist.get_backend(sub)
    t = torch.ones(2, device=dev)
    dist.all_reduce(t, group=sub)
    assert t.cpu().tolist() == [2.0, 2.0]
    from torch.distributed.device_mesh import init_device_mesh

    mesh = init_device_mesh("ocl", (ws,))
    assert isinstance(mesh.get_group()._get_backend(dev), ours)
    objs = [None] * ws
    dist.all_gather_object(objs, rank)  # object collectives with or without a CPU backend
    assert objs == list(range(ws))
    dist.barrier()
    dist.destroy_process_group()


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("form", ["none", "device_id", "name", "mixed"])
def test_init_process_group_forms(form):
    run_world(_forms_world, args=(_free_port(), form), backend=None)
