"""Hugging Face accelerate (and so ``transformers.Trainer``) on the ocl device.

accelerate picks a device from a fixed list (MPS, MLU, NPU, HPU, CUDA, XPU,
Neuron, then the CPU), so without help a Trainer on a machine with torch-ocl
trains on the CPU. ``enable()`` routes it to ocl:

- ``ACCELERATE_TORCH_DEVICE`` is accelerate's own override of the device
  (read by ``PartialState`` and by ``TrainingArguments``): it is set to
  ``ocl:<LOCAL_RANK>``;
- ``PartialState.default_device`` answers ocl, for code that asks it;
- transformers' ``TrainingArguments`` refuses ``bf16=True`` unless a device
  it knows reports bfloat16 support: its probe answers from
  ``torch.ocl.is_bf16_supported()`` (when transformers is installed);
- fp16 mixed precision: accelerate accepts fp16 only on a fixed list of
  device types and otherwise builds a CUDA GradScaler; with ocl the
  Accelerator is built for ``"no"`` and then given fp16 autocast and a
  ``torch.amp.GradScaler("ocl")`` (bf16 needs nothing: accelerate allows it
  on any device without CUDA).

- several ranks (``torchrun``, which sets LOCAL_RANK and WORLD_SIZE):
  accelerate finds no accelerator it knows and would let every rank train
  alone; it is given the ocl distributed backend instead
  (``cpu:gloo,ocl:oclgloo``) on its generic multi-process path, so Trainer
  wraps the model in DDP over ocl tensors.

Call it before the first ``Accelerator``, ``PartialState`` or
``TrainingArguments``; ``disable()`` undoes everything (tests use it).
"""

import os

import torch

from .._transfer.patchset import Patches

_ENV = "ACCELERATE_TORCH_DEVICE"
_patches = Patches()
_env_prev = None


def _device() -> torch.device:
    n = torch.ocl.device_count()
    return torch.device("ocl", int(os.environ.get("LOCAL_RANK", "0")) % n)


def is_enabled() -> bool:
    return bool(_patches)


def enable() -> torch.device:
    """Route accelerate (and Trainer) to the ocl device; returns that device."""
    global _env_prev
    if not torch.ocl.is_available():
        raise RuntimeError("torch_ocl.integrations.accelerate.enable(): no ocl device is available")
    if _patches:
        return _device()
    import accelerate
    from accelerate import accelerator as acc_mod
    from accelerate.state import PartialState
    from accelerate.utils import modeling

    dev = _device()
    state = PartialState._shared_state
    if state.get("device") is not None and state["device"].type != "ocl":
        raise RuntimeError(
            "torch_ocl.integrations.accelerate.enable() must run before the first Accelerator, PartialState or "
            f"TrainingArguments: accelerate has already chosen {state['device']}")

    _env_prev = os.environ.get(_ENV)
    os.environ[_ENV] = str(dev)
    _patches.replace(PartialState, "default_device", property(lambda self: _device()))

    from accelerate.utils import DistributedType

    orig_prepare = PartialState._prepare_backend

    def _prepare_backend(self, cpu=False, sagemaker_dp=False, backend=None):
        got = orig_prepare(self, cpu, sagemaker_dp, backend)
        ranks = int(os.environ.get("WORLD_SIZE", "1"))
        if got[1] == DistributedType.NO and not cpu and ranks > 1 and int(os.environ.get("LOCAL_RANK", -1)) >= 0:
            # accelerate's generic multi-process path (it inits the group with
            # this backend and wraps models in DDP without device_ids).
            from torch_ocl import distributed as ocl_dist

            ocl_dist.register()
            return backend or f"cpu:gloo,ocl:{ocl_dist.BACKEND}", DistributedType.MULTI_CPU
        return got

    _patches.replace(PartialState, "_prepare_backend", _prepare_backend)

    orig_scaler = modeling.get_grad_scaler

    def get_grad_scaler(distributed_type=None, **kwargs):
        if PartialState._shared_state.get("device") is not None and PartialState().device.type == "ocl":
            return torch.amp.GradScaler("ocl", **kwargs)
        return orig_scaler(distributed_type, **kwargs)

    _patches.replace(modeling, "get_grad_scaler", get_grad_scaler)
    _patches.replace(acc_mod, "get_grad_scaler", get_grad_scaler)

    try:
        from transformers import training_args
    except ImportError:
        training_args = None
    if training_args is not None and hasattr(training_args, "is_torch_bf16_gpu_available"):
        orig_bf16 = training_args.is_torch_bf16_gpu_available
        _patches.replace(training_args, "is_torch_bf16_gpu_available",
                         lambda: torch.ocl.is_bf16_supported() or orig_bf16())

    orig_init = accelerate.Accelerator.__init__

    def __init__(self, *args, **kwargs):
        # accelerate refuses fp16 on a device type outside its list; build
        # without mixed precision, then switch fp16 on as it would on CUDA.
        mp = kwargs.get("mixed_precision") or os.environ.get("ACCELERATE_MIXED_PRECISION", "no")
        if str(mp) != "fp16" or PartialState(cpu=kwargs.get("cpu", False)).device.type != "ocl":
            return orig_init(self, *args, **kwargs)
        kwargs["mixed_precision"] = "no"
        env_mp = os.environ.pop("ACCELERATE_MIXED_PRECISION", None)
        try:
            orig_init(self, *args, **kwargs)
        finally:
            if env_mp is not None:
                os.environ["ACCELERATE_MIXED_PRECISION"] = env_mp
        self.state._mixed_precision = "fp16"
        self.native_amp = True
        scaler_kwargs = self.scaler_handler.to_kwargs() if self.scaler_handler is not None else {}
        self.scaler = get_grad_scaler(self.distributed_type, **scaler_kwargs)

    _patches.replace(accelerate.Accelerator, "__init__", __init__)
    return dev


def disable() -> None:
    """Undo enable(): accelerate picks its devices as before."""
    global _env_prev
    if not _patches:
        return
    _patches.restore_all()
    if _env_prev is None:
        os.environ.pop(_ENV, None)
    else:
        os.environ[_ENV] = _env_prev
    _env_prev = None
