"""The HTML report: every figure, table and metric of the pipeline in one offline page.

Figures are found under `<outputs>/figures/<stage>/` (each PNG has the caption sidecar that
`pipeline.core.io.save_figure` writes), tables under `<outputs>/plots/<stage>/` and metrics under
`<outputs>/metrics/`, at any depth (per-task folders such as `figures/finetune/<task>/`).
A stage's `<outputs>/plots/<stage>/summary.txt`, where it writes one, opens its section as
plain sentences (what the numbers rest on). The page opens with how this run's outputs
differ from the checked-out commit's, where they do (pipeline/report/committed.py), the
papers' findings counted by verdict (pipeline/report/verdicts.py) and the contents; every
section has a title. Images are embedded as base64 (lossless WebP) and the styles are
inline, so the page opens offline with no external scripts. Stages that did not run are
simply absent.
"""

from __future__ import annotations

import base64
import html
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from PIL import Image

from pipeline.analyses.catalog import sections
from pipeline.claims.readings import shown_with
from pipeline.claims.sensitivity import threshold_sensitivity
from pipeline.report.across import Column, columns, notice
from pipeline.report.verdicts import headline, verdict_chart

# Report order and headings: each analysis's section (pipeline/analyses/<name>/declaration.py),
# by its order; stage folders with no section follow, by name.
SECTIONS: dict[str, str] = sections()
MAX_TABLE_ROWS = 25
SUMMARY_FILE = "summary.txt"
CLAIMS_TABLE = Path("claims") / "claims.csv"  # shown in full, verdicts coloured
# claim x model, written by `python -m pipeline.claims.across_models`: in full, coloured
ACROSS_TABLE = Path("across_models") / "claims.csv"
ACROSS_RUNS = ACROSS_TABLE.with_name("runs.csv")  # each column's experiment and registry


@dataclass(frozen=True)
class Figure:
    path: Path
    caption: str
    config: dict


def stage_order(names: list[str]) -> list[str]:
    known = [name for name in SECTIONS if name in names]
    return known + sorted(set(names) - set(SECTIONS))


@dataclass(frozen=True)
class Run:
    """The tasks and fine-tuning seeds of the run a report shows: a result under another
    task's or seed's folder (a leftover of another run or profile) is left out."""

    tasks: frozenset[str]
    seeds: frozenset[int]
    all_tasks: frozenset[str]  # every task a folder may be named for (conf/task/)
    model: str = ""  # `model.name`: its column of the claims across models is this run's

    def holds(self, path: Path, stage_folder: Path) -> bool:
        """Whether the result `path`, under its stage's `stage_folder`, is this run's: no
        folder on the way names another task, no folder or file stem another seed."""
        relative = path.relative_to(stage_folder)
        folders, stem = relative.parts[:-1], relative.stem
        if any(part in self.all_tasks and part not in self.tasks for part in folders):
            return False
        mine = {f"seed{seed}" for seed in self.seeds}
        return all(part in mine for part in (*folders, stem) if SEED_NAME.fullmatch(part))


SEED_NAME = re.compile(r"seed\d+")  # a fine-tuning seed's folder (pipeline/core/layout.py)


def _kept(paths: list[Path], stage_folder: Path, run: Run | None) -> list[Path]:
    return [p for p in paths if run is None or run.holds(p, stage_folder)]


def collect_figures(folder: Path, run: Run | None = None) -> list[Figure]:
    """The PNGs under `folder` (recursively, sorted; only `run`'s) with their caption
    sidecars."""
    figures = []
    for png in _kept(sorted(folder.rglob("*.png")), folder, run):
        sidecar = png.with_suffix(".json")
        meta = json.loads(sidecar.read_text()) if sidecar.exists() else {}
        figures.append(Figure(png, meta.get("caption", ""), meta.get("config", {})))
    return figures


def embedded_image(png: Path) -> str:
    """The PNG at `png` as a data URL of a lossless WebP: the same pixels in about 40% of
    the bytes (the figures of the quick profile: 6.3 MB of PNG, 2.4 MB of WebP)."""
    with Image.open(png) as image, io.BytesIO() as webp:
        image.save(webp, "WEBP", lossless=True, quality=WEBP_EFFORT, method=WEBP_METHOD)
        return "data:image/webp;base64," + base64.b64encode(webp.getvalue()).decode("ascii")


# Pillow's lossless WebP effort: method 2 and quality 50 take 4 s for the quick profile's
# 75 figures and come within 2% of the smallest (method 4, quality 100: 9 s)
WEBP_METHOD, WEBP_EFFORT = 2, 50


def _figure_html(figure: Figure, root: Path) -> str:
    config = ", ".join(f"{k}={v}" for k, v in figure.config.items())
    where = html.escape(str(figure.path.relative_to(root)))
    return (
        f'<figure><img src="{embedded_image(figure.path)}" alt="{where}">'
        f"<figcaption>{html.escape(figure.caption)}"
        f'<span class="meta">{where}'
        f"{' · ' + html.escape(config) if config else ''}</span></figcaption></figure>"
    )


def _table_html(path: Path, root: Path) -> str:
    frame = pd.read_csv(path)
    shown = frame.head(MAX_TABLE_ROWS)
    note = f"first {len(shown)} of {len(frame)} rows" if len(frame) > len(shown) else ""
    return (
        f"<details><summary>{html.escape(str(path.relative_to(root)))} "
        f'<span class="meta">{len(frame)} rows x {frame.shape[1]} columns {note}</span>'
        f"</summary>{shown.to_html(index=False, float_format=lambda v: f'{v:.4g}', border=0)}"
        "</details>"
    )


def _estimate(estimate: float, low: float, high: float) -> str:
    """`0.123 [0.1, 0.15]`, or `undefined on this run`."""
    if pd.isna(estimate):
        return "undefined on this run"
    return f"{estimate:.3g} [{low:.3g}, {high:.3g}]"


def _claims_html(path: Path) -> str:
    """The claims table in full, the papers' findings first and the project's extensions
    apart: the paper's statement and printed number beside this run's estimate [interval],
    the verdict with its reason and its mark (`fitted` or `registered`), the effect the power
    check looked for and where it comes from, the verdict at half and double the threshold,
    the seeds that agree; above it, the registry version and digest the verdicts were
    judged by."""
    claims = pd.read_csv(path)
    columns = ("finding (paper's statement)", "paper's number (bert-base)", "statistic",
               "this run [95% CI]", "verdict", "effect for power", "at half / double",
               "seeds agreeing")  # fmt: skip
    header = "".join(f"<th>{h}</th>" for h in columns)
    tables = []
    for kind, title in (("paper", "The papers' findings"), ("extension", "Extensions")):
        rows = [_claim_row(c) for c in shown_with(claims, kind).itertuples()]
        if rows:
            tables.append(
                f'<h3>{html.escape(title)}</h3><table class="claims"><tr>{header}</tr>'
                f"{''.join(rows)}</table>"
            )
    note = (
        '<p class="meta">The papers measured bert-base; this run measures its own model, so '
        "the papers' numbers stand beside this run's, not as targets. Extensions are this "
        "project's tests built on a paper's statement and are not counted among its findings. "
        "A finding whose sentence admits two readings is followed by a row per reading; only "
        "the finding counts, decided where its readings agree.</p>"
    )
    return _registry_html(claims) + note + "".join(tables)


def _registry_html(claims: pd.DataFrame) -> str:
    """Which claims registry judged the table: version, status, digest, and the verdicts'
    mark (`fitted`: the model's results were seen before the rules were fixed)."""
    if "registry_digest" not in claims or claims.empty:
        return ""
    first = claims.iloc[0]
    return (
        f'<p class="registry">Claims registry version {int(first["registry_version"])} '
        f"({html.escape(str(first['registry_status']))}), digest "
        f"<code>{html.escape(str(first['registry_digest']))}</code>: every verdict is "
        f"<b>{html.escape(str(first['registration']))}</b>.</p>"
    )


def _claim_row(claim: tuple) -> str:
    """One claim as a table row (a row of claims.csv)."""
    number = "" if pd.isna(claim.paper_number) else f"{claim.paper_number:.3g}"
    if number and claim.paper_number_note:
        number += f'<span class="meta">{html.escape(claim.paper_number_note)}</span>'
    said = [getattr(claim, k, "") for k in ("reason", "note")]  # a note may be the reason
    reason = "".join(
        f'<span class="meta">{_prose(text)}</span>'
        for text in dict.fromkeys(said)
        if isinstance(text, str) and text
    )
    mark = getattr(claim, "registration", "")
    mark = f'<span class="meta">{html.escape(mark)}</span>' if isinstance(mark, str) else ""
    effect = getattr(claim, "power_effect", float("nan"))
    source = getattr(claim, "power_effect_source", "")
    effect = (
        ""
        if pd.isna(effect)
        else f'{effect:.3g}<span class="meta">{html.escape(str(source))}</span>'
    )
    sensitivity = threshold_sensitivity(
        claim.threshold, claim.verdict_half_threshold, claim.verdict_double_threshold
    )
    seeds = (
        "pre-trained"
        if pd.isna(claim.seeds)
        else (f"{int(claim.seeds_same_verdict)} of {int(claim.seeds)}")
    )
    return (
        f"<tr><td>{_prose(claim.finding)}"
        f'<span class="meta">{html.escape(claim.source)}: {_prose(claim.statement)} · '
        f"{html.escape(claim.claim)}</span></td><td>{number}</td>"
        f"<td>{html.escape(claim.statistic)}"
        f'<span class="meta">{_prose(claim.rule)} ({_prose(claim.threshold_reason)})'
        f"</span></td><td>{_estimate(claim.estimate, claim.ci_low, claim.ci_high)}</td>"
        f'<td class="{claim.verdict.replace(" ", "-")}">{claim.verdict}{reason}{mark}</td>'
        f"<td>{effect}</td><td>{sensitivity}</td><td>{seeds}</td></tr>"
    )


def _across(table_root: Path, run: Run | None) -> tuple[pd.DataFrame, list[Column], str]:
    """The claim x model table, each model's column against the claims section
    (pipeline/report/across.py), and what the section says first where one is out of date."""
    table = pd.read_csv(table_root / ACROSS_TABLE)
    runs_path, claims_path = table_root / ACROSS_RUNS, table_root / CLAIMS_TABLE
    runs = pd.read_csv(runs_path) if runs_path.exists() else None
    claims = pd.read_csv(claims_path) if claims_path.exists() else None
    found = columns(table, runs, claims, run.model if run else "")
    return table, found, notice(found, runs, claims)


def _across_notice(table_root: Path, run: Run | None) -> str:
    said = _across(table_root, run)[2]
    return f'<p class="notice">{_prose(said)}</p>' if said else ""


def _column_heading(column: Column) -> str:
    stale = " · out of date" if column.out_of_date else ""
    return (
        f'<th>{html.escape(column.model)}<span class="meta">{html.escape(column.label())}'
        f"{stale}</span></th>"
    )


def _across_html(table_root: Path, run: Run | None) -> str:
    """The claim x model table in full: the paper's number once, then per model this run's
    estimate [interval] and verdict, coloured by verdict; each model's heading names the
    registry that judged it, and whether it is out of date beside the claims section."""
    table, found, _ = _across(table_root, run)
    models = [column.model for column in found]
    header = "".join(f"<th>{h}</th>" for h in ("claim", "paper")) + "".join(
        map(_column_heading, found)
    )
    rows = []
    for claim in table.to_dict("records"):
        number = "" if pd.isna(claim["paper_number"]) else f"{claim['paper_number']:.3g}"
        cells = []
        for model in models:
            verdict = claim[f"{model}.verdict"]
            if not isinstance(verdict, str):  # this model's run lacks the claim
                cells.append("<td></td>")
                continue
            estimate = _estimate(
                *(claim[f"{model}.{k}"] for k in ("estimate", "ci_low", "ci_high"))
            )
            cells.append(f'<td class="{verdict.replace(" ", "-")}">{estimate} {verdict}</td>')
        rows.append(
            f"<tr><td>{html.escape(claim['claim'])}"
            f'<span class="meta">{_prose(claim["finding"])}</span></td>'
            f"<td>{number}</td>{''.join(cells)}</tr>"
        )
    return f'<table class="claims"><tr>{header}</tr>{"".join(rows)}</table>'


def _metrics_html(paths: list[Path], root: Path) -> str:
    rows = []
    for path in paths:
        values = json.loads(path.read_text())
        cells = ", ".join(
            f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in values.items()
        )
        rows.append(
            f"<tr><td>{html.escape(str(path.relative_to(root)))}</td>"
            f"<td>{html.escape(cells)}</td></tr>"
        )
    return f'<table class="metrics">{"".join(rows)}</table>' if rows else ""


STYLE = """
body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}
figure{margin:1.5em 0}img{max-width:100%}figcaption{font-size:.92em;color:#333}
.meta{display:block;color:#777;font-size:.85em}table{border-collapse:collapse;font-size:.8em}
td,th{padding:2px 8px;border-bottom:1px solid #eee;text-align:right}
.metrics td{text-align:left;vertical-align:top}summary{cursor:pointer;margin:.4em 0}
.summary{background:#f3f7fb;padding:.6em 1em;border-left:3px solid #4a7bb7}
pre{background:#f6f6f6;padding:1em;overflow:auto;font-size:.8em}
.claims td{text-align:left;vertical-align:top}.supported{background:#dcefdc}
.contradicted{background:#f6d5d5}.inconclusive{background:#f2f2f2}.underpowered{background:#fbeecf}
.not-testable{background:#e3e3f2}.seed-dependent{background:#f0dcf0}.reading-dependent{background:#d8eef4}
.registry{font-size:.9em}
.notice{background:#fff4d6;padding:.6em 1em;border-left:3px solid #d9a400}
.headline{font-size:1.15em}svg.verdicts{max-width:100%;height:auto;font-size:12px}
.contents ol{columns:2;margin:.3em 0 1em;font-size:.9em}code{background:#eef;padding:0 .2em}
"""


def _prose(text: str) -> str:
    """Plain text as HTML, its `code` spans (Markdown's backticks) set as <code>."""
    return INLINE_CODE.sub(r"<code>\1</code>", html.escape(text))


INLINE_CODE = re.compile(r"`([^`]+)`")


def section_title(stage: str) -> str:
    """The heading of a stage's section (SECTIONS: its analysis's declared `Section`), or, for
    a folder no analysis declares a section for, what it is and its name."""
    return SECTIONS.get(stage, f"Results of {stage} (a folder no stage of this report names)")


def _opening(outputs: Path, stages: list[str], notice: str = "") -> list[str]:
    """What a reader needs first: `notice` (how this run's outputs differ from the
    committed ones, pipeline/report/committed.py), the papers' findings counted by verdict,
    as a sentence and a chart (pipeline/report/verdicts.py), then the contents."""
    parts = [f'<p class="notice">{_prose(notice)}</p>'] if notice else []
    claims = outputs / "plots" / CLAIMS_TABLE
    if claims.exists():
        table = pd.read_csv(claims)
        parts.append(f'<p class="headline">{html.escape(headline(table))}</p>')
        parts.append(
            f"<figure>{verdict_chart(table)}<figcaption>The claims counted by paper and "
            'verdict; each claim, its interval and its threshold: <a href="#claims">the '
            "claims section</a>.</figcaption></figure>"
        )
    items = "".join(
        f'<li><a href="#{stage}">{html.escape(section_title(stage))}</a></li>' for stage in stages
    )
    parts.append(f'<nav class="contents"><b>Contents</b><ol>{items}</ol></nav>')
    return parts


def render_report(
    outputs: Path, title: str, params_text: str, run: Run | None = None, notice: str = ""
) -> str:
    """The report's HTML for everything found under `outputs` (only `run`'s results, when
    given), `notice` first where there is one."""
    figure_root, table_root, metric_root = (outputs / d for d in ("figures", "plots", "metrics"))
    stages = {
        p.name
        for root in (figure_root, table_root, metric_root)
        if root.exists()
        for p in root.iterdir()
        if p.is_dir()
    }
    stages |= {p.stem for p in metric_root.glob("*.json")} if metric_root.exists() else set()
    ordered = stage_order(sorted(stages))
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
        f"</title><style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1>",
        *_opening(outputs, ordered, notice),
        "<details><summary>Configuration (params.yaml)</summary>"
        f"<pre>{html.escape(params_text)}</pre></details>",
    ]
    for stage in ordered:
        parts.append(
            f'<section id="{html.escape(stage)}"><h2>{html.escape(section_title(stage))}</h2>'
        )
        summary = table_root / stage / SUMMARY_FILE
        if summary.exists():
            parts.append(f'<p class="summary">{_prose(summary.read_text())}</p>')
        across = table_root / ACROSS_TABLE
        if stage == ACROSS_TABLE.parts[0] and across.exists():
            parts.append(_across_notice(table_root, run))
        parts += [_figure_html(f, outputs) for f in collect_figures(figure_root / stage, run)]
        tables = _kept(sorted((table_root / stage).rglob("*.csv")), table_root / stage, run)
        special = {
            table_root / CLAIMS_TABLE: _claims_html,
            across: lambda _: _across_html(table_root, run),
        }
        parts += [special[p](p) for p in tables if p in special]
        parts += [_table_html(p, outputs) for p in tables if p not in special]
        metric_files = _kept(
            sorted((metric_root / stage).rglob("*.json")), metric_root / stage, run
        )
        metric_files += [p for p in [metric_root / f"{stage}.json"] if p.exists()]
        if metric_files:
            parts.append(
                f"<details><summary>Metrics</summary>"
                f"{_metrics_html(metric_files, outputs)}</details>"
            )
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts)
