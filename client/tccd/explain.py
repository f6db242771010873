"""`python -m tccd explain KEY_OR_GRAPH`: why a graph missed the daemon's cache.

A compile key hashes five parts (server/request_checks.h): the graph (ops and wiring), its input
types, the codegen target, the options (mode and CompileOptions.extra) and the compiler
(tccd's version and fingerprint). The daemon keeps each entry's parts (v1.KeyComponents); this
compares the entry in question with the nearest other entry of the same job, the one that
differs in the fewest parts (the most recently used among equals), and names what differs.

The subject is a compile key (64 hex characters, as the daemon's log and `job` print it) or a
graph name (the job's most recently used entry of that name). Torch-free.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence, Tuple

PARTS = ("graph", "inputs", "target", "options", "compiler")
_KEY = re.compile(r"^[0-9a-f]{64}$")


def _digest(components, part: str) -> str:
    return {
        "graph": components.graph_digest,
        "inputs": components.inputs_digest,
        "target": components.target,
        "options": components.options_digest,
        "compiler": components.compiler,
    }[part]


def differing_parts(a, b) -> List[str]:
    return [part for part in PARTS if _digest(a, part) != _digest(b, part)]


def _describe(part: str, subject, other) -> str:
    """One line saying how `part` of `subject` differs from `other`'s."""
    if part == "graph":
        return (f"graph: the ops or their arguments differ ({subject.graph_nodes} nodes here, "
                f"{other.graph_nodes} there)")
    if part == "inputs":
        here, there = list(subject.input_types), list(other.input_types)
        if len(here) != len(there):
            return f"inputs: {len(here)} inputs here, {len(there)} there"
        changed = [f"%a{i} {b} -> {a}" for i, (a, b) in enumerate(zip(here, there)) if a != b]
        return "inputs: " + "; ".join(changed)
    if part == "target":
        return f"target: {other.target} -> {subject.target}"
    if part == "options":
        changes = []
        if subject.mode != other.mode:
            changes.append(f"mode {other.mode} -> {subject.mode}")
        here, there = dict(subject.options), dict(other.options)
        for name in sorted(set(here) | set(there)):
            if name not in there:
                changes.append(f"+{name}={here[name]}")
            elif name not in here:
                changes.append(f"-{name}={there[name]}")
            elif here[name] != there[name]:
                changes.append(f"{name}: {there[name]} -> {here[name]}")
        return "options: " + "; ".join(changes)
    return f"compiler: {other.compiler} -> {subject.compiler}"


def nearest(subject_key: str, subject, entries: Sequence) -> Optional[Tuple[object, List[str]]]:
    """(entry, parts that differ) of the entry nearest to `subject`, or None without one."""
    best = None
    for entry in entries:
        if entry.key == subject_key or not entry.HasField("components"):
            continue
        diff = differing_parts(subject, entry.components)
        rank = (len(diff), -entry.last_used_unix_ms)
        if best is None or rank < best[0]:
            best = (rank, entry, diff)
    return None if best is None else (best[1], best[2])


def find_subject(arg: str, entries: Sequence, get_manifest) -> Tuple[str, object]:
    """(key, components) of KEY_OR_GRAPH; raises LookupError saying why there is none."""
    if _KEY.match(arg):
        for entry in entries:
            if entry.key == arg and entry.HasField("components"):
                return arg, entry.components
        manifest = get_manifest(arg)  # a key the job never used, still in the cache
        if manifest is None or not manifest.HasField("key_components"):
            raise LookupError(f"the daemon holds no entry with its key parts under key {arg}")
        return arg, manifest.key_components
    named = [e for e in entries if e.HasField("components") and e.components.graph_name == arg]
    if not named:
        raise LookupError(f"the job has no entry of a graph named {arg!r}")
    latest = max(named, key=lambda e: e.last_used_unix_ms)
    return latest.key, latest.components


def explain(arg: str, job_id: str, entries: Sequence, get_manifest) -> Dict[str, object]:
    """What `explain` reports, as a dict (the --json output)."""
    key, subject = find_subject(arg, entries, get_manifest)
    out: Dict[str, object] = {"key": key, "graph_name": subject.graph_name, "job_id": job_id}
    found = nearest(key, subject, entries)
    if found is None:
        out.update(nearest=None, differs=[], details=[])
        return out
    entry, diff = found
    out.update(
        nearest=entry.key,
        nearest_graph_name=entry.components.graph_name,
        differs=diff,
        same=[p for p in PARTS if p not in diff],
        details=[_describe(p, subject, entry.components) for p in diff],
    )
    return out


def format_report(report: Dict[str, object]) -> str:
    key = str(report["key"])
    head = f"key {key[:12]} (graph {report['graph_name']!r}, job {report['job_id']!r})"
    if report["nearest"] is None:
        return f"{head}: the job has no other entry to compare with"
    lines = [f"{head}: nearest entry {str(report['nearest'])[:12]} "
             f"(graph {report['nearest_graph_name']!r})"]
    if not report["differs"]:
        lines.append("  no part differs (the same key parts under another key: the key's "
                     "encoding changed)")
    lines += [f"  differs: {d}" for d in report["details"]]
    lines.append(f"  same: {', '.join(report['same']) or '-'}")
    return "\n".join(lines)
