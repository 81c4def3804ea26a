"""``skilldeck publish`` and ``skilldeck add https://HOST`` end to end, over a real
``http.server`` on 127.0.0.1 serving what ``publish`` wrote: round trip, lock fields,
``check --remote``, ``update``, ``install --frozen``, ``verify``, hostile indexes."""

from __future__ import annotations

import functools
import http.server
import io
import json
import os
import tarfile
import threading
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import run_cli as run
from conftest import write_skill
from skilldeck.core.install.wellknown import SCHEMA, digest_of


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """The folder ``publish`` writes into, served on 127.0.0.1, and its URL."""
    root = tmp_path / "site"
    root.mkdir()
    handler = functools.partial(_Quiet, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield root, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def make_skills(root: Path) -> Path:
    write_skill(root, "plain", "Plain skill. Use when plain.", extra="version: 1.2.0\n")
    write_skill(root, "bundle", "Bundle skill. Use when bundled.")
    (root / "bundle" / "scripts").mkdir()
    script = root / "bundle" / "scripts" / "run.sh"
    script.write_text("#!/bin/sh\necho ok\n")
    script.chmod(0o755)
    (root / "bundle" / "references").mkdir()
    (root / "bundle" / "references" / "notes.md").write_text("Notes.\n")
    return root


def files_of(folder: Path) -> dict[str, tuple[bytes, bool]]:
    return {
        p.relative_to(folder).as_posix(): (p.read_bytes(), bool(p.stat().st_mode & 0o111))
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_publish_then_add_round_trip_check_update_frozen(
    tmp_path: Path, site: tuple[Path, str], project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, url = site
    src = make_skills(tmp_path / "src")
    code, out, err = run(capsys, "publish", str(src), "--out", str(root), "--format", "json")
    assert code == 0, err
    assert {s["type"] for s in json.loads(out)["skills"]} == {"skill-md", "archive"}

    code, out, err = run(capsys, "add", url, "--to", "project", "--yes", "--format", "json")
    assert code == 0, (out, err)
    data = json.loads(out)
    assert sorted(s["action"] for s in data["skills"]) == ["installed", "installed"]
    installed = project / ".agents" / "skills"
    for name in ("plain", "bundle"):
        assert files_of(installed / name) == files_of(src / name)

    lock = tomllib.loads((project / ".agents" / "skills-lock.toml").read_text())["skills"]
    index = url + "/.well-known/agent-skills/index.json"
    assert lock["plain"]["version"] == "1.2.0" and lock["bundle"]["version"] == ""
    assert lock["bundle"]["resolvedIndex"] == index and lock["bundle"]["source"] == index
    served = (root / ".well-known" / "agent-skills" / "bundle.tar.gz").read_bytes()
    assert lock["bundle"]["digest"] == digest_of(served)

    code, out, _ = run(capsys, "check", "--remote")
    assert code == 0 and out.count("unchanged") == 2, out
    assert run(capsys, "verify")[0] == 0

    # The publisher changes one skill: check says outdated, update shows and applies it.
    (src / "bundle" / "references" / "notes.md").write_text("Notes, revised.\n")
    assert run(capsys, "publish", str(src), "--out", str(root))[0] == 0
    code, out, _ = run(capsys, "check", "--remote", "--format", "json")
    states = {s["name"]: s["state"] for s in json.loads(out)["skills"]}
    assert code == 1 and states == {"bundle": "outdated", "plain": "ok"}
    code, out, _ = run(capsys, "update", "--yes")
    assert code == 0, out
    assert "+Notes, revised." in out
    assert files_of(installed / "bundle") == files_of(src / "bundle")
    assert run(capsys, "check", "--remote")[0] == 0

    # install --frozen re-fetches a missing skill by the lock's digest.
    (installed / "plain" / "SKILL.md").unlink()
    (installed / "plain").rmdir()
    code, out, err = run(capsys, "install", "--frozen")
    assert code == 0, (out, err)
    assert files_of(installed / "plain") == files_of(src / "plain")

    # ... and refuses when the index now serves other bytes than the lock pins.
    plain = src / "plain" / "SKILL.md"
    plain.write_text(plain.read_text() + "\nChanged.\n")
    assert run(capsys, "publish", str(src), "--out", str(root))[0] == 0
    for path in sorted((installed / "plain").iterdir()):
        path.unlink()
    (installed / "plain").rmdir()
    code, out, err = run(capsys, "install", "--frozen")
    assert code == 1 and "digest mismatch" in err, err
    assert not (installed / "plain").exists()


def test_add_one_skill_from_an_explicit_index_url(
    tmp_path: Path, site: tuple[Path, str], project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, url = site
    assert run(capsys, "publish", str(make_skills(tmp_path / "src")), "--out", str(root))[0] == 0
    index = url + "/.well-known/agent-skills/index.json"
    code, out, err = run(capsys, "add", index, "--skill", "bundle", "--to", "project", "--yes")
    assert code == 0, err
    assert "bundle" in out and "plain" in out  # every entry is shown, one is installed
    assert sorted(os.listdir(project / ".agents" / "skills")) == ["bundle"]
    code, _, err = run(capsys, "add", index, "--skill", "nope", "--to", "project", "--yes")
    assert code == 2 and "lists no skill nope" in err


def write_index(root: Path, skills: list[dict[str, str]], schema: str = SCHEMA) -> None:
    folder = root / ".well-known" / "agent-skills"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "index.json").write_text(json.dumps({"$schema": schema, "skills": skills}))


def tar_gz(*members: tuple[str, bytes, bytes]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz") as tar:
        for name, kind, data in members:
            info = tarfile.TarInfo(name)
            info.type, info.size = kind, len(data) if kind == tarfile.REGTYPE else 0
            if kind != tarfile.REGTYPE:
                info.linkname = data.decode()
            tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
    return raw.getvalue()


SKILL = b"---\nname: %s\ndescription: A skill. Use when testing.\n---\n# Body\n"


def test_hostile_index_entries_are_refused_each_with_its_reason(
    tmp_path: Path, site: tuple[Path, str], project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, url = site
    folder = root / ".well-known" / "agent-skills"
    folder.mkdir(parents=True)
    artifacts = {
        "traversal": tar_gz(("SKILL.md", tarfile.REGTYPE, SKILL % b"traversal"),
                            ("../../../../evil", tarfile.REGTYPE, b"x")),
        "link": tar_gz(("SKILL.md", tarfile.REGTYPE, SKILL % b"link"),
                       ("out", tarfile.SYMTYPE, str(tmp_path / "evil").encode())),
        "hardlink": tar_gz(("SKILL.md", tarfile.REGTYPE, SKILL % b"hardlink"),
                           ("hard", tarfile.LNKTYPE, b"/etc/passwd")),
        "absolute": tar_gz(("SKILL.md", tarfile.REGTYPE, SKILL % b"absolute"),
                           (str(tmp_path / "evil"), tarfile.REGTYPE, b"x")),
        "bomb": tar_gz(("SKILL.md", tarfile.REGTYPE, SKILL % b"bomb"),
                       ("zeros", tarfile.REGTYPE, bytes(17 * 1024 * 1024))),
    }  # fmt: skip
    entries = []
    for name, data in artifacts.items():
        (folder / f"{name}.tar.gz").write_bytes(data)
        entries.append(
            {"name": name, "type": "archive", "description": "\x1b[31mred\x1b[0m",
             "url": f"{name}.tar.gz", "digest": digest_of(data)}
        )  # fmt: skip
    (folder / "wrong.md").write_bytes(SKILL % b"wrong")
    entries.append(
        {"name": "wrong", "type": "skill-md", "description": "d", "url": "wrong.md",
         "digest": digest_of(b"something else")}
    )  # fmt: skip
    entries.append(
        {"name": "future", "type": "plugin", "description": "d", "url": "f",
         "digest": digest_of(b"")}
    )  # fmt: skip
    write_index(root, entries)

    code, out, err = run(capsys, "add", url, "--to", "project", "--yes")
    assert code == 1
    assert "\x1b" not in out and "\x1b" not in err  # untrusted text is escaped
    assert "future" in err and "unknown type 'plugin'" in err
    reasons = {
        "traversal": "leaves the skill folder",
        "link": "is a link",
        "hardlink": "is a link",
        "absolute": "absolute path",
        "bomb": "is over",
        "wrong": "digest mismatch",
    }
    for name, reason in reasons.items():
        line = next(line for line in err.splitlines() if line.startswith(f"skilldeck: {name}:"))
        assert "not installed" in line and reason in line, line
    assert not (tmp_path / "evil").exists()
    assert not (project / ".agents" / "skills").exists() or not any(
        (project / ".agents" / "skills").iterdir()
    )


def test_an_unknown_schema_is_not_processed(
    site: tuple[Path, str], project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, url = site
    write_index(root, [], schema="https://schemas.agentskills.io/discovery/1.0.0/schema.json")
    code, _, err = run(capsys, "add", url, "--to", "project", "--yes")
    assert code == 2 and "not a known index schema" in err and "not processed" in err


def test_publish_refuses_an_invalid_skill(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = make_skills(tmp_path / "src")
    (src / "broken").mkdir()
    (src / "broken" / "SKILL.md").write_text("---\nname: broken\n---\nNo description.\n")
    code, _, err = run(capsys, "publish", str(src), "--out", str(tmp_path / "site"))
    assert code == 1 and "broken" in err and "nothing was published" in err
    assert not (tmp_path / "site" / ".well-known").exists()


def test_a_repacked_archive_is_unchanged_and_a_dropped_skill_is_named(
    tmp_path: Path, site: tuple[Path, str], project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, url = site
    src = make_skills(tmp_path / "src")
    assert run(capsys, "publish", str(src), "--out", str(root))[0] == 0
    assert run(capsys, "add", url, "--to", "project", "--yes")[0] == 0
    folder = root / ".well-known" / "agent-skills"
    index = json.loads((folder / "index.json").read_text())
    # The same files in another archive (other mtimes): a new digest, the same skill.
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz") as tar:
        for path in sorted((src / "bundle").rglob("*")):
            if path.is_file():
                tar.add(path, path.relative_to(src / "bundle").as_posix())
    (folder / "bundle-2.tar.gz").write_bytes(raw.getvalue())
    index["skills"] = [s for s in index["skills"] if s["name"] == "bundle"]
    index["skills"][0].update(url="bundle-2.tar.gz", digest=digest_of(raw.getvalue()))
    (folder / "index.json").write_text(json.dumps(index))

    code, out, _ = run(capsys, "check", "--remote")
    assert code == 1 and "no longer listed" in out and "outdated" in out
    code, out, err = run(capsys, "update", "--yes", "--format", "json")
    actions = {s["name"]: s["action"] for s in json.loads(out)["skills"]}
    assert actions == {"bundle": "unchanged", "plain": "refused"}
    assert "plain is no longer listed" in err
    lock = tomllib.loads((project / ".agents" / "skills-lock.toml").read_text())["skills"]
    assert lock["bundle"]["digest"] == digest_of(raw.getvalue())  # the lock took the new one
    code, out, _ = run(capsys, "check", "--remote", "bundle")
    assert code == 0 and "unchanged" in out
