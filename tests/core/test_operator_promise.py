"""Nothing runs that an operator did not review: each attack a hostile skill author tried
(issue "Nothing runs that an operator did not review") against the real runner, real
files and real ``bwrap`` where this machine has it."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from conftest import skill_with_files as make
from skilldeck.core.config import Settings
from skilldeck.core.errors import SkilldeckError
from skilldeck.core.execution import (
    add_to_allowlist,
    allowlist_path,
    execute,
    resolve_script,
    run_skill_file,
    sandbox_level,
    snapshot_skill,
)
from skilldeck.core.model import Skill

BWRAP = sandbox_level().level == "bwrap"
needs_bwrap = pytest.mark.skipif(not BWRAP, reason="bubblewrap (bwrap) is not usable here")


def test_ci_gets_the_bwrap_level() -> None:
    """Where CI installed bubblewrap (SKILLDECK_REQUIRE_BWRAP=1) the sandbox tests must run,
    not skip."""
    if os.environ.get("SKILLDECK_REQUIRE_BWRAP") != "1":
        pytest.skip("SKILLDECK_REQUIRE_BWRAP is not set")
    assert sandbox_level().level == "bwrap", sandbox_level()


def allow(skill: Skill, script: str) -> None:
    add_to_allowlist(resolve_script(skill, script))


def refused(settings: Settings, skill: Skill, script: str, *args: str) -> str:
    with pytest.raises(SkilldeckError) as caught:
        execute(settings, skill, script, list(args))
    return str(caught.value.details.get("reason"))


MAIN = "import sys\nsys.path.insert(0, 'scripts')\nimport helper\nprint(helper.WORD)\n"


def test_a_skill_root_cannot_allow_itself(exec_on: Settings, tmp_path: Path) -> None:
    root = tmp_path / "repo" / ".claude" / "skills"
    skill = make(root, {"scripts/run.py": "print('ran')\n"})
    good_line = f"demo/scripts/run.py skill-sha256:{snapshot_skill(skill.base_dir).digest}\n"
    for place in (root / "ALLOWLIST.txt", root / "skills" / "ALLOWLIST.txt"):
        place.parent.mkdir(parents=True, exist_ok=True)
        place.write_text(good_line, encoding="utf-8")
    with pytest.raises(SkilldeckError) as caught:
        execute(exec_on, skill, "scripts/run.py", [])
    assert caught.value.details["reason"] == "not_allowed"
    assert any("ignored" in n and str(root) in n for n in caught.value.details["notices"])


def test_a_line_naming_only_a_script_allows_nothing(exec_on: Settings, tmp_path: Path) -> None:
    skill = make(tmp_path / "skills", {"scripts/run.py": "print('ran')\n"})
    allowlist_path().write_text("demo/scripts/run.py\n", encoding="utf-8")
    with pytest.raises(SkilldeckError) as caught:
        execute(exec_on, skill, "scripts/run.py", [])
    assert caught.value.details["reason"] == "not_allowed"
    assert any("names a skill and its digest" in n for n in caught.value.details["notices"])


def test_a_same_named_skill_with_other_bytes_is_not_allowed(
    exec_on: Settings, tmp_path: Path
) -> None:
    shipped = make(tmp_path / "shipped", {"scripts/run.py": "print('reviewed')\n"})
    allow(shipped, "scripts/run.py")
    assert execute(exec_on, shipped, "scripts/run.py", []).run.stdout == "reviewed\n"
    shadow = make(tmp_path / "project", {"scripts/run.py": "print('not reviewed')\n"})
    assert refused(exec_on, shadow, "scripts/run.py") == "not_allowed"


@pytest.mark.parametrize(
    "edit",
    [
        ("scripts/helper.py", "WORD = 'evil'\n"),
        (".local/lib/python3.11/site-packages/evil.pth", "import os; print('pth ran')\n"),
        ("scripts/lib.sh", "echo evil\n"),
        ("SKILL.md", None),
    ],
    ids=["sibling-module", "pth-file", "sourced-library", "skill-md"],
)
def test_any_change_to_any_file_needs_a_new_review(
    exec_on: Settings, tmp_path: Path, edit: tuple[str, str | None]
) -> None:
    files = {"scripts/main.py": MAIN, "scripts/helper.py": "WORD = 'reviewed'\n"}
    files["scripts/lib.sh"] = "echo lib\n"
    skill = make(tmp_path / "skills", files)
    allow(skill, "scripts/main.py")
    assert execute(exec_on, skill, "scripts/main.py", []).run.stdout == "reviewed\n"
    rel, text = edit
    target = skill.base_dir / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text if text is not None else target.read_text() + "\nmore\n", "utf-8")
    assert refused(exec_on, skill, "scripts/main.py") == "not_allowed"


def test_a_sourced_library_runs_from_the_pinned_copy(exec_on: Settings, tmp_path: Path) -> None:
    skill = make(
        tmp_path / "skills",
        {
            "scripts/go.sh": '. "$SKILL_DIR/scripts/lib.sh"\necho "$WORD"\n',
            "scripts/lib.sh": "WORD=lib\n",
        },
    )
    allow(skill, "scripts/go.sh")
    assert execute(exec_on, skill, "scripts/go.sh", []).run.stdout == "lib\n"


@pytest.mark.parametrize(
    "shebang",
    ["#!/usr/bin/env python3 -m scripts.helper", "#!/usr/bin/env -S python3 -c 1", "#!./tool"],
)
def test_shebangs_that_run_other_code_are_refused(
    exec_on: Settings, tmp_path: Path, shebang: str
) -> None:
    skill = make(tmp_path / "skills", {"scripts/main.py": f"{shebang}\nprint('ran')\n"})
    allow(skill, "scripts/main.py")
    assert refused(exec_on, skill, "scripts/main.py") in (
        "unsupported_shebang",
        "unknown_interpreter",
    )


def test_an_interpreter_inside_the_skill_is_never_used(exec_on: Settings, tmp_path: Path) -> None:
    """``#!./sh`` names a file the skill ships: the system's sh runs the script instead."""
    fake = "#!/usr/bin/env python3\nprint('the fake sh ran')\n"
    skill = make(tmp_path / "skills", {"sh": fake, "scripts/go.sh": "#!./sh\necho real sh\n"})
    (skill.base_dir / "sh").chmod(0o755)
    allow(skill, "scripts/go.sh")
    result = execute(exec_on, skill, "scripts/go.sh", [])
    assert result.run.stdout == "real sh\n"
    assert result.run.argv[0].startswith(("/usr/bin/", "/bin/"))


def test_runs_racing_an_editor_never_run_unreviewed_code(exec_on: Settings, tmp_path: Path) -> None:
    skill = make(
        tmp_path / "skills", {"scripts/main.py": MAIN, "scripts/helper.py": "WORD = 'A'\n"}
    )
    allow(skill, "scripts/main.py")
    helper = skill.base_dir / "scripts" / "helper.py"
    stop = threading.Event()

    def editor() -> None:
        while not stop.is_set():
            for word in ("B", "A"):
                helper.write_text(f"WORD = '{word}'\n", encoding="utf-8")

    thread = threading.Thread(target=editor, daemon=True)
    thread.start()
    outputs: list[str] = []
    try:
        for _ in range(30):
            try:
                outputs.append(execute(exec_on, skill, "scripts/main.py", []).run.stdout)
            except SkilldeckError as exc:
                assert exc.details.get("reason") in ("not_allowed", "confinement")
    finally:
        stop.set()
        thread.join()
    assert all(out == "A\n" for out in outputs), outputs


DOUBLE_FORK = """\
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(31.4159)
        os._exit(0)
    os._exit(0)
print('parent done', flush=True)
"""


def _alive(marker: str) -> bool:
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                if marker.encode() in handle.read():
                    return True
        except OSError:
            continue
    return False


@needs_bwrap
def test_an_escaped_grandchild_is_gone_when_the_run_returns(
    exec_on: Settings, tmp_path: Path
) -> None:
    script = DOUBLE_FORK.replace(
        "time.sleep(31.4159)", "os.execv('/bin/sleep', ['sleep', '31.4159'])"
    )
    skill = make(tmp_path / "skills", {"run.py": script})
    allow(skill, "run.py")
    result = execute(exec_on, skill, "run.py", [])
    # it did not wait for the 31 s sleeper (exec_timeout_s = 20 would have cut it off)
    assert result.run.stdout == "parent done\n" and not result.run.timed_out
    assert not _alive("31.4159")


def test_a_child_holding_the_pipes_neither_delays_nor_loses_output(
    exec_on: Settings, tmp_path: Path
) -> None:
    holder = "import subprocess\nsubprocess.Popen(['sleep', '27.1828'], start_new_session=True)\n"
    skill = make(tmp_path / "skills", {"run.py": holder + "print('kept output')\n"})
    allow(skill, "run.py")
    result = execute(exec_on, skill, "run.py", [])
    assert result.run.stdout == "kept output\n"
    # not delayed until the 27 s holder ends: the 20 s exec timeout would have cut it off
    # (how long it takes: tests/benchmarks/bench_timing.py script-return)
    assert not result.run.timed_out


@needs_bwrap
def test_processes_are_limited(exec_on: Settings, tmp_path: Path) -> None:
    forks = (
        "import os, time\nn = 0\nfor _ in range(300):\n    try:\n        pid = os.fork()\n"
        "    except OSError:\n        break\n    if pid == 0:\n        time.sleep(3)\n"
        "        os._exit(0)\n    n += 1\nprint(n)\n"
    )
    skill = make(tmp_path / "skills", {"forks.py": forks})
    allow(skill, "forks.py")
    result = execute(exec_on, skill, "forks.py", [])
    assert int(result.run.stdout) < 100, result


@needs_bwrap
def test_the_parents_environment_and_home_are_out_of_reach(
    exec_on: Settings, tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLDECK_TEST_SECRET", "hunter2-secret")
    probe = (
        "import os, sys\nfound = []\nfor pid in filter(str.isdigit, os.listdir('/proc')):\n"
        "    try:\n        data = open(f'/proc/{pid}/environ', 'rb').read()\n"
        "    except OSError:\n        continue\n"
        "    if b'hunter2' in data:\n        found.append(pid)\n"
        "print('secret' if found else 'no secret')\n"
        "print('home' if os.path.exists(sys.argv[1]) else 'no home')\n"
        "print(os.getppid())\n"
    )
    skill = make(tmp_path / "skills", {"probe.py": probe})
    allow(skill, "probe.py")
    result = execute(exec_on, skill, "probe.py", [str(isolated_home)])
    lines = result.run.stdout.splitlines()
    assert lines[:2] == ["no secret", "no home"], result


@needs_bwrap
def test_total_bytes_written_are_bounded(exec_on: Settings, tmp_path: Path) -> None:
    writer = (
        "import os\nblock = b'x' * (1 << 20)\ntotal = 0\n"
        "for i in range(200):\n    try:\n"
        "        with open(f'/tmp/f{i}', 'wb') as h:\n            h.write(block * 4)\n"
        "        total += 4\n    except OSError:\n        break\nprint(total)\n"
    )
    skill = make(tmp_path / "skills", {"w.py": writer})
    allow(skill, "w.py")
    result = execute(exec_on, skill, "w.py", [])
    assert int(result.run.stdout) <= 64, result


@needs_bwrap
def test_the_skill_copy_is_read_only_and_arguments_are_visible(
    exec_on: Settings, tmp_path: Path, readable_tmp: Path
) -> None:
    sample = readable_tmp / "outside" / "sample.txt"
    sample.parent.mkdir(mode=0o755)
    sample.write_text("named by the caller\n", encoding="utf-8")
    sample.chmod(0o644)
    secret = readable_tmp / "outside" / "not-named.txt"
    secret.write_text("private\n", encoding="utf-8")
    script = (
        "import os, sys\nprint(open(sys.argv[1]).read().strip())\n"
        "print(os.path.exists(sys.argv[2]))\n"
        "try:\n    open('SKILL.md', 'a').write('x')\n    print('wrote')\n"
        "except OSError:\n    print('read-only')\n"
    )
    skill = make(tmp_path / "skills", {"r.py": script})
    allow(skill, "r.py")
    result = execute(exec_on, skill, "r.py", [str(sample), str(secret) + "-no"])
    assert result.run.stdout.splitlines() == ["named by the caller", "False", "read-only"]


def test_a_disabled_skill_does_not_run(exec_on: Settings, tmp_path: Path) -> None:
    skill = make(tmp_path / "skills", {"run.py": "print('ran')\n"})
    allow(skill, "run.py")
    skill.enabled = False
    assert refused(exec_on, skill, "run.py") == "disabled"


def test_rlimits_only_level_is_said_and_can_be_required(
    exec_on: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skilldeck.core.execution import runner, sandbox

    fallback = sandbox.Sandbox("rlimits-only", True, ("bubblewrap (bwrap) is not usable here",))
    monkeypatch.setattr(sandbox, "probe", lambda: fallback)
    monkeypatch.setattr(runner, "probe", lambda: fallback)
    skill = make(tmp_path / "skills", {"run.py": "import os\nprint(os.getcwd())\n"})
    allow(skill, "run.py")
    result = execute(exec_on, skill, "run.py", [])
    assert result.run.sandbox == "rlimits-only" and result.run.exit_code == 0
    assert result.run.warnings and result.run.stdout.strip() != str(skill.base_dir)
    exec_on.require_sandbox = True
    assert refused(exec_on, skill, "run.py") == "sandbox_required"


def test_a_run_reports_its_sandbox_level(exec_on: Settings, tmp_path: Path) -> None:
    skill = make(tmp_path / "skills", {"run.py": "print('ok')\n"})
    pinned = snapshot_skill(skill.base_dir)
    result = run_skill_file(pinned, "run.py", [], 20)
    assert result.sandbox == sandbox_level().level
    assert result.network_isolated == sandbox_level().network_isolated


def test_a_nul_in_the_script_path_is_a_bad_parameter(exec_on: Settings, tmp_path: Path) -> None:
    skill = make(tmp_path / "skills", {"run.py": "print('ran')\n"})
    with pytest.raises(SkilldeckError) as caught:
        execute(exec_on, skill, "run.py\x00.txt", [])
    assert caught.value.code.value == "INVALID_PARAM"
