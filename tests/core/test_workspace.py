"""The workspace: one pipeline (discover -> lint -> index -> tools -> refresh) for every face."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import write_skill
from skilldeck.app.ranked import explain, rank
from skilldeck.core.config import Settings
from skilldeck.core.model import Source
from skilldeck.core.store import LocalStore
from skilldeck.core.workspace import Workspace

BROKEN = "---\nname: broken\ndescription: [unclosed\n---\nBody.\n"


def _workspace(root: Path, store: LocalStore | None = None, **options: object) -> Workspace:
    settings = Settings(semantic=False)
    return Workspace(settings, [root], store=store or LocalStore.in_memory(), **options)  # type: ignore[arg-type]


def _corpus(root: Path) -> None:
    write_skill(
        root, "pdf-forms", description="Fill PDF forms. Use when a PDF form must be filled."
    )
    write_skill(root, "csv-cleaner", description="Clean CSV files. Use when a CSV file is broken.")
    write_skill(
        root,
        "git-history",
        description="Summarise git history. Use for commit logs.",
        extra="allowed-tools: Bash(git:*)\n",
    )


def _bump_mtime(path: Path) -> None:
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 2_000_000_000))


def test_stages_fill_catalog_findings_index_and_tools(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    _corpus(root)
    (root / "broken").mkdir()
    (root / "broken" / "SKILL.md").write_text(BROKEN, encoding="utf-8")
    ws = _workspace(root)
    assert rank(ws, "pdf", 10).ranked is False, "before the index a plain filter stands in"
    catalog = ws.discover()
    assert len(catalog.skills) == 4 and ws.generation == 1
    assert [s.name for s in ws.all_sorted()][:2] == ["broken", "csv-cleaner"]
    findings = ws.lint()
    assert set(findings) == {s.path for s in catalog.skills}
    ws.index()
    assert ws.has_index()
    ranked = rank(ws, "clean csv files", 5)
    assert ranked.ranked and ranked.hits[0].skill.name == "csv-cleaner"
    assert explain(ws, "clean csv files") is not None
    ws.tools()
    git = ws.by_name("git-history")
    assert git is not None and ws.skill_at(git.path) is git
    assert ws.tools_complete(git) is not None
    broken = next(s for s in catalog.skills if s.path.parent.name == "broken")
    errors, _warnings = ws.counts(broken)
    assert errors >= 1
    assert any(skill is broken for skill, _d in ws.findings())


def test_refresh_follows_edit_add_and_remove(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    _corpus(root)
    ws = _workspace(root)
    ws.discover()
    ws.lint()
    ws.index()
    added = write_skill(root, "yaml-lint", description="Lint YAML files. Use when YAML is broken.")
    assert ws.refresh() == [added]
    assert rank(ws, "lint yaml", 5).hits[0].skill.name == "yaml-lint"
    assert added in ws.lint_findings
    edited = write_skill(
        root, "csv-cleaner", description="Repair spreadsheets. Use when a sheet is damaged."
    )
    _bump_mtime(edited)
    assert ws.refresh([edited]) == [edited]
    assert rank(ws, "repair spreadsheets", 5).hits[0].skill.name == "csv-cleaner"
    added.unlink()
    added.parent.rmdir()
    assert ws.refresh() == [added]
    assert ws.by_name("yaml-lint") is None and added not in ws.lint_findings
    assert all(h.skill.name != "yaml-lint" for h in rank(ws, "lint yaml", 5).hits)


def test_refresh_if_changed_polls_the_watched_files(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    _corpus(root)
    ws = _workspace(root, watch=True)
    ws.discover()
    assert not ws.refresh_if_changed()
    write_skill(root, "yaml-lint", description="Lint YAML files. Use when YAML is broken.")
    assert ws.refresh_if_changed()
    assert ws.by_name("yaml-lint") is not None
    assert not ws.refresh_if_changed()


def test_visibility_rule_for_models(tmp_path: Path) -> None:
    low, high = tmp_path / "low", tmp_path / "high"
    write_skill(low, "shared", description="The low copy. Use when testing shadowing.")
    write_skill(high, "shared", description="The high copy. Use when testing shadowing.")
    write_skill(
        high,
        "people-only",
        description="Only for people. Use when a person asks.",
        extra="disable-model-invocation: true\n",
    )
    write_skill(high, "open", description="Open to models. Use when testing visibility.")
    ws = Workspace(Settings(semantic=False), [low, high], store=LocalStore.in_memory())
    ws.discover()
    visible = {s.name: s for s in ws.visible_to_models()}
    assert set(visible) == {"shared", "open"}
    assert visible["shared"].path.parent.parent == high, "the later root wins"
    assert ws.by_name("people-only") is not None, "by_name finds winners, hidden or not"
    assert {s.name for s in ws.skills_in("all")} == {"shared", "people-only", "open"}
    assert len(ws.skills_in("all")) == 4 and len(ws.skills_in("active")) == 3
    hits = ws.search("open to models", scope="visible", limit=3, agent=True).results
    assert [r.skill.name for r in hits][:1] == ["open"]
    assert all(r.skill.name != "people-only" for r in hits)


def test_index_key_depends_on_roots_and_profile(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    store = LocalStore.in_memory()
    key = _workspace(a, store).index_key()
    assert key == _workspace(a, store).index_key()
    assert key != _workspace(b, store).index_key()
    assert key != _workspace(a, store, profile="claude-code").index_key()
    assert key != _workspace(a, store).index_key("visible")
    default = Workspace(Settings(), None, store=store, cwd=tmp_path)
    assert all(r.source is not Source.EXPLICIT for r in default.roots())


_CHILD = """
import sys
from pathlib import Path
from skilldeck.core.config import Settings
from skilldeck.core.store import LocalStore
from skilldeck.core.workspace import Workspace
store = LocalStore.open(Path(sys.argv[2]))
ws = Workspace(Settings(semantic=False), [Path(sys.argv[1])], store=store)
ws.discover(); ws.lint(); ws.index()
print(len(ws.catalog.skills))
"""


def test_second_process_reuses_the_same_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, home = tmp_path / "skills", tmp_path / "home"
    _corpus(root)
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(root), str(home)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "3"
    import skilldeck.core.lint as lint
    from skilldeck.core.search import SearchIndex

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("should come from the store")

    monkeypatch.setattr(lint, "lint_catalog", refuse)
    monkeypatch.setattr(SearchIndex, "build", refuse)
    ws = _workspace(root, LocalStore.open(home))
    assert ws.notices == []
    ws.discover()
    ws.lint()
    assert rank(ws, "fill pdf forms", 3).ranked is False
    ws.index()
    assert rank(ws, "fill pdf forms", 3).hits[0].skill.name == "pdf-forms"


def test_lint_store_follows_edits(tmp_path: Path) -> None:
    root, home = tmp_path / "skills", tmp_path / "home"
    _corpus(root)
    first = _workspace(root, LocalStore.open(home))
    first.discover()
    path = root / "pdf-forms" / "SKILL.md"
    assert not any(d.code == "SL001" for d in first.lint()[path])
    write_skill(root, "pdf-forms", description="PDF.")
    _bump_mtime(path)
    second = _workspace(root, LocalStore.open(home))
    second.discover()
    assert any(d.code == "SL001" for d in second.lint()[path]), "short description flagged"


def test_searches_stay_consistent_while_refreshing(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    _corpus(root)
    ws = _workspace(root)
    ws.discover()
    ws.index("visible")
    errors: list[BaseException] = []
    stop = time.monotonic() + 1.0

    def search() -> None:
        try:
            while time.monotonic() < stop:
                found = ws.search("clean csv", scope="visible", limit=3, agent=True)
                names = [r.skill.name for r in found.results]
                assert names and names[0] == "csv-cleaner"
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=search) for _ in range(3)]
    for thread in threads:
        thread.start()
    for i in range(5):
        write_skill(root, f"extra-{i}", description=f"Extra skill {i}. Use when testing {i}.")
        ws.refresh()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(ws.visible_to_models()) == 8


def test_registry_tags_reach_a_saved_index(isolated_home: Path, tmp_path: Path) -> None:
    """Tags the registry adds are searchable at once, though no SKILL.md changed."""
    root = tmp_path / "skills"
    _corpus(root)
    store = LocalStore.open(isolated_home)
    ws = _workspace(root, store)
    ws.discover()
    assert ws.index().search("zeppelin").results == []
    ws.settings.registry_file.write_text(
        '{"skills": {"csv-cleaner": {"tags": ["zeppelin"]}}}', encoding="utf-8"
    )
    again = _workspace(root, store)
    again.discover()
    assert [r.skill.name for r in again.index().search("zeppelin").results] == ["csv-cleaner"]
    once = _workspace(root, store).search("zeppelin", scope="active", limit=5)
    assert [r.skill.name for r in once.results] == ["csv-cleaner"]
