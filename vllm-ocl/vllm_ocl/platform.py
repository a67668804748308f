"""OclPlatform: what vLLM asks a device about (names, memory, seeds, which worker,
attention backend and communicator), and the switches that turn off CUDA-only features."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import torch
import torch_ocl  # noqa: F401  (names PrivateUse1 "ocl", registers the oclgloo backend)

from vllm.logger import init_logger
from vllm.platforms.interface import DeviceCapability, Platform, PlatformEnum

if TYPE_CHECKING:
    from vllm.config import VllmConfig
    from vllm.v1.attention.backends.registry import AttentionBackendEnum
    from vllm.v1.attention.selector import AttentionSelectorConfig

logger = init_logger("vllm." + __name__)  # under "vllm", so vLLM's log settings apply

ATTENTION_BACKEND = "vllm_ocl.attention.OclAttentionBackend"


class OclPlatform(Platform):
    _enum = PlatformEnum.OOT
    device_name: str = "ocl"
    device_type: str = "ocl"
    dispatch_key: str = "PrivateUse1"
    # torch_ocl's c10d backend: Gloo carrying ocl tensors through host memory, so
    # vLLM's device groups can run collectives on ocl tensors (plain gloo cannot).
    dist_backend: str = "oclgloo"
    # No Inductor for ocl: vLLM's helpers decorated with torch.compile run eagerly.
    simple_compile_backend: str = "eager"

    @property
    def supported_dtypes(self) -> list[torch.dtype]:
        # float32 first: "auto" on a float32 checkpoint keeps float32, and it is the
        # dtype every ocl kernel has; bfloat16/float16 store narrow and compute in float32.
        return [torch.float32, torch.bfloat16, torch.float16]

    @classmethod
    def get_device_name(cls, device_id: int = 0) -> str:
        return torch.ocl.get_device_name(device_id)

    @classmethod
    def get_device_capability(cls, device_id: int = 0) -> DeviceCapability | None:
        return None  # no compute capability: backends that gate on one are skipped

    @classmethod
    def get_device_total_memory(cls, device_id: int = 0) -> int:
        return torch.ocl.get_device_properties(device_id).total_memory

    @classmethod
    def get_device_uuid(cls, device_id: int = 0) -> str:
        p = torch.ocl.get_device_properties(device_id)
        return f"ocl-{device_id}-{p.name}"

    @classmethod
    def device_count(cls) -> int:
        return torch.ocl.device_count()

    @classmethod
    def set_device(cls, device: torch.device) -> None:
        torch.ocl.set_device(device)

    @classmethod
    def manual_seed_all(cls, seed: int) -> None:
        torch.ocl.manual_seed_all(seed)

    @classmethod
    def inference_mode(cls):
        return torch.no_grad()

    @classmethod
    def is_pin_memory_available(cls) -> bool:
        # torch_ocl pins host memory (page-locked staging); vLLM's runner uses pinned
        # buffers for its host-to-device copies.
        return True

    @classmethod
    def get_current_memory_usage(cls, device: torch.types.Device | None = None) -> float:
        torch.ocl.reset_peak_memory_stats(device)
        return torch.ocl.max_memory_allocated(device)

    @classmethod
    def check_if_supports_dtype(cls, dtype: torch.dtype) -> None:
        pass  # float32, float16 and bfloat16 all run (narrow storage, float32 arithmetic)

    @classmethod
    def import_kernels(cls) -> None:
        # vLLM's wheel carries CUDA kernels (vllm._C); ocl uses none of them, and
        # loading them on a machine without CUDA only logs errors.
        pass

    @classmethod
    def register_triton_kernel_overrides(cls) -> None:
        # The GPU model runner prepares each step with small Triton kernels; there is
        # no Triton for OpenCL, so the same steps run as torch code (kernels.py).
        from . import kernels

        kernels.register()

    @classmethod
    def get_attn_backend_cls(cls, selected_backend: AttentionBackendEnum, attn_selector_config:
                             AttentionSelectorConfig, num_heads: int | None = None) -> str:
        c = attn_selector_config
        if c.use_mla or c.use_sparse:
            raise NotImplementedError("vllm-ocl: MLA and sparse attention are not supported on ocl")
        if c.kv_cache_dtype not in (None, "auto", "float32", "float16", "bfloat16"):
            raise NotImplementedError(f"vllm-ocl: KV cache dtype {c.kv_cache_dtype!r} is not supported on ocl")
        if selected_backend is not None and selected_backend.name != "CUSTOM":
            logger.info("vllm-ocl: attention backend %s is not available on ocl; using the native one",
                        selected_backend.name)
        return ATTENTION_BACKEND

    @classmethod
    def get_device_communicator_cls(cls) -> str:
        return "vllm_ocl.communicator.OclCommunicator"

    @classmethod
    def get_punica_wrapper(cls) -> str:
        raise NotImplementedError("vllm-ocl: LoRA is not supported on ocl")

    @classmethod
    def check_and_update_config(cls, vllm_config: VllmConfig) -> None:
        from vllm.config import CompilationMode, CUDAGraphMode

        # Eager only: no CUDA graphs, and no torch.compile/Inductor (no ocl backend for
        # vLLM's compile passes). torch_ocl's fused eager mode (its default) merges
        # elementwise chains at run time instead.
        comp = vllm_config.compilation_config
        comp.mode = CompilationMode.NONE
        comp.cudagraph_mode = CUDAGraphMode.NONE
        comp.cudagraph_capture_sizes = []
        comp.max_cudagraph_capture_size = 0
        if vllm_config.model_config is not None:
            vllm_config.model_config.enforce_eager = True

        par = vllm_config.parallel_config
        if par.worker_cls == "auto":
            par.worker_cls = "vllm_ocl.worker.OclWorker"
        # Custom all-reduce is CUDA IPC; micro-batch overlap (DBO) needs CUDA streams.
        par.disable_custom_all_reduce = True
        par.enable_dbo = False

        # Async scheduling overlaps steps with CUDA streams and events; ocl runs one
        # step after the other.
        vllm_config.scheduler_config.async_scheduling = False

        # The engine core runs in a child process: spawn it, because a fork would not
        # carry the OpenCL driver's threads.
        os.environ.setdefault("VLLM_WORKER_MULTIPROC_METHOD", "spawn")

    @classmethod
    def support_hybrid_kv_cache(cls) -> bool:
        return False

    @classmethod
    def check_runner_kv_caches_multi_layer(cls) -> None:
        pass
