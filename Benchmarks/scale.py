#!/usr/bin/env python3
"""The fan-out at scale: one flagserver on SQLite with the demo set and `limits.maxConnections` raised to 19,500;
a kill sent with curl reaches 1,000, 6,000, 12,000 and 18,500 SSE streams. Not part of CI (it holds up to 18,500
sockets in one client process, under this machine's cap of 20,000 open files a process).

  scale.py --bin .build/release [--before ../before/.build/release] [--streams 1000,6000,12000,18500] [--runs 3]

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
import statistics
import subprocess
import sys
import tempfile
import time

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


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True, help="the build to measure (its flagserver)")
    parser.add_argument("--before", help="another build, measured in the same run for the ratio")
    parser.add_argument("--streams", default="1000,6000,12000,18500", help="stream counts, comma-separated")
    parser.add_argument("--runs", type=int, default=3, help="kills per count; the table shows their medians")
    parser.add_argument("--port", type=int, default=18470)
    args = parser.parse_args()
    counts = [int(text) for text in args.streams.split(",")]
    if max(counts) > 19_000:
        print("note: the client process holds every stream; keep the count under the open-file cap of 20,000",
              file=sys.stderr)
    builds = [("after", args.bin)] + ([("before", args.before)] if args.before else [])
    measured = {}
    for name, bin_dir in builds:
        print(f"measuring {name}: {bin_dir}", file=sys.stderr)
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
