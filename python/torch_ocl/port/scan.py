"""Static scan of Python sources for CUDA-specific uses (stdlib ast only).

Names are resolved through each file's imports (`import torch as t`,
`from torch import cuda`, `from torch.cuda.amp import GradScaler`), so a
use is found however it is spelled; nothing is executed.
"""

import ast
import os
import re
from dataclasses import asdict, dataclass

from . import rules

_CUDA_LITERAL = re.compile(r"^cuda(:\d+)?$")
_SKIP_DIRS = {".git", "__pycache__", ".venv", "venv", "build", "node_modules"}


@dataclass(frozen=True)
class Finding:
    file: str
    line: int
    kind: str
    what: str
    verdict: str
    note: str

    def as_dict(self):
        return asdict(self)


class _Scanner(ast.NodeVisitor):
    def __init__(self, file):
        self.file = file
        self.aliases = {}  # local name -> dotted module path
        self.found = []
        self._done = set()  # ids of nodes already reported as part of a larger use

    def add(self, node, kind, what, verdict_note):
        verdict, note = verdict_note
        self.found.append(Finding(self.file, node.lineno, kind, what, verdict, note))

    # -- names ----------------------------------------------------------
    def dotted(self, node):
        """'torch.cuda.amp.GradScaler' for an expression, resolved through imports, else None."""
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.dotted(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def visit_Import(self, node):
        for a in node.names:
            top = a.name.split(".")[0]
            if a.asname:
                self.aliases[a.asname] = a.name
            else:
                self.aliases[top] = top
            self._third_party(node, a.name)

    def visit_ImportFrom(self, node):
        if node.level or not node.module:
            return
        for a in node.names:
            self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"
        self._third_party(node, node.module)

    def _third_party(self, node, module):
        top = module.split(".")[0]
        if top in rules.IMPORTS:
            self.add(node, "import", module, rules.IMPORTS[top])

    # -- uses -----------------------------------------------------------
    def visit_Attribute(self, node):
        full = self.dotted(node)
        if full and self._use(node, full):
            return  # the whole chain is one use
        if node.attr == "is_cuda":
            self.add(node, "is_cuda", ".is_cuda", rules.NOTES["is_cuda"])
        self.generic_visit(node)

    def visit_Name(self, node):
        full = self.aliases.get(node.id)
        if full and full != node.id:
            self._use(node, full)

    def _use(self, node, full):
        parts = full.split(".")
        if parts[:2] == ["torch", "cuda"] and len(parts) > 2:
            self.add(node, "cuda_api", full, rules.cuda_api(parts[2], full))
            return True
        if parts[:2] == ["torch", "backends"] and len(parts) > 2 and parts[2] in ("cuda", "cudnn"):
            self.add(node, "backend_flag", full, rules.NOTES["backend_flag"])
            return True
        if full in ("torch.float64", "torch.double"):
            self.add(node, "float64", full, rules.float64())
            return True
        if full in ("torch.nn.DataParallel", "torch.nn.parallel.DataParallel"):
            self.add(node, "data_parallel", full, rules.NOTES["data_parallel"])
            return True
        return False

    def visit_Call(self, node):
        func = self.dotted(node.func)
        attr = node.func.attr if isinstance(node.func, ast.Attribute) else None
        if func == "torch.compile":
            self._compile(node)
        elif func == "torch.jit.script":
            self.add(node, "jit_script", func, rules.NOTES["jit_script"])
        elif func and func.startswith(rules.CPP_EXTENSION + "."):
            self._cpp_extension(node, func.rsplit(".", 1)[1])
        elif func is None and attr == "cuda":
            self.add(node, "dot_cuda", ".cuda()", rules.NOTES["dot_cuda"])
        elif func is None and attr == "double":
            self.add(node, "float64", ".double()", rules.float64())
        self.generic_visit(node)

    def _compile(self, node):
        backend = None
        for kw in node.keywords:
            if kw.arg == "backend":
                backend = kw.value.value if isinstance(kw.value, ast.Constant) else object()
        shown = backend if isinstance(backend, str) or backend is None else "<callable>"
        self.add(node, "compile", f"torch.compile(backend={shown!r})", rules.compile_backend(backend))

    def _cpp_extension(self, node, func):
        cuda = False
        for kw in node.keywords:
            if kw.arg == "cuda_sources":
                cuda = True
            if kw.arg == "sources" or kw.arg is None:
                cuda |= any(isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value.endswith(".cu")
                            for c in ast.walk(kw.value))
        for a in node.args:
            cuda |= any(isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value.endswith(".cu")
                        for c in ast.walk(a))
        self.add(node, "cpp_extension", f"{rules.CPP_EXTENSION}.{func}", rules.cpp_extension(func, cuda))

    def visit_FunctionDef(self, node):
        for d in node.decorator_list:
            target = d.func if isinstance(d, ast.Call) else d
            name = self.dotted(target)
            if name in rules.TRITON_DECORATORS:
                self.add(d, "triton_kernel", f"@{name} {node.name}", rules.IMPORTS["triton"])
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Compare(self, node):
        sides = [node.left] + node.comparators
        literal = any(isinstance(s, ast.Constant) and isinstance(s.value, str) and _CUDA_LITERAL.match(s.value)
                      for s in sides)
        eq = all(isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)) for op in node.ops)
        device_type = any(isinstance(s, ast.Attribute) and s.attr == "type"
                          and isinstance(s.value, ast.Attribute) and s.value.attr == "device" for s in sides)
        if literal and eq and device_type:
            self.add(node, "device_type_compare", ast.unparse(node), rules.NOTES["device_type_compare"])
            for s in sides:
                self._done.add(id(s))
        self.generic_visit(node)

    def visit_Constant(self, node):
        if id(node) in self._done or not isinstance(node.value, str):
            return
        if _CUDA_LITERAL.match(node.value):
            self.add(node, "device_literal", repr(node.value), rules.NOTES["device_literal"])
        elif node.value == "nccl":
            self.add(node, "nccl", "'nccl'", rules.nccl())


def scan_source(source: str, file: str):
    try:
        tree = ast.parse(source, filename=file)
    except SyntaxError as e:
        return [Finding(file, e.lineno or 0, "syntax_error", str(e.msg), *rules.NOTES["syntax_error"])]
    s = _Scanner(file)
    s.visit(tree)
    return sorted(s.found, key=lambda f: (f.file, f.line, f.kind, f.what))


def python_files(path: str):
    """(display name, path) of every .py file under path (or path itself), sorted."""
    if os.path.isfile(path):
        return [(os.path.basename(path), path)]
    out = []
    for root, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        for f in sorted(files):
            if f.endswith(".py"):
                full = os.path.join(root, f)
                out.append((os.path.relpath(full, path), full))
    return out


def scan_path(path: str):
    if not os.path.exists(path):
        raise FileNotFoundError(f"port: no such file or directory: {path}")
    findings = []
    files = python_files(path)
    for name, full in files:
        with open(full, encoding="utf-8", errors="replace") as f:
            findings += scan_source(f.read(), name)
    return [n for n, _ in files], findings
