"""Per-device Philox generators: torch.ocl.manual_seed and friends."""

from typing import Any, Iterable

import torch

from . import _C
from .device import _index, device_count

_generators = None


def _default_generators():
    global _generators
    if _generators is None:
        _generators = tuple(_C._default_generator(i) for i in range(device_count()))
    return _generators


class _Generators:
    """Lazy tuple-like view, like torch.cuda.default_generators."""

    def __getitem__(self, i):
        return _default_generators()[i]

    def __len__(self):
        return len(_default_generators())

    def __iter__(self):
        return iter(_default_generators())


default_generators = _Generators()


def manual_seed(seed: int) -> None:
    _default_generators()[_index(None)].manual_seed(int(seed))


def manual_seed_all(seed: int) -> None:
    for g in _default_generators():
        g.manual_seed(int(seed))


def seed() -> None:
    _default_generators()[_index(None)].seed()


def seed_all() -> None:
    s = _default_generators()[0].seed() if device_count() else 0
    for g in _default_generators()[1:]:
        g.manual_seed(s)


def initial_seed() -> int:
    return _default_generators()[_index(None)].initial_seed()


def get_rng_state(device: Any = "ocl") -> torch.Tensor:
    """16 bytes: seed then Philox offset (uint8, on the CPU)."""
    return _default_generators()[_index(device)].get_state()


def set_rng_state(new_state: torch.Tensor, device: Any = "ocl") -> None:
    _default_generators()[_index(device)].set_state(new_state)


def get_rng_state_all():
    return [g.get_state() for g in _default_generators()]


def set_rng_state_all(new_states: Iterable[torch.Tensor]) -> None:
    for g, s in zip(_default_generators(), new_states):
        g.set_state(s)
