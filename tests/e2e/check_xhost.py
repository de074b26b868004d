#!/usr/bin/env python3
"""Checks a joined report of three hosts' recordings (tests/e2e/gt_xhost.sh).

    check_xhost.py direct|proxy DIR SHIFT_MS

DIR holds truth.json (the client's thread and latency), report.jsonl and report.txt. Exit 0
when right, 1 when wrong (each problem said), 2 when the scenario did not happen (the disk read
was not slow: a loaded machine let it through), so the caller tries again.
"""
import json
import sys

# Each recording's clock anchor is one (CLOCK_MONOTONIC, CLOCK_REALTIME) pair read within a few
# microseconds; on one machine the recordings' offsets are the shift plus that reading error.
ANCHOR_SLACK_NS = 50_000


def main():
    case, d, shift_ms = sys.argv[1], sys.argv[2], int(sys.argv[3])
    truth = json.load(open(d + "/truth.json"))
    if truth["latency_ns"] < 200_000_000:
        print(f"the client waited {truth['latency_ns'] / 1e6:.1f} ms: the read was not slow")
        return 2
    objs = [json.loads(line) for line in open(d + "/report.jsonl")]
    text = open(d + "/report.txt").read()
    hosts = {o["host"]: o for o in objs if o.get("type") == "host"}
    chains = [o for o in objs if o.get("type") == "xhost_chain"]
    problems = []

    def want(cond, what):
        if not cond:
            problems.append(what)

    want(set(hosts) == {"client", "server", "db"}, f"hosts {sorted(hosts)}")
    # the client's wait for the reply (the thread's exec, before, is the same tid's too)
    mine = [c for c in chains if c["tid"] == truth["tid"] and c["host"] == "client"
            and c["links"][0]["kind"] == "socket"]
    want(mine, f"no chain of the client's thread {truth['tid']} waiting on its socket")
    if problems:
        return report(problems)
    c = max(mine, key=lambda c: c["blocked_ns"])
    want(truth["latency_ns"] / 2 <= c["blocked_ns"] <= truth["latency_ns"] + 1_000_000,
         f"the chain's wait {c['blocked_ns']} ns against the client's latency {truth['latency_ns']}")
    want(all("host" in link for link in c["links"]), "a link without its host")
    if case == "direct":
        check_direct(c, hosts, shift_ms, text, want)
    else:
        check_proxy(c, text, want)
    return report(problems)


def check_direct(c, hosts, shift_ms, text, want):
    order = []
    for link in c["links"]:
        if not order or order[-1] != link["host"]:
            order.append(link["host"])
    want(order == ["client", "server", "db"], f"the links' hosts in order: {order}")
    want(c["root_host"] == "db" and "loop" in c["root"],
         f"root {c['root']!r} on {c['root_host']}, want the loop device's read on db")
    want("not_proven" not in c, f"said not proven: {c.get('not_proven')}")
    x = c["crossings"]
    want(len(x) == 2 and all(k["followed"] for k in x), f"crossings {x}")
    if len(x) == 2:
        want(x[0]["from_host"] == "server" and x[0]["to_host"] == "client" and
             x[0]["src"] == "10.77.1.2:7001" and x[0]["dst"].startswith("10.77.1.1:"),
             f"first crossing {x[0]}")
        want(x[1]["from_host"] == "db" and x[1]["to_host"] == "server" and
             x[1]["src"] == "10.77.2.2:7002" and x[1]["dst"].startswith("10.77.2.1:"),
             f"second crossing {x[1]}")
        for k in x:
            n = (k["seq_end"] - k["seq_start"]) % (1 << 32)
            want(0 < n <= 300, f"a crossing's sequence range of {n} bytes")
        # the request view: each sender answered a request on that connection
        for k in x:
            q = k.get("request")
            want(q and q["local"] == k["src"] and q["peer"] == k["dst"],
                 f"the request of crossing {k}")
        q = x[1].get("request") or {}
        want("loop" in (q.get("cause") or ""), f"the database's request's cause: {q}")
    for name, true_ns in (("server", shift_ms * 1_000_000), ("db", 0)):
        h = hosts[name]
        if not h["offset_known"]:
            want(False, f"{name}: offset not estimated")
            continue
        err = abs(h["offset_ns"] - true_ns)
        want(err <= h["offset_error_ns"] + ANCHOR_SLACK_NS,
             f"{name}: offset {h['offset_ns']} ns ± {h['offset_error_ns']}, true {true_ns}")
        print(f"{name}: offset {h['offset_ns'] / 1e6:.3f} ms ± {h['offset_error_ns'] / 1e6:.3f} ms"
              f" (true {true_ns / 1e6:.3f} ms)")
    want("host server sent them" in text and "host db sent them" in text,
         "the text does not name each crossing's sending host")
    want("same TCP sequence numbers" in text, "the text does not say the crossing's evidence")
    want("as the answer of its request on 10.77.2.2:7002" in text,
         "the text does not name the database's request")


def check_proxy(c, text, want):
    want(all(link["host"] == "client" for link in c["links"]),
         "a link on another host: the join through an unrecorded proxy was made")
    want("join not proven" in c.get("not_proven", ""), f"not said unproven: {c.get('not_proven')}")
    want("10.77.1.2:7003" in c.get("not_proven", ""), "the proxy's endpoint is not named")
    want(c["root_host"] == "client", f"root on {c['root_host']}")
    want("join not proven" in text, "the text does not say the join was not proven")


def report(problems):
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
