"""`python -m tools.plots_page`: DVC's plots page with Vega inlined loads nothing from the
network and draws a table plot offline, in headless chromium with every request outside
the page refused."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.support.browser import CHROMIUM, CHROMIUM_ARGS
from tests.support.paths import REPO
from tools import plots_page

REMOTE = re.compile(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", re.I)


def test_the_template_has_vega_inlined_and_no_remote_url() -> None:
    page = plots_page.template(plots_page.vega_bundle())
    markup = re.sub(r"<script>.*?</script>", "<script></script>", page, flags=re.S)
    assert not REMOTE.search(markup)  # no tag loads anything from elsewhere
    assert "<script src" not in page and "{scripts}" not in page  # DVC's CDN tags: out
    assert markup.count("{plot_divs}") == 1
    assert "vegaEmbed" in page and "University of Washington" in page


def test_a_bundle_that_would_end_the_script_early_is_refused() -> None:
    with pytest.raises(plots_page.PipelineError, match="cannot be inlined"):
        plots_page.template("var a = '</script>';")


@pytest.mark.browser
def test_dvc_plots_show_draws_a_table_offline(tmp_path) -> None:
    if not CHROMIUM.exists():
        pytest.skip(f"Debian chromium not found at {CHROMIUM}; install it with .ci/browser.sh")
    sync_api = pytest.importorskip("playwright.sync_api", reason="python package playwright")

    def run(*args: str) -> str:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), *sys.path])}
        done = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr
        return done.stdout

    run("git", "init", "-q")
    run(sys.executable, "-m", "dvc", "init", "-q")
    (tmp_path / "table.csv").write_text("x,y\n1,2\n2,3\n3,1\n")
    (tmp_path / "dvc.yaml").write_text("plots:\n  - table.csv:\n      x: x\n      y: y\n")
    run(sys.executable, "-m", "tools.plots_page")
    run(sys.executable, "-m", "dvc", "plots", "show")
    page_file = tmp_path / "dvc_plots" / "index.html"
    assert "cdn." not in page_file.read_text()
    refused = []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.route(
            re.compile(r"^(?!file:|data:)"),
            lambda route: (refused.append(route.request.url), route.abort()),
        )
        page.goto(page_file.as_uri())
        drawn = page.locator("div[id] canvas, div[id] svg.marks")
        sync_api.expect(drawn.first).to_be_visible(timeout=10_000)
        assert drawn.first.bounding_box()["width"] > 100
        browser.close()
    assert refused == []


def test_the_readme_install_commands_write_the_offline_plots_page() -> None:
    readme = (REPO / "README.md").read_text()
    commands = [line for line in readme.splitlines() if line.startswith("python -m venv")]
    assert len(commands) == 2
    for command in commands:
        steps = [step.strip() for step in command.split("&&")]
        assert steps.index("python -m tools.plots_page") > steps.index("python -m tools.bytecode")
