"""torch.ocl: the device module, the same shape as torch.cuda."""

import torch

from .device import (  # noqa: F401
    OclDeviceProperties,
    _lazy_init,
    current_device,
    device,
    device_count,
    device_of,
    get_device_capability,
    get_device_features,
    get_device_name,
    get_device_properties,
    init,
    is_available,
    is_initialized,
    set_device,
    synchronize,
)
from .memory import (  # noqa: F401
    empty_cache,
    get_allocator_backend,
    get_per_process_memory_fraction,
    host_memory_stats,
    host_memory_stats_as_nested_dict,
    max_memory_allocated,
    max_memory_cached,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_cached,
    memory_reserved,
    memory_snapshot,
    memory_stats,
    memory_stats_as_nested_dict,
    memory_summary,
    reset_accumulated_host_memory_stats,
    reset_accumulated_memory_stats,
    reset_max_memory_allocated,
    reset_max_memory_cached,
    reset_peak_host_memory_stats,
    reset_peak_memory_stats,
    set_per_process_memory_fraction,
    set_per_process_memory_limit,
)
from . import memory, nvtx, random, streams  # noqa: F401,E402  (torch.ocl.memory, .nvtx, .random, .streams)
from .random import (  # noqa: F401
    default_generators,
    get_rng_state,
    get_rng_state_all,
    initial_seed,
    manual_seed,
    manual_seed_all,
    seed,
    seed_all,
    set_rng_state,
    set_rng_state_all,
)
from . import amp  # noqa: F401  (torch.ocl.amp.autocast / GradScaler)
from .graphs import OCLGraph, graph  # noqa: F401  (torch.cuda.CUDAGraph / torch.cuda.graph)
from .kernels import Local, compile_kernel, compile_shader  # noqa: F401  (custom OpenCL C kernels; MPS's name)
from .streams import (  # noqa: F401
    Event,
    ExternalStream,
    Stream,
    StreamContext,
    current_stream,
    default_stream,
    is_current_stream_capturing,
    set_stream,
    stream,
)


def is_tf32_supported() -> bool:
    """No OpenCL device computes in TF32: float32 matmuls are float32."""
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """bfloat16 is a storage format computed in float32 on every device."""
    return True


def get_amp_supported_dtype() -> list:
    """Dtypes torch.autocast("ocl") casts to: both are storage formats the
    kernels compute in float32, so every device supports them."""
    return [torch.float16, torch.bfloat16]


def _is_in_bad_fork() -> bool:
    """torch.manual_seed asks this before seeding the device: a DataLoader
    worker forked after the parent used ocl must not touch it."""
    from .device import _is_in_bad_fork as bad

    return bad()
