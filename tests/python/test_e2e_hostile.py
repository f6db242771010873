"""End to end: malformed and hostile input never hurts the daemon.

Every bad request gets a user-fault status (INVALID_ARGUMENT or UNIMPLEMENTED), the daemon stays
up, and an entry compiled before is still served from the cache afterwards.
"""

import os
import socket

import grpc
import pytest
import torch

from tccd import channel
from tccd.serialize import build_request
from tccd.v1 import tccd_pb2 as pb
from tccd_testlib import capture_aot_graphs


def _valid_request():
    def f(x, y):
        return torch.relu(x * y) + 1

    (_, gm, inputs), = capture_aot_graphs(f, torch.randn(4, 8), torch.randn(8))
    return build_request(gm, inputs, graph_name="hostile-test base", job_id="hostile-test")


@pytest.fixture(scope="module")
def compiled(daemon):
    """A request the daemon compiled before the abuse starts, and its key."""
    request = _valid_request()
    response = daemon.stub().Compile(request, timeout=120)
    assert response.manifest.key
    return request, response.manifest.key


def _assert_still_serving(daemon, compiled):
    assert daemon.alive(), f"tccd died:\n{daemon.log_tail()}"
    assert channel.ping(daemon.address) is None
    request, key = compiled
    response = daemon.stub().Compile(request, timeout=120)
    assert response.cache_hit and response.manifest.key == key
    daemon.stats()


def _mutated(mutate):
    request = _valid_request()
    mutate(request)
    return request


def _dim(v):
    return pb.Dim(value=v)


def _set_sizes(meta, sizes, strides=None):
    del meta.sizes[:]
    del meta.strides[:]
    meta.sizes.extend(_dim(s) for s in sizes)
    meta.strides.extend(_dim(s) for s in (strides if strides is not None else [1] * len(sizes)))


BAD_REQUESTS = {
    "dangling value ref": (lambda r: r.graph.nodes[0].args[0].ref.__setattr__("node", 57),
                           grpc.StatusCode.INVALID_ARGUMENT),
    "forward reference": (lambda r: r.graph.nodes[0].args[0].ref.__setattr__("node", 1),
                          grpc.StatusCode.INVALID_ARGUMENT),
    "dangling input ref": (lambda r: r.graph.nodes[0].args[0].ref.__setattr__("node", -9),
                           grpc.StatusCode.INVALID_ARGUMENT),
    "output index of a single-output node": (lambda r: r.graph.outputs[0].ref.__setattr__("output", 3),
                                             grpc.StatusCode.INVALID_ARGUMENT),
    "negative size": (lambda r: _set_sizes(r.graph.inputs[0], [-4, 8], [8, 1]),
                      grpc.StatusCode.INVALID_ARGUMENT),
    "2**62 elements": (lambda r: _set_sizes(r.graph.inputs[0], [2**31, 2**31], [2**31, 1]),
                       grpc.StatusCode.INVALID_ARGUMENT),
    "int64 overflow of the extent": (lambda r: _set_sizes(r.graph.inputs[0], [2**40, 2**40], [2**40, 1]),
                                     grpc.StatusCode.INVALID_ARGUMENT),
    "strides count differs from sizes": (lambda r: _set_sizes(r.graph.inputs[0], [4, 8], [1]),
                                         grpc.StatusCode.INVALID_ARGUMENT),
    "empty target": (lambda r: r.graph.nodes[0].__setattr__("target", ""),
                     grpc.StatusCode.INVALID_ARGUMENT),
    "malformed target": (lambda r: r.graph.nodes[0].__setattr__("target", "aten::mul.Tensor; rm -rf /"),
                         grpc.StatusCode.INVALID_ARGUMENT),
    "constant with the wrong byte count": (lambda r: r.graph.constants.append(pb.Constant(input=0, data=b"x")),
                                           grpc.StatusCode.INVALID_ARGUMENT),
    "constant naming no input": (lambda r: r.graph.constants.append(pb.Constant(input=99, data=b"")),
                                 grpc.StatusCode.INVALID_ARGUMENT),
    "50 MB string argument": (lambda r: r.graph.nodes[0].args.append(pb.Value(string_value="x" * (50 << 20))),
                              grpc.StatusCode.INVALID_ARGUMENT),
    "missing dtype": (lambda r: r.graph.inputs[0].__setattr__("dtype", pb.DTYPE_UNSPECIFIED),
                      grpc.StatusCode.INVALID_ARGUMENT),
    # A symbolic size compiles (an extern plan); one outside the size grammar never reaches a
    # plan, so no client ever evaluates it.
    "symbolic size with code in it": (lambda r: r.graph.inputs[0].sizes[0].__setattr__("expr", "__import__('os')"),
                                      grpc.StatusCode.INVALID_ARGUMENT),
    "data-dependent symbol": (lambda r: r.graph.inputs[0].sizes[0].__setattr__("expr", "u0 + 1"),
                              grpc.StatusCode.INVALID_ARGUMENT),
    "symbolic argument that divides by text": (lambda r: r.graph.nodes[0].args.append(pb.Value(sym_expr="s0 / s1")),
                                               grpc.StatusCode.INVALID_ARGUMENT),
    "no target device": (lambda r: r.target.__setattr__("device_type", pb.DEVICE_UNSPECIFIED),
                         grpc.StatusCode.INVALID_ARGUMENT),
    "no graph": (lambda r: r.ClearField("graph"), None),  # an empty graph may be valid
}


@pytest.mark.parametrize("case", sorted(BAD_REQUESTS))
def test_bad_compile_request_is_rejected_and_daemon_survives(daemon, compiled, case):
    mutate, code = BAD_REQUESTS[case]
    request = _mutated(mutate)
    invalid_before = daemon.stats().get("invalid_requests", 0)
    if code is None:
        try:
            daemon.stub().Compile(request, timeout=120)
        except grpc.RpcError as e:
            assert e.code() in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.UNIMPLEMENTED), e
    else:
        with pytest.raises(grpc.RpcError) as info:
            daemon.stub().Compile(request, timeout=120)
        assert info.value.code() == code, info.value.details()
        assert info.value.details(), "a rejection says why"
        assert len(info.value.details()) < 4096, "messages do not echo huge inputs"
        assert daemon.stats().get("invalid_requests", 0) >= invalid_before
    _assert_still_serving(daemon, compiled)


def test_garbage_message_bytes_are_rejected(daemon, compiled):
    ch = grpc.insecure_channel(daemon.address)
    raw = ch.unary_unary("/tccd.v1.Tccd/Compile", request_serializer=lambda b: b,
                         response_deserializer=lambda b: b)
    for payload in (os.urandom(4096), b"\xff" * 100, b"\x0a\xff\xff\xff\xff\x0f"):
        with pytest.raises(grpc.RpcError) as info:
            raw(payload, timeout=30)
        # gRPC itself rejects a request that does not parse; which code it picks is gRPC's.
        assert info.value.code() in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.INTERNAL,
                                     grpc.StatusCode.UNIMPLEMENTED), info.value
    ch.close()
    _assert_still_serving(daemon, compiled)


def test_raw_garbage_on_the_socket(daemon, compiled):
    for payload in (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", os.urandom(1 << 16), b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + os.urandom(512)):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(5)
        s.connect(daemon.socket)
        try:
            s.sendall(payload)
            s.shutdown(socket.SHUT_WR)
            try:
                s.recv(4096)
            except (socket.timeout, ConnectionResetError):
                pass
        except (BrokenPipeError, ConnectionResetError):
            pass  # the daemon hung up on us: fine
        finally:
            s.close()
    _assert_still_serving(daemon, compiled)


def test_half_open_connections_do_not_block_others(daemon, compiled):
    idle = []
    for _ in range(20):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(daemon.socket)
        idle.append(s)
    try:
        _assert_still_serving(daemon, compiled)
    finally:
        for s in idle:
            s.close()


@pytest.mark.parametrize("digest", ["0" * 64, "../../etc/passwd", "", "Z" * 64, "a" * 10000])
def test_fetch_of_unknown_or_malformed_digest(daemon, compiled, digest):
    with pytest.raises(grpc.RpcError) as info:
        list(daemon.stub().FetchArtifact(pb.FetchArtifactRequest(digest=digest), timeout=30))
    assert info.value.code() in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT), info.value
    _assert_still_serving(daemon, compiled)


def test_fetch_returns_exact_verified_bytes(daemon, compiled):
    import hashlib

    request, _ = compiled
    manifest = daemon.stub().Compile(request, timeout=120).manifest
    assert manifest.artifacts
    for artifact in manifest.artifacts:
        chunks = list(daemon.stub().FetchArtifact(pb.FetchArtifactRequest(digest=artifact.digest), timeout=60))
        data = b"".join(c.data for c in chunks)
        assert len(data) == artifact.size
        assert hashlib.sha256(data).hexdigest() == artifact.digest
        assert all(c.total_size == artifact.size for c in chunks)
        offsets = [c.offset for c in chunks]
        assert offsets == sorted(offsets) and offsets[0] == 0


def test_unknown_op_compiles_as_an_extern_step(daemon, compiled):
    # An op this daemon's torch never had (a custom op, a newer torch's) is not a reason to refuse
    # the graph: it becomes an extern step; the client resolves it through torch.ops.
    request = _mutated(lambda r: r.graph.nodes[0].__setattr__("target", "aten::does_not_exist.default"))
    response = daemon.stub().Compile(request, timeout=120)
    targets = [s.extern_call.target for s in response.manifest.plan.steps if s.HasField("extern_call")]
    assert "aten::does_not_exist.default" in targets, targets
    _assert_still_serving(daemon, compiled)
