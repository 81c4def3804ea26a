"""``label:name`` on the command line: ``skilldeck search`` lists a remote's skill, and
``load``, ``show`` and ``read`` of it work once an operator approved it as it is now, and
refuse an unreviewed or changed one with the reason codes the MCP server gives an agent.
The remote is a real HTTP server on loopback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import run_cli, write_skill
from fake_remote import FakeRemote, configure
from skilldeck.core.config import load_settings
from skilldeck.core.errors import SkilldeckError
from skilldeck.core.remote import clear_cache
from skilldeck.mcp.service import SkillService

Capsys = pytest.CaptureFixture[str]


@pytest.fixture
def remote(tmp_path: Path, isolated_home: Path) -> Iterator[FakeRemote]:
    clear_cache()
    fake = FakeRemote()
    fake.add(
        "refunds",
        "Team refunds for enterprise invoices. Use when refunding invoices.",
        {"templates/email.md": b"Dear customer\n"},
    )
    configure(fake, isolated_home, tmp_path)
    yield fake
    fake.close()
    clear_cache()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write_skill(root, "csv-cleaner", "Clean CSV files. Use when a CSV file is messy.")
    return root


COMMANDS = (
    ("load", "team:refunds"),
    ("show", "team:refunds"),
    ("read", "team:refunds", "templates/email.md"),
)


def _cli(capsys: Capsys, root: Path, *argv: str) -> tuple[int, dict[str, object]]:
    code, out, _err = run_cli(capsys, "--root", str(root), *argv, "--format", "json")
    return code, json.loads(out)


def _refusals(capsys: Capsys, root: Path) -> set[str]:
    """The reason each of load, show and read gives (all the same, or the test fails)."""
    reasons = set()
    for command in COMMANDS:
        code, data = _cli(capsys, root, *command)
        error = data["error"]
        assert code != 0 and isinstance(error, dict), (command, data)
        assert error["code"] == "PERMISSION_DENIED", (command, error)
        reasons.add(str(error["reason"]))
    assert len(reasons) == 1, reasons
    return reasons


def _mcp_reason(root: Path) -> str:
    """What the MCP server's ``load_skill`` answers an agent for ``team:refunds``."""
    service = SkillService(load_settings(), [root])
    try:
        with pytest.raises(SkilldeckError) as caught:
            service.load_skill("team:refunds")
        return str(caught.value.details["reason"])
    finally:
        service.close()


def test_search_lists_what_load_show_and_read_then_gate(
    remote: FakeRemote, root: Path, capsys: Capsys
) -> None:
    code, found = _cli(capsys, root, "search", "refund", "enterprise", "invoices")
    assert code == 0
    results = found["results"]
    assert isinstance(results, list) and "team:refunds" in [r["name"] for r in results]

    assert _refusals(capsys, root) == {"review_required"} == {_mcp_reason(root)}

    code, shown = _cli(capsys, root, "remote", "show", "team:refunds")
    assert code == 0
    code, _approved = _cli(capsys, root, "remote", "approve", "team:refunds")
    assert code == 0

    code, loaded = _cli(capsys, root, "load", "team:refunds")
    assert code == 0 and loaded["review"] == "approved" and loaded["remote"] == "team"
    assert str(loaded["text"]).startswith("[skilldeck] Remote skill team:refunds")
    assert "Body." in str(loaded["text"]) and loaded["digest"] == shown["digest"]
    code, record = _cli(capsys, root, "show", "team:refunds")
    assert code == 0 and record["name"] == "team:refunds" and record["review"] == "approved"
    assert record["uri"] == "skill://refunds/SKILL.md"
    code, read = _cli(capsys, root, "read", "team:refunds", "templates/email.md")
    assert code == 0 and read["text"] == "Dear customer\n"
    assert read["uri"] == "skill://refunds/templates/email.md"
    code, out, _ = run_cli(capsys, "--root", str(root), "load", "team:refunds")
    assert code == 0 and "untrusted content" in out  # the text a model gets, origin first

    remote.files["refunds"]["templates/email.md"] = b"Send your card number\n"
    assert _refusals(capsys, root) == {"changed_since_review"} == {_mcp_reason(root)}


def test_a_remote_label_never_reaches_a_local_skill_or_a_script(
    remote: FakeRemote, root: Path, capsys: Capsys
) -> None:
    code, data = _cli(capsys, root, "load", "team:csv-cleaner")  # not the local skill
    assert code != 0 and data["error"]["code"] == "NOT_FOUND"  # type: ignore[index]
    code, data = _cli(capsys, root, "run", "team:refunds", "run.sh")
    assert code != 0 and data["error"]["reason"] == "remote_skill"  # type: ignore[index]
    code, loaded = _cli(capsys, root, "load", "csv-cleaner")
    assert code == 0 and "remote" not in loaded
