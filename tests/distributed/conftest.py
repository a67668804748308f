"""Distributed tests: real process groups of spawned ranks (harness.py).

Run with as many PoCL devices as ranks, e.g.
    POCL_DEVICES="pthread pthread pthread pthread" python -m pytest tests/distributed
`make test` runs the tests not marked slow; `make test-distributed` runs all.
"""

import pytest
import torch
import torch_ocl  # noqa: F401


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: a long distributed configuration (make test-distributed runs it)")
    config.addinivalue_line("markers", "world(n): needs n ocl devices")


def pytest_collection_modifyitems(config, items):
    n = torch.ocl.device_count() if torch.ocl.is_available() else 0
    for item in items:
        m = item.get_closest_marker("world")
        need = m.args[0] if m else 2
        if n < need:
            item.add_marker(pytest.mark.skip(reason=f"needs {need} ocl devices (POCL_DEVICES), found {n}"))
