"""``check --remote`` and ``update`` judge each skill by its own files, not by the commit."""

from __future__ import annotations

from pathlib import Path

from test_install import add_all, make_repo, second_commit, skill_files

from conftest import git
from skilldeck.core.install import check, prepared_updates, read_lock


def test_a_commit_to_one_skill_leaves_the_others_unchanged(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    root = tmp_path / "project" / ".agents" / "skills"
    add_all(repo, root)
    head = second_commit(repo)  # touches pdf-tools only
    (repo / "README.md").write_text("top-level change\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "readme")
    by_name = {s.entry.name: s for s in check(read_lock(root), remote=True)}
    assert by_name["pdf-tools"].state == "outdated"
    assert by_name["csv-tools"].state == "ok"
    assert by_name["csv-tools"].detail.startswith("unchanged")
    with prepared_updates(read_lock(root)) as plans:
        plan = {p.entry.name: p for p in plans}
        assert plan["csv-tools"].unchanged and not plan["csv-tools"].has_changes
        assert plan["pdf-tools"].has_changes and not plan["pdf-tools"].unchanged
    assert head != git(repo, "rev-parse", "HEAD")


def test_a_mode_change_alone_is_a_change(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    root = tmp_path / "project" / ".agents" / "skills"
    add_all(repo, root)
    (repo / "skills" / "csv-tools" / "scripts" / "extract.sh").chmod(0o644)
    git(repo, "commit", "-qam", "not executable")
    states = {s.entry.name: s.state for s in check(read_lock(root), remote=True)}
    assert states == {"csv-tools": "outdated", "pdf-tools": "ok"}


def test_a_rewritten_history_cannot_be_compared_and_is_outdated(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    root = tmp_path / "project" / ".agents" / "skills"
    add_all(repo, root)
    git(repo, "checkout", "-q", "--orphan", "fresh")
    skill_files(repo, "pdf-tools")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "rewritten")
    git(repo, "branch", "-M", "fresh", "main")
    git(repo, "tag", "-d", "v1")
    git(repo, "reflog", "expire", "--expire=now", "--all")
    git(repo, "gc", "-q", "--prune=now")
    states = {s.entry.name: s.state for s in check(read_lock(root), remote=True)}
    assert states == {"csv-tools": "outdated", "pdf-tools": "outdated"}
