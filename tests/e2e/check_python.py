#!/usr/bin/env python3
"""check_python.py: whyslow names the Python frames of tests/programs/gt_python.py's wait.

    check_python.py DIR

DIR holds, from gt_python.sh: live.jsonl + trace.json (a live run, its truth in truth.json),
rec.jsonl + folded.txt + report.txt (a recording's report, its truth in truth-rec.json). In
each, the victim's futex link must carry Python frames Worker.wait_for_lock <- run_victim with
the file and line of its lock.acquire(); its waker must be the holder, whose frames at the
wakeup name hold_lock at its lock.release(); the holder's own wait in the chain must name
hold_lock at its time.sleep() — or, when the holder read a throttled disk instead (the truth has
"read"), be that block_io read (device, sector) at its os.preadv(), and the chain's root that
device. The lines are those the interpreter wrote (sys._getframe).
"""
import json
import os
import re
import sys


def fail(msg):
    print("check_python: FAIL: " + msg)
    sys.exit(1)


def py_frames(stack):
    return [f for f in stack or [] if f.get("lang") == "python"]


def show(frames):
    return " <- ".join("%s (%s:%s)" % (f["function"], os.path.basename(f["file"] or "?"),
                                       f["line"]) for f in frames)


def expect(frames, where, what):
    if not frames:
        fail("%s: no Python frame" % what)
    f = frames[0]
    got = (f["function"], f["file"], f["line"])
    want = (where["function"], where["file"], where["line"])
    if got != want:
        fail("%s: innermost Python frame %s, the interpreter says %s (%s)"
             % (what, got, want, show(frames)))


def check_json(path, truth):
    victim, holder = truth["victim"], truth["holder"]
    chains = [json.loads(l) for l in open(path) if l.strip()]
    chains = [c for c in chains if c.get("type") == "chain"]
    # its wait for the lock is the one whose length the program measured: before it, it waited
    # for the holder to take the lock (an Event), longer when the holder moved into a cgroup
    chains.sort(key=lambda c: abs(c.get("blocked_ns", 0) / 1e9 - victim["waited_s"]))
    for c in chains:
        links = c["links"]
        if not links or links[0]["tid"] != victim["tid"] or links[0]["kind"] != "futex":
            continue
        first = links[0]
        mine = py_frames(first.get("stack"))
        print("  %s: victim %s" % (os.path.basename(path), show(mine)))
        if not mine:  # what the link has instead, so a failure on a loaded machine says why
            print("  the link's stack fields: %s" % json.dumps(
                {k: v for k, v in first.items() if "stack" in k})[:2000])
        expect(mine, victim["acquire"], "victim's wait")
        if len(mine) < 2 or mine[1]["function"] != victim["caller"]:
            fail("victim's wait: %s is not called from %s" % (show(mine), victim["caller"]))
        if first["woken_by"] != holder["tid"]:
            fail("victim woken by %s, not the holder %s" % (first["woken_by"], holder["tid"]))
        waker = py_frames(first.get("waker_stack"))
        print("  %s: waker  %s" % (os.path.basename(path), show(waker)))
        expect(waker, holder["release"], "holder at the wakeup")
        own = [l for l in links[1:] if l["tid"] == holder["tid"] and "stack" in l]
        if "read" in holder:  # it read a throttled disk: that read, and the chain's root
            rd = holder["read"]
            own = [l for l in own if l["kind"] == "block_io"]
            if not own or (own[0].get("dev"), own[0].get("sector")) != (rd["dev"], rd["sector"]):
                fail("the chain has no block_io wait of the holder on %s sector %d: %s"
                     % (rd["dev"], rd["sector"], links))
            if c.get("root") != "block I/O on %s" % rd["dev"]:
                fail("the chain's root is %r, not the holder's read of %s" % (c.get("root"),
                                                                             rd["dev"]))
        if not own:
            fail("the chain has no wait of the holder with a stack: %s" % links)
        theirs = py_frames(own[0]["stack"])
        print("  %s: holder %s" % (os.path.basename(path), show(theirs)))
        expect(theirs, holder.get("read") or holder["sleep"], "holder's own wait")
        return
    fail("%s: no futex chain of the victim tid %s" % (path, victim["tid"]))


def main():
    if sys.argv[1] == "--json":  # one stream against its truth: check_python.py --json FILE TRUTH
        check_json(sys.argv[2], json.load(open(sys.argv[3])))
        print("  PASS: Python frames in %s" % os.path.basename(sys.argv[2]))
        return
    d = sys.argv[1]
    live = json.load(open(d + "/truth.json"))
    rec = json.load(open(d + "/truth-rec.json"))
    print("  python %s (%s)" % (live["python"], live["executable"]))
    check_json(d + "/live.jsonl", live)
    check_json(d + "/rec.jsonl", rec)

    base = os.path.basename(rec["victim"]["acquire"]["file"])
    text = open(d + "/report.txt").read()
    want = r"in Worker\.wait_for_lock \(%s:%d\) (←|<-) run_victim \(%s:\d+\).*, via Py" % (
        re.escape(base), rec["victim"]["acquire"]["line"], re.escape(base))
    if not re.search(want, text):
        fail("the text report does not say /%s/:\n%s" % (want, text))
    rel = "hold_lock (%s:%d)" % (base, rec["holder"]["release"]["line"])
    if rel not in text:
        fail("the text report does not name the holder at its release, %s" % rel)
    folded = open(d + "/folded.txt").read()
    # in Python: the Python frames, then the interpreter's C function it waited in, then the wait
    want = r"Thread\.run \(threading\.py\);run_victim \(%s\);Worker\.wait_for_lock \(%s\);[^;()]+;\[futex " % (
        re.escape(base), re.escape(base))
    if not re.search(want, folded):
        fail("the folded stacks do not hold /%s/:\n%s" % (want, folded))
    trace = open(d + "/trace.json").read()
    want = "Worker.wait_for_lock %s:%d (python)" % (live["victim"]["acquire"]["file"],
                                                    live["victim"]["acquire"]["line"])
    if want not in trace:
        fail("the Perfetto export does not name %s" % want)
    print("  PASS: Python frames in JSON (live, recorded), text, folded and Perfetto")


if __name__ == "__main__":
    main()
