"""Which devices the benchmark runs on, and what they are."""

import platform
from typing import List

import torch


def available(requested: str = "auto") -> List[torch.device]:
    if requested != "auto":
        return [torch.device(d) for d in requested.split(",")]
    devs = [torch.device("cpu")]
    if hasattr(torch, "ocl"):
        devs += [torch.device("ocl", i) for i in range(torch.ocl.device_count())]
    if torch.cuda.is_available():
        devs += [torch.device("cuda", i) for i in range(torch.cuda.device_count())]
    return devs


def describe(device: torch.device) -> str:
    if device.type == "ocl":
        p = torch.ocl.get_device_properties(device)
        return f"{p.name} ({p.platform_name} {p.driver_version}, {p.compute_units} CUs)"
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return f"{platform.processor() or platform.machine()}, {torch.get_num_threads()} threads (PyTorch CPU)"


def label(device: torch.device) -> str:
    return str(device) if device.type != "cpu" else "cpu"
