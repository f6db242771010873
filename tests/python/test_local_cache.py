"""local_cache.py: round trips, what the request hash covers, and corruption handling."""

import os

import pytest

from tccd.local_cache import LocalCache, request_hash, sha256_hex
from tccd.v1 import tccd_pb2 as pb


def _request(**overrides):
    meta = pb.TensorMeta(sizes=[pb.Dim(value=4)], strides=[pb.Dim(value=1)],
                         storage_offset=pb.Dim(value=0), dtype=pb.FLOAT32,
                         device=pb.Device(type=pb.CPU, index=-1), requires_grad=True)
    req = pb.CompileRequest(
        graph=pb.Graph(inputs=[meta], nodes=[pb.Node(target="aten::relu.default",
                                                     args=[pb.Value(ref=pb.ValueRef(node=-1))],
                                                     outputs=[meta])],
                       outputs=[pb.Value(ref=pb.ValueRef(node=0))]),
        target=pb.Target(device_type=pb.CPU, cpu_arch="x86_64", cpu_features=["sse2", "avx2"]),
        options=pb.CompileOptions(mode="default"),
        client=pb.ClientInfo(client_version="0.1.0", pid=1, hostname="a"),
        job_id="job-a", rank=0, graph_name="0/0 forward",
    )
    for k, v in overrides.items():
        setattr(req, k, v)
    return req


def test_request_hash_ignores_identity_and_informational_fields():
    base = request_hash(_request())
    other = _request(job_id="job-b", rank=7, graph_name="1/0 backward")
    other.client.pid = 99
    other.client.hostname = "b"
    other.graph.inputs[0].requires_grad = False
    other.graph.inputs[0].device.index = 3
    assert request_hash(other) == base


@pytest.mark.parametrize("mutate", [
    lambda r: r.graph.nodes[0].__setattr__("target", "aten::sigmoid.default"),
    lambda r: r.graph.inputs[0].sizes[0].__setattr__("value", 5),
    lambda r: r.graph.inputs[0].__setattr__("dtype", pb.FLOAT64),
    lambda r: r.target.cpu_features.append("avx512f"),
    lambda r: r.options.__setattr__("mode", "max-autotune"),
    lambda r: r.options.extra.__setitem__("k", "v"),
])
def test_request_hash_covers_what_determines_the_output(mutate):
    req = _request()
    mutate(req)
    assert request_hash(req) != request_hash(_request())


def test_manifest_and_artifact_round_trip(tmp_path):
    cache = LocalCache(str(tmp_path))
    data = b"\x7fELF fake shared object"
    digest = sha256_hex(data)
    manifest = pb.Manifest(key="k" * 64, artifacts=[pb.Artifact(name="kernels.so", digest=digest,
                                                                size=len(data), kind=pb.CPU_SHARED_OBJECT)])
    assert cache.get_manifest("abc") is None
    assert cache.get_artifact_path(digest) is None
    path = cache.put_artifact(digest, data)
    cache.put_manifest("abc", manifest)
    assert cache.get_manifest("abc") == manifest
    assert cache.get_artifact_path(digest) == path
    with open(path, "rb") as f:
        assert f.read() == data
    leftovers = [n for _, _, files in os.walk(tmp_path) for n in files if n.startswith(".tmp-")]
    assert leftovers == []


def test_put_artifact_refuses_bytes_that_do_not_match(tmp_path):
    with pytest.raises(ValueError):
        LocalCache(str(tmp_path)).put_artifact(sha256_hex(b"a"), b"b")


def test_corrupt_artifact_is_deleted_and_reported_missing(tmp_path):
    cache = LocalCache(str(tmp_path))
    data = b"payload" * 100
    digest = sha256_hex(data)
    path = cache.put_artifact(digest, data)
    with open(path, "r+b") as f:
        f.seek(10)
        f.write(b"X")
    assert cache.get_artifact_path(digest) is None
    assert not os.path.exists(path)
    cache.put_artifact(digest, data)  # a refetch repairs it
    assert cache.get_artifact_path(digest) == path


def test_corrupt_manifest_is_deleted_and_reported_missing(tmp_path):
    cache = LocalCache(str(tmp_path))
    cache.put_manifest("abc", pb.Manifest(key="k"))
    path = os.path.join(str(tmp_path), "manifests", "abc")
    with open(path, "ab") as f:
        f.write(b"trailing garbage")
    assert cache.get_manifest("abc") is None
    assert not os.path.exists(path)


def test_artifact_digest_must_be_hex(tmp_path):
    with pytest.raises(ValueError):
        LocalCache(str(tmp_path)).artifact_path("../../etc/passwd")
