"""Ground truth "gil" (issue 33 item 2): a thread waits for CPython's GIL, held by another.

    python3 gt_gil.py TRUTH_JSON

Thread py-hog runs compress(), pure Python bytecode that never lets the GIL go of its own
accord; thread py-victim runs handle(), which needs the GIL for every bytecode too, for RUN_S
seconds. With a switch interval of 30 ms each waits ~30 ms at a time for the GIL (take_gil
times out, asks the holder to drop it, and is handed it). The truth file names each thread's
native tid (threading.get_native_id) and, from the interpreter itself (sys._getframe), the
function, file and lines of handle() and compress(), and the process's pid. Exit status 2 when
the scenario did not happen (the victim did not wait long enough for the GIL).
"""
import json
import os
import sys
import threading
import time

RUN_S = 1.0
SWITCH_S = 0.03
stop = threading.Event()
hogging = threading.Event()
truth = {}


def code_of(frame):
    c = frame.f_code
    return {"function": c.co_qualname, "file": c.co_filename,
            "lines": sorted({l for _, _, l in c.co_lines() if l is not None})}


def compress(data):
    truth["holder"] = {"tid": threading.get_native_id(), **code_of(sys._getframe())}
    hogging.set()
    out = 0
    while not stop.is_set():
        for b in data:
            out = (out * 31 + b) & 0xFFFFFFFF
    return out


def handle():
    me = {"tid": threading.get_native_id(), **code_of(sys._getframe())}
    hogging.wait()
    t0, c0 = time.monotonic(), time.thread_time()
    n = 0
    while time.monotonic() - t0 < RUN_S:
        n += sum(range(100))
    me["waited_s"] = (time.monotonic() - t0) - (time.thread_time() - c0)
    stop.set()
    truth["victim"] = me
    return n


def main():
    sys.setswitchinterval(SWITCH_S)
    hog = threading.Thread(target=compress, args=(bytes(range(256)) * 64,), name="py-hog")
    victim = threading.Thread(target=handle, name="py-victim")
    hog.start()
    victim.start()
    victim.join()
    hog.join()
    truth["pid"] = os.getpid()
    # it holds the GIL too until it blocks in join(): it may hand it to the victim once
    truth["main_tid"] = threading.get_native_id()
    truth["python"] = "%d.%d.%d" % sys.version_info[:3]
    truth["executable"] = sys.executable
    with open(sys.argv[1], "w") as f:
        json.dump(truth, f, indent=1)
    # whyslow names Python frames from the live process's memory: stay alive while it reads
    # those of the last waits (as gt_python.py)
    time.sleep(3.0)
    if truth["victim"]["waited_s"] < RUN_S * 0.3:
        print("gt_gil: the victim waited only %.3fs for the GIL: scenario not reproduced"
              % truth["victim"]["waited_s"], file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
