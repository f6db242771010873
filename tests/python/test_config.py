"""config.py: every knob, its default and its validation."""

import os

import pytest

from tccd.config import Config


def test_defaults_with_xdg_dirs():
    c = Config.from_env({"XDG_RUNTIME_DIR": "/run/user/1000", "XDG_CACHE_HOME": "/c"})
    assert c.address == "unix:/run/user/1000/tccd/tccd.sock"
    assert c.unix_socket_path == "/run/user/1000/tccd/tccd.sock"
    assert c.cache_dir == "/c/tccd/client"
    assert c.job_id_env is None and c.rank == 0
    assert not c.strict and c.autostart and c.local_cache
    assert c.binary is None
    assert c.timeout_s == 600


def test_defaults_without_xdg_dirs():
    c = Config.from_env({"HOME": os.path.expanduser("~")})
    assert c.address == f"unix:/tmp/tccd-{os.getuid()}/tccd.sock"
    assert c.cache_dir == os.path.join(os.path.expanduser("~"), ".cache", "tccd", "client")


def test_explicit_knobs():
    c = Config.from_env({
        "TCCD_ADDRESS": "127.0.0.1:7070", "TCCD_JOB_ID": "j1", "TCCD_STRICT": "1",
        "TCCD_BINARY": "/opt/tccd", "TCCD_NO_AUTOSTART": "1", "TCCD_CACHE_DIR": "/tmp/x",
        "TCCD_LOCAL_CACHE": "0", "TCCD_TIMEOUT_S": "2.5", "TCCD_RANK": "3", "RANK": "9",
    })
    assert c.address == "127.0.0.1:7070" and c.unix_socket_path is None
    assert c.job_id() == "j1" and c.rank == 3
    assert c.strict and not c.autostart and not c.local_cache
    assert c.binary == "/opt/tccd" and c.cache_dir == "/tmp/x" and c.timeout_s == 2.5


def test_rank_falls_back_to_RANK():
    assert Config.from_env({"RANK": "5"}).rank == 5


def test_unix_uri_spelling():
    assert Config.from_env({"TCCD_ADDRESS": "unix:///tmp/a.sock"}).unix_socket_path == "/tmp/a.sock"


def test_job_id_defaults_to_torch_compiler_config():
    import torch.compiler.config as cc

    old = cc.job_id
    try:
        cc.job_id = "from-torch"
        assert Config.from_env({}).job_id() == "from-torch"
        assert Config.from_env({"TCCD_JOB_ID": ""}).job_id() == ""
    finally:
        cc.job_id = old
    assert Config.from_env({}).job_id() == (old or "")


def test_partitioner_defaults_to_min_cut():
    assert Config.from_env({}).partitioner == "min_cut"
    assert Config.from_env({"TCCD_PARTITIONER": "Default"}).partitioner == "default"


def test_lean_runtime_is_on_by_default_and_can_be_turned_off():
    # On since the tenth session (the saved-tensor fix brought the H200 training peaks back).
    assert Config.from_env({}).lean_runtime
    assert not Config.from_env({"TCCD_LEAN_RUNTIME": "0"}).lean_runtime


def test_cpu_constants_under_cuda_graphs_are_allowed_by_default_and_can_be_refused():
    assert Config.from_env({}).cudagraph_cpu_constants
    assert not Config.from_env({"TCCD_CUDAGRAPH_CPU_CONSTANTS": "0"}).cudagraph_cpu_constants


def test_lean_runtime_under_cuda_graphs_is_on_by_default_and_can_be_turned_off():
    assert Config.from_env({}).lean_cudagraphs
    assert not Config.from_env({"TCCD_LEAN_CUDAGRAPHS": "0"}).lean_cudagraphs


@pytest.mark.parametrize("env", [
    {"TCCD_PARTITIONER": "greedy"},
    {"TCCD_STRICT": "maybe"}, {"TCCD_RANK": "x"}, {"TCCD_TIMEOUT_S": "-1"}, {"TCCD_TIMEOUT_S": "soon"},
])
def test_invalid_values_are_rejected(env):
    with pytest.raises(ValueError):
        Config.from_env(env)
