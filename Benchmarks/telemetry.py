#!/usr/bin/env python3
"""What client telemetry costs the server, and what it buys. Prints Markdown tables for BENCHMARKS.md.

  1. Ingestion. N SSE streams of the demo set (1,000) are opened with an SDK key; the `Flagstaff-Instance` header
     of each stream's answer names an instance. Every instance posts one report per round (2 rounds) to
     `POST /v1/sets/demo/telemetry`: a TelemetryReport with the demo set's seven flags in its counts. The reports
     go out over 64 kept-alive connections spread over 4 loopback source addresses, as fast as the server answers.
     Figures: reports accepted per second, p50/p99 of one POST (request written → answer read by this one-threaded
     client, with 64 in flight), the server's CPU time per report, and every answer by status.
  2. A confirmed kill. Each round (3) kills or restores `new-checkout` through the admin API; every instance posts
     a report at the new version as soon as its stream delivers the patch, and once the write has answered, the
     propagation route (`GET /v1/admin/sets/demo/versions/{n}/propagation`) is polled every 50 ms (`flagctl kill
     --wait` polls every 250 ms) until applied == active == N. Figures: the route's `written.ms` (the server's
     commit → its last stream write queued), kill sent → last patch read, → last report accepted, → the route
     confirms 100 % (wall clock), the route's p50Ms/p99Ms (commit → report received, server clock), and how long
     one call of the route takes.
  3. Admin writes beside telemetry: 200 kills and restores on the ios-prod set (no streams: the answer is the
     commit), p50/p99/max of their answers alone, while the propagation route is polled every 250 ms as
     `flagctl kill --wait` does, and while reports flow in as fast as the instances' limit allows.
  4. Over the limits: 3 more reports per instance at once; the answers, the refusals by reason from /metrics, and
     the server's CPU time per report, accepted or refused.

With --before DIR, first: serving is not slower. A flagserver of an earlier commit (the one before telemetry, or
the one before signing) and one of --bin run side by side and are measured in alternation (ABAB,
--runs rounds): 304 polls with wrk -t2 -c64 -d10s (suite.wrk, as Benchmarks/run), the same with a
`Flagstaff-Instance: new` header (a poller asking for an id; ignored by a server without telemetry), 200s of the whole
document, and a kill of `new-checkout` → N streams (sse_load.kill: kernel receive times, then a restore). Each figure
is the median over the rounds with its range; after/before is the median of the rounds' ratios. The server's CPU time
per request (from /proc) is steadier than req/s on a shared machine.

  telemetry.py --bin DIR [--before DIR] [--quick] [--port-base 18600] [--streams N] [--runs N]

--bin and --before are directories holding a flagserver (or the flagserver itself), e.g.
  git worktree add /tmp/bench-before 2cfcd74
  (cd /tmp/bench-before && swift build -c release --product flagserver --scratch-path /tmp/bench-before/.build)
  swift build -c release --product flagserver --scratch-path /tmp/bench-head
  python3 Benchmarks/telemetry.py --bin /tmp/bench-head/release --before /tmp/bench-before/.build/release

Rate limits (docs/telemetry.md): an instance may send a burst of 5 reports, then one per 5 s; a key 10,000 a second
(burst 10,000; 2,000 before the fix of 2026-12-02); a source address 1,000 a second, hence 4 addresses. With 1,000
instances parts 1 and 2 stay within them (5 reports per instance; 2,000 reports at once in part 1), part 3 sends
each instance one report per 5.5 s, and part 4 goes over them on purpose. With more instances (--streams 10000) the
key's budget may show: every answer is counted by status, and a report refused with 429 during a kill is sent again
after its Retry-After, as a client would, so that a confirmation takes at least N / budget seconds.

--quick (CI smoke check, seconds): 100 streams, 1 round of reports, 1 kill, no parts 3 and 4, and with --before
1 round of 1 s wrk. Exits non-zero when a part breaks: a server does not start, a stream gets no instance id, a
report is refused for anything but a rate limit, or propagation does not confirm 100 % within 60 s (20 s with
--quick). Ports PORT_BASE (parts 1–4) and, with --before, PORT_BASE+1 and +2. Standard library only; reuses
suite.py's Servers and wrk, sse_load.kill, and replicas.py's CPU and machine readers.
"""

import argparse
import asyncio
import json
import math
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import replicas  # noqa: E402
import sse_load  # noqa: E402
import suite  # noqa: E402

SET = "demo"
FLAG = "new-checkout"
OTHER_SET = "ios-prod"  # admin writes timed beside telemetry go here: no streams, so the answer is the commit alone
POLL_INTERVAL = 0.05
WAIT_POLL_INTERVAL = 0.25  # flagctl kill --wait's
OPERATORS = ["eq", "neq", "in", "not_in", "contains", "starts_with", "ends_with", "matches", "lt", "lte", "gt",
             "gte", "semver_eq", "semver_lt", "semver_lte", "semver_gt", "semver_gte", "before", "after", "exists",
             "not_exists", "in_cohort"]
# What an app evaluating the demo set might count in a minute: flag → variant ("" for none) → reason → count.
COUNTS = {"new-checkout": {"": {"TARGETING_MATCH": 12, "DEFAULT": 40}}, "checkout-button": {"green": {"SPLIT": 9},
          "orange": {"SPLIT": 8}}, "payments-enabled": {"": {"STATIC": 52}}, "ios-widgets": {"": {"DEFAULT": 3}},
          "home-layout": {"large-screens": {"TARGETING_MATCH": 20}}, "api-rate-limit": {"": {"STATIC": 1}},
          "dark-mode": {"": {"TARGETING_MATCH": 5}}}


class Failure(Exception):
    """A part broke: the run is not valid."""


def log(message):
    print(f"telemetry: {message}", file=sys.stderr, flush=True)


def ms(seconds):
    return round(seconds * 1000, 1)


def percentiles(seconds):
    """p50, p99 and max of durations in seconds, in ms (nearest rank)."""
    ordered = sorted(seconds)
    if not ordered:
        return {"p50": None, "p99": None, "max": None}
    rank = max(0, math.ceil(len(ordered) * 0.99) - 1)
    return {"p50": ms(statistics.median(ordered)), "p99": ms(ordered[rank]), "max": ms(ordered[-1])}


def report_body(instance, version):
    return json.dumps({"instance": instance, "sdk": {"name": "flagstaff-bench", "version": "1.0.0"},
                       "app": {"name": "telemetry.py", "version": "1.0.0"}, "version": version,
                       "capabilities": {"schema": 1, "operators": OPERATORS}, "counts": COUNTS},
                      separators=(",", ":")).encode()


# ---- HTTP on asyncio ----


class Connection(asyncio.Protocol):
    """One kept-alive HTTP/1.1 connection, one request at a time; answers are framed by Content-Length."""

    def __init__(self):
        self.transport = None
        self.buffer = bytearray()
        self.waiter = None

    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        self.buffer += data
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0 or self.waiter is None:
            return
        lines = bytes(self.buffer[:end]).decode("latin-1").split("\r\n")
        fields = (line.partition(":") for line in lines[1:])
        headers = {name.strip().lower(): value.strip() for name, _, value in fields}
        length = int(headers.get("content-length", 0))
        if len(self.buffer) < end + 4 + length:
            return
        body = bytes(self.buffer[end + 4:end + 4 + length])
        del self.buffer[:end + 4 + length]
        waiter, self.waiter = self.waiter, None
        if not waiter.done():  # cancelled when the run stops with a request in flight
            waiter.set_result((int(lines[0].split()[1]), headers, body))

    def connection_lost(self, error):
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(ConnectionError("the server closed the connection"))

    async def request(self, method, path, token, body=b""):
        self.waiter = asyncio.get_running_loop().create_future()
        self.transport.write(
            (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
             f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body)
        return await self.waiter


async def connect(port, source="127.0.0.1", protocol=Connection):
    _, connection = await asyncio.get_running_loop().create_connection(
        protocol, "127.0.0.1", port, local_addr=(source, 0))
    return connection


class Stream(asyncio.Protocol):
    """One SSE stream of the set: its instance id, the version it has, and a callback for each patch."""

    def __init__(self):
        self.transport = None
        self.buffer = bytearray()
        self.head = None
        self.instance = None
        self.version = None
        self.on_patch = None
        self.ready = asyncio.get_running_loop().create_future()

    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        self.buffer += data
        if self.head is None:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            self.head = bytes(self.buffer[:end]).decode("latin-1").split("\r\n")
            del self.buffer[:end + 4]
            if not self.head[0].startswith("HTTP/1.1 200"):
                self.ready.set_exception(Failure(f"a stream was answered {self.head[0]!r}"))
                return
            for line in self.head[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "flagstaff-instance":
                    self.instance = value.strip()
        while (end := self.buffer.find(b"\n\n")) >= 0:
            event, version = None, None
            for line in bytes(self.buffer[:end]).split(b"\n"):
                if line.startswith(b"event:"):
                    event = line[6:].strip()
                elif line.startswith(b"id:"):
                    version = int(line[3:])
            del self.buffer[:end + 2]
            if event == b"put":
                self.version = version
                self.ready.set_result(True)
            elif event == b"patch":
                self.version = version
                if self.on_patch:
                    self.on_patch(self, version)

    def connection_lost(self, error):
        if not self.ready.done():
            self.ready.set_exception(Failure("the server closed a stream before its put"))


async def open_streams(port, key, count, batch=200):
    """`count` streams of the set, `batch` at a time (the listen backlog is finite), each until its `put`."""
    request = (f"GET /v1/sets/{SET}/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n"
               "Accept: text/event-stream\r\n\r\n").encode()
    streams = []
    while len(streams) < count:
        pending = [await connect(port, protocol=Stream) for _ in range(min(batch, count - len(streams)))]
        for stream in pending:
            stream.transport.write(request)
        await asyncio.wait_for(asyncio.gather(*(stream.ready for stream in pending)), 60)
        streams += pending
    missing = sum(1 for stream in streams if not stream.instance)
    if missing:
        raise Failure(f"{missing} of {count} streams opened with an SDK key got no Flagstaff-Instance header")
    return streams


class Reporter:
    """Reports posted over kept-alive connections spread over loopback source addresses, as fast as they are
    answered. `submit` gives (status, Retry-After, sent, answered), times on time.perf_counter."""

    def __init__(self, port, key, connections, sources):
        self.port, self.key = port, key
        self.sources = [f"127.0.0.{1 + index}" for index in range(sources)]
        self.count = connections
        self.queue = asyncio.Queue()
        self.workers = []

    async def start(self):
        for index in range(self.count):
            connection = await connect(self.port, self.sources[index % len(self.sources)])
            self.workers.append(asyncio.ensure_future(self.work(connection, index)))

    def submit(self, body):
        future = asyncio.get_running_loop().create_future()
        self.queue.put_nowait((body, future))
        return future

    async def work(self, connection, index):
        path = f"/v1/sets/{SET}/telemetry"
        while True:
            body, future = await self.queue.get()
            sent = time.perf_counter()
            try:
                status, headers, _ = await connection.request("POST", path, self.key, body)
            except ConnectionError:  # closed while idle (idleTimeoutSeconds): once more on a new connection
                connection = await connect(self.port, self.sources[index % len(self.sources)])
                sent = time.perf_counter()
                status, headers, _ = await connection.request("POST", path, self.key, body)
            future.set_result((status, headers.get("retry-after"), sent, time.perf_counter()))

    def stop(self):
        for worker in self.workers:
            worker.cancel()


# ---- part 1: ingestion ----


async def ingestion(server_pid, streams, reporter, rounds):
    """`rounds` rounds of one report per instance, each round queued at once."""
    results = []
    cpu_before = replicas.cpu_seconds([server_pid])
    started = time.perf_counter()
    for _ in range(rounds):
        results += await asyncio.gather(*(reporter.submit(report_body(s.instance, s.version)) for s in streams))
    wall = time.perf_counter() - started
    cpu = replicas.cpu_seconds([server_pid]) - cpu_before
    statuses = Counter(status for status, _, _, _ in results)
    unexpected = {status: count for status, count in statuses.items() if status not in (204, 429)}
    if unexpected:
        raise Failure(f"reports refused with {unexpected}")
    accepted = statuses[204]
    return {"reports": len(results), "statuses": dict(statuses), "seconds": round(wall, 3),
            "acceptedPerSecond": round(accepted / wall), "latency": percentiles([a - s for _, _, s, a in results]),
            # None when the server's CPU time moved less than a clock tick (10 ms): too few reports to tell.
            "serverCpuMicrosecondsPerReport": round(cpu / len(results) * 1e6, 1) if cpu else None}


# ---- part 2: a confirmed kill ----


async def confirmed_write(run, action):
    """Kills or restores the flag; every instance reports the new version when its patch arrives; polls the
    propagation route until every active instance has applied it."""
    streams, reporter = run.streams, run.reporter
    base = {stream.version for stream in streams}
    if len(base) != 1:
        raise Failure(f"the streams are at different versions: {sorted(base)}")
    target = base.pop() + 1
    patch_read, accepted, refused, reports = [], [], Counter(), []

    async def report(stream, version):
        while True:
            status, retry_after, _, answered = await reporter.submit(report_body(stream.instance, version))
            if status == 204:
                accepted.append(answered)
                return
            refused[status] += 1
            if status != 429:
                raise Failure(f"a report at v{version} was answered {status}")
            await asyncio.sleep(float(retry_after or 1))

    def on_patch(stream, version):
        if version >= target:
            patch_read.append(time.perf_counter())
            reports.append(asyncio.ensure_future(report(stream, version)))

    for stream in streams:
        stream.on_patch = on_patch
    sent = time.perf_counter()
    status, _, body = await run.admin.request(
        "POST", f"/v1/admin/sets/{SET}/flags/{FLAG}/{action}", run.token, b'{"reason":"benchmark"}')
    answered = time.perf_counter()
    if status != 200 or json.loads(body)["version"] != target:
        raise Failure(f"{action} answered {status}: {body[:300]!r} (expected version {target})")
    route, calls = f"/v1/admin/sets/{SET}/versions/{target}/propagation", []
    while True:
        started = time.perf_counter()
        status, _, body = await run.poller.request("GET", route, run.token)
        calls.append(time.perf_counter() - started)
        if status != 200:
            raise Failure(f"the propagation route answered {status}: {body[:300]!r}")
        answer = json.loads(body)
        if answer["active"] == len(streams) and answer["applied"] == answer["active"]:
            confirmed = time.perf_counter()
            break
        if time.perf_counter() - sent > run.timeout:
            raise Failure(f"propagation of v{target} never confirmed: applied {answer['applied']} of "
                          f"{answer['active']} active after {run.timeout} s (lagging, first: {answer['lagging'][:3]})")
        await asyncio.sleep(POLL_INTERVAL)
    await asyncio.gather(*reports)
    for stream in streams:
        stream.on_patch = None
    return {"action": action, "version": target, "answeredMs": ms(answered - sent),
            "lastPatchReadMs": ms(max(patch_read) - sent), "lastReportAcceptedMs": ms(max(accepted) - sent),
            "confirmedMs": ms(confirmed - sent), "routeCalls": len(calls), "routeCall": percentiles(calls),
            "refused": dict(refused), "written": answer["written"], "p50Ms": answer["p50Ms"],
            "p99Ms": answer["p99Ms"], "active": answer["active"], "applied": answer["applied"]}


# ---- part 3: admin writes beside telemetry ----


async def timed_writes(run, count, background=None):
    """`count` kills and restores of a flag of OTHER_SET, one at a time and 20 ms apart, while `background` runs."""
    task = asyncio.ensure_future(background()) if background else None
    times = []
    try:
        for index in range(count):
            started = time.perf_counter()
            status, _, body = await run.admin.request(
                "POST", f"/v1/admin/sets/{OTHER_SET}/flags/{FLAG}/{'kill' if index % 2 == 0 else 'restore'}",
                run.token, b'{"reason":"benchmark"}')
            times.append(time.perf_counter() - started)
            if status != 200:
                raise Failure(f"a write to {OTHER_SET} answered {status}: {body[:300]!r}")
            await asyncio.sleep(0.02)
    finally:
        if task:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
    return percentiles(times)


async def writes_beside_telemetry(run, count):
    """Admin writes alone, while the propagation route is polled as `flagctl kill --wait` polls it, and while
    reports flow as fast as the instances' limit allows (each instance once per 5.5 s; at most 1,800 a second)."""
    route = f"/v1/admin/sets/{SET}/versions/{run.streams[0].version}/propagation"
    rate = min(len(run.streams) / 5.5, 1_800)
    statuses = Counter()

    async def poll():
        while True:
            await run.poller.request("GET", route, run.token)
            await asyncio.sleep(WAIT_POLL_INTERVAL)

    async def report():
        started, sent = time.perf_counter(), 0
        while True:
            await asyncio.sleep(max(0.0, started + sent / rate - time.perf_counter()))
            stream = run.streams[sent % len(run.streams)]
            future = run.reporter.submit(report_body(stream.instance, stream.version))
            future.add_done_callback(lambda done: statuses.update([done.result()[0]]))
            sent += 1

    return {"alone": await timed_writes(run, count), "routePolled": await timed_writes(run, count, poll),
            "reportsFlowing": await timed_writes(run, count, report), "reportsPerSecond": round(rate),
            "reportAnswers": dict(statuses)}


# ---- the telemetry run ----


class TelemetryRun:
    """A flagserver of --bin on a fresh data directory, N streams of the demo set, and the report connections."""

    def __init__(self, args, work):
        self.args = args
        self.timeout = 20 if args.quick else 60
        self.servers = suite.Servers(args.bin, work, args.port_base, args.streams + 2_000)
        self.token = self.servers.admin

    async def measure(self):
        args, port = self.args, self.args.port_base
        key = self.servers.sdk_key(SET)
        log(f"{args.streams:,} streams, {args.rounds} round(s) of reports, {args.kills} kill(s)")
        self.streams = await open_streams(port, key, args.streams)
        self.reporter = Reporter(port, key, args.connections, args.sources)
        await self.reporter.start()
        self.admin, self.poller = await connect(port), await connect(port)
        try:
            ingest = await ingestion(self.servers.server.pid, self.streams, self.reporter, args.rounds)
            writes = []
            for index in range(args.kills):
                await asyncio.sleep(1.0)  # the key's and addresses' budgets refill
                writes.append(await confirmed_write(self, "kill" if index % 2 == 0 else "restore"))
                log(f"  {writes[-1]['action']} v{writes[-1]['version']}: confirmed in {writes[-1]['confirmedMs']} ms")
            beside = await writes_beside_telemetry(self, args.timed_writes) if args.timed_writes else None
            over = None
            if args.over_rounds:
                before = self.telemetry_metrics()
                over = await ingestion(self.servers.server.pid, self.streams, self.reporter, args.over_rounds)
                after = self.telemetry_metrics()
                over["dropped"] = {name.split('"')[1]: int(value - before.get(name, 0)) for name, value in after.items()
                                   if name.startswith("flagserver_telemetry_dropped") and value > before.get(name, 0)}
            metrics = self.telemetry_metrics()
        finally:
            self.reporter.stop()
            for connection in [self.admin, self.poller] + self.streams:
                connection.transport.close()
        return {"ingestion": ingest, "writes": writes, "beside": beside, "overLimits": over, "metrics": metrics}

    def telemetry_metrics(self):
        _, _, body = self.servers.request("GET", "/metrics", self.token)
        return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in body.decode().splitlines()
                if line.startswith("flagserver_telemetry")}

    def stop(self):
        self.servers.stop()


def answers(statuses):
    """`{204: 1000, 429: 3}` → `1,000× 204, 3× 429`."""
    return ", ".join(f"{count:,}× {status}" for status, count in sorted(statuses.items()))


def print_telemetry(result, args):
    ingest = result["ingestion"]
    print(f"### Telemetry: {args.streams:,} instances, {args.connections} report connections from "
          f"{args.sources} source address(es)\n")
    print("| figure | value |\n|---|---:|")
    print(f"| reports accepted per second ({ingest['reports']:,} reports, {args.rounds} round(s)) | "
          f"{ingest['acceptedPerSecond']:,} |")
    print(f"| POST latency p50 / p99 / max | {ingest['latency']['p50']} / {ingest['latency']['p99']} / "
          f"{ingest['latency']['max']} ms |")
    cpu = ingest["serverCpuMicrosecondsPerReport"]
    print(f"| server CPU per report | {f'{cpu} µs' if cpu else 'below a clock tick'} |")
    print(f"| answers | {answers(ingest['statuses'])} |")
    writes = result["writes"]
    if writes:
        def cell(key):
            values = [write[key] for write in writes]
            return f"{statistics.median(values)}" + (f" ({min(values)}–{max(values)})" if len(values) > 1 else "")

        written = [write["written"]["ms"] for write in writes if write["written"]]
        print(f"\nConfirmed kill or restore of `{FLAG}` → {args.streams:,} streams → one report each; median of "
              f"{len(writes)} (range), ms:\n")
        print("| figure | ms |\n|---|---:|")
        print(f"| the route's `written.ms` (commit → last stream write queued) | "
              f"{statistics.median(written) if written else 'null'} |")
        print(f"| write answered | {cell('answeredMs')} |")
        print(f"| kill sent → last patch read by this client | {cell('lastPatchReadMs')} |")
        print(f"| kill sent → last report accepted (204) | {cell('lastReportAcceptedMs')} |")
        print(f"| **kill sent → propagation route confirms 100 %** (polled every {int(POLL_INTERVAL * 1000)} ms "
              f"after the answer) | **{cell('confirmedMs')}** |")
        print(f"| the route's p50Ms / p99Ms (commit → report received, server clock) | "
              f"{statistics.median(w['p50Ms'] for w in writes)} / {statistics.median(w['p99Ms'] for w in writes)} |")
        calls = [w["routeCall"]["p50"] for w in writes]
        print(f"| one call of the propagation route, p50 ({sum(w['routeCalls'] for w in writes)} calls) / max | "
              f"{statistics.median(calls)} / {max(w['routeCall']['max'] for w in writes)} |")
        refused = sum((Counter(w["refused"]) for w in writes), Counter())
        print(f"| reports refused during the kills (sent again after Retry-After) | {dict(refused) or 'none'} |")
    beside = result["beside"]
    if beside:
        print(f"\nAdmin writes (kill or restore on `{OTHER_SET}`, which has no streams: the commit alone) beside "
              f"telemetry, {args.timed_writes} each, ms:\n")
        print("| while | p50 | p99 | max |\n|---|---:|---:|---:|")
        for label, key in (("nothing else", "alone"),
                           (f"the propagation route is polled every {int(WAIT_POLL_INTERVAL * 1000)} ms "
                            f"({args.streams:,} active instances)", "routePolled"),
                           (f"{beside['reportsPerSecond']:,} reports/s flow in", "reportsFlowing")):
            figures = beside[key]
            print(f"| {label} | {figures['p50']} | {figures['p99']} | {figures['max']} |")
        print(f"\nReports beside the writes: {answers(beside['reportAnswers'])}")
    over = result["overLimits"]
    if over:
        print(f"\nOver the limits: {args.over_rounds} more reports per instance, queued at once at the end "
              f"({over['reports']:,}):\n")
        print("| figure | value |\n|---|---:|")
        print(f"| answers | {answers(over['statuses'])} |")
        print(f"| refused, by reason (/metrics) | {', '.join(f'{n:,} {r}' for r, n in over['dropped'].items())} |")
        print(f"| POST latency p50 / p99 | {over['latency']['p50']} / {over['latency']['p99']} ms |")
        print(f"| server CPU per report, accepted or refused | {over['serverCpuMicrosecondsPerReport']} µs |")
    dropped = {name.split('"')[1]: int(value) for name, value in result["metrics"].items()
               if name.startswith("flagserver_telemetry_dropped_total") and value}
    print(f"\n/metrics at the end: {int(result['metrics'].get('flagserver_telemetry_reports_total', 0)):,} reports "
          f"taken, {int(result['metrics'].get('flagserver_telemetry_instances', 0)):,} instances, dropped: "
          f"{dropped or 'none'}")


# ---- with --before: serving before and after ----


def cpu_per_request(pid, run):
    """(req/s, p99 ms, server CPU µs per request) of one wrk run."""
    before, started = replicas.cpu_seconds([pid]), time.monotonic()
    rate, p99 = run()
    elapsed = time.monotonic() - started
    return rate, p99, (replicas.cpu_seconds([pid]) - before) / (rate * elapsed) * 1e6


def measure_serving(servers, key, etag, args):
    """One round on one build: 304s, 304s asking for an instance id, 200s, and a kill → N streams (then a
    restore)."""
    url, duration, pid = f"{servers.base}/v1/sets/{SET}", args.duration, servers.server.pid
    auth, match = f"Authorization: Bearer {key}", f"If-None-Match: {etag}"
    found = {}
    cases = (("304", [auth, match]), ("304, Flagstaff-Instance: new", [auth, match, "Flagstaff-Instance: new"]),
             ("200 (the whole document)", [auth]))
    for case, headers in cases:
        rate, p99, cpu = cpu_per_request(pid, lambda: suite.wrk(duration, headers, url))
        found[f"{case}: req/s"], found[f"{case}: p99 ms"], found[f"{case}: server CPU µs/req"] = rate, p99, cpu
    kill = sse_load.kill(argparse.Namespace(url=servers.base, set=SET, key=key, admin=servers.admin, flag=FLAG,
                                            streams=args.streams, command=None))
    servers.request("POST", f"/v1/admin/sets/{SET}/flags/{FLAG}/restore", servers.admin, {"reason": "benchmark"})
    found[f"kill → {args.streams:,} streams: p50 ms"] = kill["kernel"]["p50Ms"]
    found[f"kill → {args.streams:,} streams: p99 ms"] = kill["kernel"]["p99Ms"]
    found[f"kill → {args.streams:,} streams: max ms"] = kill["kernel"]["maxMs"]
    found["kill answered ms"] = kill["killAnsweredMs"]
    return found


def compare_serving(args, work):
    builds = {"before": args.before, "after": args.bin}
    servers, keys, etags = {}, {}, {}
    try:
        for offset, (label, bin_dir) in enumerate(builds.items(), start=1):
            directory = os.path.join(work, label)
            os.makedirs(directory)
            servers[label] = suite.Servers(bin_dir, directory, args.port_base + offset, args.streams + 2_000)
            keys[label] = servers[label].sdk_key(SET)
            status, headers, _ = servers[label].request("GET", f"/v1/sets/{SET}", keys[label])
            etags[label] = headers["ETag"]
            status, _, _ = servers[label].request("GET", f"/v1/sets/{SET}", keys[label],
                                                  headers={"If-None-Match": etags[label]})
            if status != 304:
                raise Failure(f"{label}: If-None-Match answered {status}, not 304")
        rounds = {label: [] for label in builds}
        for index in range(args.runs):
            for label in builds:  # ABAB: the machine's noise falls on both alike
                rounds[label].append(measure_serving(servers[label], keys[label], etags[label], args))
                log(f"serving round {index + 1} {label}: " + ", ".join(
                    f"{name} {value:,.1f}" for name, value in rounds[label][-1].items() if "p50" in name or "req/s"
                    in name))
    finally:
        for server in servers.values():
            server.stop()
    return rounds


def print_serving(rounds, args):
    print(f"### Serving before (`--before`) and after: {args.runs} alternating round(s), wrk -t2 -c64 "
          f"-d{args.duration}, {args.streams:,} streams\n")
    print("| figure | before: median (range) | after: median (range) | after / before: median (range) |")
    print("|---|---:|---:|---:|")
    for name in rounds["after"][0]:
        before = [found[name] for found in rounds["before"]]
        after = [found[name] for found in rounds["after"]]
        ratios = [a / b for a, b in zip(after, before) if b]

        def cell(values, digits):
            text = f"{statistics.median(values):,.{digits}f}"
            return text + (f" ({min(values):,.{digits}f}–{max(values):,.{digits}f})" if len(values) > 1 else "")

        digits = 0 if "req/s" in name else 2
        print(f"| {name} | {cell(before, digits)} | {cell(after, digits)} | {cell(ratios, 2)} |")


# ---- main ----


def server_dir(path):
    """The directory of a flagserver given as the binary or as its directory."""
    path = os.path.abspath(path)
    directory = os.path.dirname(path) if os.path.isfile(path) else path
    if not os.access(os.path.join(directory, "flagserver"), os.X_OK):
        raise Failure(f"no flagserver in {directory}")
    return directory


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True, help="the flagserver to measure, or its directory")
    parser.add_argument("--before", help="an earlier flagserver (or its directory): serving compared")
    parser.add_argument("--quick", action="store_true", help="a smoke check in seconds (CI), not figures")
    parser.add_argument("--port-base", type=int, default=18600)
    parser.add_argument("--streams", type=int, help="streams, hence instances (default 1,000; 100 with --quick)")
    parser.add_argument("--runs", type=int, help="alternating rounds of the serving comparison (default 5)")
    args = parser.parse_args()
    args.streams = args.streams or (100 if args.quick else 1_000)
    args.runs = args.runs or (1 if args.quick else 5)
    args.duration = "1s" if args.quick else "10s"
    args.rounds, args.kills, args.over_rounds = (1, 1, 0) if args.quick else (2, 3, 3)
    args.timed_writes = 0 if args.quick else 200
    args.connections, args.sources = (16, 1) if args.quick else (64, 4)
    # Every stream is a descriptor here and in the server, which inherits the limit.
    resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)
    work = tempfile.mkdtemp(prefix="bench-telemetry-", dir="/tmp")
    machine = replicas.machine()
    started = time.monotonic()
    try:
        args.bin = server_dir(args.bin)
        serving = None
        if args.before:
            args.before = server_dir(args.before)
            serving = compare_serving(args, work)
        os.makedirs(os.path.join(work, "telemetry"))
        run = TelemetryRun(args, os.path.join(work, "telemetry"))
        try:
            result = asyncio.run(run.measure())
        finally:
            run.stop()
    except (Failure, suite.Failure, RuntimeError, OSError, asyncio.TimeoutError) as error:
        print(f"telemetry: FAILED: {error}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.quick:
        print("SMOKE CHECK (--quick): few streams and rounds; these are not figures.\n")
    print(f"{machine['date']}; {machine['cpu']}, {machine['cores']} cores, {machine['memoryGiB']} GiB; load average "
          f"{machine['loadAverage']} → {[round(v, 2) for v in os.getloadavg()]}; {time.monotonic() - started:.0f} s; "
          f"--bin {args.bin}" + (f", --before {args.before}" if args.before else "") + "\n")
    if serving:
        print_serving(serving, args)
        print()
    print_telemetry(result, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
