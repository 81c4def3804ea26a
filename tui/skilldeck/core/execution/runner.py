"""How a skill's code runs: from a private copy of its pinned files, inside the sandbox
(:mod:`.sandbox`), without a shell, under limits.

The command line comes from the script's shebang (``#!/usr/bin/env python3``,
``#!/bin/sh -e``) or its extension (``.py``: the Python Skilldeck runs on, ``.sh``:
``/bin/sh``). The interpreter is always resolved outside the skill (``/usr/bin``, ``/bin``
or this Python), never a file the skill ships, and a shebang may carry only harmless flags
(``-u``, ``-B``, ``-O`` for Python; ``-e``, ``-u``, ``-x``, ``-v`` for shells). Python runs
with ``-B -X pycache_prefix=<the run's /tmp>/pycache -E -s``: it neither reads nor writes a
``__pycache__`` beside the skill's sources (bytecode a skill ships never runs), and sees no
``PYTHON*`` variables and no user site folder. It is not isolated further (``-I``/``-P``
would drop the script's folder from ``sys.path``: a script imports its sibling modules).

Limits: a wall-clock timeout (the whole run is killed), 1 MB of output per stream (the rest
is cut and flagged), at most 100 arguments and 4,096 argument bytes, CPU, memory, file-size
and process-count limits, and the sandbox's private ``/tmp`` size.
"""

from __future__ import annotations

import contextlib
import os
import re
import resource
import selectors
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
from skilldeck.core.execution.sandbox import (
    BWRAP,
    Sandbox,
    command,
    environment,
    filter_fd,
    held_paths,
    probe,
    python_flags,
    read_paths,
)
from skilldeck.core.execution.snapshot import Snapshot

OUTPUT_CAP = 1024 * 1024
MAX_ARGS = 100
MAX_ARG_BYTES = 4096
MEMORY_BYTES = 1024 * 1024 * 1024
FILE_BYTES = 64 * 1024 * 1024
DRAIN_GRACE_S = 0.5
"""How long output is still read after the script ended (a child it left may hold the
pipes open: its output is not waited for)."""
_PYTHON_FLAGS = frozenset({"-u", "-B", "-O", "-OO", "-E", "-s", "-I", "-S"})
_SHELL_FLAGS = re.compile(r"-[euxv]+")
_SHELLS = ("sh", "bash", "dash")


@dataclass(slots=True)
class RunResult:
    """What one run produced.

    Attributes:
        exit_code: The process's exit status (negative: killed by that signal).
        stdout, stderr: Decoded output (UTF-8, bad bytes replaced), each at most the cap.
        truncated: True when some output was cut at the cap.
        timed_out: True when the run was killed at the timeout.
        duration_ms: Wall-clock time.
        network_isolated: True when the run had no network.
        sandbox: The sandbox level it ran at (:data:`~.sandbox.LEVELS`).
        argv: The command line run inside the sandbox (interpreter, script, arguments).
        warnings: What the sandbox level did not stop here, and other things to know.
    """

    exit_code: int
    stdout: str
    stderr: str
    truncated: bool
    timed_out: bool
    duration_ms: int
    network_isolated: bool
    sandbox: str
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


def check_paths(args: list[str], skill_dir: Path) -> None:
    """At the ``bwrap`` level, refuse a path in ``args`` the sandbox will not show the
    skill at ``skill_dir`` (:func:`~.sandbox.read_paths`; the run would refuse it too).

    Raises:
        SkilldeckError: PERMISSION_DENIED, reason ``path_refused``.
    """
    if probe().level == BWRAP:
        read_paths(args, skill_dir)


def python_executable() -> str:
    """The Python that runs skill code: this one, resolved through symlinks."""
    return os.path.realpath(sys.executable)


def interpreter(rel: str, data: bytes) -> list[str]:
    """The command that runs the skill file ``rel`` holding ``data`` (without the file).

    Raises:
        SkilldeckError: PERMISSION_DENIED (reason ``unknown_interpreter`` or
            ``unsupported_shebang``) when it cannot be run safely.
    """
    first = data[:512].split(b"\n", 1)[0]
    if first.startswith(b"#!"):
        parts = first[2:].decode("utf-8", "replace").split()
        if parts and Path(parts[0]).name == "env":
            parts = parts[1:]
        if parts and re.fullmatch(r"python[0-9.]*", Path(parts[0]).name):
            return [python_executable(), "-E", "-s", *_flags(rel, parts[1:], _PYTHON_FLAGS)]
        if parts and Path(parts[0]).name in _SHELLS:
            return [_shell(rel, Path(parts[0]).name), *_flags(rel, parts[1:], None)]
        if parts:
            raise _refused(rel, f"its shebang names {parts[0]!r}", "unknown_interpreter")
    suffix = Path(rel).suffix.lower()
    if suffix == ".py":
        return [python_executable(), "-E", "-s"]
    if suffix == ".sh":
        return [_shell(rel, "sh")]
    raise _refused(rel, "no python or sh shebang and not a .py or .sh file", "unknown_interpreter")


def _flags(rel: str, flags: list[str], allowed: frozenset[str] | None) -> list[str]:
    for flag in flags:
        ok = flag in allowed if allowed is not None else _SHELL_FLAGS.fullmatch(flag)
        if not ok:
            raise _refused(rel, f"its shebang passes {flag!r}", "unsupported_shebang")
    return flags


def _shell(rel: str, name: str) -> str:
    found = shutil.which(name, path="/usr/bin:/bin")
    if found is None:
        raise _refused(rel, f"{name} is not installed", "unknown_interpreter")
    return os.path.realpath(found)


def _refused(rel: str, why: str, reason: str) -> SkilldeckError:
    return SkilldeckError(ErrorCode.PERMISSION_DENIED, f"{rel}: {why}", reason=reason)


def run_skill_file(snapshot: Snapshot, rel: str, args: list[str], timeout: float) -> RunResult:
    """Run the file ``rel`` of ``snapshot`` with ``args`` from a private copy, sandboxed.

    Raises:
        SkilldeckError: INVALID_PARAM for bad arguments; PERMISSION_DENIED when the file
            cannot be run safely; EXECUTION_ERROR when the process cannot start.
    """
    check_args(args)
    entry = snapshot.file(rel)
    if entry is None:
        raise SkilldeckError(ErrorCode.NOT_FOUND, f"the skill has no file {rel!r}")
    program = interpreter(rel, entry.data)
    return run_in_copy(snapshot, lambda where: [*program, str(where / rel), *args], timeout)


def run_in_copy(
    snapshot: Snapshot,
    build: Callable[[Path], list[str]],
    timeout: float,
    stdin: bytes = b"",
) -> RunResult:
    """Write ``snapshot`` to a private folder and run ``build(where)`` there, sandboxed;
    ``where`` is the skill folder as the process sees it (its working directory)."""
    sandbox = probe()
    bwrap = sandbox.level == BWRAP
    with contextlib.ExitStack() as stack:
        private = stack.enter_context(tempfile.TemporaryDirectory(prefix="skilldeck-run-"))
        fd = stack.enter_context(filter_fd())
        os.chmod(private, 0o755)
        copy, tmp = Path(private) / "skill", Path(private) / "tmp"
        copy.mkdir()
        tmp.mkdir(mode=0o700)
        snapshot.materialize(copy)
        where = snapshot.folder if bwrap else copy
        inner = _guard_python(build(where), Path("/tmp") if bwrap else tmp)
        shown = stack.enter_context(held_paths(inner, where)) if bwrap else []
        argv = command(sandbox, inner, where, copy, tmp, fd, shown)
        env = {"PATH": "/usr/bin:/bin"} if bwrap else environment(where, tmp)
        cwd = "/" if bwrap else str(copy)
        fds = (*((fd,) if fd is not None else ()), *(f for f, _ in shown)) if bwrap else ()
        return _spawn(argv, inner, (cwd, env, fds), timeout, stdin, sandbox)


def _guard_python(argv: list[str], tmp: Path) -> list[str]:
    """``argv`` with :func:`~.sandbox.python_flags` right after the interpreter when it is
    Python (before any flag the skill's shebang asked for)."""
    if argv and argv[0] == python_executable():
        return [argv[0], *python_flags(tmp), *argv[1:]]
    return argv


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


def _spawn(
    argv: list[str],
    inner: list[str],
    where: tuple[str, dict[str, str], tuple[int, ...]],
    timeout: float,
    stdin: bytes,
    sandbox: Sandbox,
) -> RunResult:
    cwd, env, fds = where
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=_limits(max(1, int(timeout) + 1)),
            close_fds=True,
            pass_fds=fds,
        )
    except OSError as exc:
        raise SkilldeckError(
            ErrorCode.EXECUTION_ERROR, f"cannot start the script: {exc.strerror}"
        ) from exc
    if stdin and proc.stdin is not None:
        threading.Thread(target=_feed, args=(proc.stdin, stdin), daemon=True).start()
    out, err, timed_out, cut = _collect(proc, timeout)
    return RunResult(
        exit_code=proc.returncode if proc.returncode is not None else -9,
        stdout=out.decode("utf-8", "replace"),
        stderr=err.decode("utf-8", "replace"),
        truncated=cut,
        timed_out=timed_out,
        duration_ms=int((time.monotonic() - started) * 1000),
        network_isolated=sandbox.network_isolated,
        sandbox=sandbox.level,
        argv=inner,
        warnings=list(sandbox.notes),
    )


def _feed(stream: IO[bytes], data: bytes) -> None:
    with contextlib.suppress(OSError, ValueError):
        stream.write(data)
        stream.close()


def _collect(proc: subprocess.Popen[bytes], timeout: float) -> tuple[bytes, bytes, bool, bool]:
    """Read both pipes until the script ends (or the timeout kills it), then for at most
    :data:`DRAIN_GRACE_S` more; returns stdout, stderr, timed out, cut at the cap."""
    assert proc.stdout is not None and proc.stderr is not None
    sinks = {proc.stdout.fileno(): bytearray(), proc.stderr.fileno(): bytearray()}
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    cut, timed_out = False, False
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as selector:
        for fd in sinks:
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            if proc.poll() is not None and deadline > time.monotonic() + DRAIN_GRACE_S:
                _kill_group(proc)  # what it left behind may hold the pipes
                deadline = time.monotonic() + DRAIN_GRACE_S
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = timed_out or proc.poll() is None
                break
            for key, _ in selector.select(timeout=min(left, 0.2)):
                chunk = os.read(int(key.fd), 65536)
                if not chunk:
                    selector.unregister(key.fd)
                    continue
                sink = sinks[int(key.fd)]
                room = OUTPUT_CAP - len(sink)
                cut = cut or len(chunk) > room
                sink.extend(chunk[: max(room, 0)])
    _kill_group(proc)
    proc.wait()
    proc.stdout.close()
    proc.stderr.close()
    return bytes(sinks[out_fd]), bytes(sinks[err_fd]), timed_out, cut


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
