"""Command line: python -m tccd {stats,job,explain,ping,start} [--address A].

    stats [--json]   the daemon's counters (GetStats). --json prints one JSON object with the
                     counters at top level (compiles, cache_hits, cache_misses, ...) plus
                     tccd_version, uptime_ms and cache_dir.
    job ID [--json]  what the job index knows about job ID (GetJob), and its automatic-dynamic
                     profile (GetDynamicProfile): per frame and input, the sizes Dynamo saw,
                     `?` for a dim it made dynamic.
    explain KEY_OR_GRAPH [--job ID] [--json]
                     for a miss: which part of the compile key (graph, inputs, target,
                     options, compiler) differs from the nearest entry the job had
                     (explain.py). The job is --job, else $TCCD_JOB_ID.
    ping             exit 0 if a daemon answers, else 1.
    start            start a daemon at the address unless one answers (unix sockets only).

Errors go to stderr with exit status 1. None of these commands imports torch.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from typing import Dict, List, Optional


def _config(address: Optional[str]):
    from . import config as config_mod

    cfg = config_mod.get()
    if address:
        cfg = dataclasses.replace(cfg, address=address)
    return cfg


def _rpc(cfg, method: str, request):
    import grpc

    from . import channel

    stub = channel.stub_for(cfg.address)
    try:
        return getattr(stub, method)(request, timeout=10)
    except grpc.RpcError as e:
        raise SystemExit(
            f"tccd: {method} at {cfg.address} failed ({e.code().name}): {e.details()}"
        ) from None


def stats_dict(response) -> Dict[str, object]:
    out: Dict[str, object] = dict(sorted(response.counters.items()))
    for name in ("compiles", "cache_hits", "cache_misses"):
        out.setdefault(name, 0)
    out["tccd_version"] = response.tccd_version
    out["uptime_ms"] = response.uptime_ms
    out["cache_dir"] = response.cache_dir
    return out


def _table(rows: List[List[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)


def cmd_stats(args) -> int:
    from .v1 import tccd_pb2 as pb

    cfg = _config(args.address)
    stats = stats_dict(_rpc(cfg, "GetStats", pb.StatsRequest()))
    if args.json:
        print(json.dumps(stats, sort_keys=True))
    else:
        print(f"tccd {stats['tccd_version']} at {cfg.address}, up {stats['uptime_ms'] / 1000:.1f} s")
        print(f"cache: {stats['cache_dir']}")
        counters = [[k, str(v)] for k, v in stats.items()
                    if k not in ("tccd_version", "uptime_ms", "cache_dir")]
        print(_table([["counter", "value"]] + counters))
    return 0


def cmd_job(args) -> int:
    from .v1 import tccd_pb2 as pb

    cfg = _config(args.address)
    response = _rpc(cfg, "GetJob", pb.JobRequest(job_id=args.job_id))
    entries = [
        {
            "key": e.key,
            "first_used_unix_ms": e.first_used_unix_ms,
            "last_used_unix_ms": e.last_used_unix_ms,
            "uses": e.uses,
            "compiled_here": e.compiled_here,
        }
        for e in response.entries
    ]
    profile = _dynamic_profile(cfg, args.job_id)
    if args.json:
        from google.protobuf import json_format

        out = {"job_id": args.job_id, "entries": entries, "dynamic_profile": None}
        if profile is not None:
            out["dynamic_profile"] = json_format.MessageToDict(
                profile, preserving_proto_field_name=True)
        print(json.dumps(out, sort_keys=True))
        return 0
    if not entries:
        print(f"job {args.job_id!r}: no entries")
    else:
        rows = [["key", "uses", "compiled_here"]]
        rows += [[e["key"], str(e["uses"]), "yes" if e["compiled_here"] else "no"] for e in entries]
        print(_table(rows))
    if profile is None:
        print(f"job {args.job_id!r}: no dynamic profile")
    else:
        from .dynamic_profiles import describe

        print(f"dynamic profile ({profile.puts} puts; ? = dynamic):")
        for line in describe(profile):
            print(f"  {line}")
    return 0


def _dynamic_profile(cfg, job_id: str):
    """The job's automatic-dynamic profile, or None when the daemon has none (or keeps none)."""
    import grpc

    from . import channel
    from .v1 import tccd_pb2 as pb

    try:
        return channel.stub_for(cfg.address).GetDynamicProfile(
            pb.DynamicProfileRequest(job_id=job_id), timeout=10)
    except grpc.RpcError as e:
        if e.code() in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.FAILED_PRECONDITION):
            return None
        raise SystemExit(
            f"tccd: GetDynamicProfile at {cfg.address} failed ({e.code().name}): {e.details()}"
        ) from None


def cmd_explain(args) -> int:
    import os

    import grpc

    from . import channel
    from . import explain as explain_mod
    from .v1 import tccd_pb2 as pb

    cfg = _config(args.address)
    job_id = args.job or os.environ.get("TCCD_JOB_ID", "")
    if not job_id:
        print("tccd: explain needs the job: --job ID or TCCD_JOB_ID", file=sys.stderr)
        return 1
    response = _rpc(cfg, "GetJob", pb.JobRequest(job_id=job_id, with_components=True))

    def get_manifest(key: str):
        try:
            return channel.stub_for(cfg.address).GetManifest(pb.ManifestRequest(key=key), timeout=10)
        except grpc.RpcError as e:
            if e.code() == grpc.StatusCode.NOT_FOUND:
                return None
            raise SystemExit(f"tccd: GetManifest at {cfg.address} failed ({e.code().name}): {e.details()}")

    try:
        report = explain_mod.explain(args.key_or_graph, job_id, response.entries, get_manifest)
    except LookupError as e:
        print(f"tccd: {e}", file=sys.stderr)
        return 1
    print(json.dumps(report, sort_keys=True) if args.json else explain_mod.format_report(report))
    return 0


def cmd_ping(args) -> int:
    from . import channel

    cfg = _config(args.address)
    why = channel.ping(cfg.address)
    if why is not None:
        print(f"tccd: no daemon answers at {cfg.address}: {why}", file=sys.stderr)
        return 1
    print(f"tccd answers at {cfg.address}")
    return 0


def cmd_start(args) -> int:
    from . import channel
    from .errors import TccdError

    cfg = _config(args.address)
    try:
        how = channel.start_daemon(cfg)
    except TccdError as e:
        print(f"tccd: {e}", file=sys.stderr)
        return 1
    print(f"tccd at {cfg.address}: {how}")
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    from . import config as config_mod  # torch-free

    parser = argparse.ArgumentParser(
        prog="python -m tccd",
        description="tccd client tools",
        # The client's environment knobs (TCCD_NATIVE_RUNTIME, ...), documented once in config.py.
        epilog=config_mod.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--address", help="daemon address (default: $TCCD_ADDRESS or the daemon default)")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("stats", help="print the daemon's counters")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_stats)
    p = sub.add_parser("job", help="print a job's cache entries and dynamic profile")
    p.add_argument("job_id")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_job)
    p = sub.add_parser("explain", help="say which part of the compile key made a graph miss")
    p.add_argument("key_or_graph", help="a compile key (64 hex) or a graph name of the job")
    p.add_argument("--job", help="job id (default: $TCCD_JOB_ID)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_explain)
    sub.add_parser("ping", help="check that a daemon answers").set_defaults(fn=cmd_ping)
    sub.add_parser("start", help="start a daemon unless one answers").set_defaults(fn=cmd_start)
    # --address is accepted after the subcommand too: `python -m tccd stats --address A`.
    for action in sub.choices.values():
        action.add_argument("--address", dest="address_sub", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if getattr(args, "address_sub", None):
        args.address = args.address_sub
    try:
        return args.fn(args)
    except SystemExit:
        raise
    except Exception as e:
        print(f"tccd: {type(e).__name__}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
