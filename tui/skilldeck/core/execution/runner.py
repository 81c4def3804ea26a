"""How a script runs: no shell, a scrubbed environment, limits, and no network where
``unshare --net`` works.

The command line comes from the script's shebang (``#!/usr/bin/env python3`` and
``#!/bin/sh -e`` style) or its extension (``.py``: this Python, ``.sh``: ``/bin/sh``). The
working directory is the skill folder. Limits: wall-clock timeout (the whole process group
is killed), 1 MB of output per stream (the rest is cut and flagged), at most 100 arguments
and 4,096 argument bytes, and CPU, memory and file-size rlimits.
"""

from __future__ import annotations

import contextlib
import functools
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

from skilldeck.core.errors import ErrorCode, SkilldeckError

OUTPUT_CAP = 1024 * 1024
MAX_ARGS = 100
MAX_ARG_BYTES = 4096
CPU_SECONDS = 60
MEMORY_BYTES = 1024 * 1024 * 1024
FILE_BYTES = 64 * 1024 * 1024
SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
_INTERPRETERS = {".py": [sys.executable], ".sh": ["/bin/sh"]}


@dataclass(slots=True)
class RunResult:
    """What one run produced.

    Attributes:
        exit_code: The process's exit status (negative: killed by that signal).
        stdout, stderr: Decoded output (UTF-8, bad bytes replaced), each at most the cap.
        truncated: True when some output was cut at the cap.
        timed_out: True when the run was killed at the timeout.
        duration_ms: Wall-clock time.
        network_isolated: True when the run had no network (``unshare --net``).
        argv: The command line run.
        warnings: Things the caller should know (no network isolation here, …).
    """

    exit_code: int
    stdout: str
    stderr: str
    truncated: bool
    timed_out: bool
    duration_ms: int
    network_isolated: bool
    argv: list[str]
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


def check_args(args: list[str]) -> None:
    """Refuse more than :data:`MAX_ARGS` arguments or :data:`MAX_ARG_BYTES` bytes of them."""
    if len(args) > MAX_ARGS:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM, f"at most {MAX_ARGS} arguments", reason="too_many_args"
        )
    if any(not isinstance(a, str) or "\x00" in a for a in args):
        raise SkilldeckError(ErrorCode.INVALID_PARAM, "arguments must be strings without NUL")
    if sum(len(a.encode("utf-8", "surrogateescape")) for a in args) > MAX_ARG_BYTES:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"arguments exceed {MAX_ARG_BYTES} bytes",
            reason="args_too_long",
        )


def interpreter(path: Path, data: bytes | None = None) -> list[str]:
    """The command that runs ``path`` (without the path itself), from its shebang (in
    ``data``, the script's bytes, when given) or its extension.

    Raises:
        SkilldeckError: PERMISSION_DENIED when neither says how to run it.
    """
    if data is not None:
        first = data[:512].split(b"\n", 1)[0]
    else:
        try:
            with path.open("rb") as handle:
                first = handle.readline(512)
        except OSError as exc:
            raise SkilldeckError(
                ErrorCode.NOT_FOUND, f"cannot read script: {exc.strerror}"
            ) from exc
    if first.startswith(b"#!"):
        parts = first[2:].decode("utf-8", "replace").split()
        if parts and Path(parts[0]).name == "env" and len(parts) >= 2:
            parts = parts[1:]
        if parts and Path(parts[0]).name.startswith("python"):
            return [sys.executable, *parts[1:]]
        if parts and Path(parts[0]).name in ("sh", "bash", "dash"):
            found = shutil.which(parts[0]) if not parts[0].startswith("/") else parts[0]
            if found:
                return [found, *parts[1:]]
    known = _INTERPRETERS.get(path.suffix.lower())
    if known is None:
        raise SkilldeckError(
            ErrorCode.PERMISSION_DENIED,
            f"{path.name}: no python or sh shebang and not a .py or .sh file",
            reason="unknown_interpreter",
        )
    return list(known)


@functools.lru_cache(maxsize=1)
def network_sandbox() -> list[str] | None:
    """``["unshare", "--net", "--"]`` when it works here (probed once), else None."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    try:
        probe = subprocess.run(
            [unshare, "--net", "--", "/bin/true"], capture_output=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return [unshare, "--net", "--"] if probe.returncode == 0 else None


def scrubbed_env(folder: Path) -> dict[str, str]:
    """The environment of a run: a fixed PATH, a C/UTF-8 locale, nothing inherited."""
    return {
        "PATH": SAFE_PATH,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": str(folder),
        "PYTHONIOENCODING": "utf-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "SKILL_DIR": str(folder),
    }


def _limits(cpu_seconds: int) -> Callable[[], None]:
    def apply() -> None:  # runs in the child, before exec: no imports, no locks
        for kind, value in (
            (resource.RLIMIT_CPU, cpu_seconds),
            (resource.RLIMIT_AS, MEMORY_BYTES),
            (resource.RLIMIT_FSIZE, FILE_BYTES),
            (resource.RLIMIT_CORE, 0),
        ):
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(kind, (value, value))

    return apply


def _drain(stream: IO[bytes], sink: bytearray, flags: list[bool]) -> None:
    """Read ``stream`` to its end, keeping the first :data:`OUTPUT_CAP` bytes."""
    while chunk := stream.read(65536):
        room = OUTPUT_CAP - len(sink)
        if len(chunk) > room:
            flags.append(True)
        if room > 0:
            sink.extend(chunk[:room])


def run_script(
    path: Path, folder: Path, args: list[str], timeout: float, data: bytes | None = None
) -> RunResult:
    """Run the script at ``path`` with ``args`` in ``folder`` under the limits above.

    With ``data`` (the bytes that were hashed and approved), a private read-only copy of
    them runs instead of the file, so an edit between the check and the run cannot slip
    in; the script's working directory and ``SKILL_DIR`` are still its skill folder.

    Raises:
        SkilldeckError: INVALID_PARAM for bad arguments; EXECUTION_ERROR when the process
            cannot start.
    """
    check_args(args)
    if data is None:
        return _run(path, path, folder, args, timeout)
    with tempfile.TemporaryDirectory(prefix="skilldeck-run-") as private:
        copy = Path(private) / path.name
        copy.write_bytes(data)
        copy.chmod(0o500)
        return _run(path, copy, folder, args, timeout)


def _run(path: Path, runnable: Path, folder: Path, args: list[str], timeout: float) -> RunResult:
    data = runnable.read_bytes() if runnable != path else None
    sandbox = network_sandbox()
    argv = [*(sandbox or []), *interpreter(path, data), str(runnable), *args]
    warnings = [] if sandbox else ["no network isolation here (unshare --net unavailable)"]
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            argv,
            cwd=folder,
            env=scrubbed_env(folder),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=_limits(max(1, int(timeout) + 1)),
            close_fds=True,
        )
    except OSError as exc:
        raise SkilldeckError(
            ErrorCode.EXECUTION_ERROR, f"cannot start the script: {exc.strerror}"
        ) from exc
    out, err, cut = bytearray(), bytearray(), list[bool]()
    assert proc.stdout is not None and proc.stderr is not None
    readers = [
        threading.Thread(target=_drain, args=(proc.stdout, out, cut), daemon=True),
        threading.Thread(target=_drain, args=(proc.stderr, err, cut), daemon=True),
    ]
    for reader in readers:
        reader.start()
    timed_out = _wait(proc, timeout)
    for reader in readers:
        reader.join(timeout=5)
    return RunResult(
        exit_code=proc.returncode if proc.returncode is not None else -9,
        stdout=out.decode("utf-8", "replace"),
        stderr=err.decode("utf-8", "replace"),
        truncated=bool(cut),
        timed_out=timed_out,
        duration_ms=int((time.monotonic() - started) * 1000),
        network_isolated=sandbox is not None,
        argv=argv,
        warnings=warnings,
    )


def _wait(proc: subprocess.Popen[bytes], timeout: float) -> bool:
    """Wait for ``proc``; at the timeout kill its whole process group. True if killed."""
    try:
        proc.wait(timeout=timeout)
        _kill_group(proc)  # children left behind keep the pipes open
        return False
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        proc.wait()
        return True


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
