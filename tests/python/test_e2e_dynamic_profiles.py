"""End to end (CPU, a daemon of its own): automatic-dynamic profiles shared by job id (issue 9).

Each "process" is a real Python process (deploy/dynamic_profile_bench.py worker) with fresh
local caches (torch's inductor dir, where torch keeps its own per-rank PGO file, and tccd's), so
only the daemon can carry what an earlier process learnt. Over 6 sequence lengths (32..192; a
frame goes dynamic at its second distinct size, the four after it check that it stays so): the
first process of a job compiles each Dynamo frame at most twice (static, then dynamic), a second
process of the job, after a daemon restart, once (dynamic at once) with no daemon compile;
another job id sees nothing; TCCD_DYNAMIC_PROFILES=0 neither reads nor stores the profile; two
ranks that vary different dims merge; results match eager at every size.

Cost: a process is mostly torch's import and Dynamo's two compiles, so the tests run as few as
make each point (9, where they ran 12 over 16 lengths) and start independent ones together.
"""

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from conftest import TCCD_BINARY, Daemon, short_tempdir

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "deploy" / "dynamic_profile_bench.py"
TOL = 1e-4


@pytest.fixture(scope="module")
def own_daemon():
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    root = short_tempdir("tccd-pgo-")
    d = Daemon(TCCD_BINARY, root)
    d.start()
    yield d
    try:
        assert d.stop() == 0, d.log_tail()
    finally:
        shutil.rmtree(root, ignore_errors=True)


STEPS = 6


def _start(d, tmp_path, job, workload="infer", vary="seq", **extra_env):
    """Starts one fresh process of `job`; _finish(...) waits for its JSON result."""
    fresh = tmp_path / uuid.uuid4().hex[:8]
    fresh.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TCCD_", "TORCH"))}
    # torch's job id keys the profile (PGO's own switch); TCCD_JOB_ID only names the job for the
    # daemon's job index.
    env.update(TCCD_ADDRESS=d.address, TCCD_NO_AUTOSTART="1", TORCH_COMPILE_JOB_ID=job,
               TCCD_CACHE_DIR=str(fresh / "tccd"), TORCHINDUCTOR_CACHE_DIR=str(fresh / "inductor"),
               PYTHONPATH=str(REPO / "client") + os.pathsep + env.get("PYTHONPATH", ""), **extra_env)
    out = fresh / "result.json"
    proc = subprocess.Popen([sys.executable, str(BENCH), "worker", "--workload", workload, "--vary", vary,
                             "--steps", str(STEPS), "--out", str(out)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    return proc, out


def _finish(started):
    proc, out = started
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stdout + stderr[-4000:]
    result = json.loads(out.read_text())
    assert result["max_abs_diff_vs_eager"] < TOL, result
    return result


def _process(d, tmp_path, job, workload="infer", vary="seq", **extra_env):
    """One fresh process of `job`, run to its end; its JSON result."""
    return _finish(_start(d, tmp_path, job, workload, vary, **extra_env))


def _per_frame(result):
    return sorted(result["dynamo_compiles_per_frame"].values())


def _job(name):
    return f"{name}-{uuid.uuid4().hex[:8]}"


def _profile(d, job):
    from tccd.v1 import tccd_pb2 as pb

    return d.stub().GetDynamicProfile(pb.DynamicProfileRequest(job_id=job), timeout=10)


def test_a_second_process_of_the_job_compiles_dynamic_at_once_after_a_restart(own_daemon, tmp_path):
    job = _job("infer")
    first = _process(own_daemon, tmp_path, job)
    assert first["steps"] == STEPS
    assert _per_frame(first) == [2], first  # static, then dynamic after the first new length
    assert first["profile_puts"] >= 1, first

    # Profiles are in the store, not only in memory: a restarted daemon still has them.
    own_daemon.restart()
    assert _profile(own_daemon, job).frames
    second = _process(own_daemon, tmp_path, job)
    assert _per_frame(second) == [1], second
    assert second["daemon_compiles"] == 0, second
    assert second["profile_hits"] == 1, second

    # Together (they touch different profiles): another job id does not see it, and with
    # sharing turned off the job's own profile is neither read nor stored.
    puts_before = _profile(own_daemon, job).puts
    other = _start(own_daemon, tmp_path, _job("other"))
    off = _start(own_daemon, tmp_path, job, TCCD_DYNAMIC_PROFILES="0")
    other, off = _finish(other), _finish(off)
    assert _per_frame(other) == [2], other
    assert _per_frame(off) == [2], off  # not read: static first, then dynamic
    # Not read: no daemon-wide hit (the other job's process reads a profile it does not have
    # yet, a miss). Not stored: the job's profile saw no put (the other job's puts are its own).
    assert off["profile_hits"] == 0, off
    assert _profile(own_daemon, job).puts == puts_before


def test_a_second_training_process_compiles_dynamic_at_once(own_daemon, tmp_path):
    job = _job("train")
    first = _process(own_daemon, tmp_path, job, "train")
    assert _per_frame(first) == [2], first
    assert first["profile_puts"] >= 1, first
    second = _process(own_daemon, tmp_path, job, "train")
    assert _per_frame(second) == [1], second
    assert second["daemon_compiles"] == 0, second
    assert second["profile_hits"] == 1, second


def test_two_ranks_varying_different_dims_merge(own_daemon, tmp_path):
    # Both at once, as ranks start: whatever each reads first, the daemon's join holds both.
    job = _job("ranks")
    rank0 = _start(own_daemon, tmp_path, job, vary="seq", TCCD_RANK="0")
    rank1 = _start(own_daemon, tmp_path, job, vary="batch", TCCD_RANK="1")
    _finish(rank0), _finish(rank1)
    from tccd.v1 import tccd_pb2 as pb

    profile = _profile(own_daemon, job)
    assert profile.puts >= 2
    (frame,) = [f for f in profile.frames if f.name == "forward"]
    (x,) = [e for e in frame.entries if e.source == "L['x']"]
    assert [a.kind for a in x.size.dims] == [pb.ProfileAtom.DYNAMIC, pb.ProfileAtom.DYNAMIC,
                                             pb.ProfileAtom.STATIC]
    # A third process varying both compiles once: both dims are dynamic from its first call.
    both = _process(own_daemon, tmp_path, job, vary="both")
    assert _per_frame(both) == [1], both

    # The CLI shows it, torch's notation: ? for a dynamic dim.
    env = dict(os.environ, PYTHONPATH=str(REPO / "client"))
    out = subprocess.run([sys.executable, "-m", "tccd", "--address", own_daemon.address, "job", job],
                         env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "L['x']: size=[?, ?, 64]" in out.stdout, out.stdout
    out = subprocess.run([sys.executable, "-m", "tccd", "--address", own_daemon.address, "job", job,
                          "--json"], env=env, capture_output=True, text=True, timeout=60)
    assert json.loads(out.stdout)["dynamic_profile"]["job_id"] == job
