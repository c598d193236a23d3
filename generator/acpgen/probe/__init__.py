"""``acpgen probe``: a conformance run against any ACP agent binary.

The probe starts the agent, speaks raw JSON-RPC to it as a client that
advertises no file system and no terminal (unless asked to: ``sandbox.py``
serves them in a temporary directory), and runs the checks of
:mod:`.checks` for the version the agent negotiates, each reported pass,
fail or skip with its tier (MUST, SHOULD, advisory, informational) and
the sentence of the schema or docs it checks; every message the agent
sends is checked against the generated package of that version (strict
decoding: the JSON Schema).

Library use::

    report = asyncio.run(probe(["python", "agent.py"], {1: acp_v1, 2: acp_v2}))
    report.must_failed

``peer.py`` is the connection to one agent process, ``context.py`` the moves
the checks share, ``checks.py`` the checks (add one there), ``runner.py``
runs them and writes the report, ``sandbox.py`` the file system and terminal
of --client-capabilities.

The other direction (``probe --client``, ``probe-agent``): the probe plays
the agent, with the generated packages' own agent connection, against a
client; ``client_context.py`` is that agent and what its checks are given,
``client_checks.py`` the client checks (same :class:`Check`, tiers and
runner), ``client_runner.py`` runs them against a client command or as the
agent a client started, ``samples.py`` makes an update of every kind from a
package's schema. ``expected.py`` reads ``--expected-failures``, for both.
"""

from .checks import CHECKS, NAMES, TIERS, Check
from .runner import DEFAULT_STARTUP_TIMEOUT, DEFAULT_TIMEOUT, EXIT_STATUSES, Report, Result, probe, select

__all__ = [
    "CHECKS",
    "DEFAULT_STARTUP_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "EXIT_STATUSES",
    "NAMES",
    "TIERS",
    "Check",
    "Report",
    "Result",
    "probe",
    "select",
]
