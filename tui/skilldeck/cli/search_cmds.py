"""``skilldeck search`` and ``skilldeck eval``: hybrid skill search from the command line.

``search`` indexes the winning (non-shadowed) skills. ``eval`` indexes every discovered
skill, shadowed copies included, because eval files name skills by folder (``rel_id``)
and real corpora hold the same skill name in several repositories: either copy is a
correct answer, so both must be findable.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skilldeck.cli.context import CliContext, table
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.limits import AGENT_LIMIT, HUMAN_LIMIT
from skilldeck.core.workspace import Scope

if TYPE_CHECKING:
    from skilldeck.core.search import EvalQuery, EvalReport, SearchIndex, SearchResponse


def register(sub: Any) -> None:
    """Register ``search`` and ``eval``."""
    search = sub.add_parser(
        "search",
        help="find the skills that fit a task",
        description="Rank skills for a task description (BM25 + fuzzy + triggers, plus "
        "embeddings when the semantic extra is installed). Use '-' to read one query per "
        "line from stdin and print one JSON object per line.",
    )
    search.add_argument("query", nargs="+", help="the task, a few words, or '-' for stdin")
    search.add_argument(
        "--limit",
        type=_positive,
        default=None,
        help=f"most results (default {HUMAN_LIMIT}, {AGENT_LIMIT} with --agent)",
    )
    search.add_argument(
        "--explain",
        action="store_true",
        help="show each signal's score and which terms matched where",
    )
    search.add_argument(
        "--agent",
        action="store_true",
        help="agent view: top 3, confidence threshold, telemetry event",
    )
    search.add_argument(
        "--tools",
        default=None,
        help="comma-separated available tools (skills missing none win ties)",
    )
    search.add_argument(
        "--no-semantic",
        action="store_true",
        help="lexical only, even when the semantic extra is installed",
    )
    search.set_defaults(func=run_search)
    _register_eval(sub)


def _register_eval(sub: Any) -> None:
    """Register ``eval``."""
    ev = sub.add_parser(
        "eval",
        help="measure search quality on a query file",
        description="Read QUERIES.jsonl (lines {query, expected: [ids], kind}; an id is the "
        "skill folder relative to its root, or a skill name; expected: [] marks a request "
        "that needs no skill) or an agentskills.io trigger-eval file ([{query, "
        "should_trigger}] about one skill) and print recall@1, recall@3 and MRR@LIMIT per "
        "kind and overall, how often the top result is flagged confident and how often it "
        "is then right, and how many requests needing no skill were flagged confident. All "
        "discovered skills are indexed, shadowed copies included.",
    )
    ev.add_argument(
        "queries",
        nargs="?",
        help="the query file (JSONL, or a JSON trigger-eval file); with --triggers, optional",
    )
    ev.add_argument(
        "--triggers",
        metavar="SKILL",
        default=None,
        help="trigger view of SKILL: per request, who won instead and the words its "
        "description lacks (requests: the trigger-eval file, else its silent misses)",
    )
    ev.add_argument("--since", default="30d", help="with --triggers: the silent-miss window")
    ev.add_argument("--limit", type=_positive, default=10, help="ranks considered for MRR")
    ev.add_argument("--no-semantic", action="store_true", help="lexical only")
    ev.add_argument("--misses", action="store_true", help="also list queries not ranked first")
    ev.add_argument(
        "--split",
        choices=("all", "train", "held-out"),
        default="all",
        help="only the queries of this split (a fixed hash of the query text; "
        "tests/eval/README.md)",
    )
    ev.add_argument(
        "--folds",
        type=_folds,
        default=None,
        metavar="K",
        help="k-fold cross-validation by query (a fixed hash of its text): each fold's "
        "figures and their mean and spread",
    )
    ev.add_argument(
        "--with-examples",
        action="store_true",
        help="with --folds: each fold's training requests become examples of in-memory "
        "copies of the skills they expect (no file is written)",
    )
    ev.add_argument(
        "--add-misses-as-examples",
        action="store_true",
        help="write each request not ranked first into the 'examples' of the skill it "
        "expects (edits those SKILL.md files; only with this flag)",
    )
    ev.add_argument(
        "--skill",
        default=None,
        help="the skill a trigger-eval file's should_trigger lines are about (its name or "
        "folder), when the file does not say",
    )
    ev.set_defaults(func=run_eval)


def _folds(value: str) -> int:
    number = _positive(value)
    if number < 2:
        raise argparse.ArgumentTypeError("cross-validation needs at least 2 folds")
    return number


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
    if number < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return number


def _index(
    ctx: CliContext, *, all_skills: bool, no_semantic: bool, scope: Scope | None = None
) -> SearchIndex:
    """The workspace's index (winners, every skill, or ``scope``), with embeddings when
    configured."""
    workspace = ctx.workspace()
    if scope is None:
        scope = "all" if all_skills else "active"
    index = workspace.index(scope)
    if ctx.settings.semantic and not no_semantic and not index.semantic:
        workspace.enable_semantic(scope)
    return index


def run_search(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck search``."""
    fmt = ctx.output_format(("text", "json", "jsonl"))
    query_words: list[str] = args.query
    # Agents see what every face offers them (the MCP server too): enabled winners not
    # hidden from models ("visible"); a person sees every winner ("active").
    scope: Scope = "visible" if args.agent else "active"
    # one-shot: the saved index answers when the store proves the catalog unchanged
    workspace = ctx.open_workspace(ctx.roots)
    semantic = ctx.settings.semantic and not args.no_semantic
    index = workspace.quick_index(scope, semantic=semantic)
    if semantic and index.semantic_error and index.semantic_reason != "not_installed":
        # a model that is installed or configured but broken: say so, answer lexically
        ctx.warn(f"semantic signal off ({index.semantic_error}); results are lexical only")
    tools = {t.strip() for t in args.tools.split(",") if t.strip()} if args.tools else None

    for note in workspace.remotes.notes():  # federation: remotes skipped, config problems
        ctx.warn(note)

    def run(query: str) -> SearchResponse:
        return workspace.search(
            query,
            scope=scope,
            limit=args.limit,
            explain=args.explain,
            tools=tools,
            agent=args.agent,
            remotes=True,
        )

    if query_words == ["-"]:
        for line in sys.stdin:
            query = line.strip()
            if query:
                ctx.emit_jsonl(run(query).to_dict(explain=args.explain))
        return 0
    response = run(" ".join(query_words))
    if fmt == "json":
        data = response.to_dict(explain=args.explain)
        data["semantic"] = index.semantic
        ctx.emit_json(data)
    elif fmt == "jsonl":
        for result in response.results:
            ctx.emit_jsonl(result.to_dict(explain=args.explain))
    else:
        _print_text(ctx, response, explain=args.explain, agent=args.agent, index=index)
    return 0


def _print_text(
    ctx: CliContext, response: SearchResponse, *, explain: bool, agent: bool, index: SearchIndex
) -> None:
    if not index.skills:
        ctx.echo("no skills found (check --root)")
        return
    if not response.results:
        why = response.message.removeprefix("no match")  # ": 'use' … too common …"
        ctx.echo(f"no skill matches {response.query!r}{why}")
        return
    rows = []
    for rank, result in enumerate(response.results, 1):
        score = f"{result.score:.2f}"
        rows.append(
            [
                f"{rank:>2}.",
                ctx.paint(score, "green" if result.confident else "dim"),
                ctx.paint(result.skill.name, "bold"),
                result.skill.brief,
            ]
        )
    for line, result in zip(table(rows), response.results, strict=True):
        ctx.echo(line)
        if explain:
            signals = "  ".join(f"{k}={v:.3f}" for k, v in result.signals.items())
            ctx.echo(ctx.paint(f"      signals: {signals}", "dim"))
            for where, terms in result.matched.items():
                ctx.echo(ctx.paint(f"      {where}: {', '.join(terms)}", "dim"))
            ctx.echo(ctx.paint(f"      {result.skill.path}", "dim"))
    note = response.message
    if agent or not response.confident or response.clustered:
        color = "yellow" if (not response.confident or response.clustered) else "green"
        ctx.echo(ctx.paint(f"{note} (threshold {response.threshold:.2f})", color))
    if explain:
        need = f"confident needs {response.min_lead:.2f}"
        if response.sure:
            need = "named, triggered or its exact name: no lead needed"
        ctx.echo(
            ctx.paint(f"top leads the next other skill by {response.lead:.2f} ({need})", "dim")
        )
    if index.semantic_error and explain:
        ctx.echo(ctx.paint(f"semantic signal off: {index.semantic_error}", "dim"))


def run_eval(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck eval``."""
    if args.triggers:
        from skilldeck.cli.trigger_cmds import run_triggers

        return run_triggers(args, ctx)
    if not args.queries:
        raise SkilldeckError(ErrorCode.INVALID_PARAM, "eval needs a query file (or --triggers)")
    fmt = ctx.output_format()
    path = Path(args.queries)
    if not path.is_file():
        raise SkilldeckError(ErrorCode.NOT_FOUND, f"{path}: no such file")
    from skilldeck.core.search import (
        evaluate,
        index_ranker,
        load_queries,
        resolve_ids,
        select_split,
    )

    queries = select_split(load_queries(path, skill=args.skill), args.split)
    index = _index(ctx, all_skills=True, no_semantic=args.no_semantic)
    queries = resolve_ids(queries, index.skills)
    if args.folds:
        return _cross_validate(ctx, args, index, queries)
    if args.with_examples:
        raise SkilldeckError(ErrorCode.INVALID_PARAM, "--with-examples needs --folds")
    known = {s.rel_id for s in index.skills}
    report = evaluate(index_ranker(index), queries, limit=args.limit, known_ids=known)
    if args.add_misses_as_examples:
        _add_misses(ctx, index, queries, report)
    if fmt == "json":
        data = report.to_dict()
        data["semantic"] = index.semantic
        data["skills"] = len(index.skills)
        data["split"] = args.split
        ctx.emit_json(data)
        return 0
    _print_eval(ctx, report, args.limit)
    mode = "hybrid with embeddings" if index.semantic else "lexical"
    split = "" if args.split == "all" else f", {args.split} split"
    ctx.echo(ctx.paint(f"{len(index.skills)} skills indexed, {mode}{split}", "dim"))
    if report.unknown_ids:
        unknown = ", ".join(sorted(set(report.unknown_ids)))
        ctx.echo(ctx.paint(f"expected ids not found under the roots: {unknown}", "yellow"))
    if args.misses:
        for miss in report.misses:
            got = ", ".join(miss["got"])
            how = "flagged" if miss["kind"] in report.negatives else f"rank {miss['rank'] or '-'}"
            ctx.echo(f"  [{miss['kind']}] {how}: {miss['query']}  -> {got}")
    return 0


def _print_eval(ctx: CliContext, report: EvalReport, limit: int) -> None:
    """The per-kind table (ranking and ``confident``), then the no-skill requests."""
    header = ["kind", "queries", "recall@1", "recall@3", f"MRR@{limit}", "confident", "precision"]
    rows = [header]
    kinds = [*sorted(report.kinds.items()), ("overall", report.overall)]
    for kind, score in kinds if report.overall.count or not report.negatives else []:
        rows.append(
            [
                kind,
                str(score.count),
                f"{score.recall1:.3f}",
                f"{score.recall3:.3f}",
                f"{score.mrr:.3f}",
                f"{score.coverage:.3f}",
                f"{score.precision:.3f}" if score.confident else "-",
            ]
        )
    for line in table(rows) if len(rows) > 1 else []:
        ctx.echo(line)
    if report.negatives:
        rows = [["needs no skill", "queries", "flagged confident", "share"]]
        for kind, neg in sorted(report.negatives.items()):
            rows.append([kind, str(neg.count), str(neg.flagged), f"{neg.rate:.3f}"])
        for line in table(rows):
            ctx.echo(line)


def _cross_validate(
    ctx: CliContext, args: argparse.Namespace, index: SearchIndex, queries: list[EvalQuery]
) -> int:
    """``eval --folds K``: each fold scored by an index that never saw its queries."""
    from skilldeck.core.search import METRICS, cross_validate, fold_rankers

    if args.add_misses_as_examples:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM, "--add-misses-as-examples cannot be used with --folds"
        )
    semantic = index.semantic
    build = fold_rankers(index, examples=args.with_examples)
    report = cross_validate(build, queries, k=args.folds, limit=args.limit)
    data = report.to_dict()
    if ctx.output_format() == "json":
        data.update(semantic=semantic, skills=len(index.skills), with_examples=args.with_examples)
        ctx.emit_json(data)
        return 0
    rows = [["figure", "mean", "spread", *(f"fold {i + 1}" for i in range(args.folds))]]
    for metric in (*METRICS, "negatives"):
        cell = data[metric]
        rows.append(
            [metric, f"{cell['mean']:.3f}", f"±{cell['spread']:.3f}"]
            + [f"{v:.3f}" for v in cell["per_fold"]]
        )
    for line in table(rows):
        ctx.echo(line)
    mode = "hybrid with embeddings" if semantic else "lexical"
    extra = ", training requests as examples" if args.with_examples else ""
    ctx.echo(ctx.paint(f"{len(index.skills)} skills, {mode}, {args.folds} folds{extra}", "dim"))
    return 0


def _add_misses(
    ctx: CliContext, index: SearchIndex, queries: list[EvalQuery], report: EvalReport
) -> None:
    """Write each request not ranked first into the examples of the first skill it
    expects; a file that cannot be edited safely is left as it is, with a warning."""
    from skilldeck.core.search import add_examples

    missed = {m["query"] for m in report.misses if m["kind"] not in report.negatives}
    by_id = {s.rel_id: s for s in index.skills}
    wanted: dict[str, list[str]] = {}
    for item in queries:
        if item.query in missed and item.expected and item.expected[0] in by_id:
            wanted.setdefault(item.expected[0], []).append(item.query)
    for rel_id, requests in sorted(wanted.items()):
        skill = by_id[rel_id]
        try:
            added = add_examples(skill.path, requests)
        except SkilldeckError as exc:
            ctx.warn(f"{exc.code.value}: {exc.message}")
            continue
        if added:
            ctx.echo(f"added {len(added)} example(s) to {skill.path}")
