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

logger = init_logger("vllm." + __name__)  # under "vllm", so vLLM's log settings apply

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
        """vLLM's profile, capped. vLLM allocates each KV cache group as one zeroed tensor,
        which must fit the device's largest single allocation (CL_DEVICE_MAX_MEM_ALLOC_SIZE,
        4-8 GiB on PoCL). Unless --kv-cache-memory-bytes is given, the cache also takes at
        most KV_MEMORY_FRACTION of the free memory, and no more than max_num_seqs full-length
        sequences need (past that it could only hold prefix-cache entries, and on a CPU
        device every byte of it is zeroed host RAM)."""
        budget = super().determine_available_memory()
        props = torch.ocl.get_device_properties(self.device)
        caps = {"largest allocation": props.max_alloc}
        if not self.cache_config.kv_cache_memory_bytes:
            free, _ = torch.ocl.mem_get_info(self.device)
            caps["share of free memory"] = int(KV_MEMORY_FRACTION * free)
            per_token = sum(s.page_size_bytes // s.block_size for s in self.get_kv_cache_spec().values())
            seqs = self.vllm_config.scheduler_config.max_num_seqs * self.model_config.max_model_len
            caps["max_num_seqs x max_model_len"] = per_token * seqs
        reason, cap = min(caps.items(), key=lambda kv: kv[1])
        if budget > cap:
            logger.info("vllm-ocl: KV cache %.1f MiB, capped by the %s (vLLM's profile allowed %s GiB)",
                        cap / 2**20, reason, format_gib(budget))
            budget = cap
        return budget
