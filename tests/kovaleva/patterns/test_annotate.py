"""The annotation session and its page, in a headless browser."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipeline.kovaleva.patterns import DEFINITIONS
from pipeline.kovaleva.patterns.annotate import AnnotationSession
from pipeline.kovaleva.patterns.labels import read_label_file
from pipeline.kovaleva.patterns.mapsets import LabelledMap
from pipeline.kovaleva.patterns.server import make_server
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS
from tests.support.pattern_maps import page_maps

# --- the annotation session and page ------------------------------------------------------------


def test_session_resumes_per_annotator_and_shows_the_guide(tmp_path):
    maps = page_maps(np.random.default_rng(3))
    labels = tmp_path / "human.csv"
    session = AnnotationSession(maps, labels, "ann")
    state = session.state()
    assert state["current"]["id"] == "v1" and state["definitions"] == DEFINITIONS
    session.label("v1", "vertical")
    assert AnnotationSession(maps, labels, "ann").current() == "v2"
    other = AnnotationSession(maps, labels, "someone-else")  # labels of its own
    assert other.current() == "v1"
    other.undo()  # cannot undo another annotator's label
    assert read_label_file(labels, maps)["annotator"].tolist() == ["ann"]


# --- the annotation page in a real browser ----------------------------------------------------


def serve(maps: dict[str, LabelledMap], labels: Path):
    """Start an annotation server on a free port in a thread; returns (server, url)."""
    server = make_server(AnnotationSession(maps, labels, "ann"), "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host, port = server.server_address[:2]
    return server, f"http://{host}:{port}/"


@pytest.mark.browser
def test_annotation_page_in_headless_chromium(tmp_path):
    if not CHROMIUM.exists():
        pytest.skip(f"Debian chromium not found at {CHROMIUM}; install it with .ci/browser.sh")
    sync_api = pytest.importorskip("playwright.sync_api", reason="python package playwright")
    maps = page_maps(np.random.default_rng(3))
    labels = tmp_path / "annotations" / "human.csv"
    expect = sync_api.expect

    def saved() -> list[tuple]:
        frame = pd.read_csv(labels)
        return list(zip(frame["map_id"], frame["label"], frame["source"], strict=True))

    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page()
        server, url = serve(maps, labels)
        page.goto(url)
        page.wait_for_selector("body[data-ready='1']")
        progress, meta = page.locator("#progress"), page.locator("#meta")
        expect(progress).to_have_text("0 / 3 labelled")
        expect(meta).to_have_text("v1 (9 word pieces), annotator ann")
        expect(page.locator("#definitions")).to_contain_text(DEFINITIONS["block"])
        # the vertical map's [CLS] column is drawn dark blue, a plain key's cell white
        pixel = "([x, y]) => Array.from(document.getElementById('map')"
        pixel += ".getContext('2d').getImageData(x, y, 1, 1).data)"
        assert page.evaluate(pixel, [112, 112])[:3] == [0, 0, 255]
        cell = (760 - 110) // 9  # the page's canvas width, margin and cell size
        assert page.evaluate(pixel, [112 + cell, 112])[:3] == [255, 255, 255]

        page.keyboard.press("2")  # diagonal, written at once
        expect(progress).to_have_text("1 / 3 labelled")
        assert saved() == [("v1", "diagonal", "human")]
        page.keyboard.press("s")  # skip v2 ...
        expect(meta).to_have_text("v3 (9 word pieces), annotator ann")
        page.click("button[data-label='block']")
        expect(progress).to_have_text("2 / 3 labelled")
        assert saved() == [("v1", "diagonal", "human"), ("v3", "block", "human")]
        page.keyboard.press("u")  # undo the block label: v3 is shown again
        expect(progress).to_have_text("1 / 3 labelled")
        expect(meta).to_have_text("v3 (9 word pieces), annotator ann")
        assert saved() == [("v1", "diagonal", "human")]
        server.shutdown()
        server.server_close()

        # a new server resumes at the first map this annotator has not labelled
        server, url = serve(maps, labels)
        page.goto(url)
        expect(progress).to_have_text("1 / 3 labelled")
        expect(meta).to_have_text("v2 (9 word pieces), annotator ann")
        page.keyboard.press("1")
        expect(progress).to_have_text("2 / 3 labelled")
        page.keyboard.press("4")
        expect(progress).to_have_text("3 / 3 labelled")
        expect(meta).to_have_text("All sampled maps are labelled. Thank you!")
        assert saved() == [
            ("v1", "diagonal", "human"), ("v2", "vertical", "human"), ("v3", "block", "human")
        ]  # fmt: skip
        browser.close()
        server.shutdown()
        server.server_close()
