"""The page: one HTML file holding its style, its script and the folded
transcript as JSON, written atomically.

Nothing in it loads anything: a Content-Security-Policy meta allows only
the page's own style and script (by their SHA-256), no connection, image,
font or frame. The data sits in two ``<script type="application/json">``,
which the browser never runs, with every ``<``, ``>`` and ``&`` written as a
JSON escape (so no ``</script>`` or ``<!--`` of a transcript can end it), and
U+2028, U+2029 and lone surrogates escaped too. The script reads it with
``JSON.parse`` and puts every transcript value into the page as text
(``textContent``), never as markup.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import html
import json
import os
import re
import tempfile
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import IO, Any

from ..errors import AcpgenError

_UNSAFE = re.compile("[<>&\u2028\u2029\ud800-\udfff]")


def script_json(value: Any) -> str:
    """``value`` as JSON that is safe inside ``<script type="application/json">``
    and valid UTF-8: the characters of :data:`_UNSAFE` (which JSON has only
    inside strings) as ``\\uXXXX`` escapes. A float that is not finite
    raises ValueError: the fold turns those into text."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return _UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def _digest(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def page_parts(title: str, data: Any, lines: Any, *, live: bool = False) -> Iterable[str]:
    """The page, in pieces: ``data`` (what the conversation needs) before
    the script, ``lines`` (the lines as recorded, the bulk) after it, so
    that the browser runs the script, which draws the first rows, before it
    reads them. ``live``: the page may connect to where it came from (the
    server of ``acpgen report --live``), and nowhere else."""
    style = asset("page.css")
    script = asset("page.js")
    connect = "'self'" if live else "'none'"
    policy = (
        f"default-src 'none'; script-src {_digest(script)}; style-src {_digest(style)}; "
        f"img-src 'none'; font-src 'none'; connect-src {connect}; media-src 'none'; object-src 'none'; "
        "frame-src 'none'; worker-src 'none'; base-uri 'none'; form-action 'none'"
    )
    yield '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
    yield f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
    yield '<meta name="referrer" content="no-referrer">\n'
    yield '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
    yield f"<title>{html.escape(title)}</title>\n<style>{style}</style>\n</head>\n<body>\n"
    yield BODY
    yield '<script type="application/json" id="acp-data">'
    yield script_json(data)
    yield "</script>\n"
    yield f"<script>{script}</script>\n"
    yield '<script type="application/json" id="acp-lines">'
    yield script_json(lines)
    yield "</script>\n</body>\n</html>\n"


BODY = """<header>
<h1 id="title"></h1>
<p id="summary"></p>
<nav>
<span role="tablist">
<button type="button" role="tab" id="tab-conversation" data-view="conversation" aria-selected="true">Conversation</button>
<button type="button" role="tab" id="tab-lines" data-view="lines">Lines</button>
<button type="button" role="tab" id="tab-sequence" data-view="sequence">Sequence</button>
<button type="button" role="tab" id="tab-findings" data-view="findings">Findings</button>
<button type="button" role="tab" id="tab-timings" data-view="timings">Timings</button>
<button type="button" role="tab" id="tab-traces" data-view="traces">Traces</button>
</span>
<label>Session <select id="session"></select></label>
<span class="search" role="search">
<input type="search" id="search" placeholder="Search every message (Ctrl+F)" aria-label="Search every message">
<button type="button" id="search-prev" title="previous match (Shift+Enter)">&uarr;</button>
<button type="button" id="search-next" title="next match (Enter)">&darr;</button>
<span id="search-count" aria-live="polite"></span>
</span>
</nav>
</header>
<div id="seq-head"><div class="lane-head"><span class="life">client</span><span class="life">agent</span></div>
<p id="seq-info" aria-live="polite">Choose an arrow (click, or Enter) to see its request and response and their round trip; the arrow keys go from message to message.</p></div>
<main id="view" tabindex="0"></main>
<noscript><p>This report draws the transcript with JavaScript, which is off.</p></noscript>
"""


def write_atomically(path: Path, parts: Iterable[str]) -> None:
    """Write ``parts`` to ``path`` through a temporary file in the same
    directory, renamed over ``path`` once complete: a failure (or Ctrl-C)
    leaves the old file, or none, never half a page."""
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        raise AcpgenError(f"the directory {directory} does not exist", file=str(path))
    if path.is_dir():
        raise AcpgenError("is a directory: give the HTML file to write", file=str(path))
    try:
        handle, temporary = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise AcpgenError(f"cannot write: {exc.strerror or exc}", file=str(path)) from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
            _write(out, parts)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(exc, OSError):
            raise AcpgenError(f"cannot write: {exc.strerror or exc}", file=str(path)) from None
        raise


def _write(out: IO[str], parts: Iterable[str]) -> None:
    for part in parts:
        out.write(part)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
