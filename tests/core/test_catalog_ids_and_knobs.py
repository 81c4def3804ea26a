"""Issue 36 (design documents, round three) through the CLI and the core API.

2. every skill has an id unique in its catalog and the same on every run;
3. ``load --format json`` carries tool availability and warnings; ``validate`` gates ST201;
5. ``--profile shipped`` accepts ``metadata.tags`` as a YAML list;
6. the folder knobs and the per-call refresh switch, shown by ``config``;
7. a broken SKILL.md requested by name is INTERNAL_ERROR with its SD code;
8. telemetry events carry a versioned schema.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from conftest import run_cli, write_skill
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.loader import load_skill
from skilldeck.core.model import Diagnostic, Severity, Skill


def _ids(out: str) -> dict[str, list[str]]:
    listed = json.loads(out)
    skills = listed["skills"] if isinstance(listed, dict) else listed
    ids: dict[str, list[str]] = {}
    for skill in skills:
        ids.setdefault(skill["name"], []).append(skill["id"])
    return ids


def test_same_named_skills_of_two_project_roots_get_different_ids(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / ".git").mkdir()
    write_skill(project / ".claude" / "skills", "grep-helper")
    write_skill(project / ".agents" / "skills", "grep-helper")
    code, out, _ = run_cli(capsys, "--format", "json", "list", "--all")
    assert code == 0
    ids = _ids(out)["grep-helper"]
    assert sorted(ids) == [
        "project:.agents/skills/grep-helper",
        "project:.claude/skills/grep-helper",
    ]
    assert _ids(run_cli(capsys, "--format", "json", "list", "--all")[1])["grep-helper"] == ids


def test_nested_project_folders_and_explicit_roots_never_share_ids(
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (project / ".git").mkdir()
    write_skill(project / "skills", "lint-helper")
    write_skill(project / "sub" / "skills", "lint-helper")
    monkeypatch.chdir(project / "sub")
    ids = _ids(run_cli(capsys, "--format", "json", "list", "--all")[1])["lint-helper"]
    assert sorted(ids) == ["project:skills/lint-helper", "project:sub/skills/lint-helper"]
    write_skill(tmp_path / "a" / "skills", "x-helper")
    write_skill(tmp_path / "b" / "skills", "x-helper")
    _, out, _ = run_cli(
        capsys,
        "--root",
        str(tmp_path / "a" / "skills"),
        "--root",
        str(tmp_path / "b" / "skills"),
        "--format",
        "json",
        "list",
        "--all",
    )
    assert sorted(_ids(out)["x-helper"]) == [
        "explicit:a/skills/x-helper",
        "explicit:b/skills/x-helper",
    ]


def test_an_id_names_the_shadowed_skill_for_a_person(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / ".git").mkdir()
    write_skill(project / ".agents" / "skills", "grep-helper", body="# Agents copy\n")
    write_skill(project / ".claude" / "skills", "grep-helper", body="# Claude copy\n")
    code, out, _ = run_cli(capsys, "--format", "json", "load", "grep-helper")
    assert code == 0 and "Claude copy" in json.loads(out)["text"]
    code, out, _ = run_cli(capsys, "--format", "json", "load", "project:.agents/skills/grep-helper")
    assert code == 0, out
    data = json.loads(out)
    assert "Agents copy" in data["text"]
    assert data["id"] == "project:.agents/skills/grep-helper"


MISSING_TOOL = "tools:\n  - name: NoSuchTool\n    purpose: publish\n    required: true\n"


def test_cli_load_json_carries_tool_availability_and_warnings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "skills"
    write_skill(
        root,
        "needs-tool",
        extra=MISSING_TOOL + "tool-validation: warn\n",
        body="# Needs\n\nUse $0 and $1.\n",
    )
    code, out, _ = run_cli(capsys, "--root", str(root), "--format", "json", "load", "needs-tool")
    assert code == 0, out
    data = json.loads(out)
    assert data["tools"]["missing"] == ["NoSuchTool"]
    assert data["tools"]["complete"] is False
    assert any("argument" in w for w in data["warnings"])
    assert data["allowed_tools"] == [] and "resources" in data
    code, out, err = run_cli(capsys, "--root", str(root), "load", "needs-tool")
    assert code == 0 and "NoSuchTool" in err


def test_validate_reports_a_warn_mode_missing_tool_and_ci_can_gate_on_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "skills"
    write_skill(root, "needs-tool", extra=MISSING_TOOL + "tool-validation: warn\n")
    code, out, _ = run_cli(capsys, "--root", str(root), "--format", "json", "validate")
    assert code == 0, out
    diags = json.loads(out)["skills"][0]["diagnostics"]
    assert [(d["code"], d["severity"]) for d in diags if d["code"] == "ST201"] == [
        ("ST201", "warning")
    ]
    code, out, _ = run_cli(capsys, "--root", str(root), "validate", "--fail-on", "warning")
    assert code == 1
    assert "ST201 warning required tool 'NoSuchTool' is not available" in out


BROKEN_YAML = "description: Broken: on purpose, the colon breaks YAML.\n"


def test_cli_load_of_a_skill_that_does_not_parse_is_internal_error_with_its_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "skills"
    folder = root / "broken"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: broken\n{BROKEN_YAML}---\nbody\n", "utf-8")
    code, out, _ = run_cli(capsys, "--root", str(root), "--format", "json", "load", "broken")
    assert code == 2
    error = json.loads(out)["error"]
    assert error["code"] == "INTERNAL_ERROR"
    assert error["reason"] == "parse_failed" and error["diagnostics"] == ["SD103"]
    assert "SD103" in error["message"]


def _as_nobody(home: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {"SKILLDECK_HOME": str(home), "HOME": str(home), "NO_COLOR": "1"}
    env.update({k: os.environ[k] for k in ("PATH", "PYTHONPATH") if k in os.environ})
    command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    return subprocess.run(
        [*command, sys.executable, "-m", "skilldeck", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root")
def test_cli_load_the_system_refuses_is_permission_denied(readable_tmp: Path) -> None:
    root = readable_tmp / "skills"
    md = write_skill(root, "locked")
    for folder in (root, md.parent):
        folder.chmod(0o755)
    md.chmod(0o000)
    home = readable_tmp / "home"
    home.mkdir(mode=0o777)
    home.chmod(0o777)
    proc = _as_nobody(home, "--root", str(root), "--format", "json", "load", "locked")
    assert proc.returncode == 2, proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "PERMISSION_DENIED", error
    assert error["reason"] == "os_refused"


def test_other_io_errors_reading_a_skill_are_internal_error(tmp_path: Path) -> None:
    folder = tmp_path / "odd"
    folder.mkdir()
    path = folder / ("x" * 300)  # ENAMETOOLONG: the system cannot even look it up
    skill = Skill(
        "odd",
        "Odd.",
        path,
        folder,
        diagnostics=[Diagnostic("SD110", Severity.ERROR, "cannot read it", path)],
    )
    with pytest.raises(SkilldeckError) as caught:
        load_skill(skill)
    assert caught.value.code is ErrorCode.INTERNAL_ERROR
    assert caught.value.details["reason"] == "io_error"


@pytest.mark.parametrize(
    ("tags", "codes"),
    [
        ("[pdf, forms]", {"SV506"}),
        ("pdf, forms", set()),
        ("[]", {"SV302", "SV503"}),
        ("[pdf, 3]", {"SV302", "SV503"}),
    ],
)
def test_shipped_profile_accepts_metadata_tags_as_a_yaml_list(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tags: str, codes: set[str]
) -> None:
    root = tmp_path / "skills"
    write_skill(root, "tagged", extra=f"metadata:\n  version: 1.0.0\n  tags: {tags}\n")
    code, out, _ = run_cli(
        capsys, "--root", str(root), "--profile", "shipped", "--format", "json", "validate"
    )
    found = {d["code"]: d["severity"] for d in json.loads(out)["skills"][0]["diagnostics"]}
    assert set(found) == codes
    assert code == (1 if "SV503" in codes else 0)
    if "SV506" in codes:
        assert found["SV506"] == "warning"
        code, _, _ = run_cli(capsys, "--root", str(root), "--profile", "agentskills", "validate")
        assert code == 1  # the specification wants string metadata values


def _settings_of(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code, out, _ = run_cli(capsys, "--format", "json", "config")
    assert code == 0
    settings: dict[str, Any] = json.loads(out)["settings"]
    return settings


def test_folder_knobs_custom_overrides_shipped_and_config_says_where_from(
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    shipped, custom = tmp_path / "shipped", tmp_path / "custom"
    write_skill(shipped, "helper", description="Shipped helper. Use when helping.")
    write_skill(shipped, "only-shipped", description="Only shipped. Use when testing.")
    write_skill(custom, "helper", description="Custom helper. Use when helping.")
    monkeypatch.setenv("SKILLS_DIR", str(shipped))
    monkeypatch.setenv("CUSTOM_SKILLS_DIR", str(custom))
    code, out, _ = run_cli(capsys, "--format", "json", "list")
    assert code == 0
    listed = {s["name"]: s for s in json.loads(out)["skills"]}
    assert listed["helper"]["description"].startswith("Custom")
    assert listed["only-shipped"]["source"] == "bundled"
    assert "writing-skills" not in listed  # the shipped folder replaced the bundled one
    settings = _settings_of(capsys)
    assert settings["skills_dir"] == {"value": str(shipped), "source": "SKILLS_DIR"}
    assert settings["custom_skills_dir"]["source"] == "CUSTOM_SKILLS_DIR"
    assert settings["skills_refresh_on_call"] == {"value": True, "source": "default"}
    monkeypatch.setenv("SKILLDECK_SKILLS_DIR", str(custom))
    monkeypatch.setenv("SKILLS_REFRESH_ON_CALL", "0")
    settings = _settings_of(capsys)
    assert settings["skills_dir"] == {"value": str(custom), "source": "SKILLDECK_SKILLS_DIR"}
    assert settings["skills_refresh_on_call"] == {
        "value": False,
        "source": "SKILLS_REFRESH_ON_CALL",
    }


def test_a_relative_custom_folder_is_the_working_folders(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write_skill(project / "my-skills", "mine", description="Mine. Use when testing.")
    monkeypatch.setenv("SKILLDECK_CUSTOM_SKILLS_DIR", "my-skills")
    code, out, _ = run_cli(capsys, "--format", "json", "list")
    assert code == 0
    (mine,) = [s for s in json.loads(out)["skills"] if s["name"] == "mine"]
    assert mine["source"] == "user" and mine["id"] == "user:my-skills/mine"


def test_every_telemetry_record_names_its_schema_and_every_event_is_documented(
    tmp_path: Path,
) -> None:
    from skilldeck.core.telemetry import SCHEMA, Telemetry

    writer = Telemetry(tmp_path / "telemetry", max_bytes=400)
    writer.emit("skill_loaded", name="pdf", tokens=3)
    writer.emit("skill_loaded", name="pdf", tokens=3, padding="x" * 400)  # reaches the cap
    records = list(writer.events())
    assert [r["event"] for r in records] == ["skill_loaded", "telemetry_capped"]
    assert all(r["schema"] == SCHEMA == "skilldeck.telemetry/1" for r in records)
    assert records[0]["name"] == "pdf" and records[0]["tokens"] == 3  # fields unchanged
    doc = (Path(__file__).parents[2] / "docs" / "telemetry.md").read_text(encoding="utf-8")
    assert f"`{SCHEMA}`" in doc
    source = Path(__file__).parents[2] / "tui" / "skilldeck"
    emitted = set()
    for path in source.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        emitted.update(re.findall(r"\.emit\(\s*\"([a-z_]+)\"", text))
    emitted.update(
        re.findall(
            r'^[A-Z_]+EVENT[A-Z_]* = "([a-z_]+)"',
            (source / "core" / "telemetry.py").read_text(encoding="utf-8"),
            re.M,
        )
    )
    assert len(emitted) >= 8
    missing = sorted(e for e in emitted if f"### `{e}`" not in doc)
    assert not missing, f"events not in docs/telemetry.md: {missing}"


def test_telemetry_exports_otlp_logs_to_a_configured_endpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

    from skilldeck.core.config import load_settings
    from skilldeck.core.telemetry import Telemetry

    received: list[tuple[str, str, bytes]] = []

    class Collector(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append((self.path, self.headers["Content-Type"], body))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            return

    server = http.server.HTTPServer(("127.0.0.1", 0), Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        assert load_settings().telemetry_otlp_endpoint == ""  # off by default
        url = f"http://127.0.0.1:{server.server_port}/v1/logs"
        monkeypatch.setenv("SKILLDECK_TELEMETRY_OTLP_ENDPOINT", url)
        writer = Telemetry.from_settings(load_settings())
        writer.emit("skill_loaded", name="pdf", tokens=7, truncated=False, session=None)
        writer.emit("skill_selected", query="fill a form", candidates=[{"name": "pdf"}])
        writer.flush()
    finally:
        server.shutdown()
    assert [r["event"] for r in writer.events()] == ["skill_loaded", "skill_selected"]
    assert received and received[0][:2] == ("/v1/logs", "application/x-protobuf")
    logs = []
    for _, _, body in received:
        request = ExportLogsServiceRequest.FromString(body)
        for resource in request.resource_logs:
            for scope in resource.scope_logs:
                logs.extend(scope.log_records)
    assert [log.event_name for log in logs] == ["skill_loaded", "skill_selected"]
    first = {a.key: a.value for a in logs[0].attributes}
    assert first["name"].string_value == "pdf" and first["tokens"].int_value == 7
    assert first["skilldeck.schema"].string_value == "skilldeck.telemetry/1"
    assert "session" not in first
    second = {a.key: a.value for a in logs[1].attributes}
    assert json.loads(second["candidates"].string_value) == [{"name": "pdf"}]
