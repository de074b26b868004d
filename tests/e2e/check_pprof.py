#!/usr/bin/env python3
"""check_pprof.py PROFILE FOLDED — whyslow's --format pprof against its --format folded.

PROFILE is decoded here with a protobuf reader of its own (no pprof code shared with whyslow):
gzip, then profile.proto's fields (github.com/google/pprof/proto/profile.proto). Each sample's
location ids, leaf first, are turned back into a root-first stack of function names; the sums
per stack must equal FOLDED's, line for line, and string_table[0] must be "" as the format
requires. Exit 0 pass, 1 fail (one line saying what differs).
"""
import collections
import gzip
import sys


def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return v, i


def fields(b):
    """(field, wire type, value) of one message; value is an int or bytes."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            v = b[i:i + n]
            i += n
        else:
            raise ValueError(f"wire type {wt} not expected in a pprof profile")
        yield f, wt, v


def packed(v):
    """A repeated varint field, packed (bytes) or not (one int)."""
    if isinstance(v, int):
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


def decode(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] != b"\x1f\x8b":
        raise ValueError("not gzip")
    b = gzip.decompress(raw)
    strings, samples, locations, functions = [], [], {}, {}
    for f, _, v in fields(b):
        if f == 6:
            strings.append(v.decode("utf-8"))
        elif f == 2:
            loc, val = [], []
            for sf, _, sv in fields(v):
                if sf == 1:
                    loc += packed(sv)
                elif sf == 2:
                    val += packed(sv)
            samples.append((loc, val))
        elif f == 4:
            lid, fn = 0, None
            for lf, _, lv in fields(v):
                if lf == 1:
                    lid = lv
                elif lf == 4:
                    fn = dict((a, c) for a, _, c in fields(lv)).get(1)
            locations[lid] = fn
        elif f == 5:
            d = dict((a, c) for a, _, c in fields(v))
            functions[d[1]] = d.get(2, 0)
    return strings, samples, locations, functions


def main():
    strings, samples, locations, functions = decode(sys.argv[1])
    if not strings or strings[0] != "":
        sys.exit("FAIL: string_table[0] is not the empty string")
    got = collections.Counter()
    for loc, val in samples:
        if len(val) != 1:
            sys.exit(f"FAIL: a sample has {len(val)} values, want 1 (off-CPU ns)")
        names = [strings[functions[locations[i]]] for i in loc]
        got[";".join(reversed(names))] += val[0]
    want = collections.Counter()
    with open(sys.argv[2]) as f:
        for line in f:
            line = line.rstrip("\n")
            if line:
                stack, _, w = line.rpartition(" ")
                want[stack] += int(w)
    if got != want:
        for k in sorted(set(got) | set(want)):
            if got[k] != want[k]:
                sys.exit(f"FAIL: stack {k!r}: pprof {got[k]}, folded {want[k]}")
    print(f"pprof: {len(got)} stacks, {sum(got.values())} ns, as folded")


if __name__ == "__main__":
    main()
