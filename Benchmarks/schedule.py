#!/usr/bin/env python3
"""Change requests and scheduled changes (docs/reviews.md): how late a scheduled change reaches a client, and what
applying a change request costs against writing the same change directly. Not part of CI.

  schedule.py --bin .build/release [--changes 100]
  schedule.py --bin .build/bench-release/release --replicas 3 [--changes 100]   (under Tests/postgres/with-postgres)

Lateness: --changes changes, each adding one flag to the demo set, are proposed with `?propose=…&at=…`, their times
0.137 s apart from three seconds on; an SSE stream of the set (one per replica with --replicas) notes
when the patch naming each flag arrives, on this machine's clock, which is the server's. The lateness is that
arrival minus the change's time: the scheduler's wait, the apply and the fan-out together. With --replicas N the
changes are proposed through replica 1 and every replica looks for due changes; each stream's arrivals count.

Apply cost (SQLite only): on a set of 10,000 flags, 30 default changes written directly, then 30 proposed, approved
by a second person, and applied; the apply request's time is set beside the direct write's. Prints Markdown tables.
Standard library only.
"""

import argparse
import json
import os
import select
import socket
import statistics
import sys
import time
import urllib.parse

import replicas
import sse_load
import writes


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def open_stream(base, key):
    """A raw SSE connection to the demo set: a socket and a `sse_load.Stream` fed with wall-clock times."""
    parsed = urllib.parse.urlsplit(base)
    sock = socket.create_connection((parsed.hostname, parsed.port), timeout=30)
    sock.sendall((f"GET /v1/sets/demo/stream HTTP/1.1\r\nHost: {parsed.netloc}\r\nAuthorization: Bearer {key}\r\n"
                  "Accept: text/event-stream\r\n\r\n").encode())
    sock.setblocking(False)
    return sock, sse_load.Stream(sock)


def schedule(server, count, start):
    """Proposes `count` new flags, due `start` + 0.137 s × n (a spacing that does not keep step with the scheduler's
    quarter of a second, so that the dues fall at every point of its cycle); their times by flag key."""
    due = {}
    for n in range(count):
        key = f"scheduled-{n:03d}"
        at = start + 0.137 * n
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at)) + f".{int(at % 1 * 1000):03d}Z"
        query = urllib.parse.urlencode({"propose": f"add {key}", "at": stamp})
        server.request("PUT", f"/v1/admin/sets/demo/flags/{key}?{query}",
                       {"flag": {"type": "bool", "kind": "ops", "default": True}})
        due[key] = at
    return due


def arrivals(streams, due, timeout):
    """Reads the streams until each has seen a patch naming every key of `due`: the lateness of each, in ms."""
    late = []
    pending = [set(due) for _ in streams]
    deadline = time.time() + timeout
    while any(pending) and time.time() < deadline:
        ready, _, _ = select.select([sock for sock, _ in streams], [], [], 0.5)
        now = time.time()
        for index, (sock, stream) in enumerate(streams):
            if sock not in ready:
                continue
            chunk = sock.recv(1 << 20)
            if not chunk:
                raise RuntimeError("the server closed a stream")
            before = len(stream.events)
            stream.feed(now, chunk)
            for arrived, name, data in stream.events[before:]:
                if name != "patch":
                    continue
                for key in list(pending[index]):
                    if json.dumps(key).encode() in data:
                        pending[index].discard(key)
                        late.append((arrived - due[key]) * 1000)
    if any(pending):
        raise RuntimeError(f"{sum(map(len, pending))} patches did not arrive within {timeout} s")
    return late


def lateness_sqlite(args):
    server = writes.Server(os.path.abspath(args.bin), args.port)
    try:
        key = server.sdk_key("demo")
        stream = open_stream(server.base, key)
        due = schedule(server, args.changes, time.time() + 3)
        late = arrivals([stream], due, timeout=30 + args.changes)
        apply = apply_cost(server)
    finally:
        server.stop()
    return late, apply


def lateness_replicas(args):
    run = replicas.Run(argparse.Namespace(bin=os.path.abspath(args.bin)))
    try:
        servers, key = replicas.start_on_one_database(run, args.replicas, args.port, "flagstaff_schedule")
        streams = [open_stream(server.base, key) for server in servers]
        due = schedule(servers[0], args.changes, time.time() + 3)
        return arrivals(streams, due, timeout=30 + args.changes)
    finally:
        run.processes.stop_all()
        if run.postgres:
            run.postgres.close()


def apply_cost(server, runs=30):
    """Direct default changes against applied change requests of the same change, on a set of 10,000 flags (ms)."""
    document = writes.set_document("big", 10_000, rules=True)
    server.request("POST", "/v1/admin/sets", {"name": "big", "document": document})
    _, body = server.request("POST", "/v1/admin/tokens", {"name": "reviewer", "role": "editor"})
    reviewer = json.loads(body)["token"]
    target = "/v1/admin/sets/big/flags/f-00042/default"
    direct, applied = [], []
    for n in range(runs):
        elapsed, _ = server.request("POST", target, {"valueText": "true" if n % 2 else "false"})
        direct.append(elapsed)
    for n in range(runs):
        # The direct writes left the default true: each applied request flips it.
        _, body = server.request("POST", f"{target}?propose=flip", {"valueText": "true" if n % 2 else "false"})
        change = json.loads(body)["changeRequest"]
        server.request("POST", f"/v1/admin/sets/big/changes/{change}/approve", {}, token=reviewer)
        elapsed, _ = server.request("POST", f"/v1/admin/sets/big/changes/{change}/apply", {})
        applied.append(elapsed)
    return direct, applied


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True, help="the directory of a release flagserver")
    parser.add_argument("--changes", type=int, default=100)
    parser.add_argument("--replicas", type=int, default=0)
    parser.add_argument("--port", type=int, default=18600)
    args = parser.parse_args()
    if args.replicas:
        late = lateness_replicas(args)
        where = f"{args.replicas} replicas on PostgreSQL, a stream on each"
        apply = None
    else:
        late, apply = lateness_sqlite(args)
        where = "one server on SQLite"
    print(f"| where | changes | p50 | p99 | max |\n|---|---:|---:|---:|---:|")
    print(f"| {where} | {args.changes} | {statistics.median(late):.0f} ms | {percentile(late, 0.99):.0f} ms | "
          f"{max(late):.0f} ms |")
    if apply:
        direct, applied = apply
        ratio = statistics.median(applied) / statistics.median(direct)
        print("\n| 10,000 flags | median | p99 |\n|---|---:|---:|")
        print(f"| direct write | {statistics.median(direct):.1f} ms | {percentile(direct, 0.99):.1f} ms |")
        print(f"| apply of a change request | {statistics.median(applied):.1f} ms | {percentile(applied, 0.99):.1f} ms"
              f" ({ratio:.2f}×) |")


if __name__ == "__main__":
    sys.exit(main())
