"""light_partition.py: the min-cut partitioner with the pattern-matcher stand-in makes the same
forward and backward graphs as with Inductor's real pattern matcher, and imports no part of it.

Each way runs in its own fresh process (light_partition_probe.py): once the real module is
imported, the stand-in is never used.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS_DIR = Path(__file__).resolve().parent
REPO = TESTS_DIR.parents[1]


def _probe(way: str) -> str:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO / "client"), str(TESTS_DIR)]))
    done = subprocess.run([sys.executable, str(TESTS_DIR / "light_partition_probe.py"), way], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_same_graphs_without_importing_the_pattern_matcher():
    light, real = _probe("light"), _probe("real")
    assert "PATTERN_MATCHER_IMPORTED False" in light
    assert "PATTERN_MATCHER_IMPORTED True" in real
    light_graphs, real_graphs = light.split("GRAPH\n")[1:], real.split("GRAPH\n")[1:]
    assert len(light_graphs) == 2  # forward and backward
    assert light_graphs == real_graphs


def test_stand_in_helpers_match_the_real_ones_on_mutations():
    out = _probe("regions")
    assert "REGIONS_EQUAL True 3" in out, out


def test_stand_in_refused_when_a_helper_reads_inductor_globals(monkeypatch):
    """A helper that needs more of Inductor than torch and re (here fwd_only, which reads
    make_fx and others) makes the stand-in refuse: the partitioner then imports the real module."""
    sys.path.insert(0, str(REPO / "client"))
    from tccd import light_partition

    monkeypatch.setattr(light_partition, "_built", False)
    monkeypatch.setattr(light_partition, "_stand_in", None)
    monkeypatch.setattr(light_partition, "_names_cse_imports", lambda: ["fwd_only"])
    assert light_partition._get_stand_in() is None
    monkeypatch.setattr(light_partition, "_built", False)
    monkeypatch.setattr(light_partition, "_names_cse_imports", lambda: ["compute_mutation_region_ids"])
    stand_in = light_partition._get_stand_in()
    assert stand_in is not None and callable(stand_in.compute_mutation_region_ids)
    assert light_partition.PATTERN_MATCHER not in sys.modules or sys.modules[light_partition.PATTERN_MATCHER] is not stand_in
