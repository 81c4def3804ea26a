"""A classic-BPF interpreter for the sandbox's seccomp filter, so tests can check the
program on every ABI (not only this machine's)."""

from __future__ import annotations

import struct


def run_filter(program: bytes, arch: int, nr: int, first: int = 0) -> int:
    """The action ``program`` returns for syscall ``nr`` of ``arch`` whose first argument is
    ``first``, as the kernel runs it on ``struct seccomp_data`` (nr, arch, ip, args[6])."""
    data = struct.pack("=iIQQ", nr, arch, 0, first) + bytes(40)
    insns = [struct.unpack_from("=HBBI", program, i) for i in range(0, len(program), 8)]
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = insns[pc]
        if code == 0x20:
            acc = int(struct.unpack_from("=I", data, k)[0])
            pc += 1
        elif code == 0x15:
            pc += 1 + (jt if acc == k else jf)
        else:
            assert code == 0x06
            return int(k)
