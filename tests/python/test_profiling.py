"""deploy/profiling.py, the torch.profiler summing the deploy tools and the GPU tests share, over
CPU profiler runs (operator names stand in for kernel names) and hand-made events (the CUDA
path's filtering and timing, without a GPU)."""

from types import SimpleNamespace

import torch

import tccd_testlib
from tccd_testlib import Kernel, device_time_per_iter, kernel_launches, launches, profile_kernels, summarize


def _ops():
    a, b = torch.ones(64, 64), torch.full((64, 64), 2.0)
    for _ in range(3):
        a = torch.add(a, b)
    return torch.mul(a, b)


def test_cpu_profile_counts_each_operator_per_call():
    kernels = profile_kernels(_ops, device="cpu", iters=2)
    assert kernels["aten::add"].launches == 6
    assert kernels["aten::mul"].launches == 2
    assert all(k.us >= 0 for k in kernels.values())
    assert sum(k.us for k in kernels.values()) > 0


def test_every_event_counts_as_key_averages_counts():
    # kernel_launches keeps the GPU tests' old {e.key: e.count for e in prof.key_averages()}.
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        _ops()
    assert launches(summarize(prof.events())) == {e.key: e.count for e in prof.key_averages()}


def _event(name, device, us, self_us=0.0):
    return SimpleNamespace(
        name=name,
        device_type=device,
        time_range=SimpleNamespace(elapsed_us=lambda: us),
        self_cpu_time_total=self_us,
    )


def test_device_events_are_summed_by_name_in_first_launch_order():
    cpu, cuda = torch.autograd.DeviceType.CPU, torch.autograd.DeviceType.CUDA
    events = [
        _event("cudaLaunchKernel", cpu, 50.0, self_us=4.0),
        _event("tccd_pw_add", cuda, 10.0),
        _event("Memcpy HtoD", cuda, 3.0),
        _event("at::native::reduce_kernel<sum>", cuda, 7.5),
        _event("cudaLaunchKernel", cpu, 50.0, self_us=6.0),
        _event("tccd_pw_add", cuda, 12.0),
    ]
    on_gpu = summarize(events, "cuda")
    assert list(on_gpu) == ["tccd_pw_add", "Memcpy HtoD", "at::native::reduce_kernel<sum>"]
    assert on_gpu["tccd_pw_add"] == Kernel(launches=2, us=22.0)
    # Every event: CPU events timed by their self time (nested operators are not counted twice).
    everything = summarize(events)
    assert everything["cudaLaunchKernel"] == Kernel(launches=2, us=10.0)
    assert launches(everything) == {"cudaLaunchKernel": 2, "tccd_pw_add": 2, "Memcpy HtoD": 1,
                                    "at::native::reduce_kernel<sum>": 1}
    # A step's kernel time: copies left out, per iteration, names cut to `width`.
    us, per_kernel = device_time_per_iter(on_gpu, iters=2, width=12)
    assert us == round((22.0 + 7.5) / 2, 1)
    assert per_kernel == {"tccd_pw_add": 11.0, "at::native::": 3.8}


def test_tests_and_tools_share_one_copy():
    assert tccd_testlib.kernel_launches is kernel_launches
    assert kernel_launches.__module__ == "tccd_deploy_profiling"
