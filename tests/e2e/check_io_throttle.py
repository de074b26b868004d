#!/usr/bin/env python3
"""Checks gt_io_throttle.sh's two runs of gt_mutex_disk (issue 32, item 2).

--loop: the read's bio was held by blk-throttle before the loop device (the limit is on the loop
device): the holder's block_io link must carry the throttle (throttled_ns covering most of the
wait, throttle_cgroup the test's group, throttle_limit its read IOPS on that device), the chains
of the holder and the victim must be rooted at that limit, and the critical path must count the
wait under it, not under "block I/O on loopN".
--backing: the limit is on the backing disk, the loop request itself is slow: device time on
loopN, no throttle named anywhere.
"""
import argparse
import json
import sys

FAIL = []


def fail(msg):
    FAIL.append(msg)
    print("FAIL: " + msg)


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def chain_of(objs, comm):
    chains = [o for o in objs if o.get("type") == "chain" and o.get("comm") == comm]
    if not chains:
        fail("no chain of %s" % comm)
        return None
    return max(chains, key=lambda c: c["blocked_ns"])


def io_link(chain):
    for link in chain["links"]:
        if link["kind"] == "block_io":
            return link
    fail("the chain of %s has no block_io link: %s" % (chain["comm"], [l["kind"] for l in chain["links"]]))
    return None


def critical_parts(objs):
    cps = [o for o in objs if o.get("type") == "critical_path"]
    if not cps:
        fail("no critical path")
        return 0, []
    return cps[0]["wall_ns"], cps[0]["parts"]


def check_loop(objs, cg, majmin, dev, iops):
    limit = "%d reads/s on %s" % (iops, majmin)
    root = "I/O limit of %s (%s)" % (cg, limit)
    holder = chain_of(objs, "gt-holder")
    link = io_link(holder) if holder else None
    if link:
        held, dur = link.get("throttled_ns", 0), link["duration_ns"]
        print("loop: holder's link: throttled_ns %d of %d, throttle_cgroup %r, throttle_limit %r, "
              "queue_ns %d, device_ns %d" % (held, dur, link.get("throttle_cgroup"),
                                            link.get("throttle_limit"), link.get("queue_ns", -1),
                                            link.get("device_ns", -1)))
        if held < 0.8 * dur:
            fail("the throttle holds %d ns of the holder's %d ns wait, expected at least 80%%" % (held, dur))
        if link.get("throttle_cgroup") != cg:
            fail("throttle_cgroup %r, expected %r" % (link.get("throttle_cgroup"), cg))
        if link.get("throttle_limit") != limit:
            fail("throttle_limit %r, expected %r" % (link.get("throttle_limit"), limit))
        if held + link.get("queue_ns", 0) + link.get("device_ns", 0) != dur:
            fail("throttled + queue + device != the wait")
    for comm in ("gt-holder", "gt-victim"):
        c = chain_of(objs, comm)
        if c:
            print("loop: %s root: %s" % (comm, c["root"]))
            if c["root"] != root:
                fail("the root of %s's chain is %r, expected %r" % (comm, c["root"], root))
    wall, parts = critical_parts(objs)
    held = sum(p["ns"] for p in parts if p["what"] == root)
    disk = sum(p["ns"] for p in parts if p["what"] == "block I/O on %s" % dev)
    print("loop: critical path %d ns: %d under the limit, %d as block I/O on %s" % (wall, held, disk, dev))
    if held < 0.8 * wall:
        fail("the critical path counts %d of %d ns under %r, expected at least 80%%" % (held, wall, root))
    if disk > 0.05 * wall:
        fail("the critical path still counts %d ns as block I/O on %s" % (disk, dev))
    reasons = [o for o in objs if o.get("type") == "reason"]
    if any(r["root"] == "block I/O on %s" % dev for r in reasons):
        fail("a reason is still rooted at block I/O on %s" % dev)


def check_backing(objs, dev):
    holder = chain_of(objs, "gt-holder")
    link = io_link(holder) if holder else None
    if link:
        print("backing: holder's link: device_ns %d of %d, queue_ns %d, throttled_ns %r" %
              (link.get("device_ns", -1), link["duration_ns"], link.get("queue_ns", -1),
               link.get("throttled_ns")))
        if "throttled_ns" in link or "throttle_cgroup" in link:
            fail("a throttle is named on the backing run's request: %r" % link)
        if link.get("device_ns", 0) < 0.8 * link["duration_ns"]:
            fail("the backing run's wait is not device time: %r" % link)
    for comm in ("gt-holder", "gt-victim"):
        c = chain_of(objs, comm)
        if c:
            print("backing: %s root: %s" % (comm, c["root"]))
            if c["root"] != "block I/O on %s" % dev:
                fail("the root of %s's chain is %r, expected block I/O on %s" % (comm, c["root"], dev))
    if any(str(o.get("root", "")).startswith("I/O limit of") for o in objs):
        fail("an I/O limit is named in the backing run")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--loop", required=True)
    ap.add_argument("--loop-cgroup", required=True)
    ap.add_argument("--backing", required=True)
    ap.add_argument("--majmin", required=True)
    ap.add_argument("--dev", required=True)
    ap.add_argument("--iops", type=int, required=True)
    a = ap.parse_args()
    check_loop(load(a.loop), a.loop_cgroup, a.majmin, a.dev, a.iops)
    check_backing(load(a.backing), a.dev)
    if FAIL:
        return 1
    print("check_io_throttle: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
