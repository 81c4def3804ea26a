"""One-shot search (:meth:`Workspace.search` before any discovery): with a warm store it
answers from the saved index without building the catalog, exactly as the full path
would, and any change to what discovery reads (a SKILL.md edited, added or removed, a
registry file, the profile) sends it down the full path: never a stale answer."""

from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import write_skill
from skilldeck.core.config import Settings
from skilldeck.core.store import LocalStore
from skilldeck.core.workspace import Scope, Workspace
from skilldeck.core.workspace.oneshot import LazySkills

WORD_TEXT = (
    "deploy kubernetes cluster helm chart terraform module cloud postgres migration schema "
    "index query python test fixture pytest mock docker image build release changelog commit "
    "review security audit secret token rotate incident postmortem timeline metrics alert"
)
WORDS = WORD_TEXT.split()
QUERIES = [
    "deploy kubernetes",
    "kubernets cluster",
    "postgres migration schema",
    "write a postmortem",
    "dock",
    "secret rotat",
    "pytest fixtures",
    "$skill-7",
    "use the skill-3 skill",
    "zzz nothing here",
    "te",
    "sk",
    "release changelog commit",
    "deploy now please",
    "rotate the token now",
    "shared helper",
]
SCOPES: list[Scope] = ["active", "visible"]
PAST_NS = 10_000_000_000  # files dated 10 s back: older than a timestamp tick can hide


def _age(*folders: Path) -> None:
    """Date every file under ``folders`` 10 s back (a fingerprint ignores fresh files)."""
    when = time.time_ns() - PAST_NS
    for folder in folders:
        paths = [folder] if folder.is_file() else [folder, *folder.rglob("*")]
        for path in paths:
            os.utime(path, ns=(when, when))


def _corpus(tmp: Path) -> tuple[list[Path], Settings]:
    """Two roots (the second wins name clashes), triggers, tools, priorities, a hidden
    skill, a disabled one (registry) and shadowed copies."""
    rng = random.Random(5)
    low, high = tmp / "low", tmp / "high"
    for i in range(40):
        desc = " ".join(rng.choices(WORDS, k=9)) + ". Use when " + " ".join(rng.sample(WORDS, 3))
        extra = f"tags: [{', '.join(rng.sample(WORDS, 2))}]\n"
        if i % 7 == 0:
            extra += f"triggers:\n  keywords: [{rng.choice(WORDS)} now]\n"
        if i % 5 == 0:
            extra += "allowed-tools: Bash(git:*) Read\n"
        if i % 6 == 0:
            extra += f"priority: {i % 4}\n"
        body = f"# Skill {i}\n\n## {' '.join(rng.sample(WORDS, 2))}\n\n"
        body += " ".join(rng.choices(WORDS, k=50)) + "\n"
        write_skill(high if i % 3 else low, f"skill-{i}", desc, body=body, extra=extra)
    for root in (low, high):  # the same names in both roots: the high copies win
        write_skill(root, "shared-helper", f"Shared helper from {root.name} for deploy.")
    write_skill(low, "skill-4", "A shadowed copy of skill four about docker images.")
    write_skill(high, "quiet-one", "Deploy quietly.", extra="disable-model-invocation: true\n")
    write_skill(high, "off-one", "Deploy kubernetes when switched on.")
    registry = tmp / "registry.json"
    registry.write_text(json.dumps({"off-one": {"enabled": False, "owner": "ops"}}))
    _age(low, high, registry)
    return [low, high], Settings(semantic=False, registry_path=registry)


def _workspace(roots: list[Path], settings: Settings, profile: str = "default") -> Workspace:
    return Workspace(settings, roots, profile=profile, store=LocalStore.open())


def _answer(workspace: Workspace, query: str, scope: Scope, *, once: bool, **kw: Any) -> Any:
    agent = kw.pop("agent", False)
    if once:
        response = workspace.search(query, scope=scope, limit=10, agent=agent, **kw)
    elif agent:
        response = workspace.search(query, scope=scope, limit=10, agent=True, tools=kw.get("tools"))
    else:
        response = workspace.search(query, scope=scope, limit=10, **kw)
    data = response.to_dict(explain=True)
    data.pop("elapsed_ms")
    data["skills"] = [r.skill for r in response.results]  # every field of each result
    return data


def _full(roots: list[Path], settings: Settings, query: str, scope: Scope, **kw: Any) -> Any:
    workspace = _workspace(roots, settings)
    workspace.discover()
    return _answer(workspace, query, scope, once=False, **kw)


def _warm(roots: list[Path], settings: Settings, scope: Scope, profile: str = "default") -> None:
    """What a first one-shot search leaves: the store filled, the index saved."""
    workspace = _workspace(roots, settings, profile)
    workspace.search("warm up", scope=scope, limit=5)


def _lean(workspace: Workspace) -> bool:
    """Whether the workspace answered without building the catalog."""
    return workspace.generation == 0


@pytest.mark.parametrize("scope", SCOPES)
def test_lean_answers_equal_the_full_path(tmp_path: Path, scope: Scope) -> None:
    roots, settings = _corpus(tmp_path)
    _warm(roots, settings, scope)
    options: list[dict[str, Any]] = [
        {},
        {"explain": True},
        {"tools": {"bash"}},
        {"agent": True},
        {"agent": True, "tools": {"read", "bash"}},
    ]
    workspace = _workspace(roots, settings)
    for query in QUERIES:
        for kw in options:
            expected = _full(roots, settings, query, scope, **dict(kw))
            assert _answer(workspace, query, scope, once=True, **dict(kw)) == expected, (query, kw)
    assert _lean(workspace)
    fresh = _workspace(roots, settings)
    response = fresh.search("deploy kubernetes", scope=scope, limit=3)
    index = fresh.quick_index(scope)
    assert isinstance(index.skills, LazySkills)
    assert {id(s) for s in index.skills.loaded.values()} == {id(r.skill) for r in response.results}


def test_lean_sees_hidden_disabled_and_shadowed_as_the_full_path(tmp_path: Path) -> None:
    roots, settings = _corpus(tmp_path)
    for scope in SCOPES:
        _warm(roots, settings, scope)
    for scope in SCOPES:
        workspace = _workspace(roots, settings)
        got = _answer(workspace, "deploy quietly switched shared", scope, once=True)
        assert _lean(workspace)
        assert got == _full(roots, settings, "deploy quietly switched shared", scope)
        names = [r["name"] for r in got["results"]]
        paths = [r["path"] for r in got["results"]]
        assert ("quiet-one" in names) == ("off-one" in names) == (scope == "active")
        assert all("/low/shared-helper/" not in p for p in paths)  # the shadowed copy
    off = _workspace(roots, settings).search("$off-one", scope="active", limit=3)
    assert off.results[0].skill.enabled is False and off.results[0].skill.owner == "ops"


def _edit(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    _age(path)
    stat = path.stat()  # a new mtime for sure, still in the past
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))


CHANGES = ["edit", "add", "remove", "registry", "registry-new", "profile", "fresh-file"]


@pytest.mark.parametrize("change", CHANGES)
def test_any_change_falls_back_to_the_full_path(tmp_path: Path, change: str) -> None:
    roots, settings = _corpus(tmp_path)
    low, high = roots
    profile = "default"
    _warm(roots, settings, "active")
    query = "zebra deploy"
    if change == "edit":
        _edit(high / "skill-1" / "SKILL.md", "---\nname: skill-1\ndescription: Zebra care.\n---\n")
    elif change == "add":
        write_skill(low, "zebra", "Zebra deploy.")
        _age(low / "zebra", low)
    elif change == "remove":
        (high / "off-one" / "SKILL.md").unlink()
        query = "deploy kubernetes switched"
    elif change == "registry":
        _edit(settings.registry_file, json.dumps({"off-one": {"owner": "zebra-team"}}))
        query = "$off-one"
    elif change == "registry-new":
        (high / "registry.json").write_text(json.dumps({"shared-helper": False}))
        _age(high / "registry.json")
        query = "shared helper"
    elif change == "profile":
        profile = "claude-code"
    elif change == "fresh-file":  # changed within a timestamp tick: no fingerprint at all
        write_skill(high, "zebra", "Zebra deploy.")
    workspace = _workspace(roots, settings, profile)
    got = _answer(workspace, query, "active", once=True)
    assert not _lean(workspace)
    full = _workspace(roots, settings, profile)
    full.discover()
    assert got == _answer(full, query, "active", once=False)
    if change in ("edit", "add"):
        assert got["results"][0]["description"].startswith("Zebra")
    if change == "registry":
        assert got["skills"][0].owner == "zebra-team"
    if change != "fresh-file":  # the fallback saved the index with the new fingerprint
        again = _workspace(roots, settings, profile)
        assert _answer(again, query, "active", once=True) == got
        assert _lean(again)


def test_bad_row_is_reparsed_by_the_lean_path(tmp_path: Path) -> None:
    roots, settings = _corpus(tmp_path)
    _warm(roots, settings, "active")
    store = LocalStore.open()
    with store.write() as conn:
        conn.execute("UPDATE skills SET record = 'not json'")
    workspace = _workspace(roots, settings)
    got = _answer(workspace, "deploy kubernetes", "active", once=True)
    assert _lean(workspace)
    assert got == _full(roots, settings, "deploy kubernetes", "active")


def test_damaged_columns_fall_back_to_the_full_path(tmp_path: Path) -> None:
    roots, settings = _corpus(tmp_path)
    _warm(roots, settings, "active")
    with LocalStore.open().write() as conn:
        conn.execute("UPDATE index_blobs SET data = X'7b7d' WHERE name = 'columns'")
    workspace = _workspace(roots, settings)
    got = _answer(workspace, "deploy kubernetes", "active", once=True)
    assert not _lean(workspace)
    assert got == _full(roots, settings, "deploy kubernetes", "active")


def test_lazy_skills_loads_on_first_access() -> None:
    calls: list[int] = []

    def load(doc: int) -> Any:
        calls.append(doc)
        return f"skill {doc}"

    skills: Any = LazySkills(5, load)
    assert len(skills) == 5 and calls == []
    assert skills[1] == skills[1] == skills[-4] == "skill 1" and calls == [1]
    assert skills[3:5] == ["skill 3", "skill 4"]
    with pytest.raises(IndexError):
        skills[5]
    assert list(skills) == [f"skill {i}" for i in range(5)]


def test_fingerprint_covers_the_code_that_makes_skills_from_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skilldeck.core.discovery import pipeline as discovery
    from skilldeck.core.workspace import oneshot

    roots, settings = _corpus(tmp_path)
    workspace = _workspace(roots, settings)
    code = tmp_path / "fields.py"
    code.write_text("x = 1\n")
    _age(code)
    monkeypatch.setattr(discovery, "_code_files", lambda: [str(code)])
    before = oneshot.scan(workspace).fingerprint
    assert before is not None
    _edit(code, "x = 2\n")
    assert oneshot.scan(workspace).fingerprint not in (before, None)


@pytest.mark.parametrize("extra", [[], ["--agent"], ["--explain", "--tools", "bash"]])
def test_cli_search_answers_the_same_from_a_warm_store(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    extra: list[str],
) -> None:
    from skilldeck.cli.main import main

    roots, _settings = _corpus(tmp_path)
    discoveries: list[int] = []
    full = Workspace.discover

    def counted(self: Workspace, *args: Any, **kw: Any) -> Any:
        discoveries.append(1)
        return full(self, *args, **kw)

    monkeypatch.setattr(Workspace, "discover", counted)
    argv = ["--root", str(roots[0]), "--root", str(roots[1]), "--format", "json", "search"]
    outputs = []
    for _run in range(3):  # cold, then warm (semantic asked for: the extra is absent)
        main([*argv, "deploy", "kubernetes", *extra])
        data = json.loads(capsys.readouterr().out)
        data.pop("elapsed_ms", None)
        outputs.append(data)
    assert outputs[0] == outputs[1] == outputs[2]
    assert len(discoveries) == 1  # the warm runs built no catalog
