"""deploy/phase_timers.py: exclusive phases that sum to the first step's wall time, whatever
other threads do meanwhile (the autograd engine's, tccd's background threads), with imports
and Dynamo's trace split out."""

from __future__ import annotations

import _thread
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "deploy"))

from phase_timers import PHASES, Timers  # noqa: E402


class Work:
    """Stand-ins for the functions the timers wrap."""

    @staticmethod
    def backend(seconds: float) -> None:
        time.sleep(seconds)

    @staticmethod
    def plan_call(seconds: float) -> None:
        time.sleep(seconds)


def _foreign_thread(target, *args) -> threading.Event:
    """A thread Python's threading module did not start, as the autograd engine's are (its
    current_thread() is a _DummyThread)."""
    done = threading.Event()

    def run():
        try:
            target(*args)
        finally:
            done.set()

    _thread.start_new_thread(run, ())
    return done


def _step(timers: Timers, body) -> dict:
    timers.begin()
    t0 = time.perf_counter()
    body()
    wall = time.perf_counter() - t0
    phases = timers.finish(wall, compiled=False)
    timers.restore()
    assert set(phases) == set(PHASES)
    assert all(v >= 0 for v in phases.values()), phases
    assert sum(phases.values()) == pytest.approx(wall, abs=2e-3), (phases, wall)
    return phases


def test_phases_sum_to_the_wall_time_with_other_threads():
    timers = Timers(clock="wall")
    timers.wrap(Work, "backend", "backend")
    timers.wrap(Work, "plan_call", "plan_calls")

    def body():
        Work.backend(0.05)
        # The autograd engine's thread while the main thread waits untimed (.backward()): counts.
        _foreign_thread(Work.plan_call, 0.2).wait()
        # The same while the main thread is inside a phase: the same seconds count once.
        def main_phase(seconds):
            done = _foreign_thread(Work.plan_call, 0.3)
            time.sleep(seconds)
            return done

        timers.timed(main_phase, "backend")(0.4).wait()
        # Threads Python started (tccd's background compiles) never count: they overlap the step.
        t = threading.Thread(target=Work.plan_call, args=(0.2,), name="tccd-prefetch g")
        t.start()
        t.join()

    phases = _step(timers, body)
    assert phases["backend"] == pytest.approx(0.45, abs=0.05)
    assert phases["plan_calls"] == pytest.approx(0.2, abs=0.05)
    assert phases["rest"] == pytest.approx(0.2, abs=0.05)  # the tccd thread's time: waited untimed
    assert timers.skipped_s == pytest.approx(0.3, abs=0.05)


def test_cpu_clock_counts_the_main_thread_only():
    timers = Timers(clock="cpu")
    timers.wrap(Work, "plan_call", "plan_calls")

    def spin(seconds: float) -> None:
        end = time.thread_time() + seconds
        while time.thread_time() < end:
            pass

    timers.wrap(sys.modules[__name__], "spin_here", "backend")

    def body():
        _foreign_thread(timers.timed(spin, "plan_calls"), 0.2).wait()
        spin_here(0.1)

    timers.begin()
    c0 = time.thread_time()
    body()
    first = time.thread_time() - c0
    phases = timers.finish(first, compiled=False)
    timers.restore()
    assert phases["plan_calls"] == 0
    assert phases["backend"] == pytest.approx(0.1, abs=0.03)
    assert phases["rest"] >= 0


def spin_here(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_imports_are_a_phase_of_their_own(tmp_path):
    (tmp_path / "slow_module_for_phase_timers.py").write_text(textwrap.dedent("""
        import time
        time.sleep(0.3)
    """))
    sys.path.insert(0, str(tmp_path))
    try:
        timers = Timers(clock="wall")

        def backend_importing(seconds):
            import slow_module_for_phase_timers  # noqa: F401
            time.sleep(seconds)

        phases = _step(timers, lambda: timers.timed(backend_importing, "backend")(0.1))
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("slow_module_for_phase_timers", None)
    assert phases["import"] == pytest.approx(0.3, abs=0.05)
    assert phases["backend"] == pytest.approx(0.1, abs=0.05)
    # The phase by package: this one module's, and the groups sum to the phase.
    assert timers.imports["slow_module_for_phase_timers"] == pytest.approx(0.3, abs=0.05)
    assert sum(timers.imports.values()) == pytest.approx(phases["import"], abs=1e-3)  # phases are rounded


def test_import_groups():
    from phase_timers import import_group

    assert import_group("torch._inductor.debug") == "torch._inductor"
    assert import_group("torch") == "torch"
    assert import_group("tccd.v1.tccd_pb2") == "tccd"
    assert import_group("google.protobuf.descriptor") == "google"


def test_dynamo_trace_excludes_the_backend_and_imports():
    import torch

    timers = Timers(clock="wall")

    def backend(gm, example_inputs):
        time.sleep(0.2)
        return gm.forward

    fn = torch.compile(lambda x: (x.sin() + 1).cos(), backend=timers.timed(backend, "backend"))
    x = torch.randn(4)
    phases = _step(timers, lambda: fn(x))
    assert phases["backend"] == pytest.approx(0.2, abs=0.05)
    assert phases["dynamo"] > 0


class Trace:
    """A stand-in for Dynamo's convert_frame._compile: busy (CPU) and waiting (no CPU) parts, and
    the backend call nested in it."""

    @staticmethod
    def busy(seconds: float) -> None:
        end = time.thread_time() + seconds
        while time.thread_time() < end:
            pass

    @staticmethod
    def compile(busy_s: float, idle_s: float, backend_s: float) -> None:
        Trace.busy(busy_s)
        time.sleep(idle_s)  # waiting for a core looks like this to the thread: wall, no CPU
        Trace.backend(backend_s)

    @staticmethod
    def backend(seconds: float) -> None:
        Trace.busy(seconds)


def test_dynamo_cpu_is_the_dynamo_phases_main_thread_cpu_time():
    """dynamo_cpu: the dynamo phase's CPU seconds, exclusive of the phases nested in it, so that
    wall far above it says the trace waited for a core (the daemon's compile threads)."""
    timers = Timers(clock="wall")
    timers.wrap(Trace, "compile", "dynamo")
    timers.wrap(Trace, "backend", "backend")
    phases = _step(timers, lambda: Trace.compile(0.1, 0.2, 0.1))
    # Wall time: at least the busy part (0.1 CPU s take >= 0.1 s) and the wait; CPU time: the
    # busy part only, neither the wait nor the nested backend's 0.1 s (robust to the load).
    assert phases["dynamo"] >= 0.29 and phases["backend"] >= 0.09, phases
    assert 0.09 <= timers.dynamo_cpu <= 0.16, timers.dynamo_cpu
    timers.begin()
    assert timers.dynamo_cpu == 0.0


@pytest.mark.parametrize("aot_autograd", [True, False])
def test_the_aot_loads_instrumentation_imports_no_aot_autograd(aot_autograd):
    """instrument_tccd(aot_autograd=False), the ahead-of-time flow's load cells': AOTAutograd
    is neither wrapped nor imported for it (the load never imports it; importing it only to
    wrap it cost ~1 s of the GPU host's AOT first steps). The default imports and wraps it."""
    import os
    import subprocess

    repo = Path(__file__).resolve().parents[2]
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(repo / "deploy")!r})
        import tccd
        import tccd.precompile  # as the zoo's AOT cell, before its timed step
        from phase_timers import Timers
        assert "torch._functorch.aot_autograd" not in sys.modules
        timers = Timers()
        timers.instrument_tccd(aot_autograd={aot_autograd})
        wrapped = any(attr == "run_functionalized_fw_and_collect_metadata" for _, attr, _ in timers.wrapped)
        print("RESULT", "torch._functorch.aot_autograd" in sys.modules, wrapped)
    """)
    env = dict(os.environ, PYTHONPATH=str(repo / "client") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert f"RESULT {aot_autograd} {aot_autograd}" in r.stdout, r.stdout
def test_current_phase_is_the_main_threads_innermost_and_the_sampler_sees_only_it():
    from phase_sampler import PhaseSampler

    timers = Timers(clock="wall")
    timers.wrap(Work, "backend", "backend")
    seen = []

    def busy_in_dynamo(seconds: float) -> None:
        seen.append(timers.current_phase())
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass

    def trace(seconds: float) -> None:
        busy_in_dynamo(seconds)
        Work.backend(0.1)  # nested: the innermost phase is the backend's while it runs
        seen.append(timers.current_phase())

    timers.begin()
    sampler = PhaseSampler(timers, "dynamo", interval_s=0.002).start()
    assert timers.current_phase() == "rest"
    timers.timed(trace, "dynamo")(0.2)
    Work.backend(0.1)  # another phase: not sampled
    report = sampler.stop()
    timers.restore()
    assert seen == ["dynamo", "dynamo"]
    assert report["phase"] == "dynamo" and report["samples"] > 10, report
    inclusive = dict(report["inclusive"])
    assert any(name.endswith(":busy_in_dynamo") for name in inclusive), report["inclusive"][:10]
    assert not any(name.endswith(":backend") for name in inclusive), report["inclusive"]
