"""Core commands: list, show, load, read, validate, lint, prompt, rules."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from skilldeck.cli.context import SEVERITY_COLOR, CliContext, table
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.model import Catalog, Diagnostic, Severity, Skill, Source


def register(sub: Any) -> None:
    """Register the core commands."""
    p = sub.add_parser("list", help="list discovered skills")
    p.add_argument(
        "--all", action="store_true", help="include shadowed, disabled and invalid skills"
    )
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("show", help="show one skill's full record")
    p.add_argument("name", help="skill name")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("load", help="print what a model receives when it loads a skill (tier 2)")
    p.add_argument("name", help="skill name")
    p.add_argument("arguments", nargs=argparse.REMAINDER, help="arguments for $ARGUMENTS")
    p.set_defaults(func=cmd_load)

    p = sub.add_parser("read", help="print one resource file of a skill (tier 3)")
    p.add_argument("name", help="skill name")
    p.add_argument("path", help="path relative to the skill folder")
    p.set_defaults(func=cmd_read)

    p = sub.add_parser("validate", help="check skills against a profile (exit 1 on errors)")
    p.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="skill folder, SKILL.md or folder of skills (default: all discovered)",
    )
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("lint", help="lint skills (exit 1 on any finding)")
    p.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="skill folder, SKILL.md or folder of skills (default: all discovered)",
    )
    p.add_argument("--select", default=None, help="comma-separated codes or prefixes to enable")
    p.add_argument("--ignore", default=None, help="comma-separated codes or prefixes to skip")
    p.set_defaults(func=cmd_lint)

    p = sub.add_parser("prompt", help="the tier-1 listing for a model's system prompt")
    p.add_argument("--budget", type=int, default=None, help="character budget (default 12000)")
    p.set_defaults(func=cmd_prompt)

    p = sub.add_parser("rules", help="the lint rules reference")
    p.set_defaults(func=cmd_rules)


# ---------------------------------------------------------------------------- list / show


def _markers(skill: Skill) -> str:
    marks = []
    if skill.errors:
        marks.append(f"E{len(skill.errors)}")
    if skill.warnings:
        marks.append(f"W{len(skill.warnings)}")
    if not skill.enabled:
        marks.append("disabled")
    if skill.hidden:
        marks.append("hidden")
    if skill.shadowed:
        marks.append("shadowed")
    return ",".join(marks)


def print_list(ctx: CliContext, show_all: bool) -> int:
    """Print the skill listing (also used when the TUI cannot start)."""
    catalog = ctx.catalog()
    if show_all:
        skills = sorted(catalog.skills, key=lambda s: (s.name, s.shadowed, str(s.path)))
    else:
        skills = [s for s in catalog.active() if s.enabled and s.valid]
    fmt = ctx.output_format(("text", "json"))
    if fmt == "json":
        ctx.emit_json(
            {
                "skills": [s.summary_dict() for s in skills],
                "diagnostics": [d.to_dict() for d in catalog.diagnostics],
            }
        )
        return 0
    rows = []
    for s in skills:
        marks = _markers(s)
        color = "red" if s.errors else "yellow" if marks else "dim"
        rows.append(
            [ctx.paint(s.name, "bold"), s.source.value, ctx.paint(marks or "-", color), s.brief]
        )
    for line in table(rows):
        ctx.echo(line)
    hidden = len(catalog.skills) - len(skills)
    note = f"{len(skills)} skill(s)"
    if hidden and not show_all:
        note += f"; {hidden} shadowed, disabled or invalid not shown (use --all)"
    ctx.echo(ctx.paint(note, "dim"))
    for d in catalog.diagnostics:
        ctx.echo(_format_diag(ctx, d))
    return 0


def cmd_list(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck list``."""
    return print_list(ctx, show_all=args.all)


def find_skill(catalog: Catalog, name: str) -> Skill:
    """The winning skill called ``name``; NOT_FOUND with suggestions otherwise."""
    skill = catalog.get(name)
    if skill is None:
        path = Path(name).expanduser()
        if path.exists():
            skill = catalog.by_path(path.resolve()) or catalog.by_path(path.absolute())
    if skill is None:
        from skilldeck.core.loader import unknown_skill

        raise unknown_skill(name, catalog.names())
    return skill


def _tool_report(ctx: CliContext, skill: Skill) -> dict[str, Any] | None:
    from skilldeck.core.tools import ToolRegistry

    try:
        registry = ToolRegistry.load(ctx.settings)
        availability = registry.availability(skill)
    except SkilldeckError:
        return None
    result: dict[str, Any] = availability.to_dict()
    return result


def cmd_show(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck show NAME``."""
    skill = find_skill(ctx.catalog(), args.name)
    record = skill.to_dict()
    record["tool_availability"] = _tool_report(ctx, skill)
    fmt = ctx.output_format(("text", "json"))
    if fmt == "json":
        ctx.emit_json(record)
        return 0
    ctx.echo(ctx.paint(skill.name, "bold") + f"  ({skill.source.value})")
    ctx.echo(f"  {skill.description}")
    rows = [["path", str(skill.path)]]
    if skill.shadowed:
        rows.append(["shadowed", skill.shadow_reason or f"by {skill.shadowed_by}"])
    for key in ("version", "author", "owner", "license", "compatibility"):
        value = getattr(skill, key)
        if value:
            rows.append([key, str(value)])
    if skill.tags:
        rows.append(["tags", ", ".join(skill.tags)])
    rows.append(["enabled", "yes" if skill.enabled else "no (disabled in the registry)"])
    if skill.hidden:
        rows.append(["hidden", "yes (not offered to models)"])
    if skill.allowed_tools:
        rows.append(["allowed-tools", " ".join(skill.allowed_tools)])
    if skill.priority:
        rows.append(["priority", str(skill.priority)])
    for line in table(rows):
        ctx.echo("  " + line)
    availability = record["tool_availability"]
    if skill.tools:
        ctx.echo("tools:")
        entries = {e["name"]: e for e in (availability or {}).get("entries", [])}
        for ref in skill.tools:
            status = entries.get(ref.name, {}).get("status", "?")
            color = {"available": "green", "missing": "red", "hidden": "yellow"}.get(status, "dim")
            req = "required" if ref.required else "optional"
            ctx.echo(
                f"  {ref.name:<24} {ctx.paint(status, color):<10} {req}  {ref.purpose}".rstrip()
            )
    if skill.resources:
        more = " (more not listed)" if skill.resources_truncated else ""
        ctx.echo(f"resources ({len(skill.resources)}{more}):")
        for res in skill.resources:
            ctx.echo(f"  {res}")
    if skill.diagnostics:
        ctx.echo("diagnostics:")
        for d in skill.diagnostics:
            ctx.echo("  " + _format_diag(ctx, d, with_path=False))
    return 0


# ---------------------------------------------------------------------------- load / read


def cmd_load(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck load NAME [ARGS]``."""
    from skilldeck.core.loader import load_and_record

    skill = find_skill(ctx.catalog(), args.name)
    arguments = " ".join(a for a in args.arguments if a != "--")
    result = load_and_record(skill, arguments, ctx.settings.body_token_cap, actor="cli")
    fmt = ctx.output_format(("text", "json"))
    if fmt == "json":
        ctx.emit_json(result.to_dict())
        return 0
    ctx.echo(result.text)
    for warning in result.warnings:
        print(f"skilldeck: warning: {warning}", file=sys.stderr)
    return 0


def cmd_read(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck read NAME PATH``."""
    from skilldeck.core.loader import read_and_record

    skill = find_skill(ctx.catalog(), args.name)
    resource = read_and_record(skill, args.path, ctx.settings.resource_byte_cap, actor="cli")
    fmt = ctx.output_format(("text", "json"))
    if fmt == "json":
        ctx.emit_json(resource.to_dict())
        return 0
    if resource.binary:
        ctx.echo(
            f"{resource.path}: binary file ({resource.size} bytes, {resource.mime}); "
            "use --format json to get it as base64"
        )
        return 0
    ctx.out.write(resource.text or "")
    if resource.text and not resource.text.endswith("\n"):
        ctx.out.write("\n")
    return 0


# ---------------------------------------------------------------------------- validate / lint


def _catalog_for_paths(ctx: CliContext, paths: list[Path]) -> Catalog:
    """Catalog of the given paths (skill folders, SKILL.md files, folders of skills)."""
    if not paths:
        return ctx.catalog()
    from skilldeck.core.discovery import Root, discover

    roots = []
    for path in paths:
        path = path.expanduser()
        if not path.exists():
            raise SkilldeckError(ErrorCode.NOT_FOUND, f"{path}: no such file or folder")
        if path.is_file():
            path = path.parent
        roots.append(Root(path.absolute(), Source.EXPLICIT))
    return discover(roots, ctx.settings, profile=ctx.profile)


def _format_diag(ctx: CliContext, d: Diagnostic, with_path: bool = True) -> str:
    where = ""
    if with_path and d.path:
        where = str(d.path)
        if d.line:
            where += f":{d.line}"
            if d.column:
                where += f":{d.column}"
        where += ": "
    elif d.line:
        where = f"line {d.line}: "
    sev = ctx.paint(d.severity.value, SEVERITY_COLOR[d.severity])
    return f"{where}{ctx.paint(d.code, 'bold')} {sev} {d.message}"


def _report(
    ctx: CliContext,
    results: list[tuple[Skill, list[Diagnostic]]],
    catalog: Catalog,
    extra: dict[str, Any],
) -> None:
    fmt = ctx.output_format(("text", "json"))
    counts: Counter[str] = Counter()
    for _, diags in results:
        counts.update(d.severity.value for d in diags)
    invalid = sum(1 for _, diags in results if any(d.severity is Severity.ERROR for d in diags))
    summary = {
        "skills": len(results),
        "invalid": invalid,
        "errors": counts["error"],
        "warnings": counts["warning"],
        "info": counts["info"],
        **extra,
    }
    if fmt == "json":
        ctx.emit_json(
            {
                "skills": [
                    {
                        "path": str(skill.path),
                        "name": skill.name,
                        "valid": not any(d.severity is Severity.ERROR for d in diags),
                        "diagnostics": [
                            {k: v for k, v in d.to_dict().items() if k != "path"}
                            | ({"path": str(d.path)} if d.path and d.path != skill.path else {})
                            for d in diags
                        ],
                    }
                    for skill, diags in results
                ],
                "diagnostics": [d.to_dict() for d in catalog.diagnostics],
                "summary": summary,
            }
        )
        return
    for skill, diags in results:
        for d in sorted(diags, key=lambda d: (d.line or 0, d.column or 0, d.code)):
            if d.path is None:
                d = Diagnostic(d.code, d.severity, d.message, skill.path, d.line, d.column)
            ctx.echo(_format_diag(ctx, d))
    for d in catalog.diagnostics:
        ctx.echo(_format_diag(ctx, d))
    parts = [
        f"{summary['skills']} skill(s) checked",
        f"{summary['errors']} error(s)",
        f"{summary['warnings']} warning(s)",
    ]
    if summary["info"]:
        parts.append(f"{summary['info']} info")
    line = ", ".join(parts)
    color = "red" if summary["errors"] else "yellow" if summary["warnings"] else "green"
    ctx.echo(ctx.paint(line, color))


def cmd_validate(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck validate [PATH...]``: exit 1 when any skill has an error."""
    catalog = _catalog_for_paths(ctx, args.paths)
    # discovery already validated every skill against ctx.profile
    results = [(s, s.diagnostics) for s in catalog.skills]
    _report(ctx, results, catalog, {"profile": ctx.profile})
    failed = any(d.severity is Severity.ERROR for _, diags in results for d in diags)
    failed = failed or any(d.severity is Severity.ERROR for d in catalog.diagnostics)
    if not catalog.skills and args.paths:
        print("skilldeck: no SKILL.md found under the given path(s)", file=sys.stderr)
        return 1
    return 1 if failed else 0


def _split_codes(value: str | None) -> list[str] | None:
    if value is None:
        return None
    return [c.strip() for c in value.split(",") if c.strip()]


def cmd_lint(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck lint [PATH...]``: exit 1 on any finding."""
    from skilldeck.core.lint import lint_catalog, load_lint_config

    start = args.paths[0] if args.paths else Path.cwd()
    config = load_lint_config(start.expanduser().absolute())
    for d in config.diagnostics:
        where = f"{d.path}: " if d.path else ""
        print(f"skilldeck: {where}{d.code} {d.message}", file=sys.stderr)
    select = _split_codes(args.select)
    ignore = _split_codes(args.ignore)
    if select is not None:
        config.select = select
    if ignore is not None:
        config.ignore = [*config.ignore, *ignore]
    catalog = _catalog_for_paths(ctx, args.paths)
    findings = lint_catalog(catalog.skills, catalog, config)
    results = []
    for skill in catalog.skills:
        parse_errors = [
            d for d in skill.diagnostics if d.code.startswith("SD") and d.severity is Severity.ERROR
        ]
        results.append((skill, parse_errors + findings.get(skill.path, [])))
    _report(ctx, results, catalog, {})
    return 1 if any(diags for _, diags in results) else 0


# ---------------------------------------------------------------------------- prompt / rules


def cmd_prompt(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck prompt``: the tier-1 listing within a character budget."""
    from skilldeck.core.loader import render_listing

    fmt = ctx.output_format(("xml", "markdown", "json"), default="xml")
    budget = args.budget if args.budget is not None else ctx.settings.prompt_char_budget
    if budget < 0:
        raise SkilldeckError(ErrorCode.INVALID_PARAM, "--budget must be 0 or more")
    listing = render_listing(
        ctx.catalog().active(), budget, "markdown" if fmt == "markdown" else "xml"
    )
    if fmt == "json":
        ctx.emit_json(
            {
                "text": listing.text,
                "budget": listing.budget,
                "chars": len(listing.text),
                "included": listing.included,
                "omitted": listing.omitted,
                "shortened": listing.shortened,
            }
        )
        return 0
    ctx.echo(listing.text)
    return 0


def cmd_rules(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck rules``: every lint rule with an example."""
    from skilldeck.core.lint import rules_reference

    fmt = ctx.output_format(("text", "markdown", "json"))
    ctx.echo(rules_reference(fmt))
    return 0
