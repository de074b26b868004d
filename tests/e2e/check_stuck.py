#!/usr/bin/env python3
"""Check whyslow's open waits and deadlocks (JSON Lines) against a gt_stuck truth line.

  check_stuck.py --truth FILE --json FILE --case deadlock|pshared|disk|sleep [--min-ns N] [--max-ns N]

deadlock, pshared: exactly one deadlock object whose threads are the truth's two threads, each
waiting for the address the truth says and held by the other thread (owner from the mutex word);
both threads also have an open wait marked deadlock.
disk: the victim's open wait is on the mutex, its owner is the holder (from the mutex word), and
the chain's next link is the holder blocked in block I/O (pread64).
sleep: the thread (truth: {"tid":N}) has an open wait of kind sleep in clock_nanosleep, lasting
at least --min-ns and at most --max-ns.
"""
import argparse
import json
import sys


def fail(msg):
    print("check_stuck: FAIL: " + msg)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", required=True)
    ap.add_argument("--json", required=True)
    ap.add_argument("--case", required=True)
    ap.add_argument("--min-ns", type=int, default=0)
    ap.add_argument("--max-ns", type=int, default=0)
    a = ap.parse_args()
    truth = json.loads(open(a.truth).read().strip().splitlines()[-1])
    objs = [json.loads(l) for l in open(a.json) if l.strip()]
    opens = {o["tid"]: o for o in objs if o.get("type") == "open_wait"}
    deadlocks = [o for o in objs if o.get("type") == "deadlock"]
    for o in opens.values():
        if o.get("open") is not True:
            fail("open wait without \"open\": true: %s" % o)

    if a.case in ("deadlock", "pshared"):
        t = truth["threads"]
        if len(deadlocks) != 1:
            fail("expected one deadlock, got %d" % len(deadlocks))
        d = deadlocks[0]["threads"]
        by_tid = {x["tid"]: x for x in d}
        if set(by_tid) != {t[0]["tid"], t[1]["tid"]}:
            fail("deadlock threads %s, truth %s" % (sorted(by_tid), [x["tid"] for x in t]))
        for me, other in ((t[0], t[1]), (t[1], t[0])):
            x = by_tid[me["tid"]]
            if int(x["waits_for"], 16) != int(me["waits"], 16):
                fail("tid %d waits for %s, truth %s" % (me["tid"], x["waits_for"], me["waits"]))
            if x["held_by"] != other["tid"] or x["owner_evidence"] != "mutex_word":
                fail("tid %d: held_by %s (%s), truth %d" % (me["tid"], x["held_by"],
                                                           x["owner_evidence"], other["tid"]))
            if x["pid"] != me["pid"]:
                fail("tid %d: pid %d, truth %d" % (me["tid"], x["pid"], me["pid"]))
            o = opens.get(me["tid"])
            if not o or not o["deadlock"] or o["owner"] != other["tid"]:
                fail("no open wait marked deadlock for tid %d: %s" % (me["tid"], o))
        print("check_stuck: deadlock of tids %d and %d on %s and %s: ok" %
              (t[0]["tid"], t[1]["tid"], t[0]["waits"], t[1]["waits"]))
    elif a.case == "disk":
        victim, holder = truth["threads"]
        if deadlocks:
            fail("a deadlock was reported where there is none: %s" % deadlocks)
        o = opens.get(victim["tid"])
        if not o:
            fail("no open wait for the victim tid %d" % victim["tid"])
        if o["kind"] != "futex" or int(o["addr"], 16) != int(victim["waits"], 16):
            fail("victim waits on %s %s, truth futex %s" % (o["kind"], o.get("addr"),
                                                            victim["waits"]))
        if o["owner"] != holder["tid"] or o["owner_evidence"] != "mutex_word":
            fail("victim's owner %s (%s), truth %d" % (o["owner"], o.get("owner_evidence"),
                                                       holder["tid"]))
        if not o["links"] or o["links"][0]["tid"] != holder["tid"]:
            fail("the chain does not continue to the holder: %s" % o["links"])
        h = o["links"][0]
        if h["kind"] != "block_io" or h.get("syscall") != "pread64":
            fail("the holder's link is %s (%s), expected block_io in pread64" %
                 (h["kind"], h.get("syscall")))
        print("check_stuck: victim %d on 0x%x held by %d, in block I/O: ok" %
              (victim["tid"], int(victim["waits"], 16), holder["tid"]))
    elif a.case == "disk_joined":
        # the victim's wait began before tracing and ended during it: one chain for it, from
        # the holder's wakeup back to the holder's block I/O
        victim, holder = truth["threads"]
        # (on a loaded machine the victim may also wait for a CPU afterwards, long enough to be
        # reported: that runqueue wait is another chain, not a second wait on the mutex)
        chains = [o for o in objs if o.get("type") == "chain" and o["tid"] == victim["tid"]
                  and o["links"][0]["kind"] != "runqueue"]
        if len(chains) != 1:
            fail("expected one chain for the victim tid %d, got %d" % (victim["tid"], len(chains)))
        links = chains[0]["links"]
        if links[0]["woken_by"] != holder["tid"]:
            fail("the victim was woken by %s, truth %d" % (links[0]["woken_by"], holder["tid"]))
        if len(links) < 2 or links[1]["tid"] != holder["tid"] or links[1]["kind"] != "block_io":
            fail("the chain does not reach the holder's block I/O: %s" % links)
        if chains[0]["blocked_ns"] < a.min_ns:
            fail("the victim's wait is %d ns, it lasted at least %d" % (chains[0]["blocked_ns"],
                                                                        a.min_ns))
        print("check_stuck: victim %d blocked %.2fs (begun before attach) <- %d <- block I/O: ok"
              % (victim["tid"], chains[0]["blocked_ns"] / 1e9, holder["tid"]))
    elif a.case == "sleep":
        o = opens.get(truth["tid"])
        if not o or o["kind"] != "sleep" or o.get("syscall") != "clock_nanosleep":
            fail("no open sleep wait for tid %d: %s" % (truth["tid"], o))
        ns = o["blocked_at_least_ns"]
        if ns < a.min_ns or (a.max_ns and ns > a.max_ns):
            fail("blocked at least %d ns, expected within [%d, %d]" % (ns, a.min_ns, a.max_ns))
        print("check_stuck: sleep tid %d blocked at least %.2fs (%s): ok" %
              (truth["tid"], ns / 1e9, o["blocked_evidence"]))
    else:
        fail("unknown case " + a.case)


if __name__ == "__main__":
    main()
