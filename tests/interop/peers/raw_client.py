"""A client that sends JSON-RPC lines as they are: for what an agent does
with messages no SDK client sends (a string ``protocolVersion``, a request
before ``initialize``).

Sends each message of MESSAGES (a JSON array) in turn, waiting for the
answer of each one that has an ``id``, closes the agent's stdin and prints
the answers as one JSON array.

    python raw_client.py MESSAGES -- AGENT_PROGRAM [ARGS...]
"""

from __future__ import annotations

import json
import subprocess
import sys


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        print(__doc__.split("\n\n")[-1], file=sys.stderr)
        return 2
    messages = json.loads(argv[1])
    agent = subprocess.Popen(argv[3:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert agent.stdin is not None and agent.stdout is not None
    answers = []
    for message in messages:
        agent.stdin.write(json.dumps(message) + "\n")
        agent.stdin.flush()
        while "id" in message:  # skip notifications until the answer
            line = json.loads(agent.stdout.readline())
            if "method" not in line and line.get("id") == message["id"]:
                answers.append(line)
                break
    agent.stdin.close()
    try:
        agent.wait(10)
    except subprocess.TimeoutExpired:
        agent.kill()
    print(json.dumps(answers))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
