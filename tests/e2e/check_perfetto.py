#!/usr/bin/env python3
"""Structural check of whyslow's Perfetto (Chrome trace-event JSON) export.

    check_perfetto.py TRACE.json [--chains CHAINS.jsonl]

- valid JSON: an object with a "traceEvents" list;
- every event has ph, pid, tid; X slices have ts and dur >= 0 and a name;
- every slice's and flow end's (pid, tid) has a thread track: a thread_name metadata event, and
  its pid a process_name;
- flows: every id has exactly one "s" and one "f", the "s" not after the "f", both bp "e", and
  each end lies inside a slice on its own track (what bp "e" binds to);
- requests (cat "request") are async slices: every id has one "b" and one "e" of the same
  pid, the "b" not after the "e", with the request's args on the "b";
- slices on one track are properly nested, never partly overlapping (Perfetto's rule);
- every traced thread's timeline (slices of cat running/runnable/blocked/not observed) is one
  unbroken stretch: each slice starts where the one before it ended;
- processes are grouped by cgroup: a process whose process_name carries a "cgroup" arg has a
  process_labels of that cgroup, and a process_sort_index that all processes of that cgroup
  share, in the order of the cgroups' paths (the format has no track above a process);
- otherData carries the wall-clock anchor (anchor_monotonic_us, anchor_utc);
- slice names are stable (state and kind of wait, e.g. "blocked: futex"): at most MAX_NAMES
  distinct ones and none with a "key=value" in it, since per-event values (addresses, sectors,
  thread names) belong in args; a name per value defeats Perfetto's grouping by name;
- with --chains: every woken_by hop of every reported chain (link i woken by link i+1's
  thread) appears as a flow from the waker's track to the wakee's track, and the victim's
  timeline covers its whole wait.
Exit 0 ok, 1 problems (listed), 2 usage. Python 3 standard library only.
"""
import collections
import json
import sys

TIMELINE = ("running", "runnable", "blocked", "not observed")
EPS = 0.0015  # microseconds: ts and dur carry nanoseconds as three decimals
# States and kinds of wait are a few dozen at most; thousands of names mean values leaked in.
MAX_NAMES = 32


def main(argv):
    if len(argv) not in (2, 4) or (len(argv) == 4 and argv[2] != "--chains"):
        print(__doc__, file=sys.stderr)
        return 2
    errs = []
    try:
        with open(argv[1]) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print("check_perfetto: %s: not valid JSON: %s" % (argv[1], e), file=sys.stderr)
        return 1
    evs = doc.get("traceEvents") if isinstance(doc, dict) else None
    if not isinstance(evs, list):
        print("check_perfetto: no traceEvents list", file=sys.stderr)
        return 1
    other = doc.get("otherData", {})
    if "anchor_monotonic_us" not in other or "anchor_utc" not in other:
        errs.append("otherData has no wall-clock anchor: %r" % (other,))
    threads, procs = set(), set()
    slices = collections.defaultdict(list)
    timeline = collections.defaultdict(list)
    flows = collections.defaultdict(list)
    requests = collections.defaultdict(list)
    names = collections.Counter()
    proc_cg, sort_index, labels = {}, {}, {}
    for i, e in enumerate(evs):
        if not isinstance(e, dict) or not all(k in e for k in ("ph", "pid", "tid")):
            errs.append("event %d lacks ph/pid/tid: %r" % (i, e))
            continue
        ph, key = e["ph"], (e["pid"], e["tid"])
        if ph == "M":
            if e.get("name") == "thread_name":
                threads.add(key)
            elif e.get("name") == "process_name":
                procs.add(e["pid"])
                if "cgroup" in e.get("args", {}):
                    proc_cg[e["pid"]] = e["args"]["cgroup"]
            elif e.get("name") == "process_sort_index":
                sort_index[e["pid"]] = e.get("args", {}).get("sort_index")
            elif e.get("name") == "process_labels":
                labels[e["pid"]] = e.get("args", {}).get("labels")
        elif ph == "X":
            if not isinstance(e.get("name"), str) or e.get("dur", -1) < 0 or "ts" not in e:
                errs.append("slice %d malformed: %r" % (i, e))
            slices[key].append((e["ts"], e["ts"] + e["dur"]))
            names[e.get("name")] += 1
            if e.get("cat") in TIMELINE:
                timeline[key].append((e["ts"], e["ts"] + e["dur"]))
        elif ph in ("s", "f"):
            if e.get("bp") != "e" or "id" not in e:
                errs.append("flow event %d lacks bp e or id: %r" % (i, e))
            flows[e.get("id")].append(e)
        elif ph in ("b", "e") and e.get("cat") == "request":
            if "id" not in e or "ts" not in e:
                errs.append("request event %d lacks id or ts: %r" % (i, e))
            requests[(e["pid"], e.get("id"))].append(e)
        else:
            errs.append("event %d: unexpected ph %r" % (i, ph))
    # processes grouped by cgroup (issue 32): each labelled with its cgroup, one sort index a
    # cgroup, in the cgroups' order, so one cgroup's processes are next to each other
    for pid, cg in proc_cg.items():
        if labels.get(pid) != cg:
            errs.append("pid %d of cgroup %r is labelled %r" % (pid, cg, labels.get(pid)))
    by_cg = collections.defaultdict(set)
    for pid, cg in proc_cg.items():
        by_cg[cg].add(sort_index.get(pid))
    for cg, idx in by_cg.items():
        if len(idx) != 1 or None in idx:
            errs.append("the processes of cgroup %r have sort indexes %r, want one" % (cg, sorted(idx, key=str)))
    order = [next(iter(by_cg[cg])) for cg in sorted(by_cg)]
    if len(by_cg) > 1 and all(len(by_cg[cg]) == 1 for cg in by_cg) and order != sorted(set(order)):
        errs.append("cgroups' sort indexes %r are not in the cgroups' order" % order)
    if len(names) > MAX_NAMES:
        errs.append("%d distinct slice names (at most %d): values belong in args; the most used: %r" % (
            len(names), MAX_NAMES, [n for n, _ in names.most_common(5)]))
    valued = [n for n in names if isinstance(n, str) and "=" in n]
    if valued:
        errs.append("%d slice names carry a key=value (it belongs in args), e.g. %r" % (len(valued), valued[0]))
    for key in list(slices) + [(e["pid"], e["tid"]) for fl in flows.values() for e in fl]:
        if key not in threads:
            errs.append("pid %d tid %d has events but no thread_name track" % key)
        if key[0] not in procs:
            errs.append("pid %d has events but no process_name" % key[0])
    for key, sl in slices.items():
        # sorted by start, longest first: each slice must end inside every open one
        open_ends = []
        for a, b in sorted(sl, key=lambda x: (x[0], -x[1])):
            while open_ends and open_ends[-1] <= a + EPS:
                open_ends.pop()
            if open_ends and b > open_ends[-1] + EPS:
                errs.append("tid %d: slice [%s, %s] overlaps the end of an enclosing slice at %s" % (key[1], a, b, open_ends[-1]))
                break
            open_ends.append(b)
    for key, sl in timeline.items():
        sl.sort()
        for (a0, b0), (a1, b1) in zip(sl, sl[1:]):
            if abs(a1 - b0) > EPS:
                errs.append("tid %d: timeline %s at %s, then the next slice starts at %s" % (key[1], "gap" if a1 > b0 else "overlap", b0, a1))
                break
    for rid, ev in requests.items():
        b = [e for e in ev if e["ph"] == "b"]
        en = [e for e in ev if e["ph"] == "e"]
        if len(b) != 1 or len(en) != 1:
            errs.append("request %r has %d begins and %d ends" % (rid, len(b), len(en)))
        elif b[0]["ts"] > en[0]["ts"] or not isinstance(b[0].get("args", {}).get("parts_us"), dict):
            errs.append("request %r ends before it begins or has no parts: %r" % (rid, b[0]))
        elif (rid[0], b[0]["tid"]) not in threads:
            errs.append("request %r: tid %d has no thread_name track" % (rid, b[0]["tid"]))
    edges = set()
    for fid, fl in flows.items():
        s = [e for e in fl if e["ph"] == "s"]
        f = [e for e in fl if e["ph"] == "f"]
        if len(s) != 1 or len(f) != 1:
            errs.append("flow %r has %d starts and %d ends" % (fid, len(s), len(f)))
            continue
        s, f = s[0], f[0]
        if s["ts"] > f["ts"]:
            errs.append("flow %r ends before it starts" % fid)
        for e in (s, f):
            key = (e["pid"], e["tid"])
            if not any(a <= e["ts"] <= b for a, b in slices.get(key, ())):
                errs.append("flow %r %s end at %s is in no slice of tid %d" % (fid, e["ph"], e["ts"], e["tid"]))
        edges.add((s["tid"], f["tid"]))
    nchains = 0
    if len(argv) == 4:
        with open(argv[3]) as fh:
            for line in fh:
                c = json.loads(line)
                if c.get("type") != "chain":
                    continue
                nchains += 1
                links = c["links"]
                v = [k for k in timeline if k[1] == c["tid"]]
                if not v:
                    errs.append("chain of tid %d: the victim has no timeline" % c["tid"])
                elif links and "start_ns" in links[0]:
                    lo, hi = links[0]["start_ns"] / 1000.0, (links[0]["start_ns"] + links[0]["duration_ns"]) / 1000.0
                    sl = timeline[v[0]]
                    if min(a for a, _ in sl) > lo + EPS or max(b for _, b in sl) < hi - EPS:
                        errs.append("chain of tid %d: its wait [%s, %s] is not inside its timeline" % (c["tid"], lo, hi))
                for a, b in zip(links, links[1:]):
                    if a.get("woken_by") is not None and (b["tid"], a["tid"]) not in edges:
                        errs.append("chain of tid %d: no flow from tid %d to tid %d" % (c["tid"], b["tid"], a["tid"]))
    for e in errs[:50]:
        print("check_perfetto: " + e, file=sys.stderr)
    if errs:
        return 1
    print("check_perfetto: ok: %d events, %d thread tracks, %d slices (%d names), %d flows, %d chains checked" % (
        len(evs), len(threads), sum(len(v) for v in slices.values()), len(names), len(flows), nchains))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
