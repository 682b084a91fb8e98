"""The annotation page: a local web server that shows one attention map at a time.

The page (`annotate.html`, no external scripts) talks to an `AnnotationSession` through a
small JSON API:

    GET  /            the page
    GET  /api/state   {"progress": {"done", "total"}, "classes": [...], "current": map or null}
                      (a map: {"id", "title", "tokens", "weights"}), "annotator",
                      "definitions" and "hard_cases" (the guide the page shows)
    POST /api/label   {"id": "v0001", "label": "diagonal"} -> state
    POST /api/skip    {"id": "v0001"} -> state
    POST /api/undo    {} -> state
"""

from __future__ import annotations

import json
import logging
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import files

from pipeline.kovaleva.patterns import CLASSES
from pipeline.kovaleva.patterns.annotate import AnnotationSession

log = logging.getLogger(__name__)


def page_html() -> bytes:
    return files("pipeline.kovaleva.patterns").joinpath("annotate.html").read_bytes()


def make_server(session: AnnotationSession, host: str, port: int) -> ThreadingHTTPServer:
    """An HTTP server for `session` (port 0: any free port; see `server.server_address`)."""

    class Handler(BaseHTTPRequestHandler):
        def _send(self, status: HTTPStatus, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def _json(self, data: dict, status: HTTPStatus = HTTPStatus.OK) -> None:
            self._send(status, json.dumps(data).encode(), "application/json")

        def do_GET(self) -> None:
            if self.path == "/":
                self._send(HTTPStatus.OK, page_html(), "text/html; charset=utf-8")
            elif self.path == "/api/state":
                with session.lock:
                    self._json(session.state())
            else:
                self._json({"error": "not found"}, HTTPStatus.NOT_FOUND)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError:
                self._json({"error": "body is not JSON"}, HTTPStatus.BAD_REQUEST)
                return
            map_id = body.get("id")
            if map_id is not None and not isinstance(map_id, str):
                self._json({"error": "id: a map id such as 'v0001'"}, HTTPStatus.BAD_REQUEST)
                return
            with session.lock:
                if self.path in ("/api/label", "/api/skip") and map_id != session.current():
                    self._json({"error": "stale map; reload"}, HTTPStatus.CONFLICT)
                    return
                if self.path == "/api/label" and body.get("label") in CLASSES:
                    session.label(map_id, body["label"])
                elif self.path == "/api/skip":
                    session.skip(map_id)
                elif self.path == "/api/undo":
                    session.undo()
                else:
                    self._json({"error": "unknown action or class"}, HTTPStatus.BAD_REQUEST)
                    return
                self._json(session.state())

        def log_message(self, format: str, *args) -> None:
            log.debug(format, *args)

    return ThreadingHTTPServer((host, port), Handler)
