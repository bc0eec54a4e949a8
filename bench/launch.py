"""What binding approvals to what runs costs the agent: resolving a workspace's MCP servers, cold and each second.

The agent resolves every server of the work dir again each second (``follow_trust`` ->
``UpstreamManager.recheck_launches``): the command on the server's ``PATH``, its cwd, and the
sha256 of each repository file it runs (cached by inode, size and change times). This
times that, side by side with its floor (an ``os.stat`` of each path it must look at), on
a workspace of ``--servers`` stdio servers: half run the repository's own script through the
venv's python (one bound file each), half a program found on a 12-folder ``PATH``; plus the
first, cold resolution of a repository program of ``--binary-mb`` MiB (hashed once).

    .venv/bin/python bench/launch.py --servers 50 --repeat 21
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from agentcontext.workspace_mcp.config import ServerSpec, parse
from agentcontext.workspace_mcp.launch import FileHashes, resolve


def workspace(root: Path, servers: int, binary_mb: int) -> tuple[list[ServerSpec], dict[str, str], list[str]]:
    (root / ".git").mkdir(parents=True)
    folders = [root / f"path{i}" for i in range(12)]
    for folder in folders:
        folder.mkdir()
    program = folders[-1] / "tool"
    program.write_text("#!/bin/sh\nexec true\n")
    program.chmod(0o755)
    big = root / "bin" / "big"
    big.parent.mkdir()
    big.write_bytes(os.urandom(binary_mb * 1024 * 1024))
    big.chmod(0o755)
    entries: dict[str, dict[str, object]] = {}
    for i in range(servers):
        if i % 2:
            script = root / "servers" / f"s{i}.py"
            script.parent.mkdir(exist_ok=True)
            script.write_text(f"print({i})\n" * 200)
            entries[f"s{i}"] = {"command": sys.executable, "args": [str(script), "--stdio"]}
        else:
            entries[f"s{i}"] = {"command": "tool", "args": ["--stdio"], "env": {"MODE": "x"}}
    entries["big"] = {"command": "./bin/big"}
    parsed = parse(json.dumps({"mcpServers": entries}).encode(), str(root / ".mcp.json"), {})
    specs = [replace(spec, repository=str(root)) for spec in parsed.servers]
    environ = {"HOME": str(root), "PATH": os.pathsep.join(map(str, folders))}
    looked = [str(f / "tool") for f in folders] + [str(root / "servers" / f"s{i}.py") for i in range(1, servers, 2)]
    return specs, environ, looked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--servers", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("--binary-mb", type=int, default=50)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp) / "repo"
        specs, environ, looked = workspace(root, options.servers, options.binary_mb)
        hashes = FileHashes()
        started = time.perf_counter()
        for spec in specs:
            resolve(spec, work_dir=str(root), environ=environ, hashes=hashes)
        cold = time.perf_counter() - started
        ours, floor = [], []
        for _ in range(options.repeat):
            started = time.perf_counter()
            for spec in specs:
                resolve(spec, work_dir=str(root), environ=environ, hashes=hashes)
            ours.append(time.perf_counter() - started)
            started = time.perf_counter()
            for _spec in specs:
                for path in looked[:12]:
                    os.path.exists(path)
            for path in looked[12:]:
                os.stat(path)
            floor.append(time.perf_counter() - started)
    recheck, stat_floor = statistics.median(ours), statistics.median(floor)
    print(f"servers: {len(specs)} (one a {options.binary_mb} MiB repository program)")
    print(f"cold resolution, hashing every bound file: {cold * 1000:.1f} ms")
    print(f"recheck (each second): {recheck * 1000:.2f} ms, {recheck / len(specs) * 1e6:.0f} us a server")
    print(f"floor (os.stat of every path looked at): {stat_floor * 1000:.2f} ms; ratio {recheck / stat_floor:.1f}x")
    print(f"share of one CPU at one recheck a second: {recheck * 100:.2f}%")


if __name__ == "__main__":
    main()
