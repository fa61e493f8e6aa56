#!/usr/bin/env python3
"""The fan-out at scale: one flagserver on SQLite with the demo set and `limits.maxConnections` raised to 19,500;
a kill sent with curl reaches 1,000, 6,000, 12,000 and 18,500 SSE streams. Not part of CI (it holds up to 18,500
sockets in one client process, under this machine's cap of 20,000 open files a process).

  scale.py --bin .build/release [--before ../before/.build/release] [--streams 1000,6000,12000,18500] [--runs 3]
  scale.py --replicas 3 --bin .build/bench-release/release [--streams 18000] [--runs 3]

With --replicas N, N flagservers (built with the Postgres trait) share one PostgreSQL database (FLAGSTAFF_TEST_POSTGRES,
e.g. under Tests/postgres/with-postgres, or a throwaway cluster as Benchmarks/replicas.py makes), each with --streams
streams held by a client process of its own (a process may hold 20,000 descriptors), and the kill goes to replica 1:
p50, p99 and max are over every stream of every replica, then per replica.

--quiet SECONDS keeps the clients from reading for that long after each kill, so that they take no processor from
the servers during the fan-out (the kernel stamps each patch when it arrives either way). Without --replicas, each
count's streams are then held by one such client process, and one kill before the counted ones is left out.
Benchmarks/fanout_floor.py measures the same fan-out with no server: the kernel's share alone.

For each count, the streams are opened once (each gets its `put`), then `--runs` kills and restores of one flag are
measured: a kill is timed from the start of the curl process that sends it. "answer" is curl's own time to the kill's
answer (`time_total`); p50, p99 and max are when each stream's socket received the patch (the kernel's receive
timestamp, SO_TIMESTAMPNS). Before the streams, the same kill with no stream open gives the answer's floor: the
answer should stay near it whatever the number of streams. With --before, each build runs in turn on the same port
and each figure is shown beside the other's, measured in the same run. Prints a Markdown table. Standard library
and curl.
"""

import argparse
import os
import selectors
import statistics
import subprocess
import sys
import tempfile
import time

import json
import signal
import socket

import replicas
import sse_load
import writes


def curl_kill(server, flag, action):
    """Runs curl to kill or restore `flag` of the demo set; returns curl's time to the answer, in ms."""
    finished = subprocess.run(
        ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code} %{time_total}", "-X", "POST",
         "-H", f"Authorization: Bearer {server.admin}", "-H", "Content-Type: application/json",
         "--data", '{"reason":"scale benchmark"}', f"{server.base}/v1/admin/sets/demo/flags/{flag}/{action}"],
        capture_output=True, text=True, timeout=60)
    status, seconds = finished.stdout.split()
    if status != "200":
        raise RuntimeError(f"{action} {flag} answered {status}")
    return float(seconds) * 1000


class StreamsKill(argparse.Namespace):
    """What `sse_load.kill` needs, killing with curl (which writes its answer time to `answer_file`)."""

    def __init__(self, server, key, count, flag, answer_file):
        script = (f"curl -s -o /dev/null -w '%{{http_code}} %{{time_total}}' -X POST "
                  f"-H 'Authorization: Bearer {server.admin}' -H 'Content-Type: application/json' "
                  f"--data '{{\"reason\":\"scale benchmark\"}}' "
                  f"{server.base}/v1/admin/sets/demo/flags/{flag}/kill > {answer_file}")
        super().__init__(url=server.base, set="demo", key=key, admin=server.admin, flag=flag, streams=count,
                         command=["sh", "-c", script])


def measure(bin_dir, counts, runs, port):
    server = writes.Server(bin_dir, port, max_connections=19_500)
    results = {}
    try:
        key = server.sdk_key("demo")
        flag = "new-checkout"
        floor = []
        for _ in range(runs + 2):
            floor.append(curl_kill(server, flag, "kill"))
            curl_kill(server, flag, "restore")
        results["no stream"] = {"answer": statistics.median(floor[2:])}
        for count in counts:
            answers, p50s, p99s, maxima = [], [], [], []
            for _ in range(runs):
                with tempfile.NamedTemporaryFile("r", suffix=".txt") as answer_file:
                    found = sse_load.kill(StreamsKill(server, key, count, flag, answer_file.name))
                    status, seconds = answer_file.read().split()
                if status != "200":
                    raise RuntimeError(f"the kill answered {status}")
                answers.append(float(seconds) * 1000)
                p50s.append(found["kernel"]["p50Ms"])
                p99s.append(found["kernel"]["p99Ms"])
                maxima.append(found["kernel"]["maxMs"])
                curl_kill(server, flag, "restore")
                time.sleep(1)  # the closed streams leave the server before the next round opens its own
            results[f"{count:,} streams"] = {"answer": statistics.median(answers), "p50": statistics.median(p50s),
                                             "p99": statistics.median(p99s), "max": statistics.median(maxima)}
            print(f"  {count:,} streams: answers {[round(a, 1) for a in answers]} ms; medians {results[f'{count:,} streams']}",
                  file=sys.stderr)
    finally:
        server.stop()
    return results


def hold(args):
    """A client process of --replicas: holds --streams streams on --url and, told `go WALL` on stdin, waits for the
    next patch that names the flag on every stream and prints the kernel receive times minus WALL, in seconds, as a
    JSON list; `reset` forgets what arrived so far. Prints `ready` once every stream has its `put`."""
    selector, streams = sse_load.open_streams(args.url, "demo", args.key, args.streams)
    sse_load.stamp(streams)
    commands = []
    selector.register(sys.stdin, selectors.EVENT_READ, lambda stdin: commands.append(stdin.readline().split()))
    needle = json.dumps(args.flag).encode()
    print("ready", flush=True)
    waiting_since = None
    while True:
        sse_load.pump(selector, 0.5)
        while commands:
            command = commands.pop(0)
            if not command:
                return
            if command[0] == "reset":
                for stream in streams:
                    stream.events.clear()
                    stream.kernel_times.clear()
                print("reset", flush=True)
            elif command[0] == "go":
                waiting_since = float(command[1])
                # Quiet: read nothing for a while, so that this process takes no processor from the servers while
                # they fan out; the kernel stamps each patch when it arrives all the same.
                time.sleep(float(command[2]))
        if waiting_since is not None and all(any(name == "patch" and needle in data for _, name, data in stream.events)
                                             for stream in streams):
            print(json.dumps([stream.kernel_times[0] - waiting_since for stream in streams]), flush=True)
            waiting_since = None


def start_holder(server, key, streams):
    """A `--hold` client process with `streams` streams on `server`, once every stream has its put."""
    client = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "--hold", "--url", server.base, "--key", key,
         "--streams", str(streams), "--flag", "new-checkout"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    if client.stdout.readline().strip() != "ready":
        client.kill()
        raise RuntimeError(f"the client of {server.base} did not open its streams")
    return client


def time_kills(servers, clients, runs, quiet):
    """Kills and restores a flag through `servers[0]` `runs` times, after one kill that is not counted (the first
    after the streams opened can meet their setup); `clients[i]` holds the streams of `servers[i]`. p50, p99 and max
    are taken over every stream of a kill, then their medians over the kills, as `measure` does."""

    def spread(values):
        values = sorted(values)
        return {"p50": values[len(values) // 2], "p99": values[max(0, int(len(values) * 0.99) - 1)],
                "max": values[-1]}

    def medians(spreads):
        return {name: statistics.median(found[name] for found in spreads) for name in ("p50", "p99", "max")}

    answers, kills, per_replica, streams = [], [], {}, 0
    for run in range(runs + 1):
        for client in clients:
            client.stdin.write("reset\n")
            client.stdin.flush()
            client.stdout.readline()
        sent = time.time()
        answer = curl_kill(servers[0], "new-checkout", "kill")
        for client in clients:
            client.stdin.write(f"go {sent} {quiet}\n")
            client.stdin.flush()
        found = [[delay * 1000 for delay in json.loads(client.stdout.readline())] for client in clients]
        if run > 0:
            answers.append(answer)
            kills.append(spread([delay for delays in found for delay in delays]))
            for number, delays in enumerate(found, start=1):
                per_replica.setdefault(number, []).append(spread(delays))
            streams = sum(len(delays) for delays in found)
        curl_kill(servers[0], "new-checkout", "restore")
        time.sleep(2)  # the restore's patch reaches every stream before the next reset
    return {"answer": statistics.median(answers), **medians(kills), "streams": streams,
            "replicas": {number: medians(spreads) for number, spreads in per_replica.items()}}


def measure_replicas(args):
    """--replicas: N flagservers on one PostgreSQL database, --streams on each, kills sent to replica 1."""
    run = replicas.Run(argparse.Namespace(bin=os.path.abspath(args.bin)))
    clients = []
    try:
        servers, key = replicas.start_on_one_database(run, args.replicas, args.port, "flagstaff_scale")
        for server in servers:
            clients.append(start_holder(server, key, args.streams))
        print(f"  {len(servers)} replicas, {args.streams:,} streams on each", file=sys.stderr)
        return time_kills(servers, clients, args.runs, args.quiet)
    finally:
        for client in clients:
            client.kill()
        run.processes.stop_all()
        if run.postgres:
            run.postgres.close()


def measure_quiet(bin_dir, count, runs, port, quiet):
    """One flagserver on SQLite, as `measure`, with its streams held by a `--hold` client that reads nothing for
    `quiet` seconds after each kill."""
    server = writes.Server(bin_dir, port, max_connections=19_500)
    client = None
    try:
        client = start_holder(server, server.sdk_key("demo"), count)
        return time_kills([server], [client], runs, quiet)
    finally:
        if client:
            client.kill()
        server.stop()


def main():
    if "--hold" in sys.argv:
        hold_parser = argparse.ArgumentParser()
        for name in ("--url", "--key", "--flag"):
            hold_parser.add_argument(name, required=True)
        hold_parser.add_argument("--streams", type=int, required=True)
        hold_parser.add_argument("--hold", action="store_true")
        return hold(hold_parser.parse_args())
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True, help="the build to measure (its flagserver)")
    parser.add_argument("--before", help="another build, measured in the same run for the ratio")
    parser.add_argument("--streams", default="1000,6000,12000,18500",
                        help="stream counts, comma-separated; with --replicas, one count a replica (18,000)")
    parser.add_argument("--runs", type=int, default=3, help="kills per count; the table shows their medians")
    parser.add_argument("--port", type=int, default=18470)
    parser.add_argument("--replicas", type=int, help="this many flagservers on one PostgreSQL database")
    parser.add_argument("--quiet", type=float, default=0.0,
                        help="seconds the clients read nothing after a kill (0: they read at once)")
    args = parser.parse_args()
    if args.replicas:
        streams = int(args.streams) if args.streams.isdigit() else 18_000
        if streams > replicas.MAX_STREAMS_PER_PROCESS:
            parser.error(f"--streams: at most {replicas.MAX_STREAMS_PER_PROCESS} a replica (one client process each)")
        result = measure_replicas(argparse.Namespace(bin=args.bin, replicas=args.replicas, streams=streams,
                                                     runs=args.runs, port=args.port, quiet=args.quiet))
        print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {os.cpu_count()} cores; load average "
              f"{os.getloadavg()[0]:.1f}; {args.replicas} replicas on one PostgreSQL database, "
              f"{result['streams']:,} streams in all; the kill sent to replica 1; medians of {args.runs} kills; "
              f"clients {'quiet for %.1f s' % args.quiet if args.quiet else 'reading'}; ms\n")
        print("| streams on | answer (median) | p50 | p99 | max |\n|---|---:|---:|---:|---:|")
        rows = [("every replica", result)] + [(f"replica {n}", r) for n, r in sorted(result["replicas"].items())]
        for name, row in rows:
            answer = f"{result['answer']:.1f}" if row is result else ""
            print(f"| {name} | {answer} | {row['p50']:.1f} | {row['p99']:.1f} | {row['max']:.1f} |")
        return
    counts = [int(text) for text in args.streams.split(",")]
    if max(counts) > 19_000:
        print("note: the client process holds every stream; keep the count under the open-file cap of 20,000",
              file=sys.stderr)
    builds = [("after", args.bin)] + ([("before", args.before)] if args.before else [])
    measured = {}
    for name, bin_dir in builds:
        print(f"measuring {name}: {bin_dir}", file=sys.stderr)
        if args.quiet:
            measured[name] = {f"{count:,} streams": measure_quiet(bin_dir, count, args.runs, args.port, args.quiet)
                              for count in counts}
        else:
            measured[name] = measure(bin_dir, counts, args.runs, args.port)
    load = os.getloadavg()[0]
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {os.cpu_count()} cores; load average {load:.1f}; "
          f"medians of {args.runs} kills, ms\n")
    columns = ["answer", "p50", "p99", "max"]
    header = "| streams | " + " | ".join(columns) + " |"
    if args.before:
        header = "| streams | " + " | ".join(f"{c}: after / before" for c in columns) + " |"
    print(header)
    print("|---|" + "---:|" * len(columns))
    for row in measured["after"]:
        cells = []
        for column in columns:
            after = measured["after"][row].get(column)
            if after is None:
                cells.append("")
            elif args.before:
                before = measured["before"][row][column]
                cells.append(f"{after:.1f} / {before:.1f} ({after / before:.2f}×)")
            else:
                cells.append(f"{after:.1f}")
        print(f"| {row} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
