"""Feature flags ``skills_v1``, ``skills_exec`` and ``exec_timeout_s``: config file,
environment overrides and where each value came from."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilldeck.core.config import effective_settings, load_settings


def test_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SKILLDECK_SKILLS_V1", "SKILLDECK_SKILLS_EXEC", "SKILLDECK_EXEC_TIMEOUT_S"):
        monkeypatch.delenv(name, raising=False)
    settings = load_settings(tmp_path / "absent.toml")
    assert settings.skills_v1 is True and settings.skills_exec is False
    assert settings.exec_timeout_s == 60.0
    rows = {name: (value, src) for name, value, src in effective_settings(settings)}
    assert rows["skills_exec"] == (False, "default")


def test_file_then_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text("skills_exec = true\nexec_timeout_s = 5\nskills_v1 = false\n", "utf-8")
    monkeypatch.setenv("SKILLDECK_SKILLS_V1", "1")
    monkeypatch.setenv("SKILLDECK_SKILLS_EXEC", "maybe")
    monkeypatch.delenv("SKILLDECK_EXEC_TIMEOUT_S", raising=False)
    settings = load_settings(cfg)
    assert settings.skills_v1 is True and settings.sources["skills_v1"] == "SKILLDECK_SKILLS_V1"
    assert settings.skills_exec is True and settings.sources["skills_exec"] == str(cfg)
    assert settings.exec_timeout_s == 5.0
    assert [d.code for d in settings.diagnostics] == ["SC002"]
