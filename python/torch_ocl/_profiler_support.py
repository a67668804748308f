"""Does this torch let torch_ocl put device rows into torch.profiler?

Kineto takes a PrivateUse1 activity profiler through a registry that torch
gained after 2.11 (torch/csrc/profiler/standalone/privateuse1_profiler.h).
The adapter is built with its activity profiler only where that header exists
(adapter/profiler/ocl_activity_profiler.cpp), so the same test answers here:
without it, ocl ops appear on the CPU timeline only.
"""

import os

import torch

DEVICE_ACTIVITIES = os.path.exists(os.path.join(
    os.path.dirname(torch.__file__), "include", "torch", "csrc", "profiler", "standalone",
    "privateuse1_profiler.h"))
