"""The point-and-click app: pick formations, set up a fight, a turn or a charge, run it and read the odds.

``wargame-odds app`` serves it on 127.0.0.1 (:func:`serve`); in a notebook :func:`app` shows the same page
inline.  Built on Panel (docs/app.md says why); it needs the ``[app]`` extra
(``pip install 'wargame-odds[app]'``).  Every script and style it uses is served by the app itself.
"""
from __future__ import annotations

import errno
import socket
import sys

from .location import DEFAULT_PORT, QUERY_KEYS, address_of

EXTRA_HINT = "pip install 'wargame-odds[app]'"
#: When the default port is taken (the app already running, another program): the next ports tried, in order.
FALLBACK_PORTS = 20


def missing_extra() -> str | None:
    """The module of the ``[app]`` extra that cannot be imported, or None when the app can run."""
    import importlib.util

    for module in ("panel", "tomli_w"):
        if importlib.util.find_spec(module) is None:
            return module
    return None


def app(query: dict | None = None):
    """The app as a Panel object for a notebook cell (its scripts inline: no network needed).  ``query``: what
    a page address would say, e.g. ``{"example": "epic/assault_marines_vs_warband", "trials": 2000}`` (numbers
    may be given as numbers; a bad value is one message on the page)."""
    import panel as pn

    from ..intake.errors import ArgumentError
    from .page import Page

    if query is not None and not isinstance(query, dict):
        raise ArgumentError("query", query, "a dict of the page address's keys, e.g. {'example': 'gdb/column_vs_line'}")
    shown = {}
    for key, value in (query or {}).items():
        if key in QUERY_KEYS:
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            shown[key] = str(value) if number else value
    pn.extension(inline=True)
    return Page(shown, in_notebook=True).layout


def free_port(host: str) -> int:
    """A port that is free on ``host`` now."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


#: Headers of every answer: no page of another site may show the app in a frame (and so make a player click in
#: it unawares).
FRAME_HEADERS = {"X-Frame-Options": "DENY", "Content-Security-Policy": "frame-ancestors 'none'"}
#: The kinds of request (``Sec-Fetch-Dest``) that would show the app inside another page.
FRAMED = ("iframe", "frame", "embed", "object", "fencedframe")
#: How often the server looks for pages that went away (ms), and how long a page may be away before its
#: session ends and its run is cancelled (a page that reconnects within that time keeps its session).
CHECK_UNUSED_MS = 500
UNUSED_LIFETIME_MS = 2000
REFUSED = ("wargame-odds refuses this request: {why}. Open the app's own address, which "
           "`wargame-odds app` prints, in a tab of its own.")


def allowed_hosts(host: str, port: int) -> list[str]:
    """The ``Host`` values (and websocket origins; Bokeh's list takes no IPv6 address) the server answers: its
    own address and port, and for the loopback address its other names.  Any other (a foreign name resolving to
    this machine: DNS rebinding) is refused."""
    shown = f"[{host}]" if ":" in host else host
    hosts = [f"{shown}:{port}"]
    if host in ("127.0.0.1", "::1", "localhost"):
        hosts = [f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"]
    return hosts


def _guard(hosts: list[str]):
    """A tornado output transform (tornado's ``transforms`` setting) that adds :data:`FRAME_HEADERS` to every
    answer and turns every answer to a request with a foreign ``Host`` into a 403 (the websocket's own origin
    check refuses those already)."""
    from tornado.web import OutputTransform

    allowed = frozenset(h.lower() for h in hosts)

    class Guard(OutputTransform):
        def __init__(self, request):
            super().__init__(request)
            self.refused = (request.host or "").lower() not in allowed

        def transform_first_chunk(self, status_code, headers, chunk, finishing):
            for name, value in FRAME_HEADERS.items():
                headers[name] = value
            if not self.refused or status_code == 101:
                return status_code, headers, chunk
            body = REFUSED.format(why="the address names a host other than the app's").encode("utf-8")
            headers["Content-Type"] = "text/plain; charset=utf-8"
            headers["Content-Length"] = str(len(body))
            headers.pop("Content-Encoding", None)
            headers.pop("Transfer-Encoding", None)
            return 403, headers, body

        def transform_chunk(self, chunk, finishing):
            return b"" if self.refused else chunk

    return Guard


def refusal(headers, hosts: list[str]) -> str | None:
    """Why the page is not built for a request with these headers (framed by another page, or a foreign
    ``Host``), or None."""
    def header(name: str) -> str:
        value = next((v for k, v in (headers or {}).items() if k.lower() == name), "")
        return str(value[0] if isinstance(value, list) and value else value).lower()

    if header("sec-fetch-dest") in FRAMED:
        return "it is shown inside another page (a frame)"
    if header("host") not in {h.lower() for h in hosts}:
        return "the address names a host other than the app's"
    return None


def serve_styles_locally(doc) -> None:
    """Make the components of session document ``doc`` take their stylesheets from the app's own ``/static``.

    Panel points a component's stylesheets at the document's ``dist_url`` template variable (a public Bokeh
    :attr:`~bokeh.document.Document.template_variables` entry, the one Panel's page templates use), or at
    cdn.holoviz.org when the document has none.  Panel sets it only while it writes the page's HTML, on the
    session that HTML was made for.  A page that takes longer than :data:`UNUSED_LIFETIME_MS` to connect (a
    busy machine) finds that session gone; Bokeh then builds a new session for its websocket, which never sees
    that step: without this its stylesheets would all come from the internet."""
    from panel.io.resources import LOCAL_DIST

    import panel as pn

    rel_path = pn.state.rel_path
    doc.template_variables.setdefault("dist_url", f"{rel_path}/{LOCAL_DIST}" if rel_path else LOCAL_DIST)


def make_server(host: str = "127.0.0.1", port: int = 0):
    """The app's server on ``host:port`` (0: a free port), not started: every session gets its own
    :class:`~.page.Page`, built from the query of its address.  It refuses to be framed and a foreign
    ``Host``; a page whose tab closed has its session end within seconds, which cancels its run."""
    import html

    import panel as pn

    from .page import Page

    port = port or free_port(host)
    hosts = allowed_hosts(host, port)

    def session():
        serve_styles_locally(pn.state.curdoc)
        why = refusal(pn.state.headers, hosts)
        if why is not None:
            return pn.pane.HTML(f"<p>{html.escape(REFUSED.format(why=why))}</p>", disable_math=True)
        args = {key: values[0].decode("utf-8", "replace") for key, values in (pn.state.session_args or {}).items()
                if values and key in QUERY_KEYS}
        return Page(args, base_url=address_of(host, port)).layout

    return pn.serve({"/": session}, address=host, port=port, show=False, start=False, title="wargame-odds",
                    websocket_origin=[h for h in hosts if not h.startswith("[")], verbose=False,
                    transforms=[_guard(hosts)],
                    location=False,  # the page writes its address itself (.address.Address)
                    check_unused_sessions_milliseconds=CHECK_UNUSED_MS,
                    unused_session_lifetime_milliseconds=UNUSED_LIFETIME_MS)


def make_default_server(host: str):
    """The server on :data:`DEFAULT_PORT`, or, when that is taken, on the next free one of the
    :data:`FALLBACK_PORTS` after it, saying so in one line on stderr; the last refusal when all are taken."""
    for port in range(DEFAULT_PORT, DEFAULT_PORT + FALLBACK_PORTS + 1):
        try:
            server = make_server(host, port)
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE or port == DEFAULT_PORT + FALLBACK_PORTS:
                raise
            continue
        if port != DEFAULT_PORT:
            print(f"note: port {DEFAULT_PORT} is in use (is the app open already?), so this app listens on {port}: "
                  f"its address is not the usual {address_of(host, DEFAULT_PORT)}", file=sys.stderr, flush=True)
        return server


def serve(host: str = "127.0.0.1", port: int | None = None, open_browser: bool = True) -> None:
    """Serve the app until interrupted, printing its address (and opening it in a browser).  ``port``: None for
    :data:`DEFAULT_PORT` (or the next free one, :func:`make_default_server`), 0 for any free port."""
    server = make_default_server(host) if port is None else make_server(host, port)
    url = address_of(host, server.port)
    print(f"wargame-odds app: {url}  (Ctrl+C stops it)", flush=True)
    server.start()
    if open_browser:
        import webbrowser

        server.io_loop.add_callback(webbrowser.open, url)
    try:
        server.io_loop.start()
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
    finally:
        server.stop()
