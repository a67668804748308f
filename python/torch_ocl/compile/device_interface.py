"""Dynamo's view of the ocl device (streams, events, device guards), as
torch._dynamo.device_interface.CudaInterface is for CUDA."""

import torch
from torch._dynamo.device_interface import DeviceInterface


class OclInterface(DeviceInterface):
    device = torch.ocl.device
    Event = torch.ocl.Event
    Stream = torch.ocl.Stream

    class Worker:
        @staticmethod
        def set_device(device: int):
            torch.ocl.set_device(device)

        @staticmethod
        def current_device() -> int:
            return torch.ocl.current_device()

        @staticmethod
        def get_device_properties(device=None):
            return OclInterface.get_device_properties(device)

    current_device = staticmethod(torch.ocl.current_device)
    set_device = staticmethod(torch.ocl.set_device)
    device_count = staticmethod(torch.ocl.device_count)
    stream = staticmethod(torch.ocl.stream)
    current_stream = staticmethod(torch.ocl.current_stream)
    set_stream = staticmethod(torch.ocl.set_stream)
    synchronize = staticmethod(torch.ocl.synchronize)

    @staticmethod
    def is_available() -> bool:
        return torch.ocl.is_available()

    get_device_properties = staticmethod(torch.ocl.get_device_properties)

    @staticmethod
    def get_compute_capability(device=None) -> str:
        return ""

    @staticmethod
    def is_bf16_supported(including_emulation: bool = False) -> bool:
        return True

    @staticmethod
    def is_dtype_supported(dtype, including_emulation: bool = False) -> bool:
        if dtype in (torch.complex64, torch.complex128):
            return False
        return True

    @staticmethod
    def memory_allocated(device=None) -> int:
        return torch.ocl.memory_allocated(device)

    @staticmethod
    def is_triton_capable(device=None) -> bool:
        return False
