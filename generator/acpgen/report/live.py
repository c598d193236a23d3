"""``acpgen report --live``: the page of a transcript that is still being
written (``acpgen tap`` records as it forwards), served on the loopback
interface and drawn again as the transcript grows.

``GET /`` is the page of the transcript as it is at that moment (folded and
checked again only when the file changed since the page last asked);
``GET /version`` is the file's size and modification time. The page asks
for ``/version`` every ``interval`` seconds and, when it changed, loads
itself again, keeping its view, session filter, search and place (or, when
it was at the end, the end: it follows the transcript as ``tail -f``
does). Only requests for this server's own host and port are answered (a
web page elsewhere cannot read the transcript through a name that points
at 127.0.0.1); nothing is written to disk.
"""

from __future__ import annotations

import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

from ..validate.checker import MAX_LINE_BYTES

DEFAULT_INTERVAL = 1.0
"""Seconds between the page's questions whether the transcript grew."""


class LiveReport:
    """The page of ``transcript``, made again when the file changed."""

    def __init__(
        self,
        transcript: str | Path,
        package: ModuleType | None,
        *,
        strict: bool = False,
        max_line_bytes: int = MAX_LINE_BYTES,
        title: str | None = None,
        interval: float = DEFAULT_INTERVAL,
    ) -> None:
        self.transcript = Path(transcript)
        self.package = package
        self.strict = strict
        self.max_line_bytes = max_line_bytes
        self.title = title
        self.interval = interval
        self.lock = threading.Lock()
        self.made: tuple[str, bytes] | None = None
        """(the version the page was made of, the page)"""

    def version(self) -> str:
        """The transcript's size and modification time (nanoseconds)."""
        status = os.stat(self.transcript)
        return f"{status.st_size}-{status.st_mtime_ns}"

    def page(self) -> bytes:
        """The page of the transcript as it is now (the version read before
        the file is, so that a line written meanwhile makes the next
        question see a new version)."""
        from . import render_report, report_data

        with self.lock:
            version = self.version()
            if self.made is None or self.made[0] != version:
                data = report_data(
                    self.transcript,
                    self.package,
                    strict=self.strict,
                    max_line_bytes=self.max_line_bytes,
                    title=self.title,
                )
                data["live"] = {"version": version, "interval": round(self.interval * 1000)}
                self.made = (version, render_report(data, live=True).encode("utf-8"))
            return self.made[1]


def serve(report: LiveReport, host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """A server of ``report`` bound to ``host`` and ``port`` (0: a free
    one), not yet serving (call ``serve_forever``)."""

    class Handler(BaseHTTPRequestHandler):
        server_version = "acpgen-report"
        sys_version = ""

        def do_GET(self) -> None:
            bound = f"{host}:{server.server_port}"
            allowed = {bound, f"localhost:{server.server_port}"}
            if self.headers.get("Host", "") not in allowed:
                self._send(403, "text/plain", b"this server answers for " + bound.encode("ascii") + b" only\n")
                return
            path = self.path.split("?", 1)[0]
            try:
                if path == "/":
                    self._send(200, "text/html; charset=utf-8", report.page())
                elif path == "/version":
                    self._send(200, "text/plain", report.version().encode("ascii"))
                else:
                    self._send(404, "text/plain", b"not found\n")
            except OSError as exc:  # the transcript went away or cannot be read
                self._send(503, "text/plain", f"cannot read {report.transcript}: {exc.strerror or exc}\n".encode())

        def _send(self, status: int, kind: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # no line a request on stderr

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server


__all__ = ["DEFAULT_INTERVAL", "LiveReport", "serve"]
