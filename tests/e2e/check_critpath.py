#!/usr/bin/env python3
"""Check the critical path of a `run` in whyslow's JSON Lines output.

    check_critpath.py CHAINS.jsonl [--top SUBSTRING] [--open SUBSTRING]

- exactly one {"type":"critical_path"} object, before the summary;
- its parts add up exactly to its wall time (accounted_ns == wall_ns == sum of parts' ns):
  every moment of the command's main thread is accounted for, once;
- shares add up to 1; with --top, the largest part's "what" contains SUBSTRING;
- with --open (tracing ended while the thread was blocked): exactly one part is open
  ("open": true), says "still blocked when tracing ended", names SUBSTRING, and is at least
  80% of the traced time (the summary's duration_ns); without it, no part is open.
Exit 0 ok, 1 problems (listed), 2 usage. Python 3 standard library only.
"""
import json
import sys


def main(argv):
    opts = dict(zip(argv[2::2], argv[3::2]))
    if len(argv) < 2 or len(argv) % 2 or len(opts) * 2 != len(argv) - 2 or \
            set(opts) - {"--top", "--open"}:
        print(__doc__, file=sys.stderr)
        return 2
    objs = [json.loads(l) for l in open(argv[1]) if l.strip()]
    cps = [o for o in objs if o.get("type") == "critical_path"]
    errs = []
    if len(cps) != 1:
        errs.append("%d critical_path objects, want 1" % len(cps))
    else:
        cp = cps[0]
        parts = cp["parts"]
        total = sum(p["ns"] for p in parts)
        if not (cp["accounted_ns"] == cp["wall_ns"] == total):
            errs.append("parts add up to %d ns, accounted_ns %d, wall_ns %d" % (total, cp["accounted_ns"], cp["wall_ns"]))
        if abs(sum(p["share"] for p in parts) - 1) > 0.001 * max(1, len(parts)):
            errs.append("shares add up to %.4f" % sum(p["share"] for p in parts))
        if parts != sorted(parts, key=lambda p: -p["ns"]):
            errs.append("parts are not sorted by time")
        if "--top" in opts and opts["--top"] not in parts[0]["what"]:
            errs.append("largest part is %r, expected it to name %r" % (parts[0]["what"], opts["--top"]))
        opens = [p for p in parts if p.get("open") is True]
        if any(not isinstance(p.get("open"), bool) for p in parts):
            errs.append("a part without an \"open\" boolean")
        if "--open" not in opts and opens:
            errs.append("open parts %r in a run that ended with no wait open" % [p["what"] for p in opens])
        summaries = [o for o in objs if o.get("type") == "summary"]
        if "--open" in opts and len(opens) != 1:
            errs.append("%d open parts, want 1: %r" % (len(opens), [p["what"] for p in parts]))
        elif "--open" in opts:
            o, want = opens[0], opts["--open"]
            if "still blocked when tracing ended" not in o["what"] or want not in o["what"]:
                errs.append("the open part is %r, expected it to say it was still blocked when tracing ended, on %r" % (o["what"], want))
            traced = summaries[-1]["duration_ns"] if summaries else 0
            if o["ns"] < 0.8 * traced:
                errs.append("the open wait is %d ns, less than 80%% of the %d ns traced" % (o["ns"], traced))
        if objs.index(cp) > [o.get("type") for o in objs].index("summary"):
            errs.append("critical_path comes after the summary")
    for e in errs:
        print("check_critpath: " + e, file=sys.stderr)
    if errs:
        return 1
    p = cps[0]["parts"][0]
    print("check_critpath: ok: %d parts add up to %d ns; largest %.0f%% %s" % (len(cps[0]["parts"]), cps[0]["wall_ns"], 100 * p["share"], p["what"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
