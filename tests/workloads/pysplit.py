# A Python workload with known shares, for tests/e2e/test_python.sh.
# Prints its pid first; runs until SIGTERM (or SECS), then prints what it
# measured of itself by its own clock (thread CPU time).
#   split SECS    outer() calls hot() and cold(): "hot_share 0.NN"
#   threads SECS  three threads, each in its own function: "tid NAME" each
#   zlib SECS     compress_loop() calls zlib.compress
#   reuse SECS    phase_a() to phase_d(), each made anew by exec() for each
#                 round and freed after it, so that one takes the memory of
#                 another's code object: "share NAME 0.NN" each, and
#                 "reused N" (rounds whose function's code object took the
#                 address of another's)
import gc
import os
import random
import signal
import sys
import threading
import time
import zlib


def hot(n):
    x = 0
    for i in range(n):
        x += i * i
    return x


def cold(n):
    x = 0
    for i in range(n):
        x ^= i
    return x


def outer(deadline, spent):
    # Each round's length varies so that its period cannot lock onto the
    # sampling period: a fixed round let 499 Hz samples land on one phase
    # (hot read 67.5% against its own 75.2% in one run).
    rng = random.Random(os.getpid())
    while time.time() < deadline:
        n = rng.randrange(10000, 30000)
        t0 = time.thread_time()
        hot(n)
        t1 = time.thread_time()
        cold(n // 2)
        t2 = time.thread_time()
        spent[0] += t1 - t0
        spent[1] += t2 - t1


def thread_alpha(deadline):
    while time.time() < deadline:
        hot(5000)


def thread_beta(deadline):
    while time.time() < deadline:
        cold(5000)


def thread_gamma(deadline):
    while time.time() < deadline:
        sum(i for i in range(5000))


def compress_loop(deadline):
    data = bytes(range(256)) * 4096
    while time.time() < deadline:
        zlib.compress(data, 9)


def spin(t):
    end = time.thread_time() + t
    while time.thread_time() < end:
        pass


def reuse_rounds(deadline, spent, seen, reused):
    names = ("phase_a", "phase_b", "phase_c", "phase_d")
    r = 0
    while time.time() < deadline:
        # each round a turn further: the same slots, other names in them
        r += 1
        for name in names[r % 4:] + names[:r % 4]:
            src = "def %s(t):\n    spin(t)\n" % name
            ns = {"spin": spin}
            exec(compile(src, name + ".py", "exec"), ns)
            fn = ns[name]
            addr = id(fn.__code__)
            if seen.get(addr, name) != name:
                reused[0] += 1
            seen[addr] = name
            t0 = time.thread_time()
            fn(0.05)
            spent[name] = spent.get(name, 0.0) + time.thread_time() - t0
            # the function and its globals hold each other: the collector frees them
            del fn, ns
            gc.collect()


def main():
    mode, secs = sys.argv[1], float(sys.argv[2])
    deadline = time.time() + secs
    stop = []

    def on_term(sig, frame):
        stop.append(sig)
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, on_term)
    print(os.getpid(), flush=True)
    spent = [0.0, 0.0]
    shares, reused = {}, [0]
    try:
        if mode == "split":
            outer(deadline, spent)
        elif mode == "threads":
            ts = [threading.Thread(target=f, args=(deadline,), daemon=True)
                  for f in (thread_alpha, thread_beta, thread_gamma)]
            for t in ts:
                t.start()
            time.sleep(0.2)
            for t in ts:
                print("tid", t.native_id, t._target.__name__, flush=True)
            for t in ts:
                t.join()
        elif mode == "zlib":
            compress_loop(deadline)
        elif mode == "reuse":
            reuse_rounds(deadline, shares, {}, reused)
    finally:
        if mode == "split" and sum(spent) > 0:
            print("hot_share %.3f" % (spent[0] / sum(spent)), flush=True)
        if mode == "reuse":
            total = sum(shares.values()) or 1.0
            for name in sorted(shares):
                print("share %s %.3f" % (name, shares[name] / total), flush=True)
            print("reused", reused[0], flush=True)


main()
