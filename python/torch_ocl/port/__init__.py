"""python -m torch_ocl port PATH: which CUDA-specific uses a script or project
has, and whether each runs under torch_ocl.transfer_to_ocl, needs an edit or
is blocked (rules.py says why for each kind)."""

from .report import summarize, to_json, to_markdown, to_text  # noqa: F401
from .scan import Finding, scan_path, scan_source  # noqa: F401


def run(path: str, fmt: str = "text") -> str:
    files, findings = scan_path(path)
    return {"text": to_text, "json": to_json, "markdown": to_markdown}[fmt](files, findings)
