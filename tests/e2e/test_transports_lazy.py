"""The network transports cost nothing to a package used over stdio: importing
a generated package and its connection module loads neither the runtime's
``_asgi``/``_remote`` nor the libraries they use, and the network helpers are
there all the same."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

GENERATED = Path(__file__).resolve().parents[2] / "generated"


def test_importing_a_package_loads_no_network_module() -> None:
    code = (
        "import json, sys, acp_v1, acp_v1.connection as c\n"
        "helpers = [callable(getattr(acp_v1, n)) for n in "
        "('asgi_agent_app', 'serve_agent', 'bearer_token', 'connect_agent_ws', 'connect_agent_http')]\n"
        "names = ('acp_v1._asgi', 'acp_v1._remote', 'websockets', 'httpx', 'uvicorn', 'hmac', 'secrets')\n"
        "print(json.dumps({'helpers': helpers, 'loaded': [n for n in names if n in sys.modules]}))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=GENERATED, capture_output=True, text=True, check=True)
    report = json.loads(done.stdout)
    assert report == {"helpers": [True] * 5, "loaded": []}, report


def test_the_app_and_the_client_transports_load_only_when_called() -> None:
    code = (
        "import json, sys, acp_v1\n"
        "acp_v1.asgi_agent_app(lambda conn: None)\n"
        "loaded = [n for n in ('acp_v1._asgi', 'acp_v1._remote', 'websockets', 'httpx', 'uvicorn') if n in sys.modules]\n"
        "print(json.dumps(loaded))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=GENERATED, capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == ["acp_v1._asgi"], "the app needs no library: " + done.stdout
