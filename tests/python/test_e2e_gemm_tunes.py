"""End to end (CPU, a daemon of its own): matmul autotuning's choices as content-addressed
records in the daemon (server/gemm_tune_store.h, client/tccd/gemm_tunes.py; issue 7).

The daemon side through gRPC: a table per GPU model, compute capability and cuBLASLt version;
the first writer of a matmul's choice wins and later puts keep it; the table survives a
restart; other identities see nothing; malformed records are refused with a message naming the
field. The client side without a GPU: two "processes" (their own runtime tables and sharing
states, as two ranks have) that timed the same matmul differently end with the first one's
choice in both tables, and a third process loads it before its library loads (nothing to time).
Whether the runtime then runs the table's algorithm is the fake-driver test's
(cuda_host_fake_driver_test.cc) and, on a GPU, test_gpu_gemm_autotune.py's.
"""

import shutil

import grpc
import pytest

from conftest import TCCD_BINARY, Daemon, short_tempdir

IDENTITY = dict(gpu_name="NVIDIA H200", sm=90, cublaslt_version=130100)
GEMM = [200704, 384, 96, 200704, 384, 96, 1, 0, 0, 0, 1, 68 | (8 << 32), 0x3F800000]
OTHER = [8192, 768, 3072, 8192, 3072, 8192, 1, 0, 0, 0, 4, 68 | (8 << 32), 0x3F800000]


@pytest.fixture(scope="module")
def own_daemon():
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    root = short_tempdir("tccd-tunes-")
    d = Daemon(TCCD_BINARY, root)
    d.start()
    yield d
    try:
        assert d.stop() == 0, d.log_tail()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _entry(pb, gemm, algo_word, us=50.0):
    return pb.GemmTuneEntry(gemm=gemm, algo=[algo_word] + [7] * 7, workspace_bytes=1 << 20,
                            swapped=False, chosen_us=us, heuristic_us=us * 1.5)


def test_the_first_writer_wins_and_the_table_survives_a_restart(own_daemon):
    from tccd.v1 import tccd_pb2 as pb

    stub = own_daemon.stub()
    ident = dict(IDENTITY, gpu_name="first-writer GPU")
    with pytest.raises(grpc.RpcError) as e:
        stub.GetGemmTunes(pb.GemmTuneRequest(**ident), timeout=10)
    assert e.value.code() == grpc.StatusCode.NOT_FOUND

    first = stub.PutGemmTunes(pb.GemmTuneTable(**ident, entries=[_entry(pb, GEMM, 0xA1)]),
                              timeout=10)
    assert [e.algo[0] for e in first.entries] == [0xA1] and first.puts == 1
    # A second process timed the same matmul differently, and another one: its choice for the
    # first is refused (the stored one stays), the new one is added.
    second = stub.PutGemmTunes(
        pb.GemmTuneTable(**ident, entries=[_entry(pb, GEMM, 0xB2), _entry(pb, OTHER, 0xB3)]),
        timeout=10)
    got = {tuple(e.gemm): e.algo[0] for e in second.entries}
    assert got == {tuple(GEMM): 0xA1, tuple(OTHER): 0xB3} and second.puts == 2
    assert second.entries[0].chosen_us == pytest.approx(50.0)

    own_daemon.restart()
    stub = own_daemon.stub()
    fetched = stub.GetGemmTunes(pb.GemmTuneRequest(**ident), timeout=10)
    assert {tuple(e.gemm): e.algo[0] for e in fetched.entries} == got
    # Another cuBLASLt version is another identity: nothing stored for it.
    with pytest.raises(grpc.RpcError) as e:
        stub.GetGemmTunes(pb.GemmTuneRequest(**dict(ident, cublaslt_version=130200)), timeout=10)
    assert e.value.code() == grpc.StatusCode.NOT_FOUND


@pytest.mark.parametrize("bad, message", [
    (dict(gemm=GEMM[:12]), "12 gemm words, not 13"),
    (dict(algo=[1] * 7), "7 algo words, not 8"),
    (dict(workspace_bytes=1 << 40), "workspace bytes"),
    (dict(gemm=[0] + GEMM[1:]), "size word 0"),
    (dict(chosen_us=-1.0), "negative or NaN timing"),
    (dict(gpu_name=""), "gpu_name"),
    (dict(sm=0), "compute capability"),
])
def test_a_malformed_record_is_refused_with_a_clear_error(own_daemon, bad, message):
    from tccd.v1 import tccd_pb2 as pb

    ident = dict(IDENTITY, gpu_name="malformed GPU")
    entry = dict(gemm=GEMM, algo=[1] * 8, workspace_bytes=0, chosen_us=1.0)
    for k in ("gpu_name", "sm"):
        if k in bad:
            ident[k] = bad[k]
    entry.update({k: v for k, v in bad.items() if k not in ident})
    stub = own_daemon.stub()
    with pytest.raises(grpc.RpcError) as e:
        stub.PutGemmTunes(pb.GemmTuneTable(**ident, entries=[pb.GemmTuneEntry(**entry)]),
                          timeout=10)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert message in e.value.details()
    # Nothing of it was stored.
    if ident["gpu_name"] and ident["sm"]:
        with pytest.raises(grpc.RpcError) as e:
            stub.GetGemmTunes(pb.GemmTuneRequest(**ident), timeout=10)
        assert e.value.code() == grpc.StatusCode.NOT_FOUND


def _process(monkeypatch, d, shared="1"):
    """A process's sharing state and runtime table for device 0 (fresh, as in a new process)."""
    from tccd import config, gemm_tunes, runtime

    monkeypatch.setenv("TCCD_ADDRESS", d.address)
    monkeypatch.setenv("TCCD_NO_AUTOSTART", "1")
    monkeypatch.setenv("TCCD_GEMM_TUNES_SHARED", shared)
    config.reload()
    state = gemm_tunes.Sharing(("client GPU", 90, 130100) if shared == "1" else None)
    return state, runtime._TuneTable(None, 0)


def _table_choice(table, gemm):
    from tccd import gemm_tunes

    got = gemm_tunes.used_entries(table.buffer).get(tuple(gemm))
    return None if got is None else got[0][0]


def test_two_processes_that_timed_differently_end_with_the_first_ones_choice(
        own_daemon, monkeypatch):
    from tccd import gemm_tunes

    algo = lambda w: (w,) + (7,) * 7  # noqa: E731
    a, a_table = _process(monkeypatch, own_daemon)
    b, b_table = _process(monkeypatch, own_daemon)
    # Both look before timing (the daemon has nothing yet), both time, a reaches it first.
    a.before_load(a_table.buffer, 0)
    b.before_load(b_table.buffer, 0)
    gemm_tunes.write_entry(a_table.buffer, GEMM, 0, algo(0xA1), 1 << 20, False, 0.05, 0.07)
    gemm_tunes.write_entry(b_table.buffer, GEMM, 0, algo(0xB2), 0, True, 0.04, 0.07)
    assert not a.after_load(a_table.buffer, 0)  # stored: nothing to change
    assert b.after_load(b_table.buffer, 0)  # another choice won: b's library re-reads
    assert _table_choice(a_table, GEMM) == _table_choice(b_table, GEMM) == 0xA1
    assert not gemm_tunes.used_entries(b_table.buffer)[tuple(GEMM)][2]  # not swapped: a's
    assert b_table.filled() == 1
    # Nothing new: a later load puts nothing and changes nothing.
    assert not b.after_load(b_table.buffer, 0)

    # A third process finds the choice before its library loads: nothing left to time.
    c, c_table = _process(monkeypatch, own_daemon)
    c.before_load(c_table.buffer, 3)
    assert _table_choice(c_table, GEMM) == 0xA1
    # The entry is written for this process's device ordinal (the runtime's key word 13).
    assert any(k for k in gemm_tunes.used_entries(c_table.buffer))
    key_device = gemm_tunes._find(c_table.buffer, tuple(GEMM) + (3,))
    assert key_device is not None and c_table.filled() == 1


def test_sharing_off_neither_reads_nor_stores(own_daemon, monkeypatch):
    from tccd import gemm_tunes

    off, table = _process(monkeypatch, own_daemon, shared="0")
    gemm_tunes.write_entry(table.buffer, OTHER, 0, (0xC3,) + (7,) * 7, 0, False)
    off.before_load(table.buffer, 0)
    assert not off.after_load(table.buffer, 0)
    assert gemm_tunes.sharing(5).identity is None  # TCCD_GEMM_TUNES_SHARED=0
