#!/usr/bin/env python3
"""Each round's slowdown against that round's own baseline run, summarised.

On this VM the base speed drifts by tens of percent within minutes, so the ratio of two runs made
seconds apart (one round) is steadier than the ratio of two medians taken over the whole run.
Prints "median% (min%..max%; 95% CI lo%..hi%)": the median of the per-round slowdowns, their
range, and a bootstrap interval of that median (10,000 resamples, fixed seed, so a table is
reproducible from its raw file). A positive slowdown is worse.

  paired.py FILE WORKLOAD CONFIG [--higher-is-better] [--floor X]

FILE: tab-separated rows "workload config round value"; WORKLOAD "-" when FILE has no workload
column ("config value load cpu round", bench/pgbench.sh's overhead.tsv). --higher-is-better: the
value is a throughput (tps). --floor X: drop rounds where any run gave less than X (a disk stall
that hit every configuration, not the tracer); the line then says how many were dropped.
"""
import random
import statistics
import sys


def rounds(path, workload):
    by_round = {}
    with open(path) as f:
        for line in f:
            col = line.rstrip("\n").split("\t")
            if len(col) < (5 if workload == "-" else 4):
                continue  # an older file without the round column
            if workload == "-":
                config, value, rnd = col[0], col[1], col[4]
            elif col[0] == workload:
                config, rnd, value = col[1], col[2], col[3]
            else:
                continue
            try:
                by_round.setdefault(rnd, {})[config] = float(value)
            except ValueError:
                pass
    return by_round


def main(argv):
    args, higher, floor = [], False, None
    it = iter(argv)
    for a in it:
        if a == "--higher-is-better":
            higher = True
        elif a == "--floor":
            floor = float(next(it, "nan"))
        else:
            args.append(a)
    if len(args) != 3 or floor != floor:  # (a NaN floor: --floor without its number)
        sys.stderr.write("usage: paired.py FILE WORKLOAD CONFIG [--higher-is-better] [--floor X]\n")
        return 2
    path, workload, config = args
    slow, dropped = [], 0
    for runs in rounds(path, workload).values():
        base, v = runs.get("baseline", runs.get("untraced")), runs.get(config)
        if not base or not v:
            continue
        if floor is not None and min(runs.values()) < floor:
            dropped += 1
            continue
        slow.append((base / v if higher else v / base) - 1)
    if not slow:
        print("—")
        return 0
    rng = random.Random(1)
    boot = sorted(statistics.median(rng.choices(slow, k=len(slow))) for _ in range(10000))
    pct = lambda x: "%+.1f%%" % (x * 100)
    out = "%s (%s..%s; 95%% CI %s..%s)" % (pct(statistics.median(slow)), pct(min(slow)),
                                           pct(max(slow)), pct(boot[250]), pct(boot[9749]))
    if dropped:
        out += ", %d of %d rounds dropped (a run below %g)" % (dropped, dropped + len(slow), floor)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
