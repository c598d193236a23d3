"""How long a test waits for something that must happen (a process's exit, a
line on a pipe, a task's end) before it calls it a hang.

A test never races the clock: it waits on the event itself (an exit, a pipe,
an ``asyncio.Event``) and a bound exists only so that a hang fails instead of
stalling the run. The bounds are minutes, and ``ACPGEN_TEST_PATIENCE`` (a
factor, default 1) scales them all for a machine slower or busier than a
shared 2-core one.
"""

from __future__ import annotations

import os

FACTOR = float(os.environ.get("ACPGEN_TEST_PATIENCE") or 1)


def patience(seconds: float = 120.0) -> float:
    """``seconds`` scaled by ``ACPGEN_TEST_PATIENCE``: the bound on a wait
    that only a hang exceeds."""
    return seconds * FACTOR


HANG = patience(180.0)
"""The default bound on a wait: three minutes (scaled)."""
