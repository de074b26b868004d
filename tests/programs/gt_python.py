"""Ground truth "python" (issue 33): CPython frames at a wait and at its wakeup.

    python3 gt_python.py TRUTH_JSON

Thread py-holder takes a threading.Lock in hold_lock(), sleeps 300 ms holding it, then releases
it. Thread py-victim, in Worker.wait_for_lock() called by run_victim(), blocks on that lock
meanwhile. The truth file names each thread's native tid (what whyslow shows) and, from the
interpreter itself (sys._getframe), the function, file and line of the victim's acquire and of
the holder's sleep and release. Exit status 2 when the scenario did not happen as designed (the
victim did not wait long enough).
"""
import json
import os
import sys
import threading
import time

HOLD_S = 0.3
lock = threading.Lock()
holding = threading.Event()
truth = {}


def where(what):
    """The caller's function and file, and the line after the caller's current one."""
    f = sys._getframe(1)
    return {"function": f.f_code.co_qualname, "file": f.f_code.co_filename,
            "line": f.f_lineno + 1, "what": what}


def hold_lock():
    me = {"tid": threading.get_native_id()}
    lock.acquire()
    holding.set()
    me["sleep"] = where("time.sleep")
    time.sleep(HOLD_S)
    me["release"] = where("lock.release")
    lock.release()
    truth["holder"] = me


class Worker:
    def wait_for_lock(self):
        holding.wait()
        me = {"tid": threading.get_native_id()}
        t0 = time.monotonic()
        me["acquire"] = where("lock.acquire")
        lock.acquire()
        me["waited_s"] = time.monotonic() - t0
        lock.release()
        truth["victim"] = me


def run_victim():
    Worker().wait_for_lock()
    truth["victim"]["caller"] = "run_victim"


def main():
    holder = threading.Thread(target=hold_lock, name="py-holder")
    victim = threading.Thread(target=run_victim, name="py-victim")
    holder.start()
    victim.start()
    holder.join()
    victim.join()
    truth["python"] = "%d.%d.%d" % sys.version_info[:3]
    truth["executable"] = sys.executable
    with open(sys.argv[1], "w") as f:
        json.dump(truth, f, indent=1)
    # whyslow names Python frames from the live process's memory: stay alive while it reads
    # those of the last waits (under the test suite's MALLOC_PERTURB_ whyslow's first kernel
    # symbols took 1.5 s here), unless the test asks for a program that exits almost at once
    time.sleep(float(os.environ.get("GT_PYTHON_LINGER", "3.0")))
    if truth["victim"]["waited_s"] < HOLD_S * 0.6:
        print("gt_python: the victim waited only %.3fs: scenario not reproduced"
              % truth["victim"]["waited_s"], file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
