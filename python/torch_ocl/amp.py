"""torch.ocl.amp: autocast and GradScaler bound to the ``ocl`` device.

``torch.autocast("ocl")`` and ``torch.amp.GradScaler("ocl")`` work as they
are; these are the torch.cuda.amp-style spellings. The cast policies
(which ops run in float16/bfloat16, which in float32) are PyTorch's own
AutocastPrivateUse1 tables, the same as CUDA's.
"""

import torch

__all__ = ["autocast", "GradScaler"]


class autocast(torch.amp.autocast_mode.autocast):
    """``torch.autocast("ocl", ...)``; float16 unless ``dtype`` is given."""

    def __init__(self, enabled: bool = True, dtype: torch.dtype = torch.float16, cache_enabled: bool = True):
        super().__init__("ocl", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(torch.amp.GradScaler):
    """``torch.amp.GradScaler("ocl", ...)``."""

    def __init__(
        self,
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        super().__init__("ocl", init_scale, growth_factor, backoff_factor, growth_interval, enabled)
