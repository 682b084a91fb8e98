"""The annotation page: a local web server that shows one attention map at a time.

`AnnotationSession` holds the queue (the sampled maps, in file order) and the human label
file; every label is appended to that file at once (and fsync'ed), so killing the server loses
nothing, and a new session starts at the first map without a human label. Skipping moves a
map to the end of this session's queue; undo removes the last human label from the file and
shows its map again. The page (`annotate.html`, no external scripts) talks to it through a
small JSON API:

    GET  /            the page
    GET  /api/state   {"progress": {"done", "total"}, "classes": [...], "current": map or null}
    POST /api/label   {"id": [...], "label": "diagonal"} -> state
    POST /api/skip    {"id": [...]} -> state
    POST /api/undo    {} -> state
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import files
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.kovaleva.patterns import CLASSES
from pipeline.kovaleva.patterns.labels import MapId, append_label, drop_last_label, map_ids

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class MapView:
    """What the page draws: the tokens and the map float [n, n] (rows: queries)."""

    tokens: list[str]
    weights: np.ndarray


class AnnotationSession:
    def __init__(
        self, queue: list[MapId], labels_path: Path, load: Callable[[MapId], MapView]
    ) -> None:
        self.order = list(dict.fromkeys(queue))
        self.labels_path = labels_path
        self.load = load
        self.lock = threading.Lock()
        self.done: set[MapId] = set()
        if labels_path.exists() and labels_path.stat().st_size:
            self.done = set(map_ids(pd.read_csv(labels_path))) & set(self.order)

    def current(self) -> MapId | None:
        return next((m for m in self.order if m not in self.done), None)

    def state(self) -> dict:
        current = self.current()
        view = None
        if current is not None:
            shown = self.load(current)
            view = {
                "id": list(current),
                "tokens": shown.tokens,
                "weights": np.round(shown.weights.astype(float), 4).tolist(),
            }
        return {
            "progress": {"done": len(self.done), "total": len(self.order)},
            "classes": list(CLASSES),
            "current": view,
        }

    def label(self, map_id: MapId, label: str) -> None:
        append_label(
            self.labels_path, map_id, label, datetime.now(UTC).isoformat(timespec="seconds")
        )
        self.done.add(map_id)

    def skip(self, map_id: MapId) -> None:
        self.order.remove(map_id)
        self.order.append(map_id)

    def undo(self) -> None:
        undone = drop_last_label(self.labels_path)
        if undone is None:
            return
        remaining = set(map_ids(pd.read_csv(self.labels_path)))
        if undone not in remaining:
            self.done.discard(undone)
        if undone in self.order:
            self.order.remove(undone)
            self.order.insert(0, undone)


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
            try:
                map_id = MapId(*body["id"]) if "id" in body else None
            except TypeError:
                self._json(
                    {"error": "id: [variant, task, example, layer, head]"}, HTTPStatus.BAD_REQUEST
                )
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
