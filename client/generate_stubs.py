"""Generates the tccd.v1 Python stubs (tccd/v1/tccd_pb2.py, tccd_pb2_grpc.py) from the proto.

Generated code is never committed (see /.gitignore); the build/bootstrap script runs this after
`pip install -e client`. Idempotent: it rewrites the stubs only when the proto is newer than
them (or --force), and always ensures tccd/v1/__init__.py exists.

    python client/generate_stubs.py [--force]
"""

import argparse
import os
import pathlib
import sys

CLIENT_DIR = pathlib.Path(__file__).resolve().parent
REPO_DIR = CLIENT_DIR.parent
PROTO_ROOT = REPO_DIR / "proto"
PROTO_FILE = PROTO_ROOT / "tccd" / "v1" / "tccd.proto"
OUT_DIR = CLIENT_DIR / "tccd" / "v1"
OUTPUTS = (OUT_DIR / "tccd_pb2.py", OUT_DIR / "tccd_pb2_grpc.py")


def _up_to_date() -> bool:
    if not all(p.exists() for p in OUTPUTS):
        return False
    proto_mtime = PROTO_FILE.stat().st_mtime
    return all(p.stat().st_mtime >= proto_mtime for p in OUTPUTS)


def generate(force: bool = False) -> bool:
    """Returns True if the stubs were (re)generated."""
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    init = OUT_DIR / "__init__.py"
    if not init.exists():
        init.write_text('"""Generated tccd.v1 protocol stubs (see client/generate_stubs.py)."""\n')
    if not force and _up_to_date():
        return False
    from grpc_tools import protoc  # only needed here; not a runtime dependency

    # protoc's well-known types (none used today, but keep imports resolvable).
    import grpc_tools

    wkt = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    # Output paths mirror the proto path (tccd/v1/...) below CLIENT_DIR, so the stubs import
    # each other as `tccd.v1.tccd_pb2`, which is our package.
    rc = protoc.main(
        [
            "grpc_tools.protoc",
            f"-I{PROTO_ROOT}",
            f"-I{wkt}",
            f"--python_out={CLIENT_DIR}",
            f"--grpc_python_out={CLIENT_DIR}",
            str(PROTO_FILE),
        ]
    )
    if rc != 0:
        raise SystemExit(f"protoc failed with exit code {rc}")
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="regenerate even if up to date")
    args = parser.parse_args()
    changed = generate(force=args.force)
    print(f"tccd stubs {'generated' if changed else 'up to date'} in {OUT_DIR}", file=sys.stderr)


if __name__ == "__main__":
    main()
