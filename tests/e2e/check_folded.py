#!/usr/bin/env python3
"""Parse whyslow's --format folded output back and check it against the same run's JSON.

    check_folded.py FOLDED CHAINS.jsonl

- every line is "frame;frame;... weight" with a positive integer weight and no empty frame;
- the bottom frame is the victim's name, the second its wait ("[kind ...]");
- per victim name, the weights add up exactly to the blocked_ns of that victim's chains
  (a chain's lines are its segments, which add up to its whole wait);
- a chain whose links name a waker has towers that climb through "[woken by WAKER]".
Exit 0 ok, 1 problems (listed), 2 usage. Python 3 standard library only.
"""
import collections
import json
import sys


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    errs, by_comm, towers = [], collections.Counter(), set()
    for no, line in enumerate(open(argv[1]), 1):
        line = line.rstrip("\n")
        stack, _, weight = line.rpartition(" ")
        frames = stack.split(";")
        if not stack or not weight.isdigit() or int(weight) <= 0 or any(not f for f in frames):
            errs.append("line %d is not 'frame;frame weight': %r" % (no, line))
            continue
        if len(frames) < 2 or not frames[1].startswith("["):
            errs.append("line %d: the second frame is not the victim's wait: %r" % (no, line))
        by_comm[frames[0]] += int(weight)
        towers.add(tuple(frames))
    want = collections.Counter()
    for line in open(argv[2]):
        o = json.loads(line)
        if o.get("type") != "chain":
            continue
        want[o["comm"]] += o["blocked_ns"]
        links = o["links"]
        if len(links) > 1 and links[0].get("woken_by") is not None:
            waker = "[woken by %s]" % links[1]["comm"]
            if not any(t[0] == o["comm"] and waker in t for t in towers):
                errs.append("chain of tid %d: no tower of %s climbs through %s" % (o["tid"], o["comm"], waker))
    if by_comm != want:
        errs.append("weights per victim %s differ from the chains' blocked time %s" % (dict(by_comm), dict(want)))
    for e in errs[:30]:
        print("check_folded: " + e, file=sys.stderr)
    if errs:
        return 1
    print("check_folded: ok: %d towers, %d victims, weights equal blocked time" % (len(towers), len(by_comm)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
