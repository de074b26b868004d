#!/usr/bin/env python3
"""Check whyslow's open waits and deadlocks (JSON Lines) against a gt_stuck truth line.

  check_stuck.py --truth FILE --json FILE --case deadlock|pshared|disk|sleep|stacks [--min-ns N]
                 [--max-ns N] [--text FILE] [--killed SIGNAL]

--killed SIGNAL: the program died of SIGNAL while it waited: every wait reported is the one it was
in at the kill ("open": false, "killed_by": SIGNAL), not a wait still open.

deadlock, pshared: exactly one deadlock object whose threads are the truth's two threads, each
waiting for the address the truth says and held by the other thread (owner from the mutex word);
both threads also have an open wait marked deadlock.
disk: the victim's open wait is on the mutex, its owner is the holder (from the mutex word), and
the chain's next link is the holder blocked in block I/O (pread64).
sleep: the thread (truth: {"tid":N}) has an open wait of kind sleep in clock_nanosleep, lasting
at least --min-ns and at most --max-ns.
stacks (gt_stuck waits): the mutex, condvar and read waiters each have a user stack (innermost
first: the C library's frame, then the test program's function the truth names); the mutex's
holder is the main thread; the condvar wait says it is one, with no lock holder. With --text,
the same of `stuck`'s text: each waiter's function under its wait, the condvar said to be one.
attach_stack (gt_stuck waits, attached to, then the mutex let go): the mutex waiter's wait, begun
before attach, is a chain whose first link (the futex on the mutex) has a user stack through the
function the truth names.
"""
import argparse
import json
import sys


def fail(msg):
    print("check_stuck: FAIL: " + msg)
    sys.exit(1)


def check_text_stacks(truth, text):
    """Each waiter's block of `stuck` text (its "tid N (" line to the next one) names its
    function on a frame line of its own, after its wait's line."""
    blocks, cur = {}, None
    for line in text.splitlines():
        if line.startswith("tid "):
            cur = int(line.split()[1])
            blocks[cur] = [line]
        elif cur is not None:
            blocks[cur].append(line)
    for what in ("mutex", "condvar", "read"):
        t = truth[what]
        b = blocks.get(t["tid"])
        if not b:
            fail("text: no wait of the %s waiter tid %d" % (what, t["tid"]))
        if not any(l.startswith("    " + t["fn"] + "+0x") for l in b[1:]):
            fail("text: the %s waiter's stack lacks %s:\n%s" % (what, t["fn"], "\n".join(b)))
    c = blocks[truth["condvar"]["tid"]]
    if "on a condition variable" not in c[0] or any("holder" in l for l in c):
        fail("text: the condvar wait is not said to be one, or a holder is looked for:\n%s"
             % "\n".join(c))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truth", required=True)
    ap.add_argument("--json", required=True)
    ap.add_argument("--case", required=True)
    ap.add_argument("--min-ns", type=int, default=0)
    ap.add_argument("--max-ns", type=int, default=0)
    ap.add_argument("--text")
    # the program was killed by this signal while it waited: its waits as they were then
    ap.add_argument("--killed", default=None)
    a = ap.parse_args()
    truth = json.loads(open(a.truth).read().strip().splitlines()[-1])
    objs = [json.loads(l) for l in open(a.json) if l.strip()]
    opens = {o["tid"]: o for o in objs if o.get("type") == "open_wait"}
    deadlocks = [o for o in objs if o.get("type") == "deadlock"]
    for o in opens.values():
        if a.killed and (o.get("open") is not False or o.get("killed_by") != a.killed):
            fail("a wait at the kill without \"open\": false, \"killed_by\": %s: %s" %
                 (a.killed, o))
        if not a.killed and o.get("open") is not True:
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
            # each thread of a deadlock carries its cgroup, as its open wait does (issue 32)
            if "cgroup" not in x or x["cgroup"] != o.get("cgroup"):
                fail("tid %d: deadlock cgroup %r, its open wait's %r" % (me["tid"], x.get("cgroup"),
                                                                      o.get("cgroup")))
            if not a.killed and not (isinstance(x["cgroup"], str) and x["cgroup"].startswith("/")):
                fail("tid %d: a live deadlock's thread has cgroup %r, want its path" %
                     (me["tid"], x["cgroup"]))
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
    elif a.case == "stacks":
        for what in ("mutex", "condvar", "read"):
            t = truth[what]
            o = opens.get(t["tid"])
            if not o:
                fail("no open wait for the %s waiter tid %d" % (what, t["tid"]))
            syms = [f["sym"] or "" for f in o.get("ustack", [])]
            if t["fn"] not in syms:
                fail("the %s waiter's user stack lacks %s: %s (%s)" %
                     (what, t["fn"], syms, o.get("ustack_unavailable")))
            if syms.index(t["fn"]) == 0 or "libc" not in (o["ustack"][0]["module"] or ""):
                fail("the %s waiter's stack is not innermost first (the C library's call "
                     "before %s): %s" % (what, t["fn"], syms))
            if any(f["kernel"] for f in o["ustack"]):
                fail("kernel frames in the user stack of tid %d" % t["tid"])
        m = opens[truth["mutex"]["tid"]]
        if int(m["addr"], 16) != int(truth["mutex"]["addr"], 16) or \
                m.get("owner") != truth["pid"] or m.get("owner_evidence") != "mutex_word":
            fail("the mutex waiter: %s held by %s, truth %s held by %d" %
                 (m.get("addr"), m.get("owner"), truth["mutex"]["addr"], truth["pid"]))
        c = opens[truth["condvar"]["tid"]]
        if c.get("object") != "condvar" or "owner" in c or "owner_unknown" in c:
            fail("the condvar waiter is not said to wait on a condition variable, or a lock "
                 "holder is looked for: %s" % c)
        r = opens[truth["read"]["tid"]]
        if r.get("syscall") != "read":
            fail("the reader is in %s, not read" % r.get("syscall"))
        if a.text:
            check_text_stacks(truth, open(a.text).read())
        print("check_stuck: user stacks of the mutex, condvar and read waiters: ok")
    elif a.case == "attach_stack":
        t = truth["mutex"]
        chains = [o for o in objs if o.get("type") == "chain" and o["tid"] == t["tid"]
                  and o["links"][0]["kind"] == "futex"]
        if len(chains) != 1:
            fail("expected one futex chain for the mutex waiter tid %d, got %d" %
                 (t["tid"], len(chains)))
        l = chains[0]["links"][0]
        if int(l["addr"], 16) != int(t["addr"], 16):
            fail("the mutex waiter's link is on %s, truth %s" % (l["addr"], t["addr"]))
        syms = [f["sym"] or "" for f in l.get("stack", []) if not f["kernel"]]
        if t["fn"] not in syms:
            fail("the wait begun before attach has no user stack through %s: %s (%s)" %
                 (t["fn"], syms, l.get("stack_missing")))
        print("check_stuck: the wait begun before attach has its stack, through %s: ok" % t["fn"])
    else:
        fail("unknown case " + a.case)


if __name__ == "__main__":
    main()
