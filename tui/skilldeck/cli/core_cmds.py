"""Core commands: list, show, load, read, validate, lint, prompt, rules."""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skilldeck.cli.context import SEVERITY_COLOR, CliContext, table
from skilldeck.core import lint, loader, rules
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.model import Catalog, Diagnostic, Severity, Skill
from skilldeck.core.validate import lint_report, report_entry, validate_findings

if TYPE_CHECKING:
    from skilldeck.core.workspace import Workspace


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

    p = sub.add_parser(
        "load",
        help="print what a model receives when it loads a skill (tier 2)",
        usage="%(prog)s [-h] name [ARGUMENTS ...]",
        description="Print the skill's instructions as a model receives them. ARGUMENTS are "
        "optional: when given they replace $ARGUMENTS in the body.",
    )
    p.add_argument("name", help="skill name")
    p.add_argument(
        "arguments",
        nargs=argparse.REMAINDER,
        metavar="ARGUMENTS",
        help="optional: words substituted for $ARGUMENTS in the body (default: none)",
    )
    p.set_defaults(func=cmd_load)

    p = sub.add_parser("read", help="print one resource file of a skill (tier 3)")
    p.add_argument("name", help="skill name")
    p.add_argument("path", help="path relative to the skill folder")
    p.set_defaults(func=cmd_read)
    _register_checks(sub)


def _register_checks(sub: Any) -> None:
    """``validate``, ``lint``, ``prompt`` and ``rules``."""
    p = sub.add_parser("validate", help="check skills against a profile (exit 1 on errors)")
    p.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="skill folder, SKILL.md or folder of skills (default: all discovered)",
    )
    p.add_argument(
        "--fail-on",
        choices=("error", "warning", "info"),
        default="error",
        help="lowest severity that makes the exit status 1 (default: error; warning gates "
        "a missing tool under tool-validation: warn, ST201)",
    )
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser(
        "lint", help="lint skills (exit 1 on a warning or error finding; info never fails)"
    )
    p.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="skill folder, SKILL.md or folder of skills (default: all discovered)",
    )
    p.add_argument("--select", default=None, help="comma-separated codes or prefixes to enable")
    p.add_argument("--ignore", default=None, help="comma-separated codes or prefixes to skip")
    p.add_argument(
        "--fail-on",
        choices=("error", "warning", "info"),
        default="warning",
        help="lowest severity that makes the exit status 1 (default: warning)",
    )
    p.add_argument("--exit-zero", action="store_true", help="exit 0 whatever is found")
    p.set_defaults(func=cmd_lint)

    p = sub.add_parser("prompt", help="the tier-1 listing for a model's system prompt")
    p.add_argument("--budget", type=int, default=None, help="character budget (default 12000)")
    p.set_defaults(func=cmd_prompt)

    p = sub.add_parser(
        "rules", help="every rule (discovery, validation, lint, tools, install), or those named"
    )
    p.add_argument(
        "codes",
        nargs="*",
        metavar="CODE",
        help="codes, prefixes or names (SD105, SV1, SL302, ST2, pipe-to-shell); default: all",
    )
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
    workspace = ctx.workspace()
    catalog = workspace.catalog
    if show_all:
        skills = sorted(catalog.skills, key=lambda s: (s.name, s.shadowed, str(s.path)))
    else:
        skills = workspace.listed()
    fmt = ctx.output_format()
    remote = workspace.remotes.listing()  # federation: None when no remotes are configured
    if fmt == "json":
        data: dict[str, Any] = {
            "skills": [s.summary_dict() for s in skills],
            "diagnostics": [d.to_dict() for d in catalog.diagnostics],
        }
        if remote is not None:
            data["skills"] += [d.summary_dict() for d in remote.documents]
            data["remotes"] = [status.to_dict() for status in remote.statuses]
            data["remote_problems"] = remote.notes
        ctx.emit_json(data)
        return 0
    rows = [[ctx.paint(h, "dim") for h in ("NAME", "SOURCE", "STATUS", "DESCRIPTION")]]
    for s in skills:
        marks = _markers(s)
        color = "red" if s.errors else "yellow" if marks else "dim"
        rows.append(
            [
                ctx.paint(s.name, "bold"),
                s.source.value,
                ctx.paint(marks or "-", color),
                s.unavailable or s.brief,
            ]
        )
    for doc in remote.documents if remote is not None else ():
        label = doc.name.split(":", 1)[0]
        rows.append([ctx.paint(doc.name, "bold"), f"remote:{label}", "-", doc.brief])
    for line in table(rows if len(rows) > 1 else []):
        ctx.echo(line)
    hidden = len(catalog.skills) - len(skills)
    note = f"{len(skills)} skill(s)"
    if hidden and not show_all:
        note += f"; {hidden} shadowed, disabled or invalid not shown (use --all)"
    if skills:
        note += "; STATUS: E/W error/warning counts, disabled, hidden, shadowed (- none)"
    if not ctx.quiet:
        ctx.echo(ctx.paint(note, "dim"))
    for s in catalog.active():
        if s.unavailable and not show_all:
            ctx.echo(ctx.paint(f"{s.name}: {s.unavailable}", "red"))
    for d in catalog.diagnostics:
        ctx.echo(_format_diag(ctx, d))
    for note in remote.notes if remote is not None else ():
        ctx.echo(ctx.paint(note, "red"))
    return 0


def cmd_list(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck list``."""
    return print_list(ctx, show_all=args.all)


def cmd_show(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck show NAME`` (``LABEL:NAME``: a remote skill, approved as it is now)."""
    target = ctx.workspace().actions.target(args.name)
    skill = target.skill
    record = skill.to_dict()
    record.update(target.facts())
    tools = loader.tool_availability(skill, ctx.workspace().registry)
    record["tool_availability"] = None if "error" in tools else tools
    shadows = [s for s in ctx.catalog().skills if s.shadowed_by == skill.path]
    record["shadows"] = [
        {"path": str(s.path), "source": s.source.value, "reason": s.shadow_reason} for s in shadows
    ]
    fmt = ctx.output_format()
    if fmt == "json":
        ctx.emit_json(record)
        return 0
    ctx.echo(ctx.paint(skill.name, "bold") + f"  ({record.get('origin', skill.source.value)})")
    ctx.echo("  " + "\n  ".join(skill.description.splitlines()))  # its lines, indented
    rows = [["path", str(record.get("uri", skill.path))]]
    if target.remote is not None:
        rows += [["digest", record["digest"]], ["review", record["review"]]]
    if skill.shadowed:
        rows.append(["shadowed", skill.shadow_reason or f"by {skill.shadowed_by}"])
    for copy in shadows:
        rows.append(["shadows", f"{copy.path} ({copy.source.value}; never used)"])
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
            painted = ctx.paint(f"{status:<10}", color)
            ctx.echo(f"  {ref.name:<24} {painted} {req}  {ref.purpose}".rstrip())
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
    """``skilldeck load NAME [ARGS]`` (``LABEL:NAME``: a remote skill, approved as it is
    now, as a model gets it)."""
    fmt = ctx.output_format()
    door = ctx.workspace().actions
    arguments = " ".join(a for a in args.arguments if a != "--")
    loaded = door.load(args.name, arguments, actor="cli", source="cli")
    answer, _notes = door.answer(loaded)
    if fmt == "json":
        ctx.emit_json(answer)
        return 0
    ctx.echo(answer["text"])
    for warning in loaded.result.warnings:
        ctx.warn(f"warning: {warning}")
    missing = answer["tools"].get("missing") or []
    if missing:
        ctx.warn(f"warning: tools this skill needs are not available here: {', '.join(missing)}")
    return 0


def cmd_read(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck read NAME PATH`` (``LABEL:NAME``: a file a remote skill's current entry
    lists, verified against its digest)."""
    fmt = ctx.output_format()
    read = ctx.workspace().actions.read(args.name, args.path, actor="cli", source="cli")
    resource = read.resource
    if fmt == "json":
        ctx.emit_json({**resource.to_dict(), **(read.remote or {})})
        return 0
    if resource.binary:
        ctx.echo(
            f"{resource.path}: binary file ({resource.size} bytes, {resource.mime}); "
            "use --format json to get it as base64"
        )
        return 0
    text = resource.text or ""
    if text:
        ctx.echo(text[:-1] if text.endswith("\n") else text)
    return 0


# ---------------------------------------------------------------------------- validate / lint


def _workspace_for_paths(ctx: CliContext, paths: list[Path]) -> Workspace:
    """Discovered workspace of the given paths (skill folders, SKILL.md, folders of skills)."""
    if not paths:
        return ctx.workspace()
    roots = []
    for path in paths:
        path = path.expanduser()
        if not path.exists():
            raise SkilldeckError(ErrorCode.NOT_FOUND, f"{path}: no such file or folder")
        if path.is_file():
            if path.name.lower() != "skill.md":
                raise SkilldeckError(
                    ErrorCode.INVALID_PARAM,
                    f"{path}: not a skill (give a SKILL.md, a skill folder or a folder of skills)",
                )
            path = path.parent
        roots.append(path.absolute())
    workspace = ctx.open_workspace(roots)
    workspace.discover()
    return workspace


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
    fmt = ctx.output_format()
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
                "skills": [report_entry(skill, diags) for skill, diags in results],
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
    if not ctx.quiet:
        ctx.echo(ctx.paint(line, color))


def cmd_validate(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck validate [PATH...]``: exit 1 when any skill has an error."""
    workspace = _workspace_for_paths(ctx, args.paths)
    catalog = workspace.catalog
    _require_skills(catalog, args.paths)
    try:
        workspace.tools()
    except SkilldeckError as exc:
        ctx.warn(f"tools not checked: {exc.message}")
    tools = workspace.tool_findings
    # discovery already validated every skill against ctx.profile; body and tools are new
    results = [(s, validate_findings(s, tools.get(s.path, []))) for s in catalog.skills]
    _report(ctx, results, catalog, {"profile": ctx.profile})
    failing = _FAIL_ON[args.fail_on]
    failed = any(d.severity in failing for _, diags in results for d in diags)
    failed = failed or any(d.severity in failing for d in catalog.diagnostics)
    return 1 if failed else 0


def _split_codes(value: str | None) -> list[str] | None:
    if value is None:
        return None
    return [c.strip() for c in value.split(",") if c.strip()]


def cmd_lint(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck lint [PATH...]``: exit 1 on a finding at ``--fail-on`` or worse."""
    start = args.paths[0] if args.paths else Path.cwd()
    config = lint.load_lint_config(start.expanduser().absolute())
    for d in config.diagnostics:
        where = f"{d.path}: " if d.path else ""
        ctx.warn(f"{where}{d.code} {d.message}")
    select = _check_codes("--select", _split_codes(args.select))
    ignore = _check_codes("--ignore", _split_codes(args.ignore))
    if select is not None:
        config.select = select
    if ignore is not None:
        config.ignore = [*config.ignore, *ignore]
    workspace = _workspace_for_paths(ctx, args.paths)
    catalog = workspace.catalog
    findings = workspace.lint(config)
    results = [
        (skill, lint_report(skill, findings.get(skill.path, []))) for skill in catalog.skills
    ]
    _require_skills(catalog, args.paths)
    _report(ctx, results, catalog, {})
    failing = _FAIL_ON[args.fail_on]
    found = any(d.severity in failing for _, diags in results for d in diags)
    return 1 if found and not args.exit_zero else 0


_FAIL_ON = {
    "error": {Severity.ERROR},
    "warning": {Severity.ERROR, Severity.WARNING},
    "info": {Severity.ERROR, Severity.WARNING, Severity.INFO},
}


def _check_codes(option: str, codes: list[str] | None) -> list[str] | None:
    """``codes`` when each selects at least one lint rule; INVALID_PARAM (exit 2) naming
    the first that selects none."""
    for code in codes or []:
        upper = code.upper()
        if upper != "ALL" and not any(rule.startswith(upper) for rule in lint.RULES):
            raise SkilldeckError(
                ErrorCode.INVALID_PARAM,
                f"{option} {code}: no lint rule has this code or prefix (see 'skilldeck rules')",
            )
    return codes


def _require_skills(catalog: Catalog, paths: list[Path]) -> None:
    """INVALID_PARAM (exit 2) when ``paths`` were given and hold no skill: a CI step
    pointed at the wrong folder must fail, not report "0 skill(s) checked"."""
    if paths and not catalog.skills:
        shown = ", ".join(str(p) for p in paths)
        raise SkilldeckError(ErrorCode.INVALID_PARAM, f"no SKILL.md found under {shown}")


# ---------------------------------------------------------------------------- prompt / rules


def cmd_prompt(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck prompt``: the tier-1 listing within a character budget."""
    fmt = ctx.output_format(("xml", "markdown", "json"), default="xml")
    budget = args.budget if args.budget is not None else ctx.settings.prompt_char_budget
    if budget < 0:
        raise SkilldeckError(ErrorCode.INVALID_PARAM, "--budget must be 0 or more")
    listing = loader.render_listing(
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
    """``skilldeck rules [CODE...]``: every rule of the one catalogue (lint rules with an
    example), or the rules named (codes, prefixes or names; exit 2 naming one that matches
    nothing)."""
    fmt = ctx.output_format(("text", "markdown", "json"))
    if not args.codes:
        ctx.echo(rules.rules_reference(fmt))
        return 0
    entries = [rules.rule_entry(rule) for rule in rules.find_rules(args.codes)]
    if fmt == "json":
        ctx.emit_json({"rules": entries})
        return 0
    for entry in entries:
        _print_rule(ctx, entry, markdown=fmt == "markdown")
    return 0


def _print_rule(ctx: CliContext, entry: dict[str, Any], *, markdown: bool) -> None:
    severity = entry["severity"]
    if isinstance(severity, dict):
        severity = ", ".join(f"{p}: {s or '-'}" for p, s in severity.items())
    if markdown:
        ctx.echo(f"## {entry['code']} `{entry['name']}` ({severity})\n\n{entry['summary']}\n")
        if "explanation" in entry:
            ctx.echo(f"{entry['explanation']}\n")
        if "bad_example" in entry:
            ctx.echo(f"Bad:\n\n```\n{entry['bad_example']}\n```\n")
            ctx.echo(f"Good:\n\n```\n{entry['good_example']}\n```\n")
        return
    ctx.echo(ctx.paint(f"{entry['code']}  {entry['name']}", "bold") + f"  [{severity}]")
    ctx.echo(f"    {entry['summary']}")
    if "explanation" in entry:
        ctx.echo(f"    {entry['explanation']}")
    if "bad_example" in entry:
        ctx.echo("    bad:  " + entry["bad_example"].replace("\n", "\n          "))
        ctx.echo("    good: " + entry["good_example"].replace("\n", "\n          "))
    ctx.echo()
