"""A stdio "server" that crashes at every start, at once: it adds the time it started to the file its first
argument names, says why on stderr and exits 3, before any MCP (so a restart loop costs a Python start a turn).

Run as ``python crashloop.py STARTS_FILE``; a test counts the lines to count the starts.
"""

from __future__ import annotations

import sys
import time

CRASH_MESSAGE = "crashloop: cannot start: the database is gone"

if __name__ == "__main__":
    with open(sys.argv[1], "a", encoding="utf-8") as starts:
        starts.write(f"{time.monotonic()}\n")
    print(CRASH_MESSAGE, file=sys.stderr, flush=True)
    sys.exit(3)
