"""Device arguments written for CUDA, rewritten for ocl.

torch.device is a C type that cannot be subclassed, and constructing
``torch.device("cuda:0")`` needs no CUDA; so the shim leaves torch.device
alone (scripts and libraries keep seeing ``device.type == "cuda"`` on the
devices they build) and rewrites a device where it is consumed: factories,
``.to``, ``torch.load``, autocast, the default device (see docs/design.md).
"""

import re

import torch

_CUDA = re.compile(r"^cuda(:\d+)?$")


def is_cuda_spec(dev) -> bool:
    if isinstance(dev, str):
        return bool(_CUDA.match(dev.strip()))
    return isinstance(dev, torch.device) and dev.type == "cuda"


def to_ocl(dev):
    """'cuda' / 'cuda:N' / torch.device('cuda', N) -> the ocl device; other
    values (None, ints, 'cpu', ocl devices, dtypes) come back unchanged."""
    if isinstance(dev, str):
        s = dev.strip()
        if _CUDA.match(s):
            return "ocl" + s[4:]
        return dev
    if isinstance(dev, torch.device) and dev.type == "cuda":
        return torch.device("ocl", dev.index) if dev.index is not None else torch.device("ocl")
    return dev


def type_to_ocl(device_type):
    """A device *type* argument (autocast, GradScaler): 'cuda' -> 'ocl'."""
    if device_type == "cuda" or (isinstance(device_type, torch.device) and device_type.type == "cuda"):
        return "ocl"
    return device_type


def location_to_ocl(location: str) -> str:
    """A storage location in a checkpoint ('cuda:0') -> 'ocl:0'."""
    return to_ocl(location) if isinstance(location, str) else location


def map_location_to_ocl(map_location):
    """torch.load's map_location: a device, a dict of locations or a callable.
    None (restore where saved) becomes a function that sends CUDA storages to
    ocl and leaves the rest where the checkpoint put them."""
    if map_location is None:
        from torch.serialization import default_restore_location

        def restore(storage, location):
            return default_restore_location(storage, location_to_ocl(location))

        return restore
    if isinstance(map_location, dict):
        from torch.serialization import default_restore_location

        # Locations the dict does not name are restored where they were
        # saved, which for a CUDA checkpoint is CUDA: map those too.
        table = dict(map_location)

        def restore_mapped(storage, location):
            target = table.get(location, location)
            return default_restore_location(storage, location_to_ocl(str(target)))

        return restore_mapped
    if callable(map_location):
        return map_location
    return to_ocl(map_location)
