#!/usr/bin/env python3
"""Compare the victim's chain of one ground-truth workload run at two resolutions (issue 19.5).

    compare_resolution.py CASE RESOLUTION_NS FULL_DIR SUMMARISED_DIR

Each DIR holds whyslow.jsonl and truth.json of one run (gt_lib.sh's GT_SAVE): FULL at
resolution 0 (every switch recorded), SUMMARISED at RESOLUTION_NS. The two runs must give the
same chain for the victim's wait: the same links (kind, the thread of each link by its role in
the truth, the thread it names as woken_by), and a wait whose length is as close to the truth
as the full run's, give or take the resolution. Exit 0 same, 1 different, 2 unreadable input.
"""
import importlib.util
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("check_chain", os.path.join(here, "check_chain.py"))
cc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cc)


def victim_chain(case, d):
    try:
        with open(os.path.join(d, "truth.json"), encoding="utf-8") as f:
            truth = json.load(f)
        with open(os.path.join(d, "whyslow.jsonl"), encoding="utf-8") as f:
            recs = [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError) as e:
        print("compare_resolution: %s: %s" % (d, e), file=sys.stderr)
        sys.exit(2)
    role_of = {v["tid"]: k for k, v in truth["threads"].items()}
    role, _ = cc.expected_links(case, truth)
    wait = truth["waits"][role]
    chains = [(i, r) for i, r in enumerate(recs) if r.get("type") == "chain"]
    best, _ = cc.find_chain(chains, truth["threads"][role]["tid"], wait["start_ns"], wait["end_ns"])
    if best is None:
        print("compare_resolution: %s: no chain for the victim's wait" % d, file=sys.stderr)
        sys.exit(1)
    c = best[2]
    links = [(l["kind"], role_of.get(l.get("tid"), "other"),
              role_of.get(l.get("woken_by"), "other") if l.get("woken_by") else None)
             for l in c["links"]]
    summary = [r for r in recs if r.get("type") == "summary"]
    events = summary[-1].get("events") if summary else None
    return links, c["blocked_ns"], wait["end_ns"] - wait["start_ns"], events


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    case, res = sys.argv[1], int(sys.argv[2])
    full = victim_chain(case, sys.argv[3])
    summ = victim_chain(case, sys.argv[4])
    ok = True
    for name, (links, blocked, real, events) in (("resolution 0", full), ("resolution %d ns" % res, summ)):
        print("%s: %d records; victim blocked %d ns (truth %d ns); links %s"
              % (name, events or 0, blocked, real, links))
    if full[0] != summ[0]:
        print("DIFFERENT links: %s vs %s" % (full[0], summ[0]))
        ok = False
    err_full, err_summ = abs(full[1] - full[2]), abs(summ[1] - summ[2])
    if err_summ > err_full + res:
        print("the summarised run's wait is off the truth by %d ns, the full run's by %d ns: "
              "more than the resolution (%d ns) apart" % (err_summ, err_full, res))
        ok = False
    print("same chain" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
