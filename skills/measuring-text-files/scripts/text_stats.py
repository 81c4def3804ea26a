#!/usr/bin/env python3
"""Count lines, words, characters and estimated tokens of text files.

Usage: text_stats.py [--max-lines N] [--max-tokens N] [--json] PATH [PATH ...]

A PATH may be a file or a folder (its text files, hidden ones skipped). Exit status:
0 all within the budgets, 1 some file is over a budget, 2 a path could not be read.
Standard library only; reads at most 10 MB of each file and 2,000 files.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from typing import Any

READ_CAP = 10 * 1024 * 1024
MAX_FILES = 2000


def estimate_tokens(text: str) -> int:
    """About how many model tokens ``text`` is: the larger of chars/4 and words*1.3."""
    if not text:
        return 0
    return math.ceil(max(len(text) / 4, len(text.split()) * 1.3))


def measure(path: str) -> dict[str, Any]:
    """The counts of one file, or an ``error``; binary files are marked, not counted."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(READ_CAP + 1)
    except OSError as exc:
        return {"path": path, "error": exc.strerror or str(exc)}
    if b"\x00" in data[:8192]:
        return {"path": path, "binary": True, "bytes": len(data)}
    text = data[:READ_CAP].decode("utf-8", errors="replace")
    lines = text.splitlines()
    return {
        "path": path,
        "lines": len(lines),
        "words": len(text.split()),
        "chars": len(text),
        "bytes": len(data[:READ_CAP]),
        "tokens": estimate_tokens(text),
        "longest_line": max((len(line) for line in lines), default=0),
        "cut": len(data) > READ_CAP,
    }


def expand(paths: list[str]) -> list[str]:
    """Files named, and the files inside folders named (sorted, hidden skipped)."""
    files: list[str] = []
    for path in paths:
        if not os.path.isdir(path):
            files.append(path)
            continue
        for folder, dirs, names in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            files.extend(os.path.join(folder, n) for n in sorted(names) if not n.startswith("."))
    return files[:MAX_FILES]


def over_budget(row: dict[str, Any], max_lines: int | None, max_tokens: int | None) -> list[str]:
    """Which budgets ``row`` exceeds."""
    over = []
    lines, tokens = row.get("lines"), row.get("tokens")
    if max_lines is not None and lines is not None and lines > max_lines:
        over.append(f"lines {lines} > {max_lines}")
    if max_tokens is not None and tokens is not None and tokens > max_tokens:
        over.append(f"tokens {tokens} > {max_tokens}")
    return over


def table_line(row: dict[str, Any]) -> str:
    """One file's line of the table."""
    if "error" in row or row.get("binary"):
        why = row.get("error") or "binary, skipped"
        return f"{'-':>7} {'-':>8} {'-':>9} {'-':>8}  {row['path']}: {why}"
    note = "  (first 10 MB)" if row["cut"] else ""
    if row["over"]:
        note += "  OVER: " + ", ".join(row["over"])
    counts = f"{row['lines']:>7} {row['words']:>8} {row['chars']:>9} {row['tokens']:>8}"
    return f"{counts}  {row['path']}{note}"


def table(rows: list[dict[str, Any]]) -> str:
    """A plain-text table, one file a line, with a total when there are several."""
    out = [f"{'lines':>7} {'words':>8} {'chars':>9} {'~tokens':>8}  file"]
    out.extend(table_line(row) for row in rows)
    counted = [row for row in rows if "lines" in row]
    if len(counted) > 1:
        sums = [sum(row[key] for row in counted) for key in ("lines", "words", "chars", "tokens")]
        total = f"{sums[0]:>7} {sums[1]:>8} {sums[2]:>9} {sums[3]:>8}"
        out.append(f"{total}  total ({len(counted)} files)")
    return "\n".join(out)


def main(argv: list[str]) -> int:
    """Measure the paths in ``argv``; return the exit status."""
    parser = argparse.ArgumentParser(
        prog="text_stats.py", description="Count lines, words, characters and estimated tokens."
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="file or folder to measure")
    parser.add_argument("--max-lines", type=int, help="flag files with more lines than this")
    parser.add_argument("--max-tokens", type=int, help="flag files over this token estimate")
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")
    args = parser.parse_args(argv)
    rows = [measure(path) for path in expand(args.paths)]
    for row in rows:
        row["over"] = over_budget(row, args.max_lines, args.max_tokens)
    print(json.dumps(rows, indent=2) if args.json else table(rows))
    if any("error" in row for row in rows):
        return 2
    return 1 if any(row["over"] for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
