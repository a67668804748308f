"""Streams and events: in-order OpenCL command queues and markers.

torch.ocl.Stream and torch.ocl.Event are torch.Stream / torch.Event, so the
generic torch.accelerator API and code written for them work unchanged.
"""

import contextlib
from typing import Any, Optional

import torch

from . import _C
from .device import _index

_PRIVATEUSE1 = None


def _device_type() -> int:
    global _PRIVATEUSE1
    if _PRIVATEUSE1 is None:
        _PRIVATEUSE1 = torch.Stream(device="ocl:0").device_type
    return _PRIVATEUSE1


class Stream(torch.Stream):
    """An ocl stream. ``Stream()`` takes a stream from the device's pool."""

    def __new__(cls, device: Any = None, priority: int = 0, **kwargs):
        if "stream_id" in kwargs:
            return super().__new__(cls, **kwargs)
        idx = _index(device)
        sid = _C._stream_from_pool(idx)
        return super().__new__(cls, stream_id=sid, device_index=idx, device_type=_device_type())

    def __repr__(self):
        return f"<torch.ocl.Stream device=ocl:{self.device_index} id={self.stream_id}>"


def Event(enable_timing: bool = False, blocking: bool = False, interprocess: bool = False) -> torch.Event:
    """An ocl event (a plain torch.Event: torch's C code compares event types
    exactly, so a subclass would break ``elapsed_time``). Timing uses the
    device's profiling clock."""
    return torch.Event(device="ocl", enable_timing=enable_timing, blocking=blocking, interprocess=interprocess)


class ExternalStream:
    """torch.cuda.ExternalStream's counterpart would wrap a cl_command_queue
    made outside torch_ocl. The runtime owns its queues (32 per device, see
    runtime/queue/) and cannot adopt a foreign one yet, so this raises."""

    def __new__(cls, stream_ptr: int = 0, device: Any = None, **kwargs):
        raise NotImplementedError(
            "torch.ocl.ExternalStream is not supported: the ocl runtime cannot adopt a cl_command_queue created "
            "outside torch_ocl. Use torch.ocl.Stream(), and synchronise with foreign queues through "
            "torch.ocl.synchronize() or events.")


class StreamContext:
    """torch.cuda.StreamContext: makes ``stream`` current on its device inside
    a ``with`` block (None: no change)."""

    def __init__(self, stream: Optional[torch.Stream]):
        self.stream = stream
        self._prev = None

    def __enter__(self):
        if self.stream is not None:
            self._prev = _C._current_stream(self.stream.device_index)
            _C._set_stream(self.stream.device_index, self.stream.stream_id)
        return self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            _C._set_stream(self.stream.device_index, self._prev)
        return False


def is_current_stream_capturing() -> bool:
    """Whether this thread is capturing a graph (torch.ocl.graph; capture
    records the current stream's work)."""
    from .graphs import is_capturing

    return is_capturing()


def _wrap(idx: int, sid: int) -> Stream:
    return Stream(stream_id=sid, device_index=idx, device_type=_device_type())


def current_stream(device: Any = None) -> Stream:
    idx = _index(device)
    return _wrap(idx, _C._current_stream(idx))


def default_stream(device: Any = None) -> Stream:
    return _wrap(_index(device), 0)


def set_stream(stream: torch.Stream) -> None:
    if stream is None:
        return
    _C._set_stream(stream.device_index, stream.stream_id)


@contextlib.contextmanager
def stream(s: Optional[torch.Stream]):
    """Make ``s`` the current stream of its device inside the block."""
    if s is None:
        yield
        return
    prev = _C._current_stream(s.device_index)
    _C._set_stream(s.device_index, s.stream_id)
    try:
        yield
    finally:
        _C._set_stream(s.device_index, prev)
