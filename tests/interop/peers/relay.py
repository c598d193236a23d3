"""A transparent stdio relay that records an ACP session.

Put it in front of an agent command: it starts the agent, passes every line
between its own stdin/stdout and the agent's unchanged, and appends each line
to a JSON Lines transcript as ``{"direction": "client_to_agent" |
"agent_to_client", "message": <the JSON-RPC message>}``, in the order the
relay saw them (a line is recorded before it is passed on, so a request is
always recorded before its answer).

    python relay.py --log TRANSCRIPT.jsonl -- AGENT_PROGRAM [ARGS...]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log", required=True, help="transcript to write (JSON Lines)")
    parser.add_argument("agent", nargs="+", help="the agent command")
    args = parser.parse_args()

    agent = subprocess.Popen(args.agent, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    lock = threading.Lock()
    with open(args.log, "w", encoding="utf-8") as log:

        def pump(source, sink, direction: str) -> None:
            for line in iter(source.readline, b""):
                record = {"direction": direction, "message": json.loads(line)}
                with lock:
                    log.write(json.dumps(record, ensure_ascii=False) + "\n")
                    log.flush()
                sink.write(line)
                sink.flush()
            sink.close()

        to_agent = threading.Thread(target=pump, args=(sys.stdin.buffer, agent.stdin, "client_to_agent"), daemon=True)
        to_agent.start()
        pump(agent.stdout, sys.stdout.buffer, "agent_to_client")
        return agent.wait()


if __name__ == "__main__":
    sys.exit(main())
