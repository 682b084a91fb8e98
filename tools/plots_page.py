"""The HTML template of `dvc plots show` / `dvc plots diff`, with Vega inlined, so the page
they write draws every plot offline.

DVC's own page loads Vega, Vega-Lite and Vega-Embed from a CDN: offline every table plot is
blank. This writes a template holding the three libraries from the installed PyPI package
`django-js-lib-vega-embed` (their unmodified release bundle: Vega 5.33, Vega-Lite 5.23,
Vega-Embed 6.29, BSD-3-Clause, University of Washington Interactive Data Lab; the package
itself is MIT and needs nothing else), to `.dvc/plots_page.html` (git-ignored: it is made
from the installed package, not kept), and points this checkout's DVC at it
(`dvc config --local plots.html_template`, in the git-ignored `.dvc/config.local`). Until it
has run, DVC falls back to its CDN page. The page DVC writes goes to `dvc_plots/`, which git
ignores.

    python -m tools.plots_page          # the README's install commands run it
"""

from __future__ import annotations

import argparse
import subprocess
from importlib import resources
from pathlib import Path

from pipeline.core.errors import PipelineError, exit_on_error
from pipeline.core.io import write_text

BUNDLE = ("js_lib_vega_embed", "static/js_lib_vega_embed/vega-embed-full.js")
TEMPLATE_NAME = "plots_page.html"  # under .dvc/, as DVC resolves a relative html_template
NOTICE = (
    "Vega 5.33, Vega-Lite 5.23 and Vega-Embed 6.29 (BSD-3-Clause, Copyright (c) 2015, "
    "University of Washington Interactive Data Lab), unmodified, from the PyPI package "
    "django-js-lib-vega-embed"
)
STYLE = "body{font-family:system-ui,sans-serif;margin:1em}table{border-spacing:15px}"


def vega_bundle() -> str:
    """The minified Vega, Vega-Lite and Vega-Embed bundle of the installed package."""
    package, inside = BUNDLE
    try:
        return (resources.files(package) / inside).read_text(encoding="utf-8")
    except ModuleNotFoundError:
        raise PipelineError(
            "the PyPI package django-js-lib-vega-embed (Vega for offline plots) is not "
            "installed: pip install -e . installs it"
        ) from None


def template(bundle: str) -> str:
    """DVC's HTML template (`{plot_divs}` where the plots go; no `{scripts}`, DVC's CDN
    tags) with `bundle` inlined."""
    if "</script" in bundle:
        raise PipelineError("the Vega bundle holds '</script' and cannot be inlined")
    return (
        "<!DOCTYPE html>\n<html>\n<head>\n<meta charset='utf-8'>\n{refresh_tag}\n"
        f"<title>DVC plots</title>\n<style>{STYLE}</style>\n"
        f"<script>/* {NOTICE} */\n{bundle}\n</script>\n</head>\n<body>\n{{plot_divs}}\n"
        "</body>\n</html>\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description="Write .dvc/plots_page.html, DVC's plots page with Vega inlined (offline), "
        "and point this checkout's DVC at it."
    )
    parser.add_argument("--repo", type=Path, default=Path("."), help="the DVC repository")
    args = parser.parse_args()
    with exit_on_error():
        dvc_dir = args.repo / ".dvc"
        if not dvc_dir.is_dir():
            raise PipelineError(f"{args.repo} has no .dvc folder: run this from the repository")
        write_text(dvc_dir / TEMPLATE_NAME, template(vega_bundle()))
        subprocess.run(
            ["dvc", "config", "--local", "plots.html_template", TEMPLATE_NAME],
            cwd=args.repo,
            check=True,
        )
        print(f"dvc plots: offline page template {dvc_dir / TEMPLATE_NAME}")


if __name__ == "__main__":
    main()
