"""Ground truth "python" (issue 33): CPython frames at a wait and at its wakeup.

    python3 gt_python.py TRUTH_JSON [--dev DEV --cgroup DIR]

Thread py-holder takes a threading.Lock in hold_lock(), sleeps 300 ms holding it, then releases
it; with --dev DEV --cgroup DIR (issue 33's "Done when") it reads one 4 KiB block of DEV with
O_DIRECT instead, from inside the blkio group DIR that throttles that read (tests/e2e/slowdisk.sh). Thread py-victim, in Worker.wait_for_lock() called by run_victim(), blocks on that lock
meanwhile. The truth file names each thread's native tid (what whyslow shows) and, from the
interpreter itself (sys._getframe), the function, file and line of the victim's acquire and of
the holder's sleep (or read: the device, its sector) and release. Exit status 2 when the
scenario did not happen as designed (the victim did not wait long enough, the read was fast).
"""
import ctypes
import json
import mmap
import os
import sys
import threading
import time

HOLD_S = 0.3
READ_BYTES = 4096
lock = threading.Lock()
holding = threading.Event()
truth = {}
disk = {}  # --dev and --cgroup: the holder reads a throttled disk while it holds the lock


def where(what):
    """The caller's function and file, and the line after the caller's current one."""
    f = sys._getframe(1)
    return {"function": f.f_code.co_qualname, "file": f.f_code.co_filename,
            "line": f.f_lineno + 1, "what": what}


def join_cgroup(path):
    """Moves the calling thread (not its process: v1's tasks file) into the blkio group."""
    with open(os.path.join(path, "tasks"), "w") as f:
        f.write("%d\n" % threading.get_native_id())


def hold_lock():
    me = {"tid": threading.get_native_id()}
    if disk:
        # before the lock: the move itself sleeps 10-20 ms, and that wait is not the one timed
        join_cgroup(disk["cgroup"])
    lock.acquire()
    holding.set()
    if disk:
        buf = mmap.mmap(-1, READ_BYTES)  # page-aligned, as O_DIRECT wants
        t0 = time.monotonic()
        me["read"] = where("os.preadv")
        n = os.preadv(disk["fd"], [buf], disk["offset"])
        me["read_s"] = time.monotonic() - t0
        me["read"].update(dev=disk["name"], sector=disk["offset"] // 512, bytes=n)
    else:
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


def open_disk(args):
    """--dev DEV --cgroup DIR: the device, opened for direct reads, and a block of it no earlier
    run read (the page cache is bypassed, but the loop device's backing file is not)."""
    opts = dict(zip(args[::2], args[1::2]))
    if len(args) % 2 or set(opts) - {"--dev", "--cgroup"} or len(opts) != 2:
        sys.exit("usage: gt_python.py TRUTH_JSON [--dev DEV --cgroup DIR]")
    fd = os.open(opts["--dev"], os.O_RDONLY | os.O_DIRECT)
    size = os.lseek(fd, 0, os.SEEK_END)
    blocks = (size - (1 << 20)) // READ_BYTES
    disk.update(fd=fd, cgroup=opts["--cgroup"],
                name=os.path.basename(os.path.realpath(opts["--dev"])),
                offset=(1 << 20) + (os.getpid() * 7 % (blocks - 1)) * READ_BYTES)
    # every read of the backing disk from inside the group is throttled, not only the timed
    # one: a page of the interpreter dropped under memory pressure, read back at 3 IOPS while
    # the lock is held, would make the victim wait for it too (best effort, as gt_common.c)
    ctypes.CDLL(None, use_errno=True).mlockall(1)  # MCL_CURRENT


def main():
    if len(sys.argv) > 2:
        open_disk(sys.argv[2:])
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
    if disk and truth["holder"]["read_s"] < HOLD_S * 0.5:
        print("gt_python: the read took only %.3fs: the blkio throttle did not hold it"
              % truth["holder"]["read_s"], file=sys.stderr)
        return 2
    if truth["victim"]["waited_s"] < HOLD_S * 0.6:
        print("gt_python: the victim waited only %.3fs: scenario not reproduced"
              % truth["victim"]["waited_s"], file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
