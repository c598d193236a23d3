"""A byte relay that keeps what passes: starts COMMAND, copies our stdin to
its stdin and its stdout to our stdout as read, and appends every byte of
each direction to LOG.client_to_agent / LOG.agent_to_client. Put on both
sides of acpgen tap, it shows what each end wrote and read.

    python tee_relay.py LOG -- COMMAND...
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading


def pump(source: int, sink: int, path: str) -> None:
    with open(path, "wb", buffering=0) as log:
        while data := os.read(source, 1 << 16):
            log.write(data)
            view = memoryview(data)
            while view:
                view = view[os.write(sink, view) :]
    os.close(sink)


def main() -> int:
    log, command = sys.argv[1], sys.argv[sys.argv.index("--") + 1 :]
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    inbound = threading.Thread(target=pump, args=(0, child.stdin.fileno(), log + ".client_to_agent"), daemon=True)
    inbound.start()
    pump(child.stdout.fileno(), 1, log + ".agent_to_client")
    return child.wait()


if __name__ == "__main__":
    sys.exit(main())
