"""How close to the read floor a faster SKILL.md parser could bring a cold scan of real skills: a bound.

    .venv/bin/python bench/scan_bound.py --real DIR... [--profile default] [--repeat 15] [--rounds 3] [--json]

Issue 34's goal 2 asks for a cold scan of 1,000 real skills within 3x the floor of reading their
bytes. This measures what any parser, however fast (a compiled one included), could reach in
this design, by taking steps away rather than by guessing their cost. On ``bench/scan.py --real``'s
workspace, each of ``--rounds`` rounds times ``--repeat`` cold scans of every step below, each scan
beside one read of the floor (``scan.paired_ms``), the steps in turn:

* ``as built``: the cold scan as shipped;
* ``parse free``: each SKILL.md's frontmatter reading and validation, and its hidden-text look,
  replaced by a constant answer (its folder's name, a one-word description, nothing to warn
  about): a parser that costs nothing. The walk, each file's read, its sha256 and UTF-8 decoding,
  and the snapshot's caps and hash over the real texts stay as built;
* ``read only``: each SKILL.md's bytes read as built, then one constant resource made of them with
  no hash, no decoding and a one-character text: what walking and reading cost in this
  design, before anything is done with what was read.

Beside them, two costs any scan that keeps a file's text and content hash pays whatever its parser,
timed the same way (each beside one read of the floor) over the files' bytes already in memory:

* ``sha256 alone``: ``hashlib.sha256`` of each file's bytes;
* ``decode alone``: each file's bytes decoded as UTF-8.

The steps are replaced by patching the names ``skills/discovery.py`` looks up (``check``,
``hidden_text_warnings``, ``_builder``) for the scans of that step only; the scans of the two
replaced steps give wrong answers by design and are not checked. Nothing else is replaced.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import statistics
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import agentcontext.skills.discovery as discovery
from agentcontext.fs.files import Entry
from agentcontext.instructions.loading import OFFERED
from agentcontext.resource import Kind, Resource, Status, make
from agentcontext.settings.config import Config, Validation
from agentcontext.skills.validation import SkillCheck
from scan import built_for, files_of, paired_ms, read_all
from workspace import real_skills

STEPS = ("as built", "parse free", "read only")
ALONE = ("sha256 alone", "decode alone")


def _free_check(text: str, folder: str, mode: Validation, *, namespace: str | None = None) -> SkillCheck:
    return SkillCheck(folder, "free", (), (), "")


def _no_hidden_text(text: str, utf8: bytes | None = None) -> tuple[str, ...]:
    return ()


def _read_only_builder(container: discovery.Container, config: Config) -> discovery._Build:
    def build(meta: Entry, raw: bytes | OSError, folder: str) -> Resource:
        return make(
            Kind.SKILL, meta.path, container.scope, Status.OK, meta.size, "0" * 64, "x", None, (), folder, "free", None,
            container.source, load=OFFERED,
        )  # fmt: skip

    return build


@contextlib.contextmanager
def step(name: str) -> Iterator[None]:
    """The scan's names patched for ``name`` (see the module), put back after."""
    patches: dict[str, Any] = {}
    if name in ("parse free", "read only"):
        patches |= {"check": _free_check, "hidden_text_warnings": _no_hidden_text}
    if name == "read only":
        patches["_builder"] = _read_only_builder
    saved = {attr: getattr(discovery, attr) for attr in patches}
    for attr, value in patches.items():
        setattr(discovery, attr, value)
    try:
        yield
    finally:
        for attr, value in saved.items():
            setattr(discovery, attr, value)


def measure(profile: str, tmp: Path, real: list[tuple[str, str]], repeat: int, rounds: int) -> dict[str, Any]:
    cold = built_for(profile, tmp, real).cold
    paths = files_of(cold())
    floor: Callable[[], None] = lambda: read_all(paths)  # noqa: E731
    ratios: dict[str, list[float]] = {name: [] for name in STEPS}
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in STEPS}
    for _ in range(rounds):  # the steps alternate round by round, so a slow phase of the machine hits each
        for name in STEPS:
            with step(name):
                cold()  # one scan first: nothing of the step before is still warm in the reader's caches
                ours, base = paired_ms(cold, floor, repeat)
            ratios[name].append(ours / base)
            times[name].append((ours, base))
    contents = [Path(path).read_bytes() for path in paths]
    alone: dict[str, Callable[[], object]] = {
        "sha256 alone": lambda: [hashlib.sha256(data).digest() for data in contents],
        "decode alone": lambda: [data.decode("utf-8", "replace") for data in contents],
    }
    apart: dict[str, list[float]] = {name: [] for name in ALONE}
    for _ in range(rounds):
        for name in ALONE:
            ours, base = paired_ms(alone[name], floor, repeat)
            apart[name].append(ours / base)
    return {
        "profile": profile,
        "files_read": len(paths),
        "bytes_read": sum(map(len, contents)),
        "alone": {name: round(statistics.median(apart[name]), 2) for name in ALONE},
        "steps": {
            name: {
                "ratio_median": round(statistics.median(ratios[name]), 2),
                "ratios": [round(r, 2) for r in ratios[name]],
                "cold_ms": [round(t[0], 1) for t in times[name]],
                "read_floor_ms": [round(t[1], 1) for t in times[name]],
            }
            for name in STEPS
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--real", nargs="+", type=Path, metavar="DIR", required=True, help="the skills' folders")
    parser.add_argument("--profile", default="default", help="the profiles, comma-separated")
    parser.add_argument("--repeat", type=int, default=15, help="scans a step, each beside one read of the floor")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    real = real_skills(args.real)
    if not real:
        parser.error(f"no SKILL.md under {', '.join(map(str, args.real))}")
    out = []
    for profile in args.profile.split(","):
        with tempfile.TemporaryDirectory(prefix="agentcontext-bound-") as tmp:
            out.append(measure(profile, Path(tmp), real, args.repeat, args.rounds))
    if args.json:
        print(json.dumps(out, indent=2))
        return
    for figures in out:
        print(f"{figures['profile']}: {figures['files_read']} files read a scan; cold scan / read floor, per round")
        for name, said in figures["steps"].items():
            print(f"  {name:<11} {said['ratio_median']:5.2f}x  ({', '.join(f'{r:.2f}' for r in said['ratios'])})")
        print(f"  of the {figures['bytes_read']:,} bytes read, in memory, against the same floor:")
        for name, ratio in figures["alone"].items():
            print(f"  {name:<11} {ratio:5.2f}x")


if __name__ == "__main__":
    main()
