#!/usr/bin/env python3
# Two threads hand a turn back and forth through two locks: every handoff is a futex wait and
# wakeup in Python code (ping/pong frames), N times. Prints its own wall time per handoff.
import sys, threading, time
N = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
a, b = threading.Lock(), threading.Lock()
a.acquire(); b.acquire()
def ping():
    for _ in range(N):
        a.release()
        b.acquire()
def pong():
    for _ in range(N):
        a.acquire()
        b.release()
t0 = time.perf_counter()
ts = [threading.Thread(target=ping), threading.Thread(target=pong)]
for t in ts: t.start()
for t in ts: t.join()
print("%.2f us/handoff" % ((time.perf_counter() - t0) / N / 2 * 1e6))
