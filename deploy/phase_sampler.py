"""Where one phase of a first step goes, by sampling the main thread's Python stack.

    sampler = PhaseSampler(timers, phase="dynamo", interval_s=0.002).start()
    ... the first step ...
    report = sampler.stop()   # {"samples": N, "interval_s": ..., "inclusive": [...], "self": [...]}

A thread wakes every `interval_s`, and while the main thread is inside `phase`
(phase_timers.Timers.current_phase) records its stack: each function once per sample
(inclusive) and the innermost one (self). Comparing two backends' reports says which of
Dynamo's functions took the extra seconds of one (T5's `dynamo` phase under tccd was 3.94 s
against Inductor's 2.17 in session 15's train-large cell, and 2.6 vs 2.4 on the CPU with torch
2.11: only the GPU host shows it). Used by zoo_benchmark.py with ZOO_SAMPLE_PHASE=dynamo.

Cheap, unlike cProfile (3-4x on a trace): one sys._current_frames() per interval while the
phase is open, nothing otherwise. The sampler takes the GIL for each sample, so the main
thread loses ~1-3 % to it; both backends' cells pay the same.
"""

from __future__ import annotations

import collections
import os
import sys
import threading
from typing import Any, Dict, List, Optional


def _name(code: Any) -> str:
    path = code.co_filename
    # The package-relative path: torch/_dynamo/symbolic_convert.py, tccd/backend.py, ...
    for marker in ("site-packages" + os.sep, os.sep + "client" + os.sep, os.sep + "lib" + os.sep):
        i = path.rfind(marker)
        if i >= 0:
            path = path[i + len(marker):]
            break
    return f"{path}:{code.co_name}"


class PhaseSampler:
    def __init__(self, timers: Any, phase: str = "dynamo", interval_s: float = 0.002, top: int = 80) -> None:
        self.timers = timers
        self.phase = phase
        self.interval_s = interval_s
        self.top = top
        self.samples = 0
        self.inclusive: "collections.Counter[str]" = collections.Counter()
        self.self_: "collections.Counter[str]" = collections.Counter()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._main_id = threading.main_thread().ident

    def start(self) -> "PhaseSampler":
        self._thread = threading.Thread(target=self._run, name="phase-sampler", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            if self.timers.current_phase() != self.phase:
                continue
            frame = sys._current_frames().get(self._main_id)
            if frame is None:
                continue
            seen = set()
            self.self_[_name(frame.f_code)] += 1
            while frame is not None:
                name = _name(frame.f_code)
                if name not in seen:
                    seen.add(name)
                    self.inclusive[name] += 1
                frame = frame.f_back
            self.samples += 1

    def stop(self) -> Dict[str, Any]:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        def top(counter: "collections.Counter[str]") -> List[List[Any]]:
            return [[name, n] for name, n in counter.most_common(self.top)]

        return {"phase": self.phase, "samples": self.samples, "interval_s": self.interval_s,
                "inclusive": top(self.inclusive), "self": top(self.self_)}
