#!/usr/bin/env python3
"""SSE load for Benchmarks/serve and Benchmarks/run: many idle streams (server RSS), and how fast one kill reaches
many streams or many long-polling clients.

  sse_load.py idle  --url http://127.0.0.1:PORT --set demo --key fss_... --pid SERVER_PID --streams 10000
  sse_load.py kill  --url ... --set bench --key fss_... --admin fsa_... --flag f-0500 --streams 1000
  sse_load.py poll  --url ... --set bench --key fss_... --admin fsa_... --flag f-0500 --streams 1000

Standard library only; one thread on epoll. `kill` and `poll` time each client's receipt twice: by the kernel's
receive timestamp of the bytes (SO_TIMESTAMPNS, when the data reached the client's socket: the server's figure) and
by when this one Python thread got round to reading them (which adds its own serial reading of 1,000 sockets, a
few tens of milliseconds). The admin POST is sent on a socket of the same loop, so streams are read while it is
answered. `kill` and `poll` take `--command ARG...` (last) to kill with a program, e.g. `flagctl kill f-0500`,
instead of the admin API; the clock starts just before it runs. Prints one JSON object.
"""

import argparse
import json
import os
import selectors
import socket
import statistics
import struct
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request

# SO_TIMESTAMPNS / SCM_TIMESTAMPNS on Linux (asm-generic/socket.h); the socket module does not export them.
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)


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
        self.kernel_times = []  # wall-clock receive time of each chunk read
        self.raw = False  # a plain HTTP response (long-poll): bytes are only collected
        self.response = None  # for a raw one: (where its body starts, its Content-Length) once the head is in

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
            sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
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
        if not isinstance(stream, Stream):
            stream(key.fileobj)
            continue
        try:
            chunk, ancillary, _, _ = stream.sock.recvmsg(1 << 20, 64)
        except BlockingIOError:
            continue
        if not chunk:
            raise RuntimeError("the server closed a stream")
        for level, kind, data in ancillary:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                seconds, nanoseconds = struct.unpack("qq", data[:16])
                stream.kernel_times.append(seconds + nanoseconds / 1e9)
        if stream.raw:
            stream.buffer += chunk
        else:
            stream.feed(time.monotonic(), chunk)


def stamp(streams):
    """Forgets the receive times so far. Timestamping is switched on when each socket is made: the kernel enables
    it for the machine in deferred work, and a packet that arrives unstamped reports the time it is read instead."""
    time.sleep(0.2)
    for stream in streams:
        stream.kernel_times.clear()


def post_async(selector, url, path, admin, body):
    """Sends an admin POST on a non-blocking socket served by `pump`; returns a dict that gets the status."""
    parsed = urllib.parse.urlsplit(url)
    sock = socket.create_connection((parsed.hostname, parsed.port), timeout=30)
    sock.sendall(
        (f"POST {path} HTTP/1.1\r\nHost: {parsed.netloc}\r\nAuthorization: Bearer {admin}\r\n"
         f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
        + body)
    sock.setblocking(False)
    result = {"buffer": b""}

    def readable(fileobj):
        try:
            chunk = fileobj.recv(65536)
        except BlockingIOError:
            return
        if chunk:
            result["buffer"] += chunk
            if "status" not in result and b"\r\n" in result["buffer"]:
                result["status"] = int(result["buffer"].split(b" ")[1])
                result["at"] = time.monotonic()
        else:
            selector.unregister(fileobj)
            fileobj.close()

    selector.register(sock, selectors.EVENT_READ, readable)
    return result


def trigger_kill(selector, args):
    """Kills `args.flag` through the admin API, or with `args.command` (a program and its arguments, e.g.
    `flagctl kill f-0500`) run on a thread so that streams are read meanwhile; returns a dict that gets the
    status (200 when the program exits 0) and when it came."""
    command = getattr(args, "command", None)
    if not command:
        return post_async(selector, args.url, f"/v1/admin/sets/{args.set}/flags/{args.flag}/kill", args.admin,
                          b'{"reason":"benchmark"}')
    result = {}

    def run():
        finished = subprocess.run(command, capture_output=True, text=True, timeout=60)
        if finished.returncode != 0:
            result["error"] = f"{' '.join(command[:2])} … exited {finished.returncode}: {finished.stderr.strip()}"
        result["at"] = time.monotonic()
        result["status"] = 200 if finished.returncode == 0 else finished.returncode

    threading.Thread(target=run, daemon=True).start()
    return result


def summary(delays):
    def ms(value):
        return round(value * 1000, 2)

    delays = sorted(delays)
    return {"p50Ms": ms(statistics.median(delays)), "p99Ms": ms(delays[max(0, int(len(delays) * 0.99) - 1)]),
            "maxMs": ms(delays[-1])}


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


def time_kill(selector, streams, args, what, arrived):
    """Kills the flag and waits until every stream has the change: `arrived(stream)` gives (monotonic time, kernel
    wall time or None) once it has, else None. Returns the kill's answer time and the delays, in ms."""
    sent_wall = time.time()
    sent = time.monotonic()
    answer = trigger_kill(selector, args)
    arrival, kernel_arrival = {}, {}
    deadline = time.monotonic() + 60
    while len(arrival) < len(streams) or "status" not in answer:
        if time.monotonic() > deadline:
            raise RuntimeError(f"only {len(arrival)} of {len(streams)} {what} within 60 s")
        pump(selector, 1.0)
        for index, stream in enumerate(streams):
            if index in arrival:
                continue
            found = arrived(stream)
            if found is None:
                continue
            at, kernel_at = found
            arrival[index] = at - sent
            if kernel_at is not None:
                kernel_arrival[index] = kernel_at - sent_wall
    if answer["status"] != 200:
        raise RuntimeError(answer.get("error") or f"kill answered {answer['status']}")
    for stream in streams:
        stream.sock.close()
    return {"killAnsweredMs": round((answer["at"] - sent) * 1000, 2),
            "kernel": summary(kernel_arrival.values()), "client": summary(arrival.values())}


def kill(args):
    selector, streams = open_streams(args.url, args.set, args.key, args.streams)
    stamp(streams)
    needle = json.dumps(args.flag).encode()

    def arrived(stream):
        for at, name, data in stream.events:
            if name == "patch" and needle in data:
                # The patch is the only thing sent after the put: its first chunk's kernel time.
                return at, stream.kernel_times[0] if stream.kernel_times else None
        return None

    return {"streams": len(streams), **time_kill(selector, streams, args, "streams saw the kill", arrived)}


def poll(args):
    """`count` long-polls (`?wait=60` with the current ETag) waiting when one flag is killed."""
    parsed = urllib.parse.urlsplit(args.url)
    with urllib.request.urlopen(urllib.request.Request(
            f"{args.url}/v1/sets/{args.set}", headers={"Authorization": f"Bearer {args.key}"}), timeout=30) as response:
        etag = response.headers["ETag"]
    request = (
        f"GET /v1/sets/{args.set}?wait=60 HTTP/1.1\r\nHost: {parsed.netloc}\r\nAuthorization: Bearer {args.key}\r\n"
        f"If-None-Match: {etag}\r\n\r\n").encode()
    selector = selectors.DefaultSelector()
    streams = []
    for _ in range(args.streams):
        sock = socket.create_connection((parsed.hostname, parsed.port), timeout=30)
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        sock.sendall(request)
        sock.setblocking(False)
        stream = Stream(sock)
        stream.raw = True
        selector.register(sock, selectors.EVENT_READ, stream)
        streams.append(stream)
    stamp(streams)
    # Every poll must be waiting before the kill: the server's gauge says so.
    deadline = time.monotonic() + 60
    while True:
        with urllib.request.urlopen(urllib.request.Request(
                f"{args.url}/metrics", headers={"Authorization": f"Bearer {args.admin}"}), timeout=30) as response:
            text = response.read().decode()
        waiting = next((int(float(line.split()[-1])) for line in text.splitlines()
                        if line.startswith("flagserver_waiting_polls ")), 0)
        if waiting >= args.streams:
            break
        if time.monotonic() > deadline:
            raise RuntimeError(f"only {waiting} of {args.streams} long-polls are waiting")
        time.sleep(0.05)

    def arrived(stream):
        if stream.response is None:
            end = stream.buffer.find(b"\r\n\r\n")
            if end < 0:
                return None
            head = bytes(stream.buffer[:end])
            if not head.startswith(b"HTTP/1.1 200"):
                raise RuntimeError(f"a long-poll was answered {head.splitlines()[0]!r}")
            length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), 0)
            stream.response = (end + 4, length)
        start, length = stream.response
        if len(stream.buffer) - start < length:
            return None
        # The document's last chunk.
        return time.monotonic(), stream.kernel_times[-1] if stream.kernel_times else None

    return {"polls": len(streams), **time_kill(selector, streams, args, "long-polls were answered", arrived)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["idle", "kill", "poll"])
    parser.add_argument("--url", required=True)
    parser.add_argument("--set", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--streams", type=int, required=True)
    parser.add_argument("--pid", type=int)
    parser.add_argument("--admin")
    parser.add_argument("--flag")
    parser.add_argument("--command", nargs=argparse.REMAINDER,
                        help="kill with this program and its arguments (last) instead of the admin API")
    args = parser.parse_args()
    result = {"idle": idle, "kill": kill, "poll": poll}[args.mode](args)
    json.dump(result, sys.stdout)
    print()


if __name__ == "__main__":
    main()
