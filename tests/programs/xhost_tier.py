#!/usr/bin/python3
"""Three tiers over TCP for the join of several hosts' recordings (tests/e2e/gt_xhost.sh).

    xhost_tier.py db ADDR:PORT DEV CGROUP READY
    xhost_tier.py server ADDR:PORT DB_ADDR:DB_PORT READY
    xhost_tier.py proxy ADDR:PORT TO_ADDR:TO_PORT READY
    xhost_tier.py client SERVER_ADDR:PORT TRUTH_JSON

One request each: the client sends a request to the server and waits for its reply; the server
asks the database and waits for its answer; the database reads one 4 KiB block of DEV with
O_DIRECT from inside the blkio group CGROUP that throttles it (tests/e2e/slowdisk.sh), then
answers. The proxy, if any, copies bytes both ways between one client and its target. Each
listener writes READY once it listens. The client writes TRUTH_JSON: its thread, its latency.
"""
import ctypes
import json
import mmap
import os
import socket
import sys
import threading
import time

READ_BYTES = 4096


def endpoint(s):
    host, port = s.rsplit(":", 1)
    return host, int(port)


def listen(addr, ready):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(endpoint(addr))
    ls.listen(4)
    with open(ready + ".tmp", "w") as f:
        f.write("ready\n")
    os.rename(ready + ".tmp", ready)
    return ls


def recv_exact(s, n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise SystemExit("peer closed early")
        data += chunk
    return data


def db(addr, dev, cgroup, ready):
    # the thread joins the throttled group before the timed read (the move sleeps 10-20 ms)
    with open(os.path.join(cgroup, "tasks"), "w") as f:
        f.write(str(threading.get_native_id()))
    ctypes.CDLL(None, use_errno=True).mlockall(1)  # MCL_CURRENT: no page read back at 3 IOPS
    fd = os.open(dev, os.O_RDONLY | os.O_DIRECT)
    size = os.lseek(fd, 0, os.SEEK_END)
    blocks = (size - (1 << 20)) // READ_BYTES
    offset = (1 << 20) + (os.getpid() * 7 % (blocks - 1)) * READ_BYTES
    buf = mmap.mmap(-1, READ_BYTES)
    ls = listen(addr, ready)
    c, _ = ls.accept()
    recv_exact(c, 8)
    os.preadv(fd, [buf], offset)
    c.sendall(b"D" * 300)
    c.recv(1)  # the server's end of the connection


def server(addr, db_addr, ready):
    ls = listen(addr, ready)
    c, _ = ls.accept()
    recv_exact(c, 16)
    d = socket.create_connection(endpoint(db_addr))
    d.sendall(b"Q" * 8)
    recv_exact(d, 300)
    c.sendall(b"S" * 200)
    d.close()
    c.recv(1)


def proxy(addr, to, ready):
    ls = listen(addr, ready)
    c, _ = ls.accept()
    t = socket.create_connection(endpoint(to))

    def pump(a, b):
        while True:
            data = a.recv(65536)
            if not data:
                b.shutdown(socket.SHUT_WR)
                return
            b.sendall(data)

    th = threading.Thread(target=pump, args=(t, c), daemon=True)
    th.start()
    pump(c, t)
    th.join(5)


def client(server_addr, truth):
    s = socket.create_connection(endpoint(server_addr))
    t0 = time.monotonic_ns()
    s.sendall(b"R" * 16)
    recv_exact(s, 200)
    t1 = time.monotonic_ns()
    s.close()
    with open(truth, "w") as f:
        json.dump({"tid": threading.get_native_id(), "pid": os.getpid(),
                   "start_ns": t0, "latency_ns": t1 - t0}, f)


def main():
    roles = {"db": (db, 4), "server": (server, 3), "proxy": (proxy, 3), "client": (client, 2)}
    if len(sys.argv) < 2 or sys.argv[1] not in roles or len(sys.argv) != 2 + roles[sys.argv[1]][1]:
        sys.exit(__doc__)
    fn = roles[sys.argv[1]][0]
    fn(*sys.argv[2:])


if __name__ == "__main__":
    main()
