"""The HTML report: every figure (with its caption), table and metric, offline."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from pipeline.claims.judge import judge_claims
from pipeline.claims.outputs import StageOutputs
from pipeline.claims.registry import versions
from pipeline.claims.rules import VERDICTS
from pipeline.core.io import save_figure, write_json, write_table, write_text
from pipeline.dag.declarations import STAGES
from pipeline.report.html import SECTIONS, embedded_image, render_report, stage_order
from pipeline.report.verdicts import headline, verdict_chart, verdict_counts
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS
from tests.support.claims_outputs import SEED, TASKS, build_outputs
from tests.support.numbering import EMBEDDED


def test_report_embeds_figures_tables_and_metrics_offline(tmp_path):
    figure, axis = plt.subplots()
    axis.plot([0, 1], [1, 0])
    save_figure(
        tmp_path / "figures/ablate/mrpc/fig8.png", figure, "Fig. 8 caption", {"mode": "zero"}
    )
    write_table(tmp_path / "plots/ablate/mrpc/heads.csv", pd.DataFrame({"head": range(30)}))
    write_json(tmp_path / "metrics/ablate/mrpc.json", {"baseline": 0.625, "best_head": "L5-H3"})
    write_json(tmp_path / "metrics/prepare.json", {"mrpc.train.rows": 600})
    page = render_report(tmp_path, "Title <&>", "seed: 42\n")

    png = tmp_path / "figures/ablate/mrpc/fig8.png"
    assert f'<img src="{embedded_image(png)}"' in page  # embedded, not linked
    assert "Fig. 8 caption" in page and "mode=zero" in page
    assert "first 25 of 30 rows" in page and "baseline=0.625" in page
    assert "mrpc.train.rows=600" in page and "seed: 42" in page
    assert "Title &lt;&amp;&gt;" in page
    assert "<script" not in page and "http" not in page.replace("data:image", "")
    assert page.index("Disabling heads") < page.index("<h2>Prepared data")  # unlisted: last
    assert json.loads((tmp_path / "figures/ablate/mrpc/fig8.json").read_text())["config"]


def test_stage_order_follows_the_pipeline_then_names():
    assert stage_order(["zeta", "ablate", "finetune", "alpha"]) == [
        "finetune",
        "ablate",
        "alpha",
        "zeta",
    ]


def test_report_shows_each_tasks_loss_curve_from_its_folder(tmp_path):
    for task in ("mrpc", "rte"):
        figure, axis = plt.subplots()
        axis.plot([1, 2], [0.7, 0.5])
        save_figure(tmp_path / f"figures/finetune/{task}/loss.png", figure, f"{task} loss caption")
        curve = pd.DataFrame({"variant": ["finetuned"], "step": [10], "loss": [0.5]})
        write_table(tmp_path / f"plots/finetune/{task}/loss.csv", curve)
    page = render_report(tmp_path, "Title", "seed: 42\n")
    section = page[page.index("<h2>Fine-tuning") :]
    for task in ("mrpc", "rte"):
        assert embedded_image(tmp_path / f"figures/finetune/{task}/loss.png") in section
        assert f"{task} loss caption" in section
        assert f'alt="figures/finetune/{task}/loss.png"' in section
        assert f"plots/finetune/{task}/loss.csv" in section
    assert section.index("mrpc loss caption") < section.index("rte loss caption")


def test_a_stage_summary_opens_its_section_escaped(tmp_path):
    plots = tmp_path / "plots" / "patterns_train"
    plots.mkdir(parents=True)
    (plots / "summary.txt").write_text("468 maps labelled by eye <b>")
    page = render_report(tmp_path, "Title", "seed: 42\n")
    heading = page.index("Attention-pattern classifier")
    summary = page.index('<p class="summary">468 maps labelled by eye &lt;b&gt;</p>')
    assert heading < summary


def _claims_report(root) -> str:
    """A report of hand-built outputs whose claims stage has run (forest plot, table, metrics)."""
    build_outputs(root)
    files = judge_claims(StageOutputs(root), TASKS, [SEED], "minilm_l6")
    for name, frame in files.tables.items():
        write_table(root / f"plots/claims/{name}.csv", frame)
    for name, text in files.texts.items():
        write_text(root / f"plots/claims/{name}", text)
    for name, drawn in files.figures.items():
        save_figure(root / f"figures/claims/{name}.png", drawn.figure, drawn.caption, drawn.config)
    write_json(root / "metrics/claims.json", files.metrics)
    return render_report(root, "run", "seed: 42")


def test_the_claims_section_opens_with_its_summary_and_names_its_registry(tmp_path):
    page = _claims_report(tmp_path)
    section = page.split("<h2>")[1]
    assert section.startswith("Claims: the papers")
    first = section.index("<figure>")
    assert section.index('class="summary"') < first < section.index('<table class="claims">')
    assert 'alt="figures/claims/forest.png"' in section[first : section.index("</figure>")]
    digest = json.loads((tmp_path / "metrics/claims.json").read_text())["registry.digest"]
    assert f"<code>{digest}</code>" in section and "every verdict is <b>fitted</b>" in section
    markdown = (tmp_path / "plots/claims/results.md").read_text()
    # the hand-built outputs score fewer relations than the committed run: the same registry
    last = versions()[-1]
    assert digest == last.digest
    assert markdown.startswith(
        f"Judged by claims registry version {last.version} ({last.status}), digest `{digest}`"
    )
    assert section.count('<span class="meta">fitted</span>') == len(
        pd.read_csv(tmp_path / "plots/claims/claims.csv")
    )


@pytest.mark.browser
def test_the_first_screen_and_the_claims_section_in_headless_chromium(tmp_path):
    """The page as a reader sees it: on the first screen (1280 x 800) the headline counts,
    the verdict chart with its legend and axis, and the contents, whose links reach every
    section; no literal Markdown anywhere; in the claims section the forest plot decodes, the
    registry line and the coloured verdict cells show."""
    if not CHROMIUM.exists():
        pytest.skip(f"Debian chromium not found at {CHROMIUM}; install it with .ci/browser.sh")
    sync_api = pytest.importorskip("playwright.sync_api", reason="python package playwright")
    report = tmp_path / "report.html"
    report.write_text(_claims_report(tmp_path / "outputs"))
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(report.as_uri())

        def on_first_screen(selector: str) -> bool:
            box = page.locator(selector).first.bounding_box()
            return box is not None and box["height"] > 0 and box["y"] + box["height"] <= 800

        sync_api.expect(page.locator("p.headline")).to_contain_text("findings of the papers")
        for part in ("p.headline", "svg.verdicts rect", "svg.verdicts line", "nav.contents"):
            assert on_first_screen(part), part
        legend = page.locator("svg.verdicts > text").all_text_contents()
        assert "supported" in legend and "claims" in legend  # a legend entry, the axis title
        links = page.locator("nav.contents a")
        assert links.count() == page.locator("section > h2").count() >= 2
        for link in links.all():
            target = link.get_attribute("href")
            assert page.locator(f"section{target} > h2").count() == 1, target
        assert "`" not in page.locator("body").inner_text()
        heading = page.locator("section#claims > h2")
        sync_api.expect(heading).to_contain_text("Claims: the papers")
        image = page.locator("img[alt='figures/claims/forest.png']")
        assert image.evaluate("i => i.complete && i.naturalWidth > 100 && i.naturalHeight > 100")
        assert image.bounding_box()["width"] > 300  # drawn on the page, not collapsed
        sync_api.expect(page.locator("p.registry")).to_contain_text("Claims registry version")
        colour = page.locator("td.not-testable").first.evaluate(
            "td => getComputedStyle(td).backgroundColor"
        )
        assert colour == "rgb(227, 227, 242)"
        browser.close()


RENDER = """
import hashlib, sys
from pathlib import Path
from pipeline.report.html import render_report
page = render_report(Path(sys.argv[1]), "Title", "seed: 42\\n")
print(hashlib.sha256(page.encode()).hexdigest())
"""


def test_two_renders_of_the_same_outputs_are_byte_identical(tmp_path):
    """In two processes with different hash seeds (set and dict orders), as two runs are."""
    for stage in ("zeta", "alpha", "ablate", "prepare", "claims_x"):
        figure, axis = plt.subplots()
        axis.plot([0, 1], [1, 0])
        save_figure(tmp_path / f"figures/{stage}/a/fig.png", figure, f"{stage} caption")
        write_table(tmp_path / f"plots/{stage}/a/t.csv", pd.DataFrame({"x": [0.5, 1.25]}))
        write_json(tmp_path / f"metrics/{stage}/a.json", {"b": 1.5, "a": "L1-H2"})
    pages = {
        subprocess.run(
            [sys.executable, "-c", RENDER, str(tmp_path)],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(pages) == 1


def test_every_stage_that_writes_results_has_a_section_title():
    writers = {stage.name for stage in STAGES if stage.results} | {"across_models"}
    assert writers <= SECTIONS.keys(), sorted(writers - SECTIONS.keys())
    assert all(title and title != name for name, title in SECTIONS.items())


def test_the_page_opens_with_the_headline_chart_and_contents_then_titled_sections(tmp_path):
    page = _claims_report(tmp_path)
    claims = pd.read_csv(tmp_path / "plots/claims/claims.csv")
    papers = claims[claims["kind"] == "paper"]["verdict"].value_counts()
    opening = page[: page.index("<section")]
    counts = ", ".join(f"{papers.get(v, 0)} {v}" for v in VERDICTS)
    assert f"findings of the papers tested on this run: {counts}." in opening
    assert opening.index('class="headline"') < opening.index("<svg") < opening.index("<nav")
    sections = re.findall(r'<section id="([^"]+)"><h2>([^<]+)</h2>', page)
    contents = re.findall(r'<li><a href="#([^"]+)">([^<]+)</a></li>', opening)
    assert contents == sections and len(sections) >= 5
    assert all(title != stage for stage, title in sections)  # no bare stage name
    shown = re.sub(r"<details>.*?</details>", "", EMBEDDED.sub("", page), flags=re.S)
    text = re.sub(r"<[^>]+>", "", shown)  # the prose; the raw tables, folded, hold data
    assert "`" not in text  # Markdown's code spans are set as <code>
    assert "<code>" in page[page.index('<p class="summary">') :]


def test_the_verdict_chart_counts_each_paper_and_the_extensions_apart():
    claims = pd.DataFrame(
        {
            "claim": ["kovaleva.a.sst2", "kovaleva.a.rte", "clark.b", "extension.c", "clark.d"],
            "kind": ["paper", "paper", "paper", "extension", "paper"],
            "verdict": ["supported", "not testable", "supported", "contradicted", "supported"],
        }
    )
    counts = verdict_counts(claims)
    assert list(counts.index) == ["Kovaleva et al. 2019", "Clark et al. 2019",
                                  "Extensions (this project's)"]  # fmt: skip
    assert list(counts.columns) == list(VERDICTS)
    assert counts.loc["Clark et al. 2019", "supported"] == 2
    assert counts.loc["Kovaleva et al. 2019"].sum() == 2
    assert headline(claims) == (
        "4 findings of the papers tested on this run: 3 supported, 0 contradicted, "
        "0 inconclusive, 0 underpowered, 1 not testable, 0 seed-dependent, "
        "0 reading-dependent. "
        "1 further claims test this project's extensions."
    )
    chart = verdict_chart(claims)
    assert chart.count("<rect") == 3 + 4  # a legend swatch per verdict shown, 4 bar segments
    assert ">claims</text>" in chart and "http" not in chart
