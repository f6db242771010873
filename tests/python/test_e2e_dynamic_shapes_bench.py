"""deploy/dynamic_shapes_bench.py --compare-static against the real daemon on the CPU: the
script the GPU figure of issue 9 comes from (dynamic vs static step time) still runs, and its
counts say what the dynamic and the static model compiled. The times are not checked (a shared
CPU); the counts are."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_compare_static_prints_compile_counts_and_a_ratio_per_length(daemon_env):
    lengths = [8, 16]
    env = dict(os.environ, PYTHONPATH=str(REPO / "client"), OMP_NUM_THREADS="1")
    out = subprocess.run(
        [sys.executable, str(REPO / "deploy" / "dynamic_shapes_bench.py"), "--compare-static", "--interleave",
         "--d", "16", "--tokens", "48", "--lengths", ",".join(map(str, lengths)), "--steps", "1", "--warmup", "1",
         "--top-kernels", "5", "--phases"],  # --top-kernels: cuda only, ignored here, but parsed
        env=env, capture_output=True, text=True, timeout=900,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    counts = re.search(r"compiles over 2 lengths: dynamic=True (\d+) Dynamo graphs, (\d+) daemon compiles; "
                       r"dynamic=False (\d+) Dynamo graphs, (\d+) daemon compiles", out.stdout)
    assert counts, out.stdout
    dynamic_graphs, dynamic_compiles, static_graphs, static_compiles = map(int, counts.groups())
    # dynamic=True: one graph, or two where Dynamo first specialised b == t; static: one per length.
    assert 1 <= dynamic_graphs <= 2, out.stdout
    assert static_graphs == len(lengths), out.stdout
    # A fresh local cache: each Dynamo graph is a forward and a backward the daemon compiled,
    # unless the session daemon already had it (another test): never more.
    assert dynamic_compiles <= 2 * dynamic_graphs and static_compiles <= 2 * static_graphs, out.stdout
    rows = re.findall(r"^\s+(\d+)\s+\d+\s+[\d.]+\s+[\d.]+\s+([\d.]+)$", out.stdout, re.M)
    assert [int(t) for t, _ in rows] == lengths, out.stdout
    assert "worst dynamic/static:" in out.stdout
    # --phases: per length, static / dynamic host ms of the forward and the backward and the wait.
    phases = re.findall(r"^\s+(\d+)((?:\s+[\d.]+ / [\d.]+){3})$", out.stdout, re.M)
    assert [int(t) for t, _ in phases] == lengths, out.stdout


def test_rounds_print_every_round_and_the_median_ratio_per_length(daemon_env):
    """--rounds N: N interleaved rounds (the models' order swapped every other round), every
    round's static and dynamic times and ratio printed, then per length the median of the
    rounds' ratios, whose worst and geometric mean are the figure."""
    lengths, rounds = [8, 16], 3
    env = dict(os.environ, PYTHONPATH=str(REPO / "client"), OMP_NUM_THREADS="1")
    out = subprocess.run(
        [sys.executable, str(REPO / "deploy" / "dynamic_shapes_bench.py"), "--compare-static", "--interleave",
         "--d", "16", "--tokens", "48", "--lengths", ",".join(map(str, lengths)), "--steps", "1", "--warmup", "1",
         "--rounds", str(rounds), "--phases"],
        env=env, capture_output=True, text=True, timeout=900,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"{rounds} rounds, each the min of 1 interleaved steps" in out.stdout, out.stdout
    per_round = re.findall(r"^\s+(\d+)\s+(\d+)\s+\d+\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)$", out.stdout, re.M)
    assert [(int(r), int(t)) for r, t, *_ in per_round] == [(r, t) for r in range(1, rounds + 1) for t in lengths], \
        out.stdout
    medians = re.findall(r"^\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)$", out.stdout, re.M)
    assert [int(t) for t, *_ in medians] == lengths, out.stdout
    for t, median, low, high in medians:
        # The rounds' printed ratios (2 digits; rounding keeps their order): the middle one of 3.
        ratios = sorted(float(ratio) for _, length, _, _, ratio in per_round if int(length) == int(t))
        assert float(median) == ratios[len(ratios) // 2], out.stdout
        assert (float(low), float(high)) == (ratios[0], ratios[-1]), out.stdout
        assert float(low) <= float(median) <= float(high), out.stdout
    assert re.search(r"worst median dynamic/static: [\d.]+, geometric mean [\d.]+ over 3 rounds", out.stdout)
    # The single-round table is not printed alongside.
    assert "worst dynamic/static:" not in out.stdout
    phases = re.findall(r"^\s+(\d+)((?:\s+[\d.]+ / [\d.]+){3})$", out.stdout, re.M)
    assert [int(t) for t, _ in phases] == lengths, out.stdout
