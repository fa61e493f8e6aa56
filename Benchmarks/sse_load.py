#!/usr/bin/env python3
"""SSE load for Benchmarks/serve and Benchmarks/run: many idle streams (server RSS), and how fast one kill reaches
many streams or many long-polling clients.

  sse_load.py idle      --url http://127.0.0.1:PORT --set demo --key fss_... --pid SERVER_PID --streams 10000
  sse_load.py kill      --url ... --set bench --key fss_... --admin fsa_... --flag f-0500 --streams 1000
  sse_load.py longpoll  --url ... --set bench --key fss_... --admin fsa_... --flag f-0500 --streams 1000

`kill` and `longpoll` take `--command ARG...` (last) to kill with a program, e.g. `flagctl kill f-0500`, instead of
the admin API; the clock starts just before it runs.

Standard library only; one thread on epoll, so the client's own delay is part of each figure (it is small next to
the server's: reading a patch is one recv per stream). Prints one JSON object.
"""

import argparse
import json
import os
import re
import selectors
import socket
import statistics
import subprocess
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


def trigger_kill(url, set_name, flag, admin, command):
    """Kills `flag` with `command` (a program and its arguments) or, without one, through the admin API."""
    if command:
        finished = subprocess.run(command, capture_output=True, text=True, timeout=60)
        if finished.returncode != 0:
            raise RuntimeError(f"{' '.join(command[:2])} … exited {finished.returncode}: {finished.stderr.strip()}")
        return
    request = urllib.request.Request(
        f"{url}/v1/admin/sets/{set_name}/flags/{flag}/kill", data=b'{"reason":"benchmark"}', method="POST",
        headers={"Authorization": f"Bearer {admin}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        if response.status != 200:
            raise RuntimeError(f"kill answered {response.status}")


def summary(count, answered, delays):
    def ms(value):
        return round(value * 1000, 2)

    delays = sorted(delays)
    return {
        "streams": count, "killAnsweredMs": ms(answered), "p50Ms": ms(statistics.median(delays)),
        "p99Ms": ms(delays[max(0, int(len(delays) * 0.99) - 1)]), "maxMs": ms(delays[-1]),
    }


def kill(args):
    selector, streams = open_streams(args.url, args.set, args.key, args.streams)
    needle = json.dumps(args.flag).encode()
    sent = time.monotonic()
    trigger_kill(args.url, args.set, args.flag, args.admin, args.command)
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
    for stream in streams:
        stream.sock.close()
    return summary(len(streams), answered, arrival.values())


def metric(url, admin, name):
    request = urllib.request.Request(f"{url}/metrics", headers={"Authorization": f"Bearer {admin}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        for line in response.read().decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
    raise RuntimeError(f"/metrics has no {name}")


class Poll:
    """One long poll: a `GET ?wait=` with the current tag, answered once the set changes."""

    def __init__(self, sock):
        self.sock = sock
        self.buffer = bytearray()
        self.arrived = None  # when the whole answer was read
        self.status = None
        self.tag = None

    def feed(self, now, chunk):
        self.buffer += chunk
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return
        head = bytes(self.buffer[:end]).decode("latin-1")
        length = re.search(r"(?im)^content-length:\s*(\d+)", head)
        if not length:
            raise RuntimeError(f"a long poll was answered without Content-Length: {head.splitlines()[0]}")
        if len(self.buffer) >= end + 4 + int(length.group(1)):
            self.status = int(head.split()[1])
            tag = re.search(r'(?im)^etag:\s*"?(\d+)', head)
            self.tag = int(tag.group(1)) if tag else None
            self.arrived = now


def longpoll(args):
    """`args.streams` clients long-poll the set with its current tag; one kill; when each has read the new
    document. A client has applied the kill when it holds the whole new document (its tag is newer)."""
    parsed = urllib.parse.urlsplit(args.url)
    with urllib.request.urlopen(urllib.request.Request(
            f"{args.url}/v1/sets/{args.set}", headers={"Authorization": f"Bearer {args.key}"}), timeout=30) as answer:
        known = int(answer.headers["ETag"].strip('"'))
        answer.read()
    request = (
        f"GET /v1/sets/{args.set}?wait=120 HTTP/1.1\r\nHost: {parsed.netloc}\r\nAuthorization: Bearer {args.key}\r\n"
        f'If-None-Match: "{known}"\r\n\r\n').encode()
    baseline = metric(args.url, args.admin, "flagserver_waiting_polls")
    selector = selectors.DefaultSelector()
    polls = []
    for start in range(0, args.streams, 250):
        for _ in range(min(250, args.streams - start)):
            sock = socket.create_connection((parsed.hostname, parsed.port), timeout=30)
            sock.sendall(request)
            sock.setblocking(False)
            poll = Poll(sock)
            selector.register(sock, selectors.EVENT_READ, poll)
            polls.append(poll)
    # Every poll must be parked in the server before the kill, or some would be answered at once and look fast.
    deadline = time.monotonic() + 60
    while metric(args.url, args.admin, "flagserver_waiting_polls") < baseline + len(polls):
        if time.monotonic() > deadline:
            raise RuntimeError("the long polls were not all waiting within 60 s")
        pump_polls(selector, 0.05)
    if any(poll.arrived for poll in polls):
        raise RuntimeError("a long poll was answered before the set changed")
    sent = time.monotonic()
    trigger_kill(args.url, args.set, args.flag, args.admin, args.command)
    answered = time.monotonic() - sent
    deadline = time.monotonic() + 60
    while not all(poll.arrived for poll in polls):
        if time.monotonic() > deadline:
            done = sum(1 for poll in polls if poll.arrived)
            raise RuntimeError(f"only {done} of {len(polls)} long polls were answered within 60 s")
        pump_polls(selector, 1.0)
    for poll in polls:
        poll.sock.close()
        if poll.status != 200 or poll.tag is None or poll.tag <= known:
            raise RuntimeError(f"a long poll was answered {poll.status} with tag {poll.tag}, not 200 with a newer one")
    return summary(len(polls), answered, [poll.arrived - sent for poll in polls])


def pump_polls(selector, timeout):
    for key, _ in selector.select(timeout):
        poll = key.data
        try:
            chunk = poll.sock.recv(1 << 20)
        except BlockingIOError:
            continue
        if not chunk:
            raise RuntimeError("the server closed a long poll")
        poll.feed(time.monotonic(), chunk)
        if poll.arrived:
            selector.unregister(poll.sock)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["idle", "kill", "longpoll"])
    parser.add_argument("--url", required=True)
    parser.add_argument("--set", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--streams", type=int, required=True)
    parser.add_argument("--pid", type=int)
    parser.add_argument("--admin")
    parser.add_argument("--flag")
    parser.add_argument("--command", nargs=argparse.REMAINDER, help="kill with this program instead of the API")
    args = parser.parse_args()
    result = {"idle": idle, "kill": kill, "longpoll": longpoll}[args.mode](args)
    json.dump(result, sys.stdout)
    print()


if __name__ == "__main__":
    main()
