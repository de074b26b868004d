#!/usr/bin/env python3
"""check_roots.py: a chain's root never contradicts its segments (issue 34, item 4).

    check_roots.py FILE.jsonl [FILE.jsonl ...]   check whyslow JSON Lines output
    check_roots.py --self-test                   check the checker on crafted streams

The rule it holds the output to is core/engine/chain.c's (ws_chain_settle_root), read from the JSON:

(a) Every segment names its root cause in "root" (the key the summary's root_causes use). The
    chain's "root" is the root whose segments hold the most of the wait (on a tie, any of the
    tied ones) and "root_ns" is their time. The links may end at another root (they follow the
    longest wait of the largest group): then "links_root" names it and differs from "root";
    without "links_root", the root is where the links end.
(b) A root names no cause when it is "unknown", "unknown in ..." or "before the kept history
    (max_window, max_history)". A chain whose segments are more than half such time, or whose
    root is such a root, is "incomplete": true and says why ("why_incomplete").
(c) The summary's root_causes are the chains' segments summed per (victim comm, root), exactly;
    its off_cpu_unexplained_ns is the time of the segments whose root names no cause and its
    chains_blocked_ns the chains' blocked_ns; each reason's count and total_ns are those of the
    chains with its comm, link kinds and root. So the text report (the reasons' "root:", the
    summary's "traces back to") says what the chains say.

Every stream is checked whole: a report must list every chain it ranked (--format json does).
Exit 0 when every stream keeps the rule, 1 otherwise (one line per problem), 2 on usage errors.
Python 3 standard library only; tests/e2e/check_chain.py runs the same checks on every output
it reads.
"""
import json
import sys

BEFORE_KEPT = "before the kept history (max_window, max_history)"


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def unnamed(root):
    """Does this root key name no cause? (core/engine/chain.c: ws_chain_root_of() returns false)"""
    return root in ("unknown", BEFORE_KEPT) or root.startswith("unknown in ")


def links_end(link):
    """How the root of a chain whose links end at @link begins, for the kinds the core names
    itself (core/engine/chain_roots.c chain_root_of_link); None for the others, named by their sources."""
    kind, cpu = link.get("kind"), link.get("cpu")
    if kind == "running":
        return "CPU work"  # or "CPU work and short waits (causes not recorded)"
    if kind == "cpu_quota":
        return "CPU quota of "
    if kind == "compaction":
        return "direct memory compaction"
    if kind == "memory_high":
        return "the memory.high throttle of "
    if kind == "memory_reclaim":
        return "memory reclaim " if link.get("reclaim") == "memcg" else "direct memory reclaim"
    if kind in ("runqueue", "wakeup_latency") and is_int(cpu):
        return "%s on CPU %d" % ("runqueue" if kind == "runqueue" else "wakeup latency", cpu)
    return None


def check_chain(c, where, errs):
    """(a) and (b) for one chain; returns {root: ns} of its segments, or None."""
    segs, blocked = c.get("segments"), c.get("blocked_ns")
    # a wait of 0 ns (--min-block 0: off and back on CPU within one clock tick) has no pieces
    if segs == [] and blocked == 0:
        return {}
    if not isinstance(segs, list) or not segs or not is_int(blocked):
        errs.append("%s: no segments or no blocked_ns to read a root from (blocked_ns %r, %s)"
                    % (where, blocked, json.dumps(c)[:300]))
        return None
    by_root, first, unexplained = {}, {}, 0
    for i, s in enumerate(segs):
        r, ns = s.get("root") if isinstance(s, dict) else None, \
            s.get("duration_ns") if isinstance(s, dict) else None
        if not isinstance(r, str) or not is_int(ns):
            errs.append("%s: segment %d has no \"root\" (string) and \"duration_ns\": %s"
                        % (where, i, json.dumps(s)[:200]))
            return None
        by_root[r] = by_root.get(r, 0) + ns
        first.setdefault(r, i)
        if unnamed(r):
            unexplained += ns
    root, root_ns = c.get("root"), c.get("root_ns")
    most = max(by_root.values())
    shares = ", ".join("%s %d ns" % (r, ns) for r, ns in
                       sorted(by_root.items(), key=lambda x: (-x[1], first[x[0]])))
    if root not in by_root:
        errs.append("(a) %s: root %r is the root of none of its segments (%s)"
                    % (where, root, shares))
    elif by_root[root] != most:
        errs.append("(a) %s: root %r explains %d ns, yet %r explains %d ns of its segments (%s)"
                    % (where, root, by_root[root],
                       min((r for r in by_root if by_root[r] == most), key=first.get), most,
                       shares))
    if root in by_root and root_ns != by_root[root]:
        errs.append("(a) %s: root_ns %r, but its segments rooted at %r hold %d ns"
                    % (where, root_ns, root, by_root[root]))
    links = c.get("links") if isinstance(c.get("links"), list) else []
    if "links_root" in c and (not isinstance(c["links_root"], str) or c["links_root"] == root):
        errs.append("(a) %s: links_root %r must name where the links end, other than the root"
                    % (where, c["links_root"]))
    end = links_end(links[-1]) if links and isinstance(links[-1], dict) else None
    if end and "links_root" not in c and isinstance(root, str) and not root.startswith(end):
        errs.append("(a) %s: the links end at %s..., the root is %r, and the chain does not say "
                    "where its links end (links_root)" % (where, end, root))
    if (unexplained * 2 > blocked or (isinstance(root, str) and unnamed(root))) and \
            (c.get("incomplete") is not True or not c.get("why_incomplete")):
        errs.append("(b) %s: %d of its %d ns have no recorded cause (root %r), yet incomplete is "
                    "%r (why_incomplete %r)" % (where, unexplained, blocked, root,
                                                c.get("incomplete"), c.get("why_incomplete")))
    return by_root


def check_stream(records, name):
    """records: [(line number, object)]; returns the problems found."""
    errs = []
    per_comm, reasons, unexplained, blocked_sum, nchains = {}, {}, 0, 0, 0
    summary = None
    for no, o in records:
        if o.get("type") == "summary":
            summary = o
        if o.get("type") != "chain":
            continue
        nchains += 1
        where = "%s line %d (chain of tid %r, %r)" % (name, no, o.get("tid"), o.get("comm"))
        by_root = check_chain(o, where, errs)
        if by_root is None:
            continue
        comm = o.get("comm")
        acc = per_comm.setdefault(comm, {})
        for r, ns in by_root.items():
            acc[r] = acc.get(r, 0) + ns
            unexplained += ns if unnamed(r) else 0
        blocked_sum += o["blocked_ns"]
        kinds = tuple(l.get("kind") for l in o.get("links", []) if isinstance(l, dict))
        k = (comm, kinds, o.get("root"))
        n, t = reasons.get(k, (0, 0))
        reasons[k] = (n + 1, t + o["blocked_ns"])
    if summary is None:
        errs.append("(c) %s: no summary to check the root causes against" % name)
        return errs
    listed = {}
    for r in summary.get("root_causes") or []:
        key = (r.get("comm"), r.get("root"))
        listed[key] = listed.get(key, 0) + (r.get("ns") if is_int(r.get("ns")) else 0)
    want = {(comm, r): ns for comm, acc in per_comm.items() for r, ns in acc.items()}
    if errs:
        return errs  # the chains' own problems first: the sums over them would only repeat them
    for key in sorted(set(want) | set(listed), key=str):
        if want.get(key, 0) != listed.get(key, 0):
            errs.append("(c) %s: the summary traces %d ns of %r's waits to %r, its chains' "
                        "segments %d ns" % (name, listed.get(key, 0), key[0], key[1],
                                            want.get(key, 0)))
    for field, total in (("off_cpu_unexplained_ns", unexplained),
                         ("chains_blocked_ns", blocked_sum)):
        if field in summary and summary[field] != total:
            errs.append("(c) %s: summary %s %r, its chains' segments say %d"
                        % (name, field, summary[field], total))
    got = {}
    for no, o in records:
        if o.get("type") == "reason":
            k = (o.get("comm"), tuple(o.get("kinds") or ()), o.get("root"))
            got[k] = (o.get("count"), o.get("total_ns"))
    for k in sorted(set(reasons) | set(got), key=str):
        if reasons.get(k) != got.get(k):
            errs.append("(c) %s: reason %s: %s (count, total_ns), its chains say %s"
                        % (name, " / ".join(map(str, k)), got.get(k), reasons.get(k)))
    return errs


def load(path):
    records = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for no, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                o = json.loads(line)
            except ValueError:
                continue  # not this checker's business: check_chain.py reports it
            if isinstance(o, dict):
                records.append((no, o))
    return records


# ----------------------------------------------------------------------------- self-test
def _seg(kind, ns, root, tid=2):
    return {"kind": kind, "tid": tid, "start_ns": 0, "duration_ns": ns, "root": root}


def _chain(comm, segs, root, links, **kw):
    c = {"type": "chain", "tid": 1, "pid": 1, "comm": comm, "blocked_ns": sum(
        s["duration_ns"] for s in segs), "incomplete": False, "root": root,
        "links": [{"kind": k, "tid": 1 + i, "comm": cm} for i, (k, cm) in enumerate(links)],
        "segments": segs}
    c["root_ns"] = sum(s["duration_ns"] for s in segs if s["root"] == root)
    c.update(kw)
    return c


def _stream(*chains, fix=None):
    """The chains, their reasons and a summary that agrees with them; @fix edits the summary."""
    roots, reasons, unexpl = {}, {}, 0
    for c in chains:
        for s in (s for s in c["segments"] if "root" in s):
            k = (c["comm"], s["root"])
            roots[k] = roots.get(k, 0) + s["duration_ns"]
            unexpl += s["duration_ns"] if unnamed(s["root"]) else 0
        k = (c["comm"], tuple(l["kind"] for l in c["links"]), c["root"])
        n, t = reasons.get(k, (0, 0))
        reasons[k] = (n + 1, t + c["blocked_ns"])
    out = list(chains)
    out += [{"type": "reason", "comm": k[0], "kinds": list(k[1]), "root": k[2], "count": n,
             "total_ns": t} for k, (n, t) in reasons.items()]
    summ = {"type": "summary", "root_causes": [{"comm": c, "root": r, "ns": ns}
                                               for (c, r), ns in roots.items()],
            "off_cpu_unexplained_ns": unexpl,
            "chains_blocked_ns": sum(c["blocked_ns"] for c in chains)}
    if fix:
        fix(summ)
    return list(enumerate(out + [summ], 1))


def self_test():
    ms = 1000000
    # the client of a server that read the disk nine times, then computed once (the longest)
    sleep = [_seg("futex", 40 * ms, "block I/O on vda") for _ in range(9)]
    cpu = [_seg("futex", 60 * ms, "CPU work in server")]
    path = [("futex", "client"), ("futex", "worker"), ("running", "server")]
    good = _chain("client", sleep + cpu, "block I/O on vda", path,
                  links_root="CPU work in server")
    # MariaDB's: 93% of the wait before the kept history, the rest named
    history = [_seg("unknown", 41 * ms, BEFORE_KEPT), _seg("block_io", 3 * ms, "block I/O on sda")]
    cases = [
        ("agreeing chains", _stream(good, _chain(
            "db", history, BEFORE_KEPT, [("futex", "db"), ("block_io", "io")],
            incomplete=True, why_incomplete="most of this wait lies before the kept history")),
         None),
        ("root at a minor CPU segment (the Redis chain)", _stream(_chain(
            "client", sleep + cpu, "CPU work in server", path)), "(a)"),
        ("root right, but links end elsewhere unsaid", _stream(_chain(
            "client", sleep + cpu, "block I/O on vda", path)), "(a)"),
        ("root_ns not the root's segments", _stream(dict(good, root_ns=60 * ms)), "(a)"),
        ("segments without roots (the output before issue 34.4)", _stream(dict(
            good, segments=[{k: v for k, v in s.items() if k != "root"} for s in sleep + cpu]),
            fix=lambda s: s.update(root_causes=[])), "has no \"root\""),
        ("93% before the kept history, rooted at the rest (the MariaDB chain)", _stream(_chain(
            "db", history, "block I/O on sda", [("futex", "db"), ("block_io", "io")])),
         "(a)"),
        ("mostly no cause, the largest part named, yet complete", _stream(_chain(
            "db", [_seg("unknown", 30 * ms, BEFORE_KEPT), _seg("unknown", 25 * ms, "unknown"),
                   _seg("block_io", 45 * ms, "block I/O on sda")],
            "block I/O on sda", [("futex", "db"), ("block_io", "io")])), "(b)"),
        ("root names no cause, yet complete", _stream(_chain(
            "db", history, BEFORE_KEPT, [("futex", "db"), ("block_io", "io")])), "(b)"),
        ("summary traces a chain elsewhere", _stream(good, fix=lambda s: s["root_causes"].append(
            {"comm": "client", "root": "CPU work in server", "ns": 1})), "(c)"),
        ("summary unexplained time off", _stream(good, fix=lambda s: s.update(
            off_cpu_unexplained_ns=5)), "(c)"),
    ]
    bad_reason = _stream(good)
    for _, o in bad_reason:
        if o["type"] == "reason":
            o["root"] = "CPU work in server"
    cases.append(("reason rooted elsewhere than its chain", bad_reason, "(c)"))
    failed = 0
    for title, records, want in cases:
        errs = check_stream(records, "crafted")
        ok = not errs if want is None else any(want in e for e in errs)
        print("%s %s%s" % ("ok  " if ok else "FAIL", title,
                           "" if ok else ": want %s, got %s" % (want or "no problem", errs)))
        failed += not ok
    if failed:
        print("check_roots self-test: %d case(s) wrong" % failed)
        return 1
    print("check_roots self-test: PASS (%d cases)" % len(cases))
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) < 2 or argv[1].startswith("-"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    bad = 0
    for path in argv[1:]:
        try:
            records = load(path)
        except OSError as e:
            print("check_roots: cannot read %s: %s" % (path, e), file=sys.stderr)
            return 2
        errs = check_stream(records, path)
        for e in errs:
            print("check_roots: " + e)
        n = sum(1 for _, o in records if o.get("type") == "chain")
        print("check_roots: %s: %s (%d chains)" % (path, "FAIL" if errs else "ok", n))
        bad += bool(errs)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
