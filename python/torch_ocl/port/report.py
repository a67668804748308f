"""The port report as text, Markdown or JSON, with a summary and an overall verdict."""

import collections
import json

from . import rules

_WORDS = {rules.RUNS: "runs under the shim", rules.EDIT: "needs an edit", rules.BLOCKED: "blocked"}


def summarize(files, findings):
    counts = collections.Counter(f.verdict for f in findings)
    overall = next((v for v in reversed(rules.ORDER) if counts[v]), rules.RUNS)
    return {
        "files": len(files),
        "findings": len(findings),
        "by_verdict": {v: counts[v] for v in rules.ORDER},
        "by_kind": dict(sorted(collections.Counter(f.kind for f in findings).items())),
        "verdict": overall,
    }


def to_json(files, findings, ran=None) -> str:
    doc = {"files": files, "findings": [f.as_dict() for f in findings], "summary": summarize(files, findings)}
    if ran is not None:
        doc["run"] = ran
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def _run_lines(ran):
    """The --run section: what happened when the command ran under the shim."""
    if ran is None:
        return []
    rc = ran["exit_code"]
    lines = [f"Ran under the shim: {ran['command']} -> " + ("timed out" if rc is None else f"exit code {rc}")]
    if "error" in ran:
        return lines + [ran["error"]]
    fb = ran.get("fallback", {})
    lines.append("ops that left the device (CPU fallback): "
                 + (", ".join(f"{k} x{v}" for k, v in sorted(fb.items())) or "none"))
    miss = ran.get("missing_cuda", {})
    lines.append("torch.cuda names ocl lacks (each raised): "
                 + (", ".join(f"torch.cuda.{k}" for k in sorted(miss)) or "none"))
    lines.append(f"calls rewritten for ocl: {sum(ran.get('rewritten', {}).values())}")
    if ran.get("stderr_tail"):
        lines.append("the command failed; the end of its stderr:\n" + ran["stderr_tail"])
    return lines


def _overall_line(s):
    return (f"{s['findings']} CUDA-specific use(s) in {s['files']} file(s): "
            + ", ".join(f"{s['by_verdict'][v]} {_WORDS[v]}" for v in rules.ORDER)
            + f". Overall: {_WORDS[s['verdict']]}.")


def to_text(files, findings, ran=None) -> str:
    lines = [f"{f.file}:{f.line}: [{f.verdict}] {f.kind}: {f.what} -- {f.note}" for f in findings]
    lines.append(_overall_line(summarize(files, findings)))
    if findings and summarize(files, findings)["verdict"] == rules.RUNS and ran is None:
        lines.append("Run it with: python -m torch_ocl.transfer_to_ocl SCRIPT.py [ARGS...]")
    lines += _run_lines(ran)
    return "\n".join(lines) + "\n"


def to_markdown(files, findings, ran=None) -> str:
    s = summarize(files, findings)
    out = ["# CUDA port report (`python -m torch_ocl port`)", "", _overall_line(s), ""]
    for verdict in reversed(rules.ORDER):
        rows = [f for f in findings if f.verdict == verdict]
        if not rows:
            continue
        out += [f"## {_WORDS[verdict].capitalize()} ({len(rows)})", "", "| where | kind | use | note |",
                "| --- | --- | --- | --- |"]
        out += [f"| `{f.file}:{f.line}` | {f.kind} | `{f.what.replace('|', chr(92) + '|')}` | {f.note} |"
                for f in rows]
        out.append("")
    if ran is not None:
        out += ["## Run under the shim", ""] + [f"- {l}" for l in _run_lines(ran)] + [""]
    return "\n".join(out)
