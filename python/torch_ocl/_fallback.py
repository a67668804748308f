"""Which ops left the device: counts and policy of the CPU fallback.

``TORCH_OCL_FALLBACK=warn`` (default) warns once per op, ``error`` raises,
``silent`` says nothing. Counts are kept whatever the policy.
"""

from . import _C


def fallback_stats():
    """Per-op counts of calls that ran on the CPU, e.g. {'aten::mm': 12}."""
    return dict(_C._fallback_stats())


def reset_fallback_stats():
    _C._reset_fallback_stats()


def set_fallback_policy(policy: str):
    """Change the policy for this process: 'warn', 'error' or 'silent'."""
    _C._set_fallback_policy(policy)


def get_fallback_policy() -> str:
    return _C._get_fallback_policy()
