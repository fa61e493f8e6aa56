#!/usr/bin/env python3
"""SSE load for Benchmarks/serve: many idle streams (server RSS), and how fast one kill reaches many streams.

  sse_load.py idle  --url http://127.0.0.1:PORT --set demo --key fss_... --pid SERVER_PID --streams 10000
  sse_load.py kill  --url ... --set bench --key fss_... --admin fsa_... --flag f-0500 --streams 1000

Standard library only; one thread on epoll, so the client's own delay is part of each figure (it is small next to
the server's: reading a patch is one recv per stream). Prints one JSON object.
"""

import argparse
import json
import os
import selectors
import socket
import statistics
import sys
import time
import urllib.parse
import urllib.request


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


class Stream:
    """One SSE connection: the bytes seen so far and when each event arrived."""

    def __init__(self, sock):
        self.sock = sock
        self.buffer = bytearray()
        self.events = []  # (arrival time, event name, data)

    def feed(self, now, chunk):
        self.buffer += chunk
        while True:
            end = self.buffer.find(b"\n\n")
            if end < 0:
                return
            block, self.buffer = bytes(self.buffer[:end]), self.buffer[end + 2:]
            name, data = None, []
            for line in block.split(b"\n"):
                if line.startswith(b"event:"):
                    name = line[6:].strip().decode()
                elif line.startswith(b"data:"):
                    data.append(line[5:].lstrip())
            if name:
                self.events.append((now, name, b"\n".join(data)))


def open_streams(url, set_name, key, count, batch=250):
    """Opens `count` streams, `batch` at a time (the listen backlog is finite), each until its `put` arrives."""
    parsed = urllib.parse.urlsplit(url)
    request = (
        f"GET /v1/sets/{set_name}/stream HTTP/1.1\r\nHost: {parsed.netloc}\r\nAuthorization: Bearer {key}\r\n"
        "Accept: text/event-stream\r\n\r\n").encode()
    selector = selectors.DefaultSelector()
    streams = []
    while len(streams) < count:
        pending = []
        for _ in range(min(batch, count - len(streams))):
            sock = socket.create_connection((parsed.hostname, parsed.port), timeout=30)
            sock.sendall(request)
            sock.setblocking(False)
            stream = Stream(sock)
            selector.register(sock, selectors.EVENT_READ, stream)
            pending.append(stream)
        deadline = time.monotonic() + 60
        while any(not any(e[1] == "put" for e in s.events) for s in pending):
            if time.monotonic() > deadline:
                raise RuntimeError("streams did not receive their put event within 60 s")
            pump(selector, 1.0)
        streams.extend(pending)
        # Only the header and the put matter here; drop them so that memory is the server's, not ours.
        for stream in pending:
            stream.events.clear()
    return selector, streams


def pump(selector, timeout):
    for key, _ in selector.select(timeout):
        stream = key.data
        try:
            chunk = stream.sock.recv(1 << 20)
        except BlockingIOError:
            continue
        if not chunk:
            raise RuntimeError("the server closed a stream")
        stream.feed(time.monotonic(), chunk)


def idle(args):
    before = rss_kib(args.pid)
    started = time.monotonic()
    selector, streams = open_streams(args.url, args.set, args.key, args.streams)
    opened = time.monotonic() - started
    pump(selector, 2.0)  # let the server settle: nothing should be sent now
    after = rss_kib(args.pid)
    result = {
        "streams": len(streams), "openSeconds": round(opened, 2), "rssBeforeKiB": before, "rssAfterKiB": after,
        "perStreamBytes": round((after - before) * 1024 / len(streams)),
    }
    for stream in streams:
        stream.sock.close()
    return result


def kill(args):
    selector, streams = open_streams(args.url, args.set, args.key, args.streams)
    request = urllib.request.Request(
        f"{args.url}/v1/admin/sets/{args.set}/flags/{args.flag}/kill", data=b'{"reason":"benchmark"}', method="POST",
        headers={"Authorization": f"Bearer {args.admin}", "Content-Type": "application/json"})
    needle = json.dumps(args.flag).encode()
    sent = time.monotonic()
    with urllib.request.urlopen(request, timeout=30) as response:
        if response.status != 200:
            raise RuntimeError(f"kill answered {response.status}")
    answered = time.monotonic() - sent
    arrival = {}
    deadline = time.monotonic() + 60
    while len(arrival) < len(streams):
        if time.monotonic() > deadline:
            raise RuntimeError(f"only {len(arrival)} of {len(streams)} streams saw the kill within 60 s")
        pump(selector, 1.0)
        for index, stream in enumerate(streams):
            if index not in arrival:
                for at, name, data in stream.events:
                    if name == "patch" and needle in data:
                        arrival[index] = at - sent
                        break
    delays = sorted(arrival.values())
    for stream in streams:
        stream.sock.close()

    def ms(value):
        return round(value * 1000, 2)

    return {
        "streams": len(streams), "killAnsweredMs": ms(answered), "p50Ms": ms(statistics.median(delays)),
        "p99Ms": ms(delays[max(0, int(len(delays) * 0.99) - 1)]), "maxMs": ms(delays[-1]),
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["idle", "kill"])
    parser.add_argument("--url", required=True)
    parser.add_argument("--set", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--streams", type=int, required=True)
    parser.add_argument("--pid", type=int)
    parser.add_argument("--admin")
    parser.add_argument("--flag")
    args = parser.parse_args()
    result = idle(args) if args.mode == "idle" else kill(args)
    json.dump(result, sys.stdout)
    print()


if __name__ == "__main__":
    main()
