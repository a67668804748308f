"""OclWorker: vLLM's GPU worker on an ocl device.

It reuses vllm.v1.worker.gpu_worker.Worker (the request loop, KV cache setup, memory
profiling) and replaces the parts that name CUDA: the device, the distributed
init, the model runner, and a KV cache budget that fits an OpenCL device.
"""

from __future__ import annotations

import gc
from contextlib import nullcontext

import torch

import vllm.v1.worker.gpu_worker as gpu_worker
from vllm.logger import init_logger
from vllm.platforms import current_platform
from vllm.utils.mem_utils import MemorySnapshot, format_gib
from vllm.utils.torch_utils import set_random_seed
from vllm.v1.worker.gpu_worker import Worker, init_worker_distributed_environment
from vllm.v1.worker.utils import request_memory

logger = init_logger(__name__)

# Share of the device's free memory (after the weights) the KV cache may take by
# default, as torch_ocl.serving sizes transformers' paged cache: on a CPU OpenCL
# device this memory is the host's RAM, so vLLM's 90% would starve the machine.
KV_MEMORY_FRACTION = 0.5


class OclWorker(Worker):
    def __init__(self, *args, **kwargs):
        # Worker refuses to start without Triton: its model runner launches Triton
        # kernels. On ocl those kernels are replaced by torch code (kernels.py,
        # registered by OclPlatform.register_triton_kernel_overrides), so the runner
        # does not need Triton.
        gpu_worker.HAS_TRITON = True
        super().__init__(*args, **kwargs)

    def init_device(self) -> None:
        self.device = torch.device("ocl", self.local_rank)
        current_platform.set_device(self.device)
        current_platform.check_if_supports_dtype(self.model_config.dtype)
        init_worker_distributed_environment(self.vllm_config, self.rank, self.distributed_init_method,
                                            self.local_rank, current_platform.dist_backend)
        set_random_seed(self.model_config.seed)
        gc.collect()
        torch.ocl.empty_cache()
        self.init_snapshot = MemorySnapshot(device=self.device)
        self.requested_memory = request_memory(self.init_snapshot, self.cache_config)
        self._init_workspace_and_model_runner()

    def _maybe_get_memory_pool_context(self, tag: str):
        # vLLM's sleep-mode memory pools are CUDA/XPU allocators; ocl has no sleep mode.
        return nullcontext()

    def _make_model_runner(self):
        from .model_runner import OclModelRunner

        return OclModelRunner(self.vllm_config, self.device)

    def determine_available_memory(self) -> int:
        """vLLM's profile, capped: vLLM allocates each KV cache group as one tensor,
        which must fit the device's largest single allocation
        (CL_DEVICE_MAX_MEM_ALLOC_SIZE, 4-8 GiB on PoCL), and by default takes at most
        KV_MEMORY_FRACTION of the free memory. An explicit --kv-cache-memory-bytes
        is honoured as given (up to the allocation limit)."""
        budget = super().determine_available_memory()
        props = torch.ocl.get_device_properties(self.device)
        cap = props.max_alloc
        if not self.cache_config.kv_cache_memory_bytes:
            free, _ = torch.ocl.mem_get_info(self.device)
            cap = min(cap, int(KV_MEMORY_FRACTION * free))
        if budget > cap:
            logger.info("vllm-ocl: KV cache %s GiB (vLLM's profile allowed %s GiB; largest allocation %s GiB)",
                        format_gib(cap), format_gib(budget), format_gib(props.max_alloc))
            budget = cap
        return budget
