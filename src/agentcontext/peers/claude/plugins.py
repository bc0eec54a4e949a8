"""Claude Code plugin skills: ``<cache>/<marketplace>/<plugin>/<version>/skills/<skill>``.

Only the highest installed version of each plugin is read: versions are compared by
their dotted numeric parts, a prerelease or build suffix ranks below the plain version
(``1.2.0-rc1`` < ``1.2.0``), and names that are not versions at all (commit hashes of
git marketplaces) rank below every numbered version, ordered by name. Skills are named
``<plugin>:<skill>``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from agentcontext.fs.files import Reader

_LEADING_NUMBERS = re.compile(r"^v?(\d+(?:\.\d+)*)(.*)$")
_COMMIT = re.compile(r"^[0-9a-f]{7,40}$")  # a git SHA such as "4b825dc6", even when it starts with digits


def version_key(version: str) -> tuple[int, tuple[int, ...], int, str]:
    """Sort key: numbered versions above names, then numerically, plain above suffixed."""
    match = _LEADING_NUMBERS.match(version)
    if match is None or (_COMMIT.match(version) and not version.isdigit()):
        return (0, (), 0, version)
    numbers = tuple(int(part) for part in match.group(1).split("."))
    while len(numbers) > 1 and numbers[-1] == 0:  # 1.2 == 1.2.0
        numbers = numbers[:-1]
    suffix = match.group(2)
    return (1, numbers, 0 if suffix else 1, suffix)


@dataclass(frozen=True, slots=True)
class PluginSkills:
    """The skills folder of one plugin's chosen version."""

    plugin: str
    version: str
    skills_dir: str
    other_versions: tuple[str, ...]


def installed(cache: str, reader: Reader) -> list[PluginSkills]:
    """Every plugin in the cache with the skills folder of its highest version, sorted."""
    found: list[PluginSkills] = []
    for marketplace in reader.list_dir(cache):
        if not marketplace.is_dir or marketplace.name.startswith("."):
            continue
        market_dir = os.path.join(cache, marketplace.name)
        for plugin in reader.list_dir(market_dir, boundary=cache):
            if not plugin.is_dir or plugin.name.startswith("."):
                continue
            plugin_dir = os.path.join(market_dir, plugin.name)
            versions = [
                v.name for v in reader.list_dir(plugin_dir, boundary=cache) if v.is_dir and not v.name.startswith(".")
            ]
            if not versions:
                continue
            versions.sort(key=version_key)
            best = versions[-1]
            found.append(
                PluginSkills(plugin.name, best, os.path.join(plugin_dir, best, "skills"), tuple(versions[:-1]))
            )
    return found
