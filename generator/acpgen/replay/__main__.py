"""``python -m acpgen.replay serve TRANSCRIPT [--timing T] [--log FILE]``:
the agent side of a recording on stdin/stdout, the command ``acpgen replay
--as agent`` gives the client under test to start (kept apart from the
``acpgen`` command so that it starts without loading click)."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys

from .agent import TIMINGS, serve_stdio
from .fold import package_for
from .transcript import load_transcript


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m acpgen.replay")
    commands = parser.add_subparsers(dest="command", required=True)
    serving = commands.add_parser("serve", help="serve the agent side of a transcript on stdio")
    serving.add_argument("transcript")
    serving.add_argument("--timing", choices=TIMINGS, default="compressed")
    serving.add_argument("--log", default=None, help="write the replayed run (and its findings) here")
    serving.add_argument("--package", default=None, help="the generated package that reads the messages")
    args = parser.parse_args(argv)
    transcript = load_transcript(args.transcript)
    # a client that ends its agent with SIGTERM still gets the run's end written
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    package = package_for(transcript.protocol_version, args.package)
    replayer = asyncio.run(serve_stdio(transcript, args.timing, args.log, package))
    return 1 if any(f.failure for f in replayer.findings) else 0


if __name__ == "__main__":
    sys.exit(main())
