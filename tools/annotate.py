"""annotate: the local annotation page for the sampled attention maps (not a DVC stage).

    python -m tools.annotate --annotator NAME [--port 8765] [--host 127.0.0.1]

serves http://127.0.0.1:8765/, which shows the sampled maps of data/annotations/<model>/
(maps.npz, in sample.csv's order) one at a time with the definition of the five types, and
appends each label to data/annotations/<model>/human.csv (source `human`, the annotator's
name, the time). Keys 1-5 label, s skips, u undoes; stop it with Ctrl-C and start it again
to go on where you left off. The data folder and the model come from params.yaml.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from omegaconf import OmegaConf

from pipeline.core.errors import exit_on_error
from pipeline.kovaleva.patterns.annotate import open_session
from pipeline.kovaleva.patterns.server import make_server

log = logging.getLogger(__name__)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1", help="a loopback address")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--params", type=Path, default=Path("params.yaml"))
    parser.add_argument("--annotator", required=True, help="your name, recorded with each label")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    cfg = OmegaConf.load(args.params)
    annotations = Path(cfg.paths.data) / "annotations" / cfg.model.name
    with exit_on_error():
        session = open_session(annotations, args.annotator)
        server = make_server(session, args.host, args.port)
    done, total = len(session.done), len(session.order)
    log.info("annotating %d/%d labelled; open %s", done, total, server.url)
    log.info("labels go to %s (Ctrl-C stops; labels are already saved)", session.labels_path)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
