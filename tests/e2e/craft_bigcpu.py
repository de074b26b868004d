#!/usr/bin/env python3
"""Write a large recording from a small one: its events repeated COPIES times, each copy shifted
later in time and every event STEP ns after the previous one (so the engine's periodic eviction
runs on nearly every event), with the first sched switch of each copy on CPU CPU (the issue-11 #6
shape: one record with cpu = 65535).  craft_bigcpu.py IN OUT COPIES CPU STEP_NS [NCPUS]
CPU "every": every event on CPU n % 65536 instead, n its index (issue 36: many distinct CPU ids).
NCPUS: the recording declares that many CPUs (META ncpus, format 1.4)."""
import struct
import sys

src, dst, copies, step = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[5])
every = sys.argv[4] == "every"
cpu = 0 if every else int(sys.argv[4])
ncpus = int(sys.argv[6]) if len(sys.argv) > 6 else 0
data = open(src, "rb").read()
hdr_size = struct.unpack_from("<I", data, 8)[0]
recs, off = [], hdr_size
while off + 8 <= len(data):
    size, typ = struct.unpack_from("<IH", data, off)
    recs.append((typ, bytearray(data[off + 8:off + size])))
    off += size
head = [r for r in recs if r[0] in (1, 2, 3)]
events = [r[1] for r in recs if r[0] == 4]
tail = [r for r in recs if r[0] == 5]
t0 = min(struct.unpack_from("<Q", e, 24)[0] for e in events)
out = bytearray(data[:hdr_size])


def put(typ, payload):
    out.extend(struct.pack("<IHH", len(payload) + 8, typ, 0))
    out.extend(payload)


for typ, p in head:
    if typ == 1 and ncpus:
        p = p + b"ncpus\0%d\0" % ncpus
    put(typ, p)
n = 0
for c in range(copies):
    marked = False
    for e in events:
        e = bytearray(e)
        struct.pack_into("<Q", e, 24, t0 + n * step)
        if every:
            struct.pack_into("<H", e, 4, n % 65536)
        elif not marked and struct.unpack_from("<H", e, 2)[0] == 0x0101:
            struct.pack_into("<H", e, 4, cpu)
            marked = True
        put(4, e)
        n += 1
for typ, p in tail:
    put(typ, p)
put(6, struct.pack("<Q", n))
open(dst, "wb").write(out)
