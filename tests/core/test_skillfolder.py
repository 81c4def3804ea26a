"""One skill-folder identity (issue #32 §1, §2): one walk, names that cannot forge a line,
an unambiguous manifest, and compiled code that is flagged and never run."""

from __future__ import annotations

import hashlib
import os
import py_compile
import sys
from pathlib import Path

import pytest

from conftest import write_skill
from skilldeck.core import skillfolder
from skilldeck.core.config import Settings
from skilldeck.core.discovery.frontmatter import parse_skill_file
from skilldeck.core.errors import SkilldeckError
from skilldeck.core.execution import (
    add_to_allowlist,
    allowlist_line,
    allowlist_path,
    execute,
    resolve_script,
    snapshot_skill,
)
from skilldeck.core.execution.policy import read_allowlist
from skilldeck.core.execution.snapshot import SkillFile, Snapshot, parse_manifest
from skilldeck.core.install.lock import LockEntry, Lockfile, tree_hash
from skilldeck.core.install.ops import state_of
from skilldeck.core.install.review import diff_trees, review_skill
from skilldeck.core.lint import lint_skill
from skilldeck.core.model import Skill
from skilldeck.core.validate import validate_skill

EVIL = "print('evil')\n"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make(root: Path, files: dict[str, bytes], name: str = "demo") -> Skill:
    path = write_skill(root, name, description="Demo skill. Use when testing scripts.")
    for rel, data in files.items():
        target = path.parent / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return parse_skill_file(path, root=root)


def forging_pair(tmp_path: Path) -> tuple[Skill, Skill]:
    """Folder A holds ``a`` named ``"a\\n<sha of evil>  zz.py"``; folder B holds ``a`` and
    an evil ``zz.py``: in the plain ``HEX  path`` form their manifests are the same bytes."""
    forged = f"a\n{sha(EVIL.encode())}  zz.py"
    reviewed = make(tmp_path / "a", {forged: b"print('benign')\n"})
    evil = make(tmp_path / "b", {"a": b"print('benign')\n", "zz.py": EVIL.encode()})
    return reviewed, evil


def test_a_newline_name_cannot_give_two_folders_one_manifest(tmp_path: Path) -> None:
    reviewed, evil = forging_pair(tmp_path)
    by_hand = tuple(
        SkillFile(rel, sha(data), data, False)
        for rel, data in sorted(
            (p.relative_to(reviewed.base_dir).as_posix(), p.read_bytes())
            for p in reviewed.base_dir.iterdir()
        )
    )
    pinned_evil = snapshot_skill(evil.base_dir)
    assert Snapshot(reviewed.base_dir, by_hand).digest != pinned_evil.digest
    assert Snapshot(reviewed.base_dir, by_hand).manifest != pinned_evil.manifest
    with pytest.raises(SkilldeckError) as caught:
        snapshot_skill(reviewed.base_dir)
    assert caught.value.details["reason"] == "unsafe_name"
    assert "\n" not in caught.value.message and "a\\n" in caught.value.message


def test_the_manifest_escapes_as_sha256sum_and_parses_back() -> None:
    files = [("SKILL.md", "0" * 64), ("a\n" + "1" * 64 + "  zz.py", "2" * 64), ("b\\c", "3" * 64)]
    text = skillfolder.manifest(files)
    assert text.count("\n") == 3
    assert text.splitlines()[1] == "\\" + "2" * 64 + "  a\\n" + "1" * 64 + "  zz.py"
    assert text.splitlines()[2] == "\\" + "3" * 64 + "  b\\\\c"
    assert parse_manifest(text) == {rel: digest for rel, digest in files}
    plain = skillfolder.manifest([("SKILL.md", "0" * 64), ("scripts/run.py", "1" * 64)])
    assert plain == f"{'0' * 64}  SKILL.md\n{'1' * 64}  scripts/run.py\n"  # digests unchanged


@pytest.mark.parametrize(
    "name", ["x\ny", "x\ry", "x\x1b]0;t\x07", "x\x7f", "x\x85", "x\u2028y", "x\u202eyp", "a\\b"]
)
def test_every_unsafe_name_is_refused_by_the_walk_and_the_snapshot(
    tmp_path: Path, name: str
) -> None:
    skill = make(tmp_path / "skills", {f"sub/{name}": b"x\n"})
    listing = skillfolder.walk(skill.base_dir)
    assert listing.unsafe == [f"sub/{name}"]
    with pytest.raises(SkilldeckError) as caught:
        snapshot_skill(skill.base_dir)
    assert caught.value.details["reason"] == "unsafe_name"
    assert skillfolder.shown(name).isprintable()


def test_a_name_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    skill = make(tmp_path / "skills", {})
    Path(os.fsdecode(bytes(skill.base_dir) + b"/bad\xff.py")).write_bytes(b"x\n")
    [rel] = skillfolder.walk(skill.base_dir).unsafe
    assert skillfolder.shown(rel) == "bad\\xff.py"
    with pytest.raises(SkilldeckError):
        snapshot_skill(skill.base_dir)


def test_allow_with_a_newline_script_path_forges_no_allowlist_line(
    isolated_home: Path, tmp_path: Path
) -> None:
    victim = make(tmp_path / "v", {"x.py": EVIL.encode()}, name="victim")
    victim_digest = snapshot_skill(victim.base_dir).digest
    forged = f"run.py\nvictim/x.py skill-sha256:{victim_digest}\n#"
    attacker = make(tmp_path / "a", {forged: b"print('hi')\n"}, name="attacker")
    with pytest.raises(SkilldeckError) as caught:
        add_to_allowlist(resolve_script(attacker, forged))
    assert caught.value.details["reason"] == "unsafe_name"
    assert not allowlist_path().exists()
    assert ("victim/x.py", victim_digest) not in read_allowlist(allowlist_path())
    with pytest.raises(SkilldeckError) as caught:
        allowlist_line(f"demo/run.py\nvictim/x.py skill-sha256:{victim_digest}", "0" * 64)
    assert caught.value.details["reason"] == "unsafe_name"


def test_discovery_validation_and_lint_name_the_unsafe_file(tmp_path: Path) -> None:
    from skilldeck.core.discovery.resources import list_resources

    skill = make(tmp_path / "skills", {"notes\x1b]0;pwned\x07.md": b"x\n"})
    skill.resources, _ = list_resources(str(skill.base_dir))
    found = [d for d in validate_skill(skill) if d.code == "SV601"]
    assert len(found) == 1 and "\x1b" not in found[0].message
    assert "notes\\x1b]0;pwned\\x07.md" in found[0].message
    lint = [d for d in lint_skill(skill) if d.code == "SL306"]
    assert len(lint) == 1 and "\x1b" not in lint[0].message


def test_the_install_review_refuses_an_unsafe_name_and_shows_it_escaped(tmp_path: Path) -> None:
    reviewed, _ = forging_pair(tmp_path)
    review = review_skill(reviewed.base_dir)
    [refusal] = [r for r in review.refused if "SI104" in r]
    assert "\n" not in refusal and refusal.startswith("a\\n")
    [change] = [c for c in diff_trees(None, reviewed.base_dir) if c.path.startswith("a")]
    assert "\n" not in change.path
    assert all(line.startswith(("+", "-", "@")) for line in change.diff.splitlines())


# -- compiled code ----------------------------------------------------------------------------


def shipped_bytecode(root: Path) -> Skill:
    """A skill whose ``helper.py`` is benign and whose ``__pycache__`` holds bytecode
    compiled, in unchecked-hash mode, from other source."""
    main = b"import sys\nsys.path.insert(0, 'scripts')\nimport helper\nprint(helper.WORD)\n"
    skill = make(root, {"scripts/main.py": main, "scripts/helper.py": b"WORD = 'reviewed'\n"})
    evil = root / "evil_helper.py"
    evil.write_text("WORD = 'bytecode nobody read'\n", encoding="utf-8")
    tag = sys.implementation.cache_tag
    target = skill.base_dir / "scripts" / "__pycache__" / f"helper.{tag}.pyc"
    py_compile.compile(
        str(evil),
        cfile=str(target),
        doraise=True,
        invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
    )
    evil.unlink()
    return skill


def test_shipped_bytecode_is_flagged_by_lint_and_review(tmp_path: Path) -> None:
    skill = shipped_bytecode(tmp_path / "skills")
    pyc = f"scripts/__pycache__/helper.{sys.implementation.cache_tag}.pyc"
    assert [d.code for d in lint_skill(skill) if pyc in d.message] == ["SL305"]
    review = review_skill(skill.base_dir)
    found = [f for f in review.findings if f.file == pyc]
    assert [(f.code, f.severity) for f in found] == [("SI103", "error")]
    assert review.errors  # refused unless --force


def test_shipped_bytecode_is_pinned_but_never_runs(exec_on: Settings, tmp_path: Path) -> None:
    skill = shipped_bytecode(tmp_path / "skills")
    snapshot = snapshot_skill(skill.base_dir)
    pyc = f"scripts/__pycache__/helper.{sys.implementation.cache_tag}.pyc"
    assert snapshot.file(pyc) is not None and snapshot.compiled == [pyc]
    add_to_allowlist(resolve_script(skill, "scripts/main.py"))
    result = execute(exec_on, skill, "scripts/main.py", [])
    assert result.run.stdout.strip() == "reviewed", result.run


def test_native_libraries_and_binaries_are_compiled_code() -> None:
    for rel in ("lib/_speed.cpython-311-x86_64-linux-gnu.so", "m.pyd", "x.dylib", "l.so.1"):
        assert skillfolder.compiled(rel) is not None, rel
    assert skillfolder.compiled("bin/tool", b"\x7fELF\x02") is not None
    assert skillfolder.compiled("scripts/run.py", b"#!/us") is None


# -- the install lock ------------------------------------------------------------------------


def test_lock_digests_of_installed_skills_are_unchanged(tmp_path: Path) -> None:
    """``skills-lock.toml`` values written before the one walk still verify: the digest
    of this folder is the one the previous version computed (and locked)."""
    folder = tmp_path / "skills" / "s"
    (folder / "scripts").mkdir(parents=True)
    (folder / ".git").mkdir()
    (folder / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\n", encoding="utf-8")
    (folder / "scripts" / "run.sh").write_text("#!/bin/sh\necho hi\n", encoding="utf-8")
    (folder / "scripts" / "run.sh").chmod(0o755)
    (folder / "link").symlink_to("scripts/run.sh")
    (folder / ".git" / "HEAD").write_text("x\n", encoding="utf-8")
    (folder / ".skilldeck-sync").write_text("{}\n", encoding="utf-8")
    locked = "b6719d1013803263277f3a5099518229ace30efab90fbc0c1fb24241e7aa3839"
    assert tree_hash(folder) == locked
    lock = Lockfile(tmp_path / "skills-lock.toml", tmp_path / "skills")
    assert state_of(lock, LockEntry("s", "src", sha256=locked)) == "ok"
    (folder / "scripts" / "run.sh").chmod(0o644)
    assert state_of(lock, LockEntry("s", "src", sha256=locked)) == "modified"
