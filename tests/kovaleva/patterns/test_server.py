"""The annotation server writes only its own page's well-formed requests, and the label file
never holds a row that the next start refuses."""

from __future__ import annotations

import json
import re
import threading
from http.client import HTTPConnection

import numpy as np
import pytest

from pipeline.core.errors import PipelineError
from pipeline.kovaleva.patterns.annotate import AnnotationSession
from pipeline.kovaleva.patterns.labels import append_label, read_label_file
from pipeline.kovaleva.patterns.server import MAX_BODY, TOKEN_HEADER, make_server
from tests.support.pattern_maps import page_maps

MAPS = page_maps(np.random.default_rng(3))


@pytest.fixture
def served(tmp_path):
    """A server whose annotator has labelled v1 (v2 is shown); yields (server, labels)."""
    labels = tmp_path / "human.csv"
    append_label(labels, "v1", "vertical", "ann", "t0", MAPS)
    server = make_server(AnnotationSession(MAPS, labels, "ann"), "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield server, labels
    server.shutdown()
    server.server_close()


def request(server, method: str, path: str, headers: dict[str, str], body: bytes = b""):
    """Send exactly these headers and body; returns (status, the JSON or HTML answer)."""
    connection = HTTPConnection(*server.server_address[:2], timeout=10)
    connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    for name, value in headers.items():
        connection.putheader(name, value)
    connection.endheaders(body)
    response = connection.getresponse()
    status, data = response.status, response.read()
    connection.close()
    kind = response.getheader("Content-Type", "")
    return status, json.loads(data) if kind == "application/json" else data.decode()


def page_headers(server, body: bytes, token: str) -> dict[str, str]:
    """The headers the page's own fetch sends."""
    host = server.url.removeprefix("http://").rstrip("/")
    return {
        "Host": host,
        "Origin": f"http://{host}",
        "Content-Type": "application/json",
        "Content-Length": str(len(body)),
        TOKEN_HEADER: token,
    }


def embedded_token(server) -> str:
    host = server.url.removeprefix("http://").rstrip("/")
    status, html = request(server, "GET", "/", {"Host": host})
    assert status == 200
    return re.search(r'name="annotation-token" content="([^"]+)"', html).group(1)


def test_the_page_labels_with_the_token_it_embeds(served):
    server, labels = served
    token = embedded_token(server)
    assert len(token) >= 32
    body = json.dumps({"id": "v2", "label": "block"}).encode()
    status, state = request(server, "POST", "/api/label", page_headers(server, body, token), body)
    assert status == 200 and state["current"]["id"] == "v3"
    assert read_label_file(labels, MAPS)["map_id"].tolist() == ["v1", "v2"]
    # another server is another session, with another token
    other = make_server(AnnotationSession(MAPS, labels, "ann"), "127.0.0.1", 0)
    assert other.token != server.token
    other.server_close()


def label_body(**fields) -> bytes:
    return json.dumps(fields).encode()


# (what is wrong, the headers changed from the page's, the body, the status, what the one-line
# answer names): each refused before anything is written
BLOCK = label_body(id="v2", label="block")
REFUSED = [
    ("cross-origin text/plain", {"Origin": "http://evil.example", "Content-Type": "text/plain",
                                 TOKEN_HEADER: None}, BLOCK, 403, "Origin 'http://evil.example'"),
    ("foreign origin", {"Origin": "http://evil.example"}, BLOCK, 403, "Origin"),
    ("no origin", {"Origin": None}, BLOCK, 403, "Origin None"),
    ("foreign host", {"Host": "evil.example"}, BLOCK, 403, "Host 'evil.example'"),
    ("no token", {TOKEN_HEADER: None}, BLOCK, 403, TOKEN_HEADER),
    ("wrong token", {TOKEN_HEADER: "x" * 43}, BLOCK, 403, TOKEN_HEADER),
    ("text/plain", {"Content-Type": "text/plain"}, BLOCK, 415, "Content-Type 'text/plain'"),
    ("no id", {}, label_body(label="block"), 400, r"body keys \['label'\]"),
    ("null id", {}, label_body(id=None, label="block"), 400, "id None"),
    ("unknown id", {}, label_body(id="v9", label="block"), 400, "id 'v9'"),
    ("numeric id", {}, label_body(id=2, label="block"), 400, "id 2"),
    ("stale id", {}, label_body(id="v1", label="block"), 409, "map v1 is not the one shown"),
    ("unknown label", {}, label_body(id="v2", label="banana"), 400, "label 'banana'"),
    ("list label", {}, label_body(id="v2", label=["block"]), 400, r"label \['block'\]"),
    ("extra key", {}, label_body(id="v2", label="block", source="visual"), 400, "body keys"),
    ("JSON list", {}, b'["v2", "block"]', 400, "a JSON list"),
    ("JSON string", {}, b'"v2"', 400, "a JSON string"),
    ("JSON null", {}, b"null", 400, "a JSON null"),
    ("JSON number", {}, b"2", 400, "a JSON number"),
    ("not JSON", {}, b"id=v2&label=block", 400, "not JSON"),
    ("not UTF-8", {}, b'{"id": "v2", "label": "\xff"}', 400, "not JSON"),
    ("deep nesting", {}, b"[" * MAX_BODY, 400, "not JSON"),
    ("Content-Length abc", {"Content-Length": "abc"}, BLOCK, 400, "Content-Length 'abc'"),
    ("negative Content-Length", {"Content-Length": "-5"}, BLOCK, 400, "Content-Length '-5'"),
    ("no Content-Length", {"Content-Length": None}, BLOCK, 411, "no Content-Length"),
    ("oversize body", {}, b" " * (MAX_BODY + 1), 413, f"at most {MAX_BODY}"),
]  # fmt: skip


@pytest.mark.parametrize(
    "headers, body, status, names", [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED]
)
def test_a_bad_label_request_gets_a_4xx_line_and_writes_nothing(
    served, headers, body, status, names
):
    server, labels = served
    before = labels.read_bytes()
    sent = page_headers(server, body, embedded_token(server)) | headers
    answer = request(server, "POST", "/api/label", {k: v for k, v in sent.items() if v}, body)
    assert answer[0] == status
    message = answer[1]["error"]
    assert re.search(names, message) and "\n" not in message
    assert labels.read_bytes() == before
    assert AnnotationSession(MAPS, labels, "ann").current() == "v2"  # the next start


def test_other_refusals_answer_one_line(served):
    server, labels = served
    before = labels.read_bytes()
    token = embedded_token(server)
    host = server.url.removeprefix("http://").rstrip("/")
    for method, path, headers, status in [
        ("GET", "/", {"Host": "evil.example"}, 403),  # a rebinding site cannot read the token
        ("GET", "/api/state", {"Host": "evil.example"}, 403),
        ("GET", "/api/state", {}, 403),  # no Host at all
        ("GET", "/secret", {"Host": host}, 404),
        ("POST", "/api/nothing", page_headers(server, b"{}", token), 404),
        ("PUT", "/api/label", page_headers(server, b"{}", token), 405),
        ("OPTIONS", "/api/label", {"Host": host, "Origin": "http://evil.example"}, 405),
        ("POST", "/api/label", {f"X-{i}": "1" for i in range(101)}, 431),  # the stdlib's own
    ]:
        body = b"{}" if "Content-Length" in headers else b""
        answer, message = request(server, method, path, headers, body)
        assert answer == status, (method, path)
        assert message["error"] and "\n" not in message["error"]
    assert labels.read_bytes() == before


def test_an_id_less_body_after_the_last_map_writes_nothing(tmp_path):
    """With every map labelled (no map shown), an id-less label is refused as well."""
    labels = tmp_path / "human.csv"
    for map_id in MAPS:
        append_label(labels, map_id, "block", "ann", "t0", MAPS)
    server = make_server(AnnotationSession(MAPS, labels, "ann"), "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    before = labels.read_bytes()
    for body in (label_body(label="block"), label_body(id=None, label="block")):
        headers = page_headers(server, body, server.token)
        assert request(server, "POST", "/api/label", headers, body)[0] == 400
    assert labels.read_bytes() == before
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "localhost", "example.org"])
def test_the_server_binds_only_a_loopback_address(tmp_path, host):
    session = AnnotationSession(MAPS, tmp_path / "human.csv", "ann")
    with pytest.raises(PipelineError, match=f"--host {host}: .* loopback"):
        make_server(session, host, 0)


def test_a_written_row_always_reads_back(tmp_path):
    """Rows the next start would refuse are refused on writing; odd names and a hand-edited
    file without its last newline still read back."""
    labels = tmp_path / "human.csv"
    labels.write_text("map_id,label,source,annotator,labelled_on\nv1,block,human,ann,t0")
    for map_id, label, annotator, refusal in [
        ("", "block", "ann", "map '' is not in"),
        ("v9", "block", "ann", "map 'v9' is not in"),
        ("v2", "banana", "ann", "unknown class 'banana'"),
        ("v2", "block", " ", "no annotator"),
    ]:
        with pytest.raises(PipelineError, match=refusal):
            append_label(labels, map_id, label, annotator, "t1", MAPS)
    append_label(labels, "v2", "diagonal", 'Ann "A", B\nC', "t1", MAPS)
    frame = read_label_file(labels, MAPS)
    assert frame[["map_id", "annotator"]].values.tolist() == [
        ["v1", "ann"], ["v2", 'Ann "A", B\nC']
    ]  # fmt: skip
    with pytest.raises(PipelineError, match="annotator: empty name"):
        AnnotationSession(MAPS, labels, "")
