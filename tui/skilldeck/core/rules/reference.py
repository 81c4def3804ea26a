"""The rules reference: every rule of the catalogue as text, markdown or JSON, and one
rule as the ``rules CODE`` entry of every face."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.rules.catalogue import family_rules
from skilldeck.core.rules.model import Rule
from skilldeck.core.rules.profiles import CHECKS, PROFILES, profile

_OTHER_FAMILIES = (("SD", "Discovery"), ("ST", "Tools"), ("SI", "Install review"))
"""The families listed after lint and validation, with their heading."""


def rule_entry(rule: Rule) -> dict[str, Any]:
    """One rule, JSON-ready: a lint rule with its examples, a rule the profiles rate (every
    validation rule, SD105) with its severity under each profile, any other with its
    default severity; the explanation when there is one."""
    entry: dict[str, Any] = {"code": rule.code, "name": rule.name, "kind": rule.family}
    if rule.family == "validation" or any(rule.code in profile(p).severities for p in PROFILES):
        entry["severity"] = {
            p: (sev.value if (sev := profile(p).severity(rule.code)) else None) for p in PROFILES
        }
    else:
        entry["severity"] = rule.severity.value
    entry["summary"] = rule.summary
    if rule.bad_example:
        entry |= {"bad_example": rule.bad_example, "good_example": rule.good_example}
    if rule.explanation:
        entry["explanation"] = rule.explanation
    return entry


def rules_reference(fmt: str = "text") -> str:
    """Document every rule: lint rules with bad and good examples, validation codes with
    their severity per profile, then the discovery, tools and install codes.

    Args:
        fmt: ``text``, ``markdown`` or ``json``.

    Returns:
        The reference as one string.

    Raises:
        SkilldeckError: INVALID_PARAM for an unknown format.
    """
    render = {"json": _reference_json, "markdown": _reference_markdown, "text": _reference_text}
    if fmt not in render:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"unknown rules format {fmt!r}; choose text, markdown or json",
        )
    return render[fmt]()


def _reference_json() -> str:
    data: dict[str, Any] = {
        "rules": [
            {k: v for k, v in asdict(r).items() if k != "explanation"}
            | {"severity": r.severity.value}
            for r in family_rules("SL").values()
        ],
        "validation": [
            {
                "code": c.code,
                "name": c.name,
                "summary": c.summary,
                "severity": {
                    p: (s.value if s else None) for p, s in zip(PROFILES, c.severities, strict=True)
                },
            }
            for c in CHECKS.values()
        ],
    }
    for prefix, _ in _OTHER_FAMILIES:
        rules = family_rules(prefix).values()
        data[next(iter(rules)).family] = [rule_entry(r) for r in rules]
    return json.dumps(data, indent=2, ensure_ascii=False)


def _reference_markdown() -> str:
    out = ["# Skilldeck lint rules", ""]
    out.append(
        "Select or ignore by code or prefix (`SL0`, `SL3`, `ALL`), like ruff, with "
        "`--select`/`--ignore` or `select`/`ignore` in `[tool.skilldeck.lint]` "
        "(pyproject.toml) or `.skilldeck.toml`. One skill can silence rules for itself "
        'with `metadata: {skilldeck-lint-ignore: "SL104 SL005"}`.'
    )
    out.append("")
    for r in family_rules("SL").values():
        out += [f"## {r.code} `{r.name}` ({r.severity.value})", "", r.summary, ""]
        out += ["Bad:", "", "```", r.bad_example, "```", ""]
        out += ["Good:", "", "```", r.good_example, "```", ""]
    out += ["# Validation codes", "", "| code | name | " + " | ".join(PROFILES) + " | meaning |"]
    out.append("|" + "---|" * (len(PROFILES) + 3))
    for c in CHECKS.values():
        sev = " | ".join(s.value if s else "-" for s in c.severities)
        out.append(f"| {c.code} | {c.name} | {sev} | {c.summary} |")
    for prefix, heading in _OTHER_FAMILIES:
        out += ["", f"# {heading} codes", "", "| code | name | severity | meaning |"]
        out.append("|---|---|---|---|")
        for r in family_rules(prefix).values():
            meaning = f"{r.summary} {r.explanation}".strip()
            out.append(f"| {r.code} | {r.name} | {r.severity.value} | {meaning} |")
    return "\n".join(out) + "\n"


def _reference_text() -> str:
    out = [
        "Select or ignore rules by code or prefix (SL0, SL3, ALL) with --select/--ignore or in",
        "[tool.skilldeck.lint] (pyproject.toml) / .skilldeck.toml; one skill silences rules",
        'for itself with metadata: {skilldeck-lint-ignore: "SL104 SL005"}.',
        "",
    ]
    for r in family_rules("SL").values():
        out.append(f"{r.code}  {r.name}  [{r.severity.value}]")
        out.append(f"    {r.summary}")
        out.append("    bad:  " + r.bad_example.replace("\n", "\n          "))
        out.append("    good: " + r.good_example.replace("\n", "\n          "))
        out.append("")
    out.append("Validation codes (severity per profile: " + ", ".join(PROFILES) + ")")
    for c in CHECKS.values():
        sev = "/".join(s.value if s else "-" for s in c.severities)
        out.append(f"{c.code}  {c.name}  [{sev}]  {c.summary}")
    for prefix, heading in _OTHER_FAMILIES:
        out += ["", f"{heading} codes"]
        for r in family_rules(prefix).values():
            out.append(f"{r.code}  {r.name}  [{r.severity.value}]  {r.summary}")
    return "\n".join(out) + "\n"
