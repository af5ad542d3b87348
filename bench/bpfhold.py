#!/usr/bin/env python3
"""bench/bpfhold.py [stats] [empty TRACEPOINT]: holds, until it is killed,

  stats           the kernel's BPF run-time statistics on (run_time_ns and
                  run_cnt of every program), through BPF_ENABLE_STATS: that
                  is counted beside kernel.bpf_stats_enabled and leaves it
                  as it is, so it never turns them off under someone else;
  empty TP        an empty raw tracepoint program attached to TP, whose
                  run_time_ns and run_cnt show in this process's fdinfo:
                  what running any program there costs.

Prints "ready" once all of it is in place, or one line and exits 1.  Plain
bpf(2) through ctypes: no library beyond Python's own."""
import ctypes
import os
import signal
import struct
import sys

SYS_BPF = {"x86_64": 321, "aarch64": 280}.get(os.uname().machine)
BPF_PROG_LOAD, BPF_RAW_TRACEPOINT_OPEN, BPF_ENABLE_STATS = 5, 17, 32
BPF_PROG_TYPE_RAW_TRACEPOINT = 17
BPF_STATS_RUN_TIME = 0
# r0 = 0; exit
EMPTY = struct.pack("<BBhiBBhi", 0xB7, 0, 0, 0, 0x95, 0, 0, 0)

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def bpf(cmd, attr):
    buf = ctypes.create_string_buffer(attr, len(attr))
    fd = libc.syscall(ctypes.c_long(SYS_BPF), ctypes.c_long(cmd), buf,
                      ctypes.c_uint(len(attr)))
    if fd < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return fd


def main(args):
    keep = []  # fds held open for as long as this runs
    if SYS_BPF is None:
        sys.exit("bpfhold: no bpf(2) number for %s" % os.uname().machine)
    try:
        if "stats" in args:
            keep.append(bpf(BPF_ENABLE_STATS, struct.pack("<I", BPF_STATS_RUN_TIME)))
        if "empty" in args:
            tp = args[args.index("empty") + 1].encode()
            insns = ctypes.create_string_buffer(EMPTY, len(EMPTY))
            lic = ctypes.create_string_buffer(b"GPL")
            attr = struct.pack("<IIQQIIQII16s", BPF_PROG_TYPE_RAW_TRACEPOINT,
                               len(EMPTY) // 8, ctypes.addressof(insns),
                               ctypes.addressof(lic), 0, 0, 0, 0, 0, b"empty")
            prog = bpf(BPF_PROG_LOAD, attr)
            name = ctypes.create_string_buffer(tp)
            keep += [prog, bpf(BPF_RAW_TRACEPOINT_OPEN,
                               struct.pack("<QII", ctypes.addressof(name), prog, 0))]
    except (OSError, IndexError) as e:
        sys.exit("bpfhold: %s" % e)
    print("ready", flush=True)
    signal.sigwait({signal.SIGTERM, signal.SIGINT})


if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
    main(sys.argv[1:])
