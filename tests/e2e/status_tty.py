#!/usr/bin/env python3
"""The status line on a terminal (issue 35 item 4): whyslow under a pty, as a person runs it.

- run: the command writes to the same terminal, so no line is kept there: the command's output
  starts its own line ('…0 lost, 100ms{"done": 100}' before), nothing erases it;
- run -v: the progress as whole lines, never rewritten in place;
- attach to a process whose stdio and controlling terminal are elsewhere: the line is rewritten
  in place, and erased before the report is printed;
- attach to a process writing to that terminal (its stdout, or its controlling terminal): none.

  status_tty.py WHYSLOW      (exit 77 = skipped when not root, unless CI=true)
"""
import fcntl
import os
import pty
import re
import subprocess
import sys
import termios
import threading

STATUS = re.compile(rb"whyslow: \d+ threads?, \d+ events?, \d+ lost, ")
IN_PLACE = re.compile(rb"\r\033\[Kwhyslow: \d+ threads?, \d+ events?, \d+ lost, [^\r\n\033]*")

fails = 0


def check(ok, name, out=b""):
    global fails
    print(("ok   " if ok else "FAIL ") + name)
    if not ok:
        fails += 1
        print("    terminal: %r" % out[-600:])


def on_pty(argv, env_extra=None):
    """Run argv with stdin, stdout and stderr on a new pty; everything the terminal got."""
    master, slave = pty.openpty()
    env = dict(os.environ, TERM="xterm", **(env_extra or {}))
    env.pop("NO_COLOR", None)
    got = []

    def drain():
        while True:
            try:
                b = os.read(master, 65536)
            except OSError:  # EIO: every slave end closed
                return
            if not b:
                return
            got.append(b)

    t = threading.Thread(target=drain)
    t.start()
    p = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env)
    try:
        p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    os.close(slave)
    t.join(timeout=10)
    os.close(master)
    return p.returncode, b"".join(got)


def sleeper(**kw):
    return subprocess.Popen(["sleep", "30"], **kw)


def main():
    if os.geteuid() != 0:
        if os.environ.get("CI") == "true":
            print("FAIL: needs root (CI=true: not skipping)")
            return 1
        print("SKIP: needs root")
        return 77
    ws = os.path.realpath(sys.argv[1])

    # run: the command's line stays whole; the old status line was left before it
    prog = 'sleep 0.8; printf \'{"done": 100}\'; sleep 0.6; echo; echo end'
    rc, out = on_pty([ws, "run", "-o", "/dev/null", "--", "sh", "-c", prog])
    check(rc == 0, "run under a pty: exit 0 (got %s)" % rc, out)
    check(not STATUS.search(out), "run: no status line on the command's terminal", out)
    check(re.search(rb'(^|\n)\{"done": 100\}\r?\n', out) is not None,
          "run: the command's output on a line of its own, not erased", out)

    rc, out = on_pty([ws, "-v", "run", "-o", "/dev/null", "--", "sleep", "1.5"])
    check(re.search(STATUS.pattern + rb"[^\r\n\033]*\r?\n", out) is not None and b"\033[K" not in out,
          "run -v: progress as whole lines, none rewritten in place", out)

    # attach to a process that writes nowhere near the terminal: the line, erased before the report
    devnull = open(os.devnull, "r+b")
    quiet = sleeper(stdin=devnull, stdout=devnull, stderr=devnull, start_new_session=True)
    try:
        rc, out = on_pty([ws, "attach", "--duration", "1500ms", str(quiet.pid)])
        # a JSON report streams to the terminal as it goes: no line between its lines
        rcj, outj = on_pty([ws, "attach", "--format", "json", "--duration", "1s", str(quiet.pid)])
    finally:
        quiet.kill()
        quiet.wait()
    check(rc == 0, "attach under a pty: exit 0 (got %s)" % rc, out)
    shown = list(IN_PLACE.finditer(out))
    check(len(shown) >= 2, "attach, target elsewhere: the status line rewritten in place", out)
    if shown:
        rest = out[shown[-1].end():]
        check(rest.startswith(b"\r\033[K") and b"Summary" in rest,
              "attach: the status line erased before the report", out)
    check(rcj == 0 and b'"type":"summary"' in outj and not STATUS.search(outj),
          "attach --format json to the terminal: no status line", outj)

    # attach to one whose stdout is this terminal, then to one whose controlling terminal it is
    for how in ("stdout", "controlling terminal"):
        master, slave = pty.openpty()
        name = os.ttyname(slave)
        if how == "stdout":
            loud = sleeper(stdin=devnull, stdout=slave, stderr=devnull, start_new_session=True)
        else:
            def ctty(fd=slave):
                os.setsid()
                fcntl.ioctl(fd, termios.TIOCSCTTY, 0)
            loud = sleeper(stdin=devnull, stdout=devnull, stderr=devnull, preexec_fn=ctty)
        try:
            # whyslow's stderr on the very terminal the target has, opened by name (O_NOCTTY: a
            # test run in a session of its own would take it as its terminal, and its hangup)
            with open(os.open(name, os.O_RDWR | os.O_NOCTTY), "r+b", buffering=0) as tty:
                env = dict(os.environ, TERM="xterm")
                p = subprocess.Popen([ws, "attach", "--duration", "1500ms", str(loud.pid)],
                                     stdin=tty, stdout=tty, stderr=tty, env=env)
                got = []
                t = threading.Thread(target=lambda: got.extend(iter(lambda: _read(master), b"")))
                t.start()
                p.wait(timeout=60)
        finally:
            loud.kill()
            loud.wait()
        os.close(slave)
        t.join(timeout=10)
        os.close(master)
        out = b"".join(got)
        check(p.returncode == 0 and b"Summary" in out, "attach, target's %s here: ran" % how, out)
        check(not STATUS.search(out), "attach, target's %s is the terminal: no status line" % how, out)

    print("%d failure(s)" % fails)
    return 1 if fails else 0


def _read(fd):
    try:
        return os.read(fd, 65536)
    except OSError:
        return b""


if __name__ == "__main__":
    sys.exit(main())
