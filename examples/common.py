"""Shared pieces of the examples: device banner, fallback report, seeding.

Every example builds its model and data on the CPU from one seed and then
moves them with `.to(device)`, so the same script on `cpu` and on `ocl`
starts from identical weights and sees identical batches; the tests in
tests/python/test_examples.py rely on that to compare loss curves.
"""

import torch

import torch_ocl


def describe(device: torch.device) -> None:
    """Print what the device is and start counting CPU fallbacks."""
    if device.type != "ocl":
        print(f"device: {device}")
        return
    props = torch.ocl.get_device_properties(device)
    print(f"device: {device} = {props.name} ({props.platform_name} {props.driver_version}), "
          f"{props.compute_units} compute units, {props.total_memory / 2**30:.1f} GiB")
    torch_ocl.reset_fallback_stats()


def report_fallbacks(device: torch.device) -> dict:
    """Print which ops ran on the CPU through the visible fallback; return the counts."""
    if device.type != "ocl":
        return {}
    stats = torch_ocl.fallback_stats()
    print("all ops native" if not stats else f"{len(stats)} op(s) ran on the CPU fallback:")
    for name, n in sorted(stats.items(), key=lambda kv: -kv[1]):
        print(f"  {name}: {n} calls")
    return stats


def quiet_fallbacks(device: torch.device) -> None:
    """Show the fallback count once at the end instead of one warning per op,
    unless the user chose a policy with TORCH_OCL_FALLBACK."""
    import os
    if device.type == "ocl" and "TORCH_OCL_FALLBACK" not in os.environ:
        torch_ocl.set_fallback_policy("silent")


def loss_progress(losses) -> tuple:
    """(mean of the first tenth, mean of the last tenth, steps in each): a
    noisy loss curve summarised the same way by every example."""
    k = max(1, len(losses) // 10)
    return sum(losses[:k]) / k, sum(losses[-k:]) / k, k


def require_progress(first: float, last: float) -> None:
    """Fail the run (non-zero exit) if training did not reduce the loss."""
    if not last < first:
        raise SystemExit("training did not reduce the loss")


def compiled(model: torch.nn.Module, device: torch.device):
    """torch.compile(model): backend "ocl" for ocl models (the default
    backend routes ocl graphs there too; naming it says so), PyTorch's
    default elsewhere."""
    return torch.compile(model, backend="ocl") if torch.device(device).type == "ocl" else torch.compile(model)
