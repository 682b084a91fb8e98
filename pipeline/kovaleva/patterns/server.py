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

Only the page itself may write. The server binds a loopback address only; every request must
name it in `Host` (another name is what a rebinding web site sends); a write must come from
the page's own `Origin`, carry the session's random token (embedded in the served page, sent
as `X-Annotation-Token`) and a JSON object of exactly the action's keys with a known map id
and class. Anything else is answered with a 4xx and a one-line `{"error": ...}` before
anything is written.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import re
import secrets
import socket
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import files

from pipeline.core.errors import PipelineError
from pipeline.kovaleva.patterns import CLASSES
from pipeline.kovaleva.patterns.annotate import AnnotationSession

log = logging.getLogger(__name__)

TOKEN_HEADER = "X-Annotation-Token"
TOKEN_SLOT = b"__ANNOTATION_TOKEN__"  # where annotate.html takes the session's token
MAX_BODY = 1024  # bytes; the page's requests are under 100
ACTIONS = {"/api/label": ("id", "label"), "/api/skip": ("id",), "/api/undo": ()}
JSON_KINDS = {list: "list", str: "string", type(None): "null", bool: "boolean"}


class Refused(Exception):
    """A request answered with `status` and one line, before anything is written."""

    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status


def loopback(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """`host` as a loopback address; anything else is refused (the labels are this machine's)."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    if address is None or not address.is_loopback:
        raise PipelineError(
            f"--host {host}: the annotation page serves only a loopback address such as "
            "127.0.0.1 (nothing from the network may write the label file)"
        )
    return address


class AnnotationServer(ThreadingHTTPServer):
    """An HTTP server for one `AnnotationSession` on a loopback address (port 0: any free
    port); `url` is the page's address and `token` the session's write token."""

    daemon_threads = True

    def __init__(self, session: AnnotationSession, host: str, port: int) -> None:
        address = loopback(host)
        self.address_family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
        super().__init__((str(address), port), Handler)
        self.session = session
        self.token = secrets.token_urlsafe(32)
        name = f"[{address}]" if address.version == 6 else str(address)
        port = self.server_address[1]
        self.hosts = {f"{name}:{port}", f"localhost:{port}"}
        self.origins = {f"http://{host}" for host in self.hosts}
        self.url = f"http://{name}:{port}/"

    def page(self) -> bytes:
        html = files("pipeline.kovaleva.patterns").joinpath("annotate.html").read_bytes()
        return html.replace(TOKEN_SLOT, self.token.encode())


def make_server(session: AnnotationSession, host: str, port: int) -> AnnotationServer:
    """An annotation server for `session` on the loopback address `host`."""
    return AnnotationServer(session, host, port)


class Handler(BaseHTTPRequestHandler):
    server: AnnotationServer
    timeout = 30  # seconds a client may take to send its request

    def _send(self, status: HTTPStatus, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, data: dict, status: HTTPStatus = HTTPStatus.OK) -> None:
        self._send(status, json.dumps(data).encode(), "application/json")

    def _refuse(self, refused: Refused) -> None:
        log.warning("refused %s %s: %s", self.command, getattr(self, "path", ""), refused)
        self.close_connection = True  # an unread body must not be taken for a request
        self._json({"error": str(refused)}, refused.status)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The standard library's own refusals (a malformed request line or header, too long
        a header): one line of JSON as well."""
        status = HTTPStatus(code)
        self._refuse(Refused(status, message or status.phrase))

    def _check_host(self) -> None:
        host = self.headers.get("Host")
        if host not in self.server.hosts:
            raise Refused(
                HTTPStatus.FORBIDDEN,
                f"Host {host!r} is not this page's; open {self.server.url}",
            )

    def _check_writer(self) -> None:
        origin = self.headers.get("Origin")
        if origin not in self.server.origins:
            raise Refused(
                HTTPStatus.FORBIDDEN,
                f"Origin {origin!r} is not this page's; label on {self.server.url}",
            )
        token = self.headers.get(TOKEN_HEADER, "").encode()
        if not hmac.compare_digest(token, self.server.token.encode()):
            raise Refused(
                HTTPStatus.FORBIDDEN,
                f"missing or wrong {TOKEN_HEADER}; reload the page at {self.server.url}",
            )
        if self.headers.get_content_type() != "application/json":
            raise Refused(
                HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
                f"Content-Type {self.headers.get('Content-Type')!r}; send application/json",
            )

    def _read_object(self) -> dict:
        length = self.headers.get("Content-Length")
        if length is None:
            raise Refused(HTTPStatus.LENGTH_REQUIRED, "no Content-Length; send the body's size")
        if not re.fullmatch(r"[0-9]+", length.strip()):
            raise Refused(HTTPStatus.BAD_REQUEST, f"Content-Length {length!r}: not a byte count")
        if int(length) > MAX_BODY:
            raise Refused(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                f"body of {int(length)} bytes; an action's body is at most {MAX_BODY}",
            )
        try:
            raw = self.rfile.read(int(length))
        except TimeoutError:
            raise Refused(HTTPStatus.REQUEST_TIMEOUT, "body not sent in time") from None
        if len(raw) < int(length):
            raise Refused(HTTPStatus.BAD_REQUEST, "body shorter than its Content-Length")
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError):
            raise Refused(HTTPStatus.BAD_REQUEST, "body is not JSON; send a JSON object") from None
        if not isinstance(body, dict):
            kind = JSON_KINDS.get(type(body), "number")
            raise Refused(HTTPStatus.BAD_REQUEST, f"body is a JSON {kind}; send a JSON object")
        return body

    def _act(self, body: dict, keys: tuple[str, ...]) -> None:
        """Do the action at self.path (under the session's lock) once its body is checked."""
        session = self.server.session
        if sorted(body) != sorted(keys):
            raise Refused(
                HTTPStatus.BAD_REQUEST,
                f"body keys {sorted(body)}; {self.path} takes exactly {list(keys)}",
            )
        map_id = body.get("id")
        if "id" in keys:
            if not isinstance(map_id, str) or map_id not in session.maps:
                raise Refused(
                    HTTPStatus.BAD_REQUEST,
                    f"id {map_id!r} is not a map of this folder; reload the page",
                )
            if map_id != session.current():
                raise Refused(HTTPStatus.CONFLICT, f"map {map_id} is not the one shown; reload")
        if "label" in keys and (not isinstance(body["label"], str) or body["label"] not in CLASSES):
            raise Refused(
                HTTPStatus.BAD_REQUEST,
                f"label {body['label']!r} is not a class; valid classes: {', '.join(CLASSES)}",
            )
        try:
            if self.path == "/api/label":
                session.label(map_id, body["label"])
            elif self.path == "/api/skip":
                session.skip(map_id)
            else:
                session.undo()
        except (PipelineError, OSError) as error:
            raise Refused(HTTPStatus.INTERNAL_SERVER_ERROR, f"not saved: {error}") from None

    def do_GET(self) -> None:
        try:
            self._check_host()
            if self.path == "/":
                self._send(HTTPStatus.OK, self.server.page(), "text/html; charset=utf-8")
            elif self.path == "/api/state":
                with self.server.session.lock:
                    self._json(self.server.session.state())
            else:
                raise Refused(HTTPStatus.NOT_FOUND, f"no page {self.path}; open /")
        except Refused as refused:
            self._refuse(refused)

    def do_POST(self) -> None:
        session = self.server.session
        try:
            self._check_host()
            keys = ACTIONS.get(self.path)
            if keys is None:
                raise Refused(
                    HTTPStatus.NOT_FOUND, f"no action {self.path}; actions: {', '.join(ACTIONS)}"
                )
            self._check_writer()
            body = self._read_object()
            with session.lock:
                self._act(body, keys)
                state = session.state()
        except Refused as refused:
            self._refuse(refused)
            return
        self._json(state)

    def do_other(self) -> None:
        self._refuse(Refused(HTTPStatus.METHOD_NOT_ALLOWED, f"{self.command}: use GET or POST"))

    do_HEAD = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_other

    def log_message(self, format: str, *args) -> None:
        log.debug(format, *args)
