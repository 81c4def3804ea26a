"""Locks that travel: per-file digests, ``verify``, ``install --frozen`` and
``skills-lock.json`` (the ``skills`` installer's lock), on real repositories."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from test_install import add_all, make_repo, skill_files

from conftest import git
from skilldeck.core.errors import SkilldeckError
from skilldeck.core.install import (
    apply_frozen,
    find_lock,
    frozen_plan,
    read_json_lock,
    read_lock,
    tree_hash,
    verify,
)
from skilldeck.core.install.skills_json import folder_hash

HEX = "0" * 64


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "project" / ".agents" / "skills"


def test_verify_names_each_drifted_file(repo: Path, root: Path) -> None:
    add_all(repo, root)
    assert '[skills."pdf-tools".files]' in (root.parent / "skills-lock.toml").read_text()
    assert verify(read_lock(root)) == []
    (root / "pdf-tools" / "SKILL.md").write_text("edited\n", encoding="utf-8")
    (root / "pdf-tools" / "notes.md").write_text("new\n", encoding="utf-8")
    (root / "csv-tools" / "scripts" / "extract.sh").chmod(0o644)
    drifts = {d.name: d for d in verify(read_lock(root))}
    assert drifts["pdf-tools"].files == [("SKILL.md", "modified"), ("notes.md", "added")]
    assert drifts["csv-tools"].files == [("scripts/extract.sh", "modified")]
    shutil.rmtree(root / "csv-tools")
    assert "missing" in {d.name: d for d in verify(read_lock(root))}["csv-tools"].problem


def test_a_frozen_install_reproduces_the_locked_tree_elsewhere(
    repo: Path, root: Path, tmp_path: Path
) -> None:
    add_all(repo, root)
    git(repo, "commit", "--allow-empty", "-qm", "later")  # HEAD moves; the pin does not
    skill_files(repo, "pdf-tools", script="echo changed\n")
    git(repo, "commit", "-qam", "changed upstream")
    other = tmp_path / "clone" / ".agents" / "skills"
    other.parent.mkdir(parents=True)
    shutil.copy(root.parent / "skills-lock.toml", other.parent / "skills-lock.toml")
    before = (other.parent / "skills-lock.toml").read_bytes()
    lock = read_lock(other)
    with frozen_plan(lock) as plan:
        assert plan.drift == [] and sorted(e.name for e, _ in plan.ready) == [
            "csv-tools",
            "pdf-tools",
        ]
        apply_frozen(plan)
    for name in ("csv-tools", "pdf-tools"):
        assert tree_hash(other / name) == tree_hash(root / name)
    assert (other.parent / "skills-lock.toml").read_bytes() == before  # never written
    assert verify(read_lock(other)) == []
    with frozen_plan(read_lock(other)) as plan:
        assert plan.present == ["csv-tools", "pdf-tools"] and not plan.ready


def test_a_frozen_install_names_the_drift_and_places_nothing(
    repo: Path, root: Path, tmp_path: Path
) -> None:
    add_all(repo, root)
    text = (root.parent / "skills-lock.toml").read_text(encoding="utf-8")
    sha = read_lock(root).entries["pdf-tools"].sha256
    other = tmp_path / "clone" / ".agents" / "skills"
    other.parent.mkdir(parents=True)
    (other.parent / "skills-lock.toml").write_text(text.replace(sha, HEX), encoding="utf-8")
    with frozen_plan(read_lock(other)) as plan:
        assert [d.name for d in plan.drift] == ["pdf-tools"]
        assert "files differ from the lock's digest" in plan.drift[0].problem
    assert not other.exists()


def test_a_files_table_that_leaves_the_skill_is_refused(root: Path) -> None:
    root.mkdir(parents=True)
    (root.parent / "skills-lock.toml").write_text(
        'version = 1\n\n[skills.ok-name]\nsource = "x"\n\n'
        '[skills.ok-name.files]\n"../../victim" = "f:00"\n',
        encoding="utf-8",
    )
    with pytest.raises(SkilldeckError) as caught:
        read_lock(root)
    assert caught.value.details["reason"] == "bad_lock_entry"


def _json_lock(project: Path, skills: dict[str, dict[str, str]]) -> Path:
    path = project / "skills-lock.json"
    path.write_text(json.dumps({"version": 1, "skills": skills}, indent=2), encoding="utf-8")
    return path


def _hosted(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``acme/skills`` on a ``file://`` base standing in for GitHub."""
    hosted = tmp_path / "hub" / "acme"
    hosted.mkdir(parents=True)
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(hosted / "skills.git"))
    monkeypatch.setenv("SKILLDECK_GITHUB_BASE", (tmp_path / "hub").as_uri())


def test_skills_lock_json_installs_frozen_and_verifies(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / "skills" / "csv-tools" / "README.md").write_text("not installed\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "readme")
    _hosted(repo, tmp_path, monkeypatch)
    project = tmp_path / "json-project"
    project.mkdir()
    digest = folder_hash(repo / "skills" / "pdf-tools")
    csv_digest = folder_hash(repo / "skills" / "csv-tools", as_installed=True)
    path = _json_lock(
        project,
        {
            "pdf-tools": {
                "source": "acme/skills",
                "sourceType": "github",
                "ref": git(repo, "rev-parse", "HEAD"),
                "skillPath": "skills/pdf-tools/SKILL.md",
                "computedHash": digest,
            },
            "csv-tools": {  # no skillPath: found by name; the digest leaves out README.md
                "source": "acme/skills",
                "sourceType": "github",
                "computedHash": csv_digest,
            },
        },
    )
    assert csv_digest != folder_hash(repo / "skills" / "csv-tools")
    lock = find_lock(None, cwd=project)
    assert lock.path == path and lock.foreign
    with frozen_plan(lock) as plan:
        assert plan.drift == [], plan.drift
        apply_frozen(plan)
    assert (project / ".agents" / "skills" / "pdf-tools" / "SKILL.md").is_file()
    assert not (project / ".agents" / "skills" / "csv-tools" / "README.md").exists()
    assert verify(read_json_lock(path)) == []
    (project / ".agents" / "skills" / "pdf-tools" / "SKILL.md").write_text("edited\n")
    (drift,) = verify(read_json_lock(path))
    assert drift.name == "pdf-tools" and "computedHash" in drift.problem


@pytest.mark.parametrize(
    ("entry", "needle"),
    [
        ({"name": "../../evil"}, "'name' may only contain"),
        ({"skillPath": "../../etc/SKILL.md"}, "leaves the source"),
        ({"skillPath": "/etc/SKILL.md"}, "leaves the source"),
        ({"computedHash": "abc"}, "computedHash is not a SHA-256"),
        ({"source": 7}, "'source' is not a string"),
    ],
)
def test_a_bad_skills_lock_json_entry_is_refused(
    tmp_path: Path, entry: dict[str, object], needle: str
) -> None:
    row: dict[str, object] = {"source": "acme/skills", "sourceType": "github", "computedHash": HEX}
    name = str(entry.pop("name", "ok-name"))
    row.update(entry)
    path = tmp_path / "skills-lock.json"
    path.write_text(json.dumps({"version": 1, "skills": {name: row}}), encoding="utf-8")
    with pytest.raises(SkilldeckError) as caught:
        read_json_lock(path)
    assert caught.value.details["reason"] == "bad_lock_entry"
    assert needle in caught.value.message


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("{not json", "not valid JSON"),
        ('{"version": 2, "skills": {}}', "version 2"),
        ('{"version": 1}', 'no "skills" object'),
        ('<<<<<<< ours\n{"version": 1, "skills": {}}\n=======\n{}\n>>>>>>> theirs\n', "conflict"),
    ],
)
def test_an_unreadable_skills_lock_json_says_why(tmp_path: Path, text: str, needle: str) -> None:
    path = tmp_path / "skills-lock.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SkilldeckError) as caught:
        read_json_lock(path)
    assert needle in caught.value.message


NODE_HASH = """
const { createHash } = require('crypto');
const { readdirSync, readFileSync } = require('fs');
const { join, relative } = require('path');
function collect(base, dir, out) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name === '.git' || e.name === 'node_modules') continue;
      collect(base, full, out);
    } else if (e.isFile()) {
      out.push({ p: relative(base, full).split('\\\\').join('/'), c: readFileSync(full) });
    }
  }
}
const files = [];
collect(process.argv[1], process.argv[1], files);
files.sort((a, b) => a.p.localeCompare(b.p));
const h = createHash('sha256');
for (const f of files) { h.update(f.p); h.update(f.c); }
console.log(h.digest('hex'));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_folder_hash_matches_the_installers_own_algorithm(tmp_path: Path) -> None:
    """The same folder hashed by the ``skills`` installer's algorithm in Node."""
    folder = skill_files(tmp_path, "mixed")
    for rel in (
        "Zeta.md",
        "alpha.md",
        "a_b.md",
        "a-b.md",
        "a.b.md",
        "ab/c.md",
        "A/b.md",
        "references/10.md",
        "references/9.md",
        "_private.md",
        "node_modules/x.js",
    ):
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(rel, encoding="utf-8")
    (folder / "link.md").symlink_to(folder / "alpha.md")
    done = subprocess.run(
        ["node", "-e", NODE_HASH, str(folder)], capture_output=True, text=True, check=True
    )
    assert folder_hash(folder) == done.stdout.strip()


def test_a_local_source_is_read_relative_to_the_json_lock(repo: Path, tmp_path: Path) -> None:
    project = tmp_path / "json-project"
    project.mkdir()
    row = {
        "source": "../upstream",
        "sourceType": "local",
        "skillPath": "skills/csv-tools/SKILL.md",
        "computedHash": folder_hash(repo / "skills" / "csv-tools"),
    }
    path = _json_lock(project, {"csv-tools": row})
    lock = read_json_lock(path)
    assert lock.entries["csv-tools"].source == str(repo)
    with frozen_plan(lock) as plan:
        assert plan.drift == []
        apply_frozen(plan)
    assert verify(read_json_lock(path)) == []
