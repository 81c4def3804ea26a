"""Lint rules (positive and negative), selection, configuration files and the corpus."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import write_skill
from skilldeck.core.discovery.frontmatter import parse_skill_file
from skilldeck.core.lint import (
    RULES,
    LintConfig,
    Rule,
    lint_catalog,
    lint_skill,
    load_lint_config,
    rules_reference,
)
from skilldeck.core.lint.overlap import find_overlaps
from skilldeck.core.model import Catalog, Severity, Skill, Source, Triggers

GOOD = "Splits and merges PDF files page by page. Use when the user has PDFs to split."


def make(
    root: Path,
    name: str = "pdf-split",
    description: str = GOOD,
    body: str = "# PDF\n\nSplit pages.\n",
    extra: str = "",
    folder: str | None = None,
) -> Skill:
    return parse_skill_file(write_skill(root, name, description, body, extra, folder))


def found(skill: Skill, code: str, catalog: Catalog | None = None) -> list[str]:
    """Messages of ``code`` findings, with only that rule selected."""
    cfg = LintConfig(select=[code])
    return [d.message for d in lint_skill(skill, catalog, cfg) if d.code == code]


def test_clean_skill_has_no_findings(tmp_path: Path) -> None:
    assert lint_skill(make(tmp_path)) == []


def test_rules_table() -> None:
    assert all(isinstance(r, Rule) and r.code == c for c, r in RULES.items())
    assert all(r.bad_example and r.good_example and r.summary for r in RULES.values())
    assert len(RULES) >= 20
    assert list(RULES) == sorted(RULES)


# -- description rules ------------------------------------------------------------------------


def test_sl001_too_short(tmp_path: Path) -> None:
    assert found(make(tmp_path / "a", description="Splits PDFs."), "SL001")
    assert not found(make(tmp_path / "b"), "SL001")
    short_ok = make(tmp_path / "c", description="Splits PDFs.")
    assert not lint_skill(short_ok, config=LintConfig(select=["SL001"], min_description_chars=5))


def test_sl002_vague(tmp_path: Path) -> None:
    assert found(make(tmp_path / "a", description="Helps with stuff."), "SL002")
    vague = "A useful utility skill that helps with various things and tasks. Use when needed."
    assert found(make(tmp_path / "b", description=vague), "SL002")
    assert not found(make(tmp_path / "c"), "SL002")


def test_sl003_no_use_when_cue(tmp_path: Path) -> None:
    plain = "Generates release notes from the git history of a repository."
    assert found(make(tmp_path / "a", description=plain), "SL003")
    assert not found(make(tmp_path / "b"), "SL003")
    cue = "Generates release notes. Use this skill when preparing a release."
    assert not found(make(tmp_path / "c", description=cue), "SL003")
    user = "Generates release notes if the user mentions a release tag."
    assert not found(make(tmp_path / "d", description=user), "SL003")
    sep = make(tmp_path / "e", description=plain, extra="when_to_use: Preparing a release.\n")
    assert not found(sep, "SL003")


def test_sl004_over_listing_cap(tmp_path: Path) -> None:
    long = "Splits PDFs. Use when splitting. " + "word " * 320
    assert found(make(tmp_path / "a", description=long), "SL004")
    combined = make(
        tmp_path / "b",
        description="Splits PDFs. " + "x" * 900,
        extra=f"when_to_use: {'y' * 700}\n",
    )
    assert "when_to_use" in found(combined, "SL004")[0]
    assert not found(make(tmp_path / "c"), "SL004")


def test_sl005_not_front_loaded(tmp_path: Path) -> None:
    desc = GOOD + " " + "It also handles rotation, metadata and bookmarks in detail. " * 4
    assert len(desc) > 250
    skill = make(tmp_path / "a", description=desc)
    assert found(skill, "SL005")
    assert lint_skill(skill, config=LintConfig(select=["SL005"]))[0].severity is Severity.INFO
    assert not found(make(tmp_path / "b"), "SL005")
    relaxed = LintConfig(select=["SL005"], listing_front_chars=1000)
    assert not lint_skill(skill, config=relaxed)


def test_sl006_xml_tags(tmp_path: Path) -> None:
    tagged = "Splits PDFs. Use when <example>the user has PDFs</example>."
    assert found(make(tmp_path / "a", description=f'"{tagged}"'), "SL006")
    assert not found(make(tmp_path / "b", description='"Use for < 50 pages, a -> b."'), "SL006")
    assert not found(make(tmp_path / "c"), "SL006")


def test_sl007_reserved_word_in_name(tmp_path: Path) -> None:
    assert found(make(tmp_path, "claude-helper"), "SL007")
    assert found(make(tmp_path, "my-anthropic-tool"), "SL007")
    # The platform restricts the name only; mentioning Claude in a description is fine.
    about = "Configures Claude Code hooks. Use when the user edits hooks."
    assert not found(make(tmp_path, "hooks-setup", description=about), "SL007")


def test_sl008_name_folder_mismatch(tmp_path: Path) -> None:
    msgs = found(make(tmp_path, "pdf", folder="pdf-tools"), "SL008")
    assert msgs and "pdf-tools" in msgs[0]
    assert not found(make(tmp_path, "pdf-tools"), "SL008")


def test_sl009_allowed_tools_commas(tmp_path: Path) -> None:
    commas = make(tmp_path / "a", extra="allowed-tools: Read, Grep, Bash(git:*)\n")
    msgs = found(commas, "SL009")
    assert msgs and "'Read Grep Bash(git:*)'" in msgs[0]
    inner = make(tmp_path / "b", extra="allowed-tools: Read Bash(git add:*, git commit:*)\n")
    assert not found(inner, "SL009")
    listed = make(tmp_path / "c", extra="allowed-tools: [Read, Grep]\n")
    assert not found(listed, "SL009")


def test_sl010_invalid_trigger_regex(tmp_path: Path) -> None:
    bad = make(tmp_path / "a", extra="triggers:\n  patterns: ['split (pdf', 'ok.*']\n")
    diags = lint_skill(bad, config=LintConfig(select=["SL010"]))
    assert len(diags) == 1 and diags[0].severity is Severity.ERROR
    assert diags[0].line == bad.field_lines["triggers"]
    good = make(tmp_path / "b", extra="triggers:\n  patterns: ['split (pdf|doc)']\n")
    assert not found(good, "SL010")


# -- body rules -------------------------------------------------------------------------------


def test_sl101_body_lines(tmp_path: Path) -> None:
    long = make(tmp_path / "a", body="line\n" * 501)
    diags = lint_skill(long, config=LintConfig(select=["SL101"]))
    assert len(diags) == 1 and "501 lines" in diags[0].message
    assert not found(make(tmp_path / "b", body="line\n" * 500), "SL101")
    assert not lint_skill(long, config=LintConfig(select=["SL101"], max_body_lines=600))


def test_sl102_body_tokens(tmp_path: Path) -> None:
    big = make(tmp_path / "a", body="x" * 21000 + "\n")
    assert found(big, "SL102")
    assert not found(make(tmp_path / "b", body="x" * 4000 + "\n"), "SL102")


def test_sl103_broken_links(tmp_path: Path) -> None:
    body = (
        "# T\n\nSee [guide](references/guide.md) and [api](references/api.md#auth).\n"
        "Also [site](https://example.com), [top](#t), ![img](assets/logo.png).\n"
        "[^1]: Footnote. https://example.com\n"
        "[ref]: references/missing-ref.md\n"
        "```\n[in code](nowhere.md)\n```\n"
    )
    skill = make(tmp_path, body=body)
    (skill.base_dir / "references").mkdir()
    (skill.base_dir / "references" / "api.md").write_text("x", "utf-8")
    diags = lint_skill(skill, config=LintConfig(select=["SL103"]))
    targets = sorted(d.message.split("'")[1] for d in diags)
    assert targets == ["assets/logo.png", "references/guide.md", "references/missing-ref.md"]
    first = next(d for d in diags if "guide" in d.message)
    assert first.line == skill.body_line + 2
    assert first.column == body.splitlines()[2].index("references/guide.md") + 1


def test_sl104_missing_referenced_files(tmp_path: Path) -> None:
    body = (
        "Run `python scripts/fetch.py --all` then read `references/api.md`.\n"
        "Also `${CLAUDE_SKILL_DIR}/scripts/gone.sh` and `scripts/run.py`.\n"
        "Not paths: `src/app.py`, `references/<topic>.md`, `scripts/`.\n"
    )
    skill = make(tmp_path, body=body)
    (skill.base_dir / "scripts").mkdir()
    (skill.base_dir / "scripts" / "run.py").write_text("print()", "utf-8")
    msgs = found(skill, "SL104")
    missing = sorted(m.split("'")[1] for m in msgs)
    assert missing == ["references/api.md", "scripts/fetch.py", "scripts/gone.sh"]


def test_sl105_machine_specific_paths(tmp_path: Path) -> None:
    body = (
        "Run /Users/alice/skills/pdf/run.py\n"
        "or /home/bob/x.py or C:\\Users\\carol\\x.py\n"
        "but ~/.claude/skills and /usr/bin/env and ./scripts are fine.\n"
    )
    skill = make(tmp_path / "a", body=body)
    diags = lint_skill(skill, config=LintConfig(select=["SL105"]))
    assert [(d.line or 0) - skill.body_line for d in diags] == [0, 1]
    assert "/Users/alice" in diags[0].message
    assert not found(make(tmp_path / "b"), "SL105")


def test_body_rules_skip_unreadable_body(tmp_path: Path) -> None:
    skill = make(tmp_path)
    skill.path.unlink()
    assert lint_skill(skill) == []  # no traceback, body rules skipped


# -- catalog rules ----------------------------------------------------------------------------


def test_sl201_shadowed_duplicate(tmp_path: Path) -> None:
    winner = make(tmp_path / "project", "pdf-split")
    loser = make(tmp_path / "user", "pdf-split")
    winner.source, loser.source = Source.PROJECT, Source.USER
    loser.shadowed_by = winner.path
    loser.shadow_reason = "project skills win over user skills"
    catalog = Catalog(skills=[loser, winner])
    msgs = found(loser, "SL201", catalog)
    assert msgs and "project" in msgs[0] and str(winner.path) in msgs[0]
    assert not found(winner, "SL201", catalog)
    result = lint_catalog([loser, winner], catalog, LintConfig(select=["SL2"]))
    assert [d.code for d in result[loser.path]] == ["SL201"]
    assert result[winner.path] == []  # the shadowed copy is not an overlap partner


def test_sl201_names_the_winner_path_once(tmp_path: Path) -> None:
    winner = make(tmp_path / "project", "pdf-split")
    loser = make(tmp_path / "user", "pdf-split")
    loser.shadowed_by = winner.path
    loser.shadow_reason = f"shadowed by {winner.path} (project skills win over user skills)"
    (msg,) = found(loser, "SL201", Catalog(skills=[loser, winner]))
    assert msg.count(str(winner.path)) == 1
    assert msg.endswith("(project skills win over user skills)")


def test_sl202_description_overlap(tmp_path: Path) -> None:
    a = make(tmp_path, "pdf-split")
    b = make(tmp_path, "pdf-cut", description=GOOD.replace("Splits", "Cuts"))
    c = make(tmp_path, "csv-load", description="Loads CSV files into DuckDB. Use when querying.")
    catalog = Catalog(skills=[a, b, c])
    result = lint_catalog([a, b, c], catalog, LintConfig(select=["SL202"]))
    assert "pdf-cut" in result[a.path][0].message
    assert "pdf-split" in result[b.path][0].message
    assert result[c.path] == []
    assert found(a, "SL202", catalog)  # single-skill mode agrees
    assert not found(c, "SL202", catalog)
    strict = lint_catalog([a, b], catalog, LintConfig(select=["SL202"], overlap_threshold=0.99))
    assert strict[a.path] == []


def test_overlap_prefix_filter_matches_brute_force(tmp_path: Path) -> None:
    import random

    from skilldeck.core.lint.overlap import content_words, jaccard

    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(60)]
    skills = []
    for i in range(150):
        words = rng.sample(vocab, rng.randint(3, 9))
        skills.append(Skill(f"s{i}", " ".join(words), tmp_path / f"s{i}", tmp_path))
    fast = find_overlaps(skills, 0.6)
    sets = [content_words(s.description) for s in skills]
    for i, s in enumerate(skills):
        scores = [jaccard(sets[i], sets[j]) for j in range(len(skills)) if j != i]
        best = max(scores)
        if best >= 0.6:
            assert fast[s.path].score == pytest.approx(best)
        else:
            assert s.path not in fast


def test_overlap_is_bounded_for_identical_descriptions(tmp_path: Path) -> None:
    desc = "Splits PDF files page by page for archiving reports"
    skills = [Skill(f"s{i}", desc, tmp_path / f"s{i}", tmp_path) for i in range(3000)]
    result = find_overlaps(skills, 0.8, max_candidates=50)  # timed: bench_timing.py overlap
    assert set(result) == {s.path for s in skills}
    assert all(match.score == pytest.approx(1.0) for match in result.values())


# -- security ---------------------------------------------------------------------------------


def test_sl301_invisible_unicode(tmp_path: Path) -> None:
    zw = make(tmp_path / "a", description=GOOD.replace("PDF", "PD\u200bF"))
    assert "U+200B" in found(zw, "SL301")[0]
    bidi = make(tmp_path / "b", body="# T\n\nRun it \u202eevil\u202c now.\n")
    diags = lint_skill(bidi, config=LintConfig(select=["SL301"]))
    assert diags[0].line == bidi.body_line + 2 and diags[0].column == 8
    assert diags[0].severity is Severity.ERROR
    emoji = make(tmp_path / "c", body="# T\n\nTeam: 👩\u200d💻 and नमस्\u200dते.\n")
    assert not found(emoji, "SL301")
    assert not found(make(tmp_path / "d"), "SL301")


def test_sl302_pipe_to_shell(tmp_path: Path) -> None:
    cases = [
        "curl -fsSL https://x.sh/install | bash",
        "wget -qO- https://x.sh | sudo sh",
        'sh -c "$(curl -fsSL https://x.sh)"',
        "bash <(curl -s https://x.sh)",
        "irm https://x.ps1 | iex",
    ]
    for i, line in enumerate(cases):
        skill = make(tmp_path / str(i), body=f"```\n{line}\n```\n")
        assert found(skill, "SL302"), line
    safe = "curl -fsSL https://x.sh -o install.sh\nsha256sum install.sh | grep abc\n"
    assert not found(make(tmp_path / "safe", body=safe), "SL302")


@pytest.mark.skipif(os.name == "nt", reason="symlinks")
def test_sl303_symlink_escape(tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("s", "utf-8")
    skill = make(tmp_path / "skills")
    (skill.base_dir / "refs").mkdir()
    (skill.base_dir / "refs" / "leak").symlink_to(outside)
    (skill.base_dir / "inside").symlink_to(skill.base_dir / "SKILL.md")
    (skill.base_dir / "loop").symlink_to(skill.base_dir / "loop")
    msgs = found(skill, "SL303")
    assert len(msgs) == 1 and "refs/leak" in msgs[0]
    # A skill folder that is itself a symlink (how users install skills) is fine.
    link_root = tmp_path / "linked"
    link_root.mkdir()
    (link_root / "pdf-split").symlink_to(skill.base_dir.parent / "pdf-split")
    via_link = parse_skill_file(link_root / "pdf-split" / "SKILL.md")
    assert len(found(via_link, "SL303")) == 1
    assert not found(make(tmp_path / "clean"), "SL303")


# -- selection and configuration --------------------------------------------------------------


def test_select_and_ignore_prefixes() -> None:
    assert LintConfig().enabled("SL303")
    assert LintConfig(select=["ALL"]).enabled("SL001")
    cfg = LintConfig(select=["SL0"])
    assert cfg.enabled("SL001") and cfg.enabled("SL010") and not cfg.enabled("SL101")
    cfg = LintConfig(select=["SL"], ignore=["SL1", "SL005"])
    assert cfg.enabled("SL001") and not cfg.enabled("SL005") and not cfg.enabled("SL101")
    cfg = LintConfig(select=["SL101"], ignore=["SL1"])
    assert cfg.enabled("SL101")  # the more specific selector wins, like ruff
    cfg = LintConfig(select=["sl3"], ignore=["SL3"])
    assert not cfg.enabled("SL301")  # on a tie ignore wins
    assert LintConfig(select=[]).enabled_codes() == []
    assert LintConfig(ignore=["SL"]).enabled_codes() == []


def test_ignore_applies_to_findings(tmp_path: Path) -> None:
    skill = make(tmp_path, "pdf", folder="other", description="Splits PDFs.")
    every = {d.code for d in lint_skill(skill)}
    assert {"SL001", "SL003", "SL008"} <= every
    some = {d.code for d in lint_skill(skill, config=LintConfig(ignore=["SL00"]))}
    assert not some & {"SL001", "SL003", "SL008"}


def test_config_from_pyproject_lint_table(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.skilldeck.lint]\nselect = ["SL0", "SL1"]\n'
        'ignore = ["SL005"]\nmax-body-lines = 800\noverlap_threshold = 0.9\n',
        "utf-8",
    )
    deep = tmp_path / "skills" / "pdf"
    deep.mkdir(parents=True)
    cfg = load_lint_config(deep)
    assert cfg.source == tmp_path / "pyproject.toml"
    assert cfg.select == ["SL0", "SL1"] and cfg.ignore == ["SL005"]
    assert cfg.max_body_lines == 800 and cfg.overlap_threshold == 0.9
    assert cfg.enabled("SL101") and not cfg.enabled("SL005") and not cfg.enabled("SL301")
    assert cfg.diagnostics == []


def test_config_from_tool_skilldeck_table(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.skilldeck]\nprofile = "agentskills"\nignore = ["SL3"]\n', "utf-8"
    )
    cfg = load_lint_config(tmp_path)
    assert cfg.ignore == ["SL3"] and not cfg.enabled("SL301")
    assert cfg.diagnostics == []  # 'profile' belongs to someone else


def test_pyproject_without_our_table_is_skipped(tmp_path: Path) -> None:
    (tmp_path / ".skilldeck.toml").write_text('ignore = ["SL1"]\n', "utf-8")
    inner = tmp_path / "pkg"
    inner.mkdir()
    (inner / "pyproject.toml").write_text("[tool.ruff]\nline-length = 90\n", "utf-8")
    cfg = load_lint_config(inner)
    assert cfg.source == tmp_path / ".skilldeck.toml" and cfg.ignore == ["SL1"]


def test_dot_skilldeck_toml_lint_table_wins_over_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.skilldeck]\nignore = ["SL1"]\n', "utf-8")
    (tmp_path / ".skilldeck.toml").write_text(
        '[lint]\nselect = ["SL3"]\nbogus = 1\nmin-description-chars = "x"\nignore = ["XX9"]\n',
        "utf-8",
    )
    cfg = load_lint_config(tmp_path / "file.md")
    assert cfg.source == tmp_path / ".skilldeck.toml"
    assert cfg.enabled_codes() == ["SL301", "SL302", "SL303", "SL304", "SL305", "SL306"]
    assert sorted(d.code for d in cfg.diagnostics) == ["SC301", "SC302", "SC303"]
    assert cfg.min_description_chars == 40


def test_invalid_toml_gives_defaults_and_diagnostic(tmp_path: Path) -> None:
    (tmp_path / ".skilldeck.toml").write_text("select = [\n", "utf-8")
    cfg = load_lint_config(tmp_path)
    assert cfg.select is None and [d.code for d in cfg.diagnostics] == ["SC300"]


def test_no_config_file_gives_defaults(tmp_path: Path) -> None:
    cfg = load_lint_config(tmp_path)
    assert cfg.source is None and cfg.enabled_codes() == [c for c in RULES if c != "SL013"]


# -- reference --------------------------------------------------------------------------------


def test_rules_reference_covers_every_rule() -> None:
    text = rules_reference()
    md = rules_reference("markdown")
    data = json.loads(rules_reference("json"))
    for code, rule in RULES.items():
        assert code in text and rule.name in text
        assert f"## {code}" in md
    assert [r["code"] for r in data["rules"]] == list(RULES)
    assert all(r["bad_example"] and r["good_example"] for r in data["rules"])
    assert any(v["code"] == "SV101" for v in data["validation"])
    assert "SV401" in text and "SV401" in md


def test_rules_reference_rejects_unknown_format() -> None:
    from skilldeck.core.errors import SkilldeckError

    with pytest.raises(SkilldeckError):
        rules_reference("yaml")


# -- the real corpus --------------------------------------------------------------------------


def test_corpus_lints_without_raising(corpus_dir: Path) -> None:
    files = sorted(corpus_dir.rglob("SKILL.md"))
    skills = [parse_skill_file(p) for p in files]
    catalog = Catalog(skills=skills)
    result = lint_catalog(skills, catalog, LintConfig())  # timed: bench_timing.py lint-corpus
    total = sum(len(v) for v in result.values())
    by_code: dict[str, int] = {}
    for diags in result.values():
        for d in diags:
            by_code[d.code] = by_code.get(d.code, 0) + 1
            assert d.code in RULES and d.path is not None
    print(f"linted {len(skills)} skills: {total} findings {sorted(by_code.items())}")
    assert set(result) == {s.path for s in skills}
    # Known duplicates between anthropics/skills and ComposioHQ's copy must be found.
    assert by_code.get("SL202", 0) >= 2


def test_sl105_in_description(tmp_path: Path) -> None:
    desc = "Runs /home/alice/bin/tool on PDFs. Use when the user has PDFs to split."
    assert found(make(tmp_path, description=desc), "SL105")


def test_config_changes_after_use_take_effect() -> None:
    cfg = LintConfig()
    assert cfg.enabled("SL101")
    cfg.select = ["SL0"]
    assert not cfg.enabled("SL101")
    cfg.select = None
    cfg.ignore = [*cfg.ignore, "SL1"]
    assert not cfg.enabled("SL101") and cfg.enabled("SL001")


def test_skill_can_silence_rules_in_metadata(tmp_path: Path) -> None:
    extra = 'metadata:\n  skilldeck-lint-ignore: "SL00, SL104"\n'
    body = "Run `scripts/missing.py`.\n"
    skill = make(
        tmp_path, "pdf", folder="other", description="Splits PDFs.", body=body, extra=extra
    )
    assert lint_skill(skill) == []
    from skilldeck.core.validate import validate_skill

    assert not any(d.code == "SV302" for d in validate_skill(skill, "agentskills"))
    loud = make(tmp_path / "b", "pdf", folder="other", description="Splits PDFs.", body=body)
    assert {"SL001", "SL003", "SL008", "SL104"} <= {d.code for d in lint_skill(loud)}


def test_crashing_rule_becomes_sl000(tmp_path: Path) -> None:
    skill = make(tmp_path)
    skill.triggers = Triggers(patterns=(None,))  # type: ignore[arg-type]
    skill.field_lines = None  # type: ignore[assignment]
    diags = lint_skill(skill)
    assert diags and all(d.code == "SL000" for d in diags)
    assert RULES["SL000"].severity is Severity.ERROR


FRONTMATTER_LINES = st.sampled_from(
    [
        "name: x",
        "name: [a, b]",
        "name: 12",
        "description: Use when <b>\u200b",
        "description: ''",
        "description:\n  - a",
        "allowed-tools: a, b(c, d)",
        "allowed-tools: {a: 1}",
        "triggers: {patterns: ['(', 3, null]}",
        "triggers: [a, '[']",
        "metadata: {skilldeck-lint-ignore: 3}",
        "metadata: 7",
        "when_to_use: [1]",
        "hooks: 1",
        "context: 2",
        "? [a]\n: b",
        "1: 2",
        "tools: [{name: 1}, 3]",
    ]
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(FRONTMATTER_LINES, max_size=6), body=st.text(max_size=300))
def test_lint_and_validate_never_raise(lines: list[str], body: str) -> None:
    from skilldeck.core.discovery.frontmatter import parse_bytes
    from skilldeck.core.validate import PROFILES, validate_skill

    text = "---\n" + "\n".join(lines) + "\n---\n" + body
    path = Path("/nonexistent-skilldeck/odd/SKILL.md")
    skill = parse_bytes(text.encode("utf-8", "surrogatepass"), path)
    for profile in PROFILES:
        validate_skill(skill, profile)
    diags = lint_skill(skill, Catalog(skills=[skill]))
    assert all(d.code != "SL000" for d in diags), diags


def test_hard_linked_file_is_an_error_unless_allowed(tmp_path: Path, isolated_home: Path) -> None:
    outside = tmp_path / "credentials"
    outside.write_text("key\n", encoding="utf-8")
    md = write_skill(tmp_path / "skills", "linker")
    (md.parent / "references").mkdir()
    os.link(outside, md.parent / "references" / "notes.md")
    skill = parse_skill_file(md, root=tmp_path / "skills")
    assert found(skill, "SL304") == ["'references/notes.md' has 2 hard links; it will not be read"]
    (isolated_home / "config.toml").write_text("allow_hardlinks = true\n", encoding="utf-8")
    assert not found(skill, "SL304")


# -- SL011 description-missing, SL012 version-not-semver, SL106 body-encoding ------------------


def test_sl011_missing_or_empty_description(tmp_path: Path) -> None:
    folder = tmp_path / "no-desc"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: no-desc\n---\n# Body\n", encoding="utf-8")
    (message,) = found(parse_skill_file(folder / "SKILL.md"), "SL011")
    assert "description is missing" in message
    assert found(make(tmp_path / "b", description="''"), "SL011") == [
        "description is empty: a model cannot match the skill to any request"
    ]
    assert "not a string" in found(make(tmp_path / "c", description="[a, b]"), "SL011")[0]
    assert not found(make(tmp_path / "d"), "SL011")
    unparsed = tmp_path / "bad" / "SKILL.md"
    unparsed.parent.mkdir()
    unparsed.write_text("no frontmatter\n", encoding="utf-8")
    assert not found(parse_skill_file(unparsed), "SL011")  # the parse error says why


@pytest.mark.parametrize(
    ("extra", "flagged"),
    [
        ("metadata:\n  version: '1.0'\n", "metadata.version '1.0' is not semantic versioning"),
        ("version: 2\n", "such as '2.0.0'"),
        ("version: v1.2.3\n", "'v1.2.3'"),
        ("metadata:\n  version: 1.2.3.4\n", "'1.2.3.4'"),
        ("metadata:\n  version: '1.2.3'\n", None),
        ("version: 1.0.0-beta.2+exp.sha.5114f85\n", None),
        ("license: MIT\n", None),
    ],
)
def test_sl012_version_must_be_semver(tmp_path: Path, extra: str, flagged: str | None) -> None:
    messages = found(make(tmp_path, extra=extra), "SL012")
    if flagged is None:
        assert messages == []
    else:
        (message,) = messages
        assert flagged in message and "MAJOR.MINOR.PATCH" in message


def test_sl012_points_at_the_field(tmp_path: Path) -> None:
    skill = make(tmp_path, extra="license: MIT\nmetadata:\n  version: '1.0'\n")
    (diag,) = lint_skill(skill, config=LintConfig(select=["SL012"]))
    assert diag.line == skill.field_lines["metadata"] and diag.severity is Severity.WARNING


def test_sl106_bom_and_non_utf8_body(tmp_path: Path) -> None:
    skill = make(tmp_path / "a", body="# PDF\n\ncafe\n")
    skill.path.write_bytes(b"\xef\xbb\xbf" + skill.path.read_bytes().replace(b"cafe", b"caf\xe9"))
    skill = parse_skill_file(skill.path)
    diags = lint_skill(skill, config=LintConfig(select=["SL106"]))
    assert [(d.line, d.column) for d in diags] == [(1, 1), (7, 4)]
    assert "byte order mark" in diags[0].message and "bytes e9" in diags[1].message
    assert not found(make(tmp_path / "b", body="# Café ünïcode ✓\n"), "SL106")
