#!/usr/bin/env python3
"""check_gil.py: whyslow names CPython's GIL, and its holder, at tests/programs/gt_gil.py's waits.

    check_gil.py DIR

DIR holds, from gt_gil.sh: live.jsonl (a live run, its truth in truth.json), rec.jsonl +
report.txt (a recording's report, its truth in truth-rec.json). In each, the victim's waits in
handle() that are waits for the GIL (a futex wait on its words) must say "lock": "gil" and
"lock_name": "the GIL (python3.N pid P)" with the interpreter's version and pid; those whose
holder was read must name the hog as "held_by", never another thread, and enough of them must,
with its Python frames in compress() ("holder_stack") for some; a wait ended by the hog handing the GIL over names it as the waker, in compress()
where its frames were read. The truth is the interpreter's own (threading.get_native_id, sys._getframe).
"""
import json
import os
import sys

MIN_WAITS = 3  # the victim waits ~30 ms at a time for 1 s, so about 15 times at least half


def fail(msg):
    print("check_gil: FAIL: " + msg)
    sys.exit(1)


def py_frames(stack):
    return [f for f in stack or [] if f.get("lang") == "python"]


def gil_name(truth):
    major, minor = truth["python"].split(".")[:2]
    return "the GIL (python%s.%s pid %d)" % (major, minor, truth["pid"])


def check_json(path, truth):
    victim, holder = truth["victim"], truth["holder"]
    want = gil_name(truth)
    chains = [json.loads(l) for l in open(path) if l.strip()]
    links = [c["links"][0] for c in chains if c.get("type") == "chain" and c["links"]]
    mine = [l for l in links if l["tid"] == victim["tid"] and l["kind"] in ("futex", "timeout")]
    gil, held, held_frames, handed, free, unknown = [], 0, 0, 0, 0, []
    for l in mine:
        py = py_frames(l.get("stack"))
        in_handle = py and (py[0]["function"], py[0]["file"]) == (victim["function"], victim["file"])
        if l.get("lock") != "gil":
            # a futex wait of handle() is a wait for the GIL: nothing else it does sleeps
            if in_handle:
                fail("%s: victim's futex wait at %s is not named the GIL: %s" % (path, l.get("addr"), l))
            continue
        if l.get("lock_name") != want:
            fail("%s: lock_name %r, want %r" % (path, l.get("lock_name"), want))
        if not l.get("addr_symbol", "").startswith("_PyRuntime+"):
            fail("%s: GIL word %s not in _PyRuntime (%r)" % (path, l.get("addr"), l.get("addr_symbol")))
        if not in_handle:
            continue
        if py[0]["line"] not in victim["lines"]:
            fail("%s: victim in handle at line %d, not one of its lines %s" % (path, py[0]["line"], victim["lines"]))
        gil.append(l)
        if "held_by" in l and l["held_by"] == truth["main_tid"]:
            pass  # the main thread, before it blocked in join(), holds the GIL too
        elif "held_by" in l:
            if l["held_by"] != holder["tid"] or l.get("owner_evidence") != "gil_last_holder":
                fail("%s: GIL wait held by %s (%s), the hog is %d" % (
                    path, l["held_by"], l.get("owner_evidence"), holder["tid"]))
            held += 1
            # its Python frames as the waiter read them while it ran: in compress() (or a call
            # of its loop, Event.is_set, above it)
            hs = py_frames(l.get("holder_stack"))
            mine = [f for f in hs if f["file"] == holder["file"]]
            if hs and not mine:
                fail("%s: the holder's frames %s never reach %s" % (path, hs, holder["file"]))
            if mine:
                if mine[0]["function"] != holder["function"] or mine[0]["line"] not in holder["lines"]:
                    fail("%s: the holder ran %s:%d, not in compress() (lines %s)" % (
                        path, mine[0]["function"], mine[0]["line"], holder["lines"]))
                held_frames += 1
        elif "held_by_unknown" in l:
            unknown.append(l["held_by_unknown"])
        elif not l.get("gil_free_at_end"):
            fail("%s: a GIL wait names no holder and says not why: %s" % (path, l))
        elif l.get("woken_by") is None:
            free += 1  # it timed out just as the hog let the GIL go: nobody held it then
        elif l.get("woken_by") == truth["main_tid"]:
            pass  # handed over by the main thread as it blocked in join()
        else:
            # the GIL was free as the wait ended: it was handed over, by the hog's drop_gil
            if l["kind"] != "futex" or l.get("woken_by") != holder["tid"]:
                fail("%s: a GIL wait woken by %s, not the hog: %s" % (path, l.get("woken_by"), l))
            waker = py_frames(l.get("waker_stack"))
            if waker and (waker[0]["function"], waker[0]["file"]) != (holder["function"], holder["file"]):
                fail("%s: the hog woke the victim from %s, not compress()" % (path, waker[0]))
            if waker and waker[0]["line"] not in holder["lines"]:
                fail("%s: the hog in compress at line %d, not one of its lines %s" % (
                    path, waker[0]["line"], holder["lines"]))
            handed += waker != []
    print("  %s: %d victim GIL waits in handle(): %d held by the hog tid %d (%d with its frames in "
          "compress()), %d handed over by it in compress(), %d free as they ended, %d holder not "
          "read %s" % (os.path.basename(path), len(gil), held, holder["tid"], held_frames, handed,
                       free, len(unknown), sorted(set(unknown))))
    if len(gil) < MIN_WAITS:
        fail("%s: only %d waits of the victim named the GIL (want %d)" % (path, len(gil), MIN_WAITS))
    if held * 2 < len(gil):
        fail("%s: the holder named for only %d of %d GIL waits" % (path, held, len(gil)))
    if not held_frames:
        fail("%s: no GIL wait names the holder's Python frames" % path)


def main():
    d = sys.argv[1]
    live = json.load(open(d + "/truth.json"))
    rec = json.load(open(d + "/truth-rec.json"))
    print("  python %s (%s)" % (live["python"], live["executable"]))
    check_json(d + "/live.jsonl", live)
    check_json(d + "/rec.jsonl", rec)
    text = open(d + "/report.txt").read()
    base = os.path.basename(rec["victim"]["file"])
    for want in ("on %s at futex 0x" % gil_name(rec),
                 "held by tid %d " % rec["holder"]["tid"],
                 "in handle (%s:" % base,
                 "which ran in compress (%s:" % base):
        if want not in text:
            fail("the text report does not say %r:\n%s" % (want, text))
    print("  PASS: the GIL and its holder named in JSON (live, recorded) and text")


if __name__ == "__main__":
    main()
