"""Well-known skills indexes: reading, verifying, unpacking safely, publishing.

Artifacts are served by a real ``http.server`` on 127.0.0.1; hostile archives are built
here byte by byte and each must be refused with a clear reason, nothing written outside
the folder it was unpacked into.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import http.server
import io
import json
import socket
import stat
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from ipaddress import ip_address
from pathlib import Path

import pytest

from conftest import write_skill
from skilldeck.core.errors import SkilldeckError
from skilldeck.core.execution.snapshot import snapshot_skill
from skilldeck.core.install import archive
from skilldeck.core.install.archive import archive_kind, unpack
from skilldeck.core.install.publish import publish, tar_gz
from skilldeck.core.install.wellknown import (
    SCHEMA,
    IndexEntry,
    digest_of,
    index_url,
    read_index,
    stage_entry,
)
from skilldeck.core.web import internal_address, names_internal

SKILL_MD = b"---\nname: demo\ndescription: Demo skill. Use when testing.\n---\n# Demo\n"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A folder served over HTTP on 127.0.0.1, and its base URL."""
    root = tmp_path / "site"
    root.mkdir()
    handler = functools.partial(_Quiet, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield root, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


# ---------------------------------------------------------------------------- archives


def tar_of(*members: tuple[tarfile.TarInfo, bytes | None]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz") as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            else:
                tar.addfile(info)
    return raw.getvalue()


def member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, link, 0o644
    return info


def zip_of(*members: tuple[str, bytes], mode: int = 0o100644) -> bytes:
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as archive_file:
        for name, data in members:
            info = zipfile.ZipInfo(name)
            info.external_attr = mode << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive_file.writestr(info, data)
    return raw.getvalue()


def refused(data: bytes, kind: str, tmp_path: Path) -> str:
    """Unpack hostile ``data`` into a fresh folder; the refusal's message (nothing may
    appear beside that folder)."""
    box = tmp_path / "box"
    box.mkdir(parents=True)
    dest = box / "dest"
    with pytest.raises(SkilldeckError) as caught:
        unpack(data, kind, dest)
    assert caught.value.details.get("reason") == "unsafe_archive"
    assert [p.name for p in box.iterdir()] == ["dest"]
    assert not (tmp_path / "evil").exists() and not Path("/tmp/skilldeck-evil").exists()
    return caught.value.message


def test_a_safe_tar_and_zip_unpack(tmp_path: Path) -> None:
    script = member("scripts/run.sh")
    script.mode = 0o755
    data = tar_of((member("SKILL.md"), SKILL_MD), (script, b"#!/bin/sh\n"))
    unpack(data, "tar.gz", tmp_path / "t")
    assert (tmp_path / "t" / "SKILL.md").read_bytes() == SKILL_MD
    assert (tmp_path / "t" / "scripts" / "run.sh").stat().st_mode & 0o111
    unpack(zip_of(("SKILL.md", SKILL_MD), ("a/b.txt", b"x")), "zip", tmp_path / "z")
    assert (tmp_path / "z" / "a" / "b.txt").read_bytes() == b"x"


@pytest.mark.parametrize(
    ("members", "reason"),
    [
        ([("SKILL.md", SKILL_MD), ("../evil", b"x")], "leaves the skill folder"),
        ([("SKILL.md", SKILL_MD), ("a/../../evil", b"x")], "leaves the skill folder"),
        ([("SKILL.md", SKILL_MD), ("/tmp/skilldeck-evil", b"x")], "absolute path"),
        ([("SKILL.md", SKILL_MD), ("a\\..\\evil", b"x")], "backslash"),
        ([("SKILL.md", SKILL_MD), ("C:evil", b"x")], "names a drive"),
        ([("SKILL.md", SKILL_MD), ("SKILL.md", b"again")], "appears twice"),
        ([("SKILL.md", SKILL_MD), ("a", b"x"), ("a/b", b"y")], "both a file and a folder"),
        ([("wrapper/SKILL.md", SKILL_MD)], "no SKILL.md at its root"),
    ],
)
@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_hostile_names_are_refused_in_tar_and_zip(
    members: list[tuple[str, bytes]], reason: str, tmp_path: Path
) -> None:
    tar = tar_of(*[(member(n), d) for n, d in members])
    assert reason in refused(tar, "tar.gz", tmp_path / "tar")
    assert reason in refused(zip_of(*members), "zip", tmp_path / "zip")


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        (tarfile.SYMTYPE, "is a link"),
        (tarfile.LNKTYPE, "is a link"),
        (tarfile.CHRTYPE, "device or FIFO"),
        (tarfile.FIFOTYPE, "device or FIFO"),
    ],
)
def test_tar_links_and_devices_are_refused(kind: bytes, reason: str, tmp_path: Path) -> None:
    # A link that would stay inside the folder is refused as well: no links at all.
    data = tar_of((member("SKILL.md"), SKILL_MD), (member("x", kind, "SKILL.md"), None))
    assert reason in refused(data, "tar.gz", tmp_path)


def test_a_tar_symlink_then_a_write_through_it_is_refused(tmp_path: Path) -> None:
    data = tar_of(
        (member("SKILL.md"), SKILL_MD),
        (member("out", tarfile.SYMTYPE, str(tmp_path / "evil")), None),
        (member("out/payload"), b"x"),
    )
    assert "is a link" in refused(data, "tar.gz", tmp_path)


def test_zip_symlink_is_refused(tmp_path: Path) -> None:
    data = zip_of(("SKILL.md", SKILL_MD), ("link", b"../../evil"), mode=stat.S_IFLNK | 0o777)
    assert "is a link" in refused(data, "zip", tmp_path)


def test_a_gzip_bomb_is_stopped_by_the_bytes_decompressed(tmp_path: Path) -> None:
    info = member("big.bin")
    size = archive.FILE_CAP + 1024 * 1024
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz") as tar:
        info.size = size
        tar.addfile(info, io.BytesIO(bytes(size)))
    data = raw.getvalue()
    assert len(data) < 200_000  # a small download that would unpack to over 16 MiB
    assert "is over" in refused(data, "tar.gz", tmp_path)


def test_a_zip_bomb_is_stopped_by_the_bytes_decompressed(tmp_path: Path) -> None:
    size = archive.FILE_CAP + 1024 * 1024
    data = zip_of(("SKILL.md", SKILL_MD), ("big.bin", bytes(size)))
    assert len(data) < 200_000
    assert "is over" in refused(data, "zip", tmp_path)


def test_a_zip_that_lies_about_its_sizes_is_still_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(archive, "TOTAL_CAP", 100_000)
    many = [(f"f{i}.bin", bytes(30_000)) for i in range(5)]
    data = zip_of(("SKILL.md", SKILL_MD), *many)
    assert "over 100000 bytes" in refused(data, "zip", tmp_path)


def test_too_many_files_and_a_total_over_the_cap_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(archive, "MAX_FILES", 3)
    files = [(member(f"f{i}"), b"x") for i in range(4)]
    assert "more than 3 entries" in refused(tar_of(*files), "tar.gz", tmp_path / "a")
    zipped = zip_of(*[(f"f{i}", b"x") for i in range(4)])
    assert "more than 3 entries" in refused(zipped, "zip", tmp_path / "b")
    monkeypatch.setattr(archive, "MAX_FILES", 100)
    monkeypatch.setattr(archive, "TOTAL_CAP", 50_000)
    parts = [(member(f"f{i}"), bytes(20_000)) for i in range(3)]
    data = tar_of((member("SKILL.md"), SKILL_MD), *parts)
    assert "over 50000 bytes" in refused(data, "tar.gz", tmp_path / "c")


def test_garbage_is_refused(tmp_path: Path) -> None:
    assert "not a readable" in refused(b"not an archive", "tar.gz", tmp_path / "a")
    assert "not a readable" in refused(b"PK\x03\x04 nope", "zip", tmp_path / "b")


def test_archive_format_comes_from_the_content_type_then_the_extension() -> None:
    assert archive_kind("application/zip", "https://h/x.tar.gz") == "zip"
    assert archive_kind("application/gzip", "https://h/x") == "tar.gz"
    assert archive_kind("application/octet-stream", "https://h/x.zip?v=1") == "zip"
    assert archive_kind("", "https://h/x.tgz") == "tar.gz"
    assert archive_kind("", "https://h/x") is None


# ---------------------------------------------------------------------------- index


def test_index_url_of_a_host_and_of_an_index_but_not_of_a_repository() -> None:
    index = "https://example.com/.well-known/agent-skills/index.json"
    assert index_url("https://example.com") == index
    assert index_url("https://example.com/") == index
    assert index_url(index) == index
    assert index_url("https://github.com/owner/repo") is None
    assert index_url("https://github.com/owner/repo.git") is None
    assert index_url("/some/folder") is None
    assert index_url("git@github.com:owner/repo.git") is None


def write_index(root: Path, skills: list[dict[str, str]], schema: str | None = SCHEMA) -> None:
    folder = root / ".well-known" / "agent-skills"
    folder.mkdir(parents=True, exist_ok=True)
    data: dict[str, object] = {"skills": skills}
    if schema is not None:
        data["$schema"] = schema
    (folder / "index.json").write_text(json.dumps(data), encoding="utf-8")


def test_urls_resolve_against_the_index_and_bad_entries_are_skipped(
    served: tuple[Path, str],
) -> None:
    root, base = served
    good = "sha256:" + "a" * 64

    def row(name: str, kind: str, url: str, digest: str = good) -> dict[str, str]:
        return {"name": name, "type": kind, "description": "d", "url": url, "digest": digest}

    nodesc = row("nodesc", "skill-md", "n")
    del nodesc["description"]
    write_index(
        root,
        [
            row("rel", "skill-md", "rel/SKILL.md"),
            row("abs-path", "archive", "/x/a.zip"),
            row("full", "archive", "https://cdn.example/f.tar.gz"),
            row("future", "plugin", "p"),
            row("bad-digest", "skill-md", "b", "sha256:AB"),
            row("../escape", "skill-md", "e"),
            nodesc,
        ],
    )
    index = read_index(base + "/.well-known/agent-skills/index.json")
    assert list(index.entries) == ["rel", "abs-path", "full"]
    assert index.entries["rel"].url == base + "/.well-known/agent-skills/rel/SKILL.md"
    assert index.entries["abs-path"].url == base + "/x/a.zip"
    assert index.entries["full"].url == "https://cdn.example/f.tar.gz"
    warnings = "\n".join(index.warnings)
    assert "unknown type 'plugin'" in warnings
    assert "digest is not sha256" in warnings
    assert "name '../escape'" in warnings
    assert "no description" in warnings


@pytest.mark.parametrize(
    "schema", [None, "https://schemas.agentskills.io/discovery/9.9.9/schema.json"]
)
def test_an_unknown_or_absent_schema_stops_everything(
    schema: str | None, served: tuple[Path, str]
) -> None:
    root, base = served
    write_index(root, [], schema=schema)
    with pytest.raises(SkilldeckError) as caught:
        read_index(base + "/.well-known/agent-skills/index.json")
    assert caught.value.details["reason"] == "unknown_schema"
    assert "not a known index schema" in caught.value.message


def test_a_wrong_digest_is_refused_before_anything_is_written(
    served: tuple[Path, str], tmp_path: Path
) -> None:
    root, base = served
    (root / "SKILL.md").write_bytes(SKILL_MD)
    wrong = "sha256:" + "0" * 64
    entry = IndexEntry("demo", "d", "skill-md", base + "/SKILL.md", wrong, local_index=True)
    with pytest.raises(SkilldeckError) as caught:
        stage_entry(entry, tmp_path / "dest")
    assert caught.value.details["reason"] == "digest_mismatch"
    assert "digest mismatch" in caught.value.message
    assert not (tmp_path / "dest").exists()
    right = IndexEntry("demo", "d", "skill-md", base + "/SKILL.md", digest_of(SKILL_MD), True)
    stage_entry(right, tmp_path / "dest")
    assert (tmp_path / "dest" / "SKILL.md").read_bytes() == SKILL_MD


# ---------------------------------------------------------------------------- publish


def make_skills(root: Path) -> Path:
    write_skill(root, "plain", "Plain skill. Use when plain.")
    write_skill(root, "bundle", "Bundle skill. Use when bundled.")
    (root / "bundle" / "scripts").mkdir()
    run = root / "bundle" / "scripts" / "run.sh"
    run.write_text("#!/bin/sh\necho ok\n")
    run.chmod(0o755)
    (root / "bundle" / "references.md").write_text("More.\n")
    return root


def test_publish_writes_a_deterministic_index(tmp_path: Path) -> None:
    src = make_skills(tmp_path / "src")
    first = publish(src, tmp_path / "one")
    (src / "bundle" / "references.md").touch()  # a new mtime changes no digest
    second = publish(src, tmp_path / "two")
    assert first.index is not None and second.index is not None
    assert first.index.read_bytes() == second.index.read_bytes()
    data = json.loads(first.index.read_text())
    assert data["$schema"] == SCHEMA
    by_name = {e["name"]: e for e in data["skills"]}
    assert by_name["plain"]["type"] == "skill-md"
    assert by_name["plain"]["url"] == "plain/SKILL.md"
    assert by_name["bundle"]["type"] == "archive"
    assert by_name["bundle"]["url"] == "bundle.tar.gz"
    blob = (first.index.parent / "bundle.tar.gz").read_bytes()
    assert by_name["bundle"]["digest"] == "sha256:" + hashlib.sha256(blob).hexdigest()
    assert blob[4:8] == b"\0\0\0\0"  # gzip mtime 0
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(blob))) as tar:
        infos = tar.getmembers()
    assert [i.name for i in infos] == ["SKILL.md", "references.md", "scripts/run.sh"]
    assert {(i.mtime, i.uid, i.gid) for i in infos} == {(0, 0, 0)}
    assert [i.mode for i in infos] == [0o644, 0o644, 0o755]


def test_publish_refuses_an_invalid_skill_and_writes_nothing(tmp_path: Path) -> None:
    src = make_skills(tmp_path / "src")
    write_skill(src, "Bad_Name", "Broken.")
    done = publish(src, tmp_path / "site")
    assert done.index is None and done.refused
    assert "Bad_Name" in " ".join(r for _, r in done.refused)
    assert not (tmp_path / "site").exists()


def test_tar_gz_is_the_same_for_the_same_files(tmp_path: Path) -> None:
    src = make_skills(tmp_path / "src")
    one = tar_gz(snapshot_skill(src / "bundle"))
    assert one == tar_gz(snapshot_skill(src / "bundle"))
    unpack(one, "tar.gz", tmp_path / "out")
    assert (tmp_path / "out" / "scripts" / "run.sh").read_bytes() == b"#!/bin/sh\necho ok\n"


_THIS_MACHINE = (
    "http://127.0.0.1:9/x.md",
    "https://127.1/x.md",
    "https://0x7f000001/x.md",
    "https://2130706433/x.md",
    "https://0177.0.0.1/x.md",
    "https://[::ffff:127.0.0.1]/x.md",
    "https://[::1]:8443/x.md",
    "https://localhost./x.md",
    "https://169.254.169.254/latest/meta-data",
    "https://10.0.0.7/x.md",
    "https://0.0.0.0/x.md",
)


def test_a_remote_index_may_not_point_at_this_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every spelling of this machine (or a private network) in an entry of a public index
    is skipped; the old string check let ``127.1``, ``0x7f000001``, ``2130706433``,
    ``0177.0.0.1`` and ``[::ffff:127.0.0.1]`` through."""
    from skilldeck.core import web
    from skilldeck.core.install import wellknown

    good = "sha256:" + "b" * 64
    urls = ("https://cdn.example/x.md", *_THIS_MACHINE)
    rows = [
        {"name": f"s{n}", "type": "skill-md", "description": "d", "url": u, "digest": good}
        for n, u in enumerate(urls)
    ]
    body = json.dumps({"$schema": SCHEMA, "skills": rows}).encode()

    def public_index(url: str, **kwargs: object) -> web.Answer:  # as a public server answers
        return web.Answer(url, body, "application/json", internal=False)

    monkeypatch.setattr(web, "get", public_index)
    index = wellknown.read_index("https://example.com/.well-known/agent-skills/index.json")
    assert list(index.entries) == ["s0"] and not index.entries["s0"].local_index
    assert len(index.warnings) == len(_THIS_MACHINE)
    assert all("may not point at this machine" in w for w in index.warnings)


@pytest.fixture
def local_service() -> Iterator[tuple[int, list[str]]]:
    """A TCP service on 127.0.0.1 (what a hostile index aims at): its port and a record
    of every connection it accepted."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    seen: list[str] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, peer = server.accept()
            except TimeoutError:
                continue
            seen.append(str(peer))
            conn.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], seen
    finally:
        stop.set()
        thread.join()
        server.close()


def _resolving_name() -> str:
    """A name (no IP spelling, no ``localhost``) that resolves to this machine."""
    name = socket.gethostname()
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(name, 80)}
    except OSError:
        pytest.skip(f"{name} does not resolve")
    if names_internal(name) or not all(internal_address(ip_address(a)) for a in addresses):
        pytest.skip(f"{name} resolves to {addresses}, not only to this machine")
    return name


@pytest.mark.parametrize("host", ["127.1", "0x7f000001", "2130706433", "[::ffff:127.0.0.1]", ""])
def test_an_entry_of_a_public_index_never_connects_to_this_machine(
    local_service: tuple[int, list[str]], tmp_path: Path, host: str
) -> None:
    """The artifact of a public index's entry is fetched ``public_only``: the address is
    checked after the lookup and before any connection, a name resolving to loopback
    included (``host`` '' stands for this machine's own name)."""
    port, seen = local_service
    url = f"https://{host or _resolving_name()}:{port}/x.md"
    entry = IndexEntry("demo", "d", "skill-md", url, digest_of(SKILL_MD))
    with pytest.raises(SkilldeckError) as caught:
        stage_entry(entry, tmp_path / "dest")
    assert caught.value.details["reason"] == "internal_address", caught.value.message
    assert "on this machine or a private network" in caught.value.message
    assert seen == [] and not (tmp_path / "dest").exists()
