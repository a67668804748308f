"""OclModelRunner: vLLM's GPU model runner (Model Runner V2) on an ocl device.

The runner is device-generic torch code except that it names torch.cuda for its
streams and events (a copy stream for sampled tokens, a main stream, timing
events). The worker process drives only ocl, so those names are pointed at
torch.ocl's streams and events, the same way vLLM's XPU runner points them at
torch.xpu. Its Triton kernels are replaced by kernels.py.

The runner's host-to-device buffers map pinned host memory into the device
(UVA) when pinned memory exists; ocl has no device view of host memory, so they
take vLLM's explicit-copy fallback (NonUvaBuffer: pinned host buffer, async copy).
"""

from __future__ import annotations

import torch

import vllm.v1.worker.gpu.buffer_utils as buffer_utils
from vllm.v1.worker.gpu.model_runner import GPUModelRunner


def _ocl_event(*args, blocking=None, external=None, **kwargs):
    # torch.cuda.Event takes blocking/external; an ocl event needs neither (every
    # wait on it is host-side).
    return torch.ocl.Event(*args, **kwargs)


def alias_cuda_streams() -> None:
    """Point torch.cuda's stream and event API at torch.ocl in this process."""
    torch.cuda.Stream = torch.ocl.Stream
    torch.cuda.Event = _ocl_event
    torch.cuda.current_stream = torch.ocl.current_stream
    torch.cuda.default_stream = torch.ocl.default_stream
    torch.cuda.stream = torch.ocl.stream
    torch.cuda.set_stream = torch.ocl.set_stream


class OclModelRunner(GPUModelRunner):
    def __init__(self, vllm_config, device: torch.device):
        alias_cuda_streams()
        buffer_utils.is_uva_available = lambda: False
        super().__init__(vllm_config, device)
