#!/usr/bin/env python3
"""What an admin write costs the server, by the size of the set: kills on sets of 10, 1,000 and 10,000
flags with rules and without, a change to a cohort that 100 of 10,000 flags use, and a kill reaching 1,000 SSE
streams on the 10,000-flag set and on the demo set.

  writes.py --bin .build/release [--before ../before/.build/release] [--runs 200] [--streams 1000] [--quick]

Each build's flagserver runs in turn on the same port, with a fresh data directory. A write is timed from the
request's first byte to its answer's last, over one kept-alive connection (no process start, no TCP handshake):
the server's share of a kill, with this one Python client's small, constant overhead. Kills alternate with
restores so that every request makes a version. Prints a table; with --before, each figure beside the other
build's and their ratio, measured in the same run. Standard library only.
"""

import argparse
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

import sse_load

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def flag_document(key, rules):
    flag = {"type": "bool", "kind": "ops", "description": f"benchmark flag {key}", "owner": "bench",
            "default": False, "killValue": False, "killed": False}
    if rules:
        flag["rules"] = [
            {"name": "nl", "conditions": [{"attribute": "country", "op": "in", "values": ["NL", "BE"]}],
             "value": True},
            {"name": "recent", "conditions": [{"attribute": "appVersion", "op": "semver_gte", "values": ["5.2.0"]},
                                              {"attribute": "email", "op": "ends_with", "values": ["@example.com"]}],
             "rollout": {"percent": 50, "value": True}},
        ]
        flag["rollout"] = {"value": True, "percent": 25}
    return flag


def set_document(name, count, rules, cohort_users=0):
    flags = {f"f-{n:05d}": flag_document(f"f-{n:05d}", rules) for n in range(count)}
    cohorts = {}
    if cohort_users:
        cohorts["target"] = {"include": ["u-1"], "groups": [[{"attribute": "plan", "op": "eq", "values": ["pro"]}]]}
        for n in range(cohort_users):
            flags[f"f-{n * (count // cohort_users):05d}"]["rules"] = [{"name": "target", "cohort": "target",
                                                                       "value": True}]
    return {"schema": 1, "set": name, "version": 1, "cohorts": cohorts, "flags": flags}


class Server:
    def __init__(self, bin_dir, port, max_connections=4000, arguments=()):
        self.work = tempfile.mkdtemp(prefix="bench-writes-")
        self.base = f"http://127.0.0.1:{port}"
        self.port = port
        self.admin = "fsa_bench_" + os.urandom(16).hex()
        config = os.path.join(self.work, "flagserver.json")
        with open(config, "w") as file:
            json.dump({"dataDirectory": os.path.join(self.work, "data"),
                       "seedDirectory": os.path.join(ROOT, "config", "flagsets"),
                       # Every benchmark client is on loopback: no cap per address, and every stream gets its
                       # instance id as before the limit on new ids per address.
                       "limits": {"maxBodyBytes": 64 << 20, "maxConnections": max_connections,
                                  "maxConnectionsPerAddress": 0},
                       "telemetry": {"instanceMintBurst": 1_000_000}}, file)
        self.log = open(os.path.join(self.work, "flagserver.log"), "w")
        self.process = subprocess.Popen(
            [os.path.join(bin_dir, "flagserver"), "--config", config, "--listen", f"127.0.0.1:{port}", *arguments],
            stdout=self.log, stderr=subprocess.STDOUT, env={**os.environ, "FLAGSERVER_ADMIN_TOKEN": self.admin})
        for _ in range(300):
            try:
                with urllib.request.urlopen(f"{self.base}/healthz", timeout=2):
                    break
            except OSError:
                if self.process.poll() is not None:
                    raise RuntimeError(f"flagserver from {bin_dir} exited; see {self.log.name}")
                time.sleep(0.1)
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)

    def request(self, method, path, body=None, token=None):
        data = json.dumps(body).encode() if body is not None else b""
        headers = {"Authorization": f"Bearer {token or self.admin}", "Content-Type": "application/json"}
        started = time.perf_counter()
        self.connection.request(method, path, body=data, headers=headers)
        response = self.connection.getresponse()
        payload = response.read()
        elapsed = time.perf_counter() - started
        if response.status >= 300:
            raise RuntimeError(f"{method} {path} answered {response.status}: {payload[:300]!r}")
        return elapsed * 1000, payload

    def sdk_key(self, set_name):
        _, body = self.request("POST", f"/v1/admin/sets/{set_name}/keys", {"name": f"bench-{set_name}"})
        return json.loads(body)["token"]

    def stop(self):
        self.connection.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(self.work, ignore_errors=True)


def kills(server, set_name, runs):
    """Median and p90 of `runs` kills and restores of one flag, alternating."""
    path = f"/v1/admin/sets/{set_name}/flags/f-00001"
    times = []
    for index in range(runs + 10):
        elapsed, _ = server.request("POST", f"{path}/{'kill' if index % 2 == 0 else 'restore'}", {"reason": "bench"})
        if index >= 10:  # the first few warm the caches
            times.append(elapsed)
    return times


def cohort_changes(server, set_name, runs):
    times = []
    for index in range(runs + 10):
        cohort = {"include": [f"u-{index % 7}"], "groups": [[{"attribute": "plan", "op": "eq", "values": ["pro"]}]]}
        elapsed, _ = server.request("PUT", f"/v1/admin/sets/{set_name}/cohorts/target",
                                    {"cohort": cohort, "reason": "bench"})
        if index >= 10:
            times.append(elapsed)
    return times


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def measure(bin_dir, args, port):
    server = Server(bin_dir, port)
    results = {}
    try:
        sizes = [10, 1_000] if args.quick else [10, 1_000, 10_000]
        for count in sizes:
            for rules in (False, True):
                name = f"s{count}{'r' if rules else ''}"
                started = time.perf_counter()
                server.request("POST", "/v1/admin/sets",
                               {"name": name, "reason": "bench", "document": set_document(name, count, rules)})
                runs = args.runs if count < 10_000 else max(20, args.runs // 4)
                print(f"  {name}: created in {time.perf_counter() - started:.1f} s; {runs} kills", file=sys.stderr)
                results[f"kill, {count:,} flags, {'with' if rules else 'without'} rules"] = kills(server, name, runs)
        big = sizes[-1]
        server.request("POST", "/v1/admin/sets", {"name": "cohorts", "reason": "bench",
                                                  "document": set_document("cohorts", big, False, cohort_users=100)})
        results[f"cohort change, used by 100 of {big:,} flags"] = cohort_changes(
            server, "cohorts", max(20, args.runs // 4))
        for set_name in ("demo", f"s{big}"):
            key = server.sdk_key(set_name)
            found = []
            for round_index in range(args.propagation_runs):
                flag = "new-checkout" if set_name == "demo" else f"f-{round_index + 2:05d}"
                arguments = argparse.Namespace(url=server.base, set=set_name, key=key, admin=server.admin, flag=flag,
                                               streams=args.streams, command=None)
                found.append(sse_load.kill(arguments)["kernel"]["p99Ms"])
                if set_name == "demo":
                    server.request("POST", f"/v1/admin/sets/demo/flags/{flag}/restore", {"reason": "bench"})
            label = "demo set" if set_name == "demo" else f"{big:,}-flag set"
            results[f"kill → {args.streams:,} SSE streams, p99, {label}"] = found
    finally:
        server.stop()
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True, help="the build to measure (its flagserver)")
    parser.add_argument("--before", help="another build, measured in the same run for the ratio")
    parser.add_argument("--runs", type=int, default=200, help="writes per case (a quarter for 10,000 flags)")
    parser.add_argument("--streams", type=int, default=1_000)
    parser.add_argument("--propagation-runs", type=int, default=3)
    parser.add_argument("--port", type=int, default=18230)
    parser.add_argument("--quick", action="store_true", help="sets of 10 and 1,000 flags only, few runs")
    args = parser.parse_args()
    if args.quick:
        args.runs, args.streams, args.propagation_runs = 20, 20, 1
    builds = [("after", args.bin)] + ([("before", args.before)] if args.before else [])
    measured = {}
    for label, bin_dir in builds:
        print(f"measuring {label}: {bin_dir}", file=sys.stderr)
        measured[label] = measure(bin_dir, args, args.port)
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {os.cpu_count()} cores ({cpu}); "
          f"load average {os.getloadavg()[0]:.1f}")
    print()
    header = ("| case | after: median (p90), ms | before: median (p90), ms | after / before |" if args.before
              else "| case | median (p90), ms |")
    print(header)
    print("|---|---:|" + ("---:|---:|" if args.before else ""))
    for case, times in measured["after"].items():
        row = f"| {case} | {statistics.median(times):.2f} ({percentile(times, 0.9):.2f}) |"
        if args.before:
            old = measured["before"][case]
            row += f" {statistics.median(old):.2f} ({percentile(old, 0.9):.2f}) |"
            row += f" {statistics.median(times) / statistics.median(old):.2f} |"
        print(row)
    after = measured["after"]
    small = statistics.median(after["kill, 10 flags, with rules"])
    for case in after:
        if case.startswith("kill, ") and case.endswith("with rules"):
            print(f"\n{case}: {statistics.median(after[case]) / small:.2f}× the 10-flag kill", end="")
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
