"""The seccomp filter ``bwrap`` loads for a run: file handles and unix sockets are refused.

``open_by_handle_at`` opens a file from an opaque handle, without a path: with
``CAP_DAC_READ_SEARCH`` it reaches any file of a mounted file system, outside the sandbox
too (the "shocker" attack). The script keeps no capability, so the kernel already refuses
that; this filter refuses both handle calls (``name_to_handle_at`` too: it needs no
privilege and leaks inode numbers) with ``EPERM`` whatever capabilities the process has.

It also refuses ``socket(AF_UNIX, ...)`` (and the i386 ``socketcall`` multiplexer, whose
arguments it cannot see): a folder shown to the run is a live bind mount, so a socket
created in it after the check (a database's, a desktop bus) would be reachable, and a
read-only mount does not stop ``connect``. ``socketpair`` still works.

The program is classic BPF over ``struct seccomp_data`` (``nr`` at offset 0, ``arch`` at
4), one block per ABI the machine runs (the 32-bit one too: ``int 0x80`` on x86_64 reaches
the i386 numbers, and x32 numbers carry bit 30)::

    ld  [4]                     ; arch
    jeq ARCH, 0, skip_block     ; another ABI: the next block
    ld  [0]                     ; syscall number
    jeq NR, deny, 0             ; one per refused call
    jeq SOCKET, domain, 0       ; one per socket() number of the ABI
    ret ALLOW
    domain: ld [16]             ; first argument (low word)
    jeq AF_UNIX, deny, 0
    ret ALLOW
    ...
    ret ALLOW                   ; an ABI not listed
    deny: ret ERRNO | EPERM
"""

from __future__ import annotations

import errno
import platform
import struct

_LD_ABS_W = 0x20
"""``BPF_LD | BPF_W | BPF_ABS``."""
_JEQ_K = 0x15
"""``BPF_JMP | BPF_JEQ | BPF_K``."""
_RET_K = 0x06
"""``BPF_RET | BPF_K``."""
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_X32 = 0x40000000

SYSCALLS: dict[str, tuple[tuple[int, tuple[int, ...]], ...]] = {
    "x86_64": (
        (0xC000003E, (303, 304, _X32 | 303, _X32 | 304)),  # AUDIT_ARCH_X86_64 (and x32)
        (0x40000003, (341, 342)),  # AUDIT_ARCH_I386
    ),
    "aarch64": (
        (0xC00000B7, (264, 265)),  # AUDIT_ARCH_AARCH64
        (0x40000028, (370, 371)),  # AUDIT_ARCH_ARM
    ),
}
"""Per machine: each ABI's audit arch and its ``name_to_handle_at``/``open_by_handle_at``
numbers."""
SOCKETCALL = {0x40000003: (102,)}
"""Per audit arch: calls refused outright beside the handle calls (i386 ``socketcall``)."""
SOCKETS = {
    0xC000003E: (41, _X32 | 41),
    0x40000003: (359,),
    0xC00000B7: (198,),
    0x40000028: (281,),
}
"""Per audit arch: the ``socket`` numbers, refused for ``AF_UNIX``."""
_AF_UNIX = 1


_Insn = tuple[int, int, int, int]
"""``(code, jt, jf, k)`` before the deny offsets are known."""


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program(machine: str | None = None) -> bytes | None:
    """The compiled filter for ``machine`` (this one by default), or None when no table is
    known for it (the dropped capabilities still hold there)."""
    table = SYSCALLS.get(machine or platform.machine())
    if table is None:
        return None
    insns: list[_Insn] = [(_LD_ABS_W, 0, 0, 4)]
    for arch, numbers in table:
        insns += _block(arch, (*numbers, *SOCKETCALL.get(arch, ())), SOCKETS[arch])
    deny = len(insns) + 1
    out = [
        _insn(code, deny - at - 1 if jt < 0 else jt, jf, k)
        for at, (code, jt, jf, k) in enumerate(insns)
    ]
    out += [_insn(_RET_K, 0, 0, _ALLOW), _insn(_RET_K, 0, 0, _ERRNO | errno.EPERM)]
    return b"".join(out)


def _block(arch: int, refused: tuple[int, ...], sockets: tuple[int, ...]) -> list[_Insn]:
    """One ABI's instructions; a jump offset of -1 means "to the final deny"."""
    size = 2 + len(refused) + len(sockets) + 4
    block: list[_Insn] = [(_JEQ_K, 0, size - 1, arch), (_LD_ABS_W, 0, 0, 0)]
    block += [(_JEQ_K, -1, 0, nr) for nr in refused]
    block += [(_JEQ_K, len(sockets) - i, 0, nr) for i, nr in enumerate(sockets)]
    block += [(_RET_K, 0, 0, _ALLOW), (_LD_ABS_W, 0, 0, 16), (_JEQ_K, -1, 0, _AF_UNIX)]
    block.append((_RET_K, 0, 0, _ALLOW))
    return block
