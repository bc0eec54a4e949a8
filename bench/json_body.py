"""A push's body read FastAPI's way (``json.loads``, then validation) against one pass (``web.json_body``).

    .venv/bin/python bench/json_body.py [--repeat 21]

Two bodies: the load's 10-resource push (``bench/load.py``, 12 KB) and a push of 1,000 skills
(4 MiB). For each, the CPU of what FastAPI does with the body (``json.loads`` and then the
body field's ``validate_python``) against what an ``OnePassRoute`` does (``model_validate_json``,
and then the same field's pass over the instance): ``--repeat`` pairs timed in alternation (CPU
time), the best of each way and the median of the pairs' ratios; and the peak of Python memory
(tracemalloc) of one read each way.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from fastapi import params
from pydantic import TypeAdapter

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agentcontext.resource import Kind, Resource, Scope, Status
from agentcontext.snapshot import aggregate_hash
from agentcontext.wire.sync import PushRequest
from load import push_body, static_resources

FIELD = TypeAdapter(Annotated[PushRequest, params.Body()])  # the body field FastAPI validates with


def skills_push(count: int = 1000) -> bytes:
    """A push of ``count`` skills of about 4 KiB each."""
    resources = []
    for n in range(count):
        head = f"---\nname: skill-{n}\ndescription: Skill {n}: how to do task {n} here.\n---\n"
        text = head + "Step one. Then step two, carefully.\n" * 100
        path = f"/w/.agents/skills/skill-{n}/SKILL.md"
        resources.append(
            Resource(Kind.SKILL, path, Scope.REPO, Status.OK, len(text), "", text, None, (), name=f"skill-{n}")
        )
    body = {"version": 2, "aggregate_hash": aggregate_hash(resources), "resources": [r.to_dict() for r in resources]}
    return json.dumps(body).encode()


def two_passes(body: bytes) -> Any:
    return FIELD.validate_python(json.loads(body), from_attributes=True)


def one_pass(body: bytes) -> Any:
    return FIELD.validate_python(PushRequest.model_validate_json(body), from_attributes=True)


def paired(body: bytes, repeat: int) -> tuple[float, float, float]:
    """Best CPU of each way (us), and the median of their ratios, timed in alternation (this VM's speed moves)."""
    number = max(1, 1_000_000 // len(body))
    twos: list[float] = []
    ones: list[float] = []
    ratios: list[float] = []
    for n in range(repeat):
        order = [(two_passes, twos), (one_pass, ones)]
        for read, samples in order if n % 2 else reversed(order):  # each way first in half the pairs
            start = time.process_time()
            for _ in range(number):
                read(body)
            samples.append((time.process_time() - start) / number * 1e6)
        ratios.append(ones[-1] / twos[-1])
    return min(twos), min(ones), statistics.median(ratios)


def peak_kib(read: Callable[[bytes], Any], body: bytes) -> int:
    tracemalloc.start()
    read(body)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak // 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=21)
    args = parser.parse_args()
    bodies = {"load's push": push_body(0, static_resources(0), 2, "", initial=False)[0], "1,000 skills": skills_push()}
    print(f"{'body':14} {'bytes':>9} {'two passes':>12} {'one pass':>10} {'ratio':>6} {'peak KiB two/one':>18}")
    for name, body in bodies.items():
        assert one_pass(body) == two_passes(body)
        two, one, ratio = paired(body, args.repeat)
        peaks = f"{peak_kib(two_passes, body)}/{peak_kib(one_pass, body)}"
        print(f"{name:14} {len(body):>9} {two:>9.0f} us {one:>7.0f} us {ratio:>6.2f} {peaks:>18}")


if __name__ == "__main__":
    main()
