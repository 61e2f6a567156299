"""A small threaded HTTP server for the map page: static files, JSON documents and one
Server-Sent Events stream of the latest state.

Latest state wins: ``publish`` replaces the state and wakes the stream handlers; a slow
browser skips the states it had no time for, it never queues them, so the engine is
never held up by a client.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from urllib.parse import parse_qs, urlsplit

from taxi_rsp.errors import UserError

STATIC = {"/": ("index.html", "text/html; charset=utf-8"), "/app.js": ("app.js", "text/javascript; charset=utf-8"),
          "/style.css": ("style.css", "text/css; charset=utf-8")}
KEEPALIVE_SECONDS = 15.0

# A JSON route: query parameters -> document (None: 404).
Route = Callable[[dict[str, list[str]]], object]


class MapServer:
    """Serves the page on 127.0.0.1:``port`` (0: any free port) in daemon threads."""

    def __init__(self, port: int, routes: dict[str, Route]) -> None:
        self.routes = routes
        self._state = b"{}"
        self._version = 0
        self._closed = False
        self._changed = threading.Condition()
        self.connected = threading.Event()  # set when a page first opens the event stream
        handler = _handler(self)
        try:
            self.httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
        except OSError as exc:
            raise UserError(f"cannot serve the map page on 127.0.0.1:{port}: {exc.strerror or exc}") from None
        self.httpd.daemon_threads = True
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="map-server", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/"

    def start(self) -> MapServer:
        self._thread.start()
        return self

    def publish(self, state: dict) -> None:
        """Make ``state`` the current one (encoded once here, sent to every page)."""
        data = json.dumps(state, separators=(",", ":")).encode("utf-8")
        with self._changed:
            self._state = data
            self._version += 1
            self._changed.notify_all()

    def latest(self, seen: int, timeout: float) -> tuple[int, bytes] | None:
        """The state newer than version ``seen``, waiting up to ``timeout`` s (None: none yet)."""
        with self._changed:
            self._changed.wait_for(lambda: self._version != seen or self._closed, timeout)
            if self._version == seen:
                return None
            return self._version, self._state

    @property
    def state(self) -> bytes:
        with self._changed:
            return self._state

    def serve_until_interrupted(self) -> None:
        """Keep serving (the server runs in its own thread) until Ctrl-C, then close."""
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
        finally:
            self.close()

    def close(self) -> None:
        with self._changed:
            self._closed = True
            self._changed.notify_all()
        self.httpd.shutdown()
        self.httpd.server_close()


def _handler(server: MapServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:  # quiet: the run prints its own lines
            pass

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            url = urlsplit(self.path)
            if url.path in STATIC:
                name, kind = STATIC[url.path]
                self._send(resources.files("taxi_rsp.live").joinpath("static", name).read_bytes(), kind)
            elif url.path == "/events":
                self._events()
            elif url.path == "/state":
                self._send(server.state, "application/json")
            elif url.path.lstrip("/") in server.routes:
                doc = server.routes[url.path.lstrip("/")](parse_qs(url.query))
                if doc is None:
                    self.send_error(404)
                else:
                    self._send(json.dumps(doc, separators=(",", ":")).encode("utf-8"), "application/json")
            else:
                self.send_error(404)

        def _send(self, body: bytes, kind: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def _events(self) -> None:
            server.connected.set()  # before the headers: a client that has them may rely on it
            self.close_connection = True  # the stream ends only when the page or the server goes
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            seen = -1
            try:
                while not server._closed:
                    news = server.latest(seen, KEEPALIVE_SECONDS)
                    if news is None:
                        self.wfile.write(b": keep-alive\n\n")
                    else:
                        seen, data = news
                        self.wfile.write(b"data: " + data + b"\n\n")
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass  # the page was closed

    return Handler
