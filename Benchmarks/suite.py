#!/usr/bin/env python3
"""The benchmark suite behind Benchmarks/run (BENCHMARKS.md, "Suite"): evaluation against GrowthBook, Unleash and
LaunchDarkly; serving against nginx; propagation of a kill to streams and long polls; idle streams; client start;
the write path. Prints one table, each figure beside its goal; exits non-zero when a part breaks (a server does
not answer, the SDKs disagree on the rollout share, Flagstaff disagrees with SPEC §2.1), never for a missed goal.

  suite.py --bin .build/release [--quick] [--runs N] [--units N]

Run it through Benchmarks/run, which installs the tools, builds and raises `ulimit -n`.
"""

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers  # noqa: E402
import sse_load  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Failure(Exception):
    """A part of the suite broke: the run is not valid."""


def log(message):
    print(f"suite: {message}", file=sys.stderr, flush=True)


def median(values):
    return statistics.median(values)


def run(command, timeout=600, env=None):
    """Runs a program; its stdout, or Failure with its stderr."""
    started = time.monotonic()
    finished = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
    elapsed = time.monotonic() - started
    if finished.returncode != 0:
        raise Failure(f"{os.path.basename(command[0])} {' '.join(command[1:3])} … exited {finished.returncode}: "
                      f"{finished.stderr.strip()[-2000:]}")
    return finished.stdout, elapsed


def figures(output):
    """`name value unit` lines (flagbench's format) → {name: [values]}."""
    found = {}
    for line in output.splitlines():
        parts = line.split()
        if len(parts) == 3:
            try:
                found.setdefault(parts[0], []).append(float(parts[1]))
            except ValueError:
                continue
    return found


class Table:
    """The one table: section, figure, median, runs, comparison, goal, verdict."""

    def __init__(self, smoke):
        self.rows = []
        self.failed = []
        self.smoke = smoke  # a smoke check's numbers are not judged against the goals

    def add(self, section, figure, value, unit, runs, compare="", goal="", met=None):
        text = f"{value:,.1f} {unit}" if value >= 10 else f"{value:.2f} {unit}"
        verdict = "" if met is None or self.smoke else ("met" if met else "not met")
        self.rows.append((section, figure, text, str(runs), compare, goal, verdict))

    def check(self, section, figure, value, goal, ok):
        """A correctness check: a row, and a failure of the run when it does not hold."""
        self.rows.append((section, figure, value, "", "", goal, "ok" if ok else "FAILED"))
        if not ok:
            self.failed.append(f"{section}: {figure}: {value}, expected {goal}")

    def print(self):
        header = ("section", "figure", "median", "runs", "comparison (same run)", "goal", "")
        widths = [max(len(row[i]) for row in self.rows + [header]) for i in range(len(header))]
        for row in [header, tuple("-" * w for w in widths)] + self.rows:
            print("  ".join(cell.ljust(widths[i]) if i != 2 else cell.rjust(widths[i])
                            for i, cell in enumerate(row)).rstrip())


class Servers:
    """flagserver and nginx, serving the same document bytes, on the suite's ports, in a /tmp/bench-* directory."""

    def __init__(self, bin_dir, work, port, max_connections):
        self.bin_dir, self.work, self.port = bin_dir, work, port
        self.base = f"http://127.0.0.1:{port}"
        self.admin = "fsa_bench_" + os.urandom(16).hex()
        self.processes = []
        config = os.path.join(work, "flagserver.json")
        with open(config, "w") as file:
            json.dump({"dataDirectory": os.path.join(work, "data"),
                       "seedDirectory": os.path.join(ROOT, "config", "flagsets"),
                       # Every benchmark client is on loopback: no cap per address, and every stream gets its
                       # instance id as before the limit on new ids per address.
                       "limits": {"maxConnections": max_connections, "maxConnectionsPerAddress": 0},
                       "telemetry": {"instanceMintBurst": 1_000_000}}, file)
        self.server_log = open(os.path.join(work, "flagserver.log"), "w")
        self.server = subprocess.Popen(
            [os.path.join(bin_dir, "flagserver"), "--config", config, "--listen", f"127.0.0.1:{port}"],
            stdout=self.server_log, stderr=subprocess.STDOUT, env={**os.environ, "FLAGSERVER_ADMIN_TOKEN": self.admin})
        self.processes.append(self.server)
        self.wait_for(f"{self.base}/healthz", "flagserver")

    def wait_for(self, url, name):
        for _ in range(300):
            try:
                with urllib.request.urlopen(url, timeout=2):
                    pass
                # Another program on the port would answer too; ours must still be running.
                if all(process.poll() is None for process in self.processes):
                    return
                break
            except (urllib.error.URLError, ConnectionError, OSError):
                if any(process.poll() is not None for process in self.processes):
                    break
                time.sleep(0.1)
        self.server_log.flush()
        logs = ""
        for log_name in ("flagserver.log", "nginx-error.log"):
            path = os.path.join(self.work, log_name)
            if os.path.exists(path):
                with open(path, errors="replace") as file:
                    logs += f"\n{log_name}: " + file.read()[-1500:]
        raise Failure(f"{name} did not answer on {url}, or another program holds the port{logs}")

    def request(self, method, path, token, body=None, headers=None):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            self.base + path, data=data, method=method,
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json", **(headers or {})})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as error:
            if error.code == 304:
                return 304, dict(error.headers), b""
            raise Failure(f"{method} {path} answered {error.code}: {error.read()[:500]!r}") from error

    def sdk_key(self, set_name):
        _, _, body = self.request("POST", f"/v1/admin/sets/{set_name}/keys", self.admin, {"name": f"bench-{set_name}"})
        return json.loads(body)["token"]

    def start_nginx(self, port, set_name, key):
        """nginx with the bytes flagserver serves for `set_name`, as a static file with nginx's own ETag."""
        www = os.path.join(self.work, "www")
        os.makedirs(os.path.join(self.work, "nginx-tmp"), exist_ok=True)
        os.makedirs(www, exist_ok=True)
        status, headers, body = self.request("GET", f"/v1/sets/{set_name}", key)
        self.document, self.flag_etag = body, headers["ETag"]
        with open(os.path.join(www, "doc.json"), "wb") as file:
            file.write(body)
        os.chmod(self.work, 0o755)
        user = "user root;" if os.geteuid() == 0 else ""
        config = os.path.join(self.work, "nginx.conf")
        with open(config, "w") as file:
            file.write(f"""{user}
worker_processes auto;
daemon off;
pid {self.work}/nginx.pid;
error_log {self.work}/nginx-error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {self.work}/nginx-tmp;
    proxy_temp_path {self.work}/nginx-tmp;
    fastcgi_temp_path {self.work}/nginx-tmp;
    uwsgi_temp_path {self.work}/nginx-tmp;
    scgi_temp_path {self.work}/nginx-tmp;
    default_type application/json;
    server {{
        listen 127.0.0.1:{port};
        location / {{ root {www}; etag on; }}
    }}
}}
""")
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        self.processes.append(subprocess.Popen(
            [nginx, "-c", config, "-p", self.work], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        self.nginx_url = f"http://127.0.0.1:{port}/doc.json"
        self.wait_for(self.nginx_url, "nginx")
        with urllib.request.urlopen(self.nginx_url, timeout=10) as response:
            self.nginx_etag = response.headers["ETag"]
            if response.read() != body:
                raise Failure("nginx and flagserver serve different bytes")
        version = subprocess.run([nginx, "-v"], capture_output=True, text=True).stderr.strip().split("/")[-1]
        return f"nginx {version}, Linux {platform.uname().release}"

    def rss_kib(self):
        return sse_load.rss_kib(self.server.pid)

    def stop(self):
        for process in reversed(self.processes):
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.server_log.close()


def wrk(duration, headers, url):
    """(req/s, p99 ms) of one `wrk -t2 -c64`; Failure when the server answered errors or nothing."""
    command = ["wrk", "-t2", "-c64", f"-d{duration}", "--latency"]
    for header in headers:
        command += ["-H", header]
    output, _ = run(command + [url], timeout=120)
    if "Non-2xx or 3xx responses" in output:
        raise Failure(f"wrk saw error statuses from {url}:\n{output}")
    rate = re.search(r"^Requests/sec:\s+([\d.]+)", output, re.M)
    p99 = re.search(r"^\s+99%\s+([\d.]+)(us|ms|s)\b", output, re.M)
    if not rate or not p99 or float(rate.group(1)) == 0:
        raise Failure(f"wrk got no answers from {url}:\n{output}")
    scale = {"us": 0.001, "ms": 1, "s": 1000}[p99.group(2)]
    return float(rate.group(1)), float(p99.group(1)) * scale


class Suite:
    def __init__(self, args):
        self.args = args
        self.quick = args.quick
        self.runs = args.runs or (1 if args.quick else 3)
        self.bin = os.path.abspath(args.bin)
        self.table = Table(smoke=args.quick)
        self.work = tempfile.mkdtemp(prefix="bench-suite-", dir="/tmp")
        self.servers = None

    def flagbench(self, *arguments):
        quick = ["--quick"] if self.quick else []
        output, _ = run([os.path.join(self.bin, "flagbench"), *arguments, *quick])
        return figures(output)

    def flagctl(self, set_name, *arguments):
        """Runs flagctl against the suite's server; its wall time in ms."""
        _, seconds = run([os.path.join(self.bin, "flagctl"), "--server", self.servers.base, "--token",
                          self.servers.admin, "--set", set_name, *arguments])
        return seconds * 1000

    # ---- evaluation ----

    def evaluation(self):
        units = self.args.units or (2_000 if self.quick else 100_000)
        population = peers.units(units)
        log(f"evaluation: {units:,} units, {self.runs} run(s); peers built once")
        directory = tempfile.mkdtemp(prefix="bench-peers-", dir="/tmp")
        sdks = peers.build(population, directory)
        results = os.path.join(self.work, "flagstaff-units.txt")
        own = {"core": [], "detail": [], "first": [], "frozen": []}
        peer_ns = {sdk.name: [] for sdk in sdks}
        ratios = {sdk.name: [] for sdk in sdks}
        peer_answers = {}
        answers_seen = None
        try:
            for round_index in range(self.runs):
                found = self.flagbench("suite-eval", "--units", str(units), "--runs", "1", "--results", results)
                own["core"] += found["suite.flagstaff.core"]
                own["detail"] += found["suite.flagstaff.core-detail"]
                own["first"] += found["suite.flagstaff.session-first-read"]
                own["frozen"] += found["suite.flagstaff.session-frozen-read"]
                with open(results) as file:
                    answers = [character == "1" for character in file.read()]
                if answers_seen is not None and answers != answers_seen:
                    raise Failure("Flagstaff's per-unit answers changed between runs")
                answers_seen = answers
                for sdk in sdks:
                    ns, answers = peers.timed(sdk)
                    peer_ns[sdk.name].append(ns)
                    ratios[sdk.name].append(ns / found["suite.flagstaff.core"][0])
                    peer_answers[sdk.name] = answers
                log(f"evaluation run {round_index + 1}: core {own['core'][-1]:.0f} ns, "
                    + ", ".join(f"{name} {values[-1]:.0f} ns" for name, values in peer_ns.items()))
        finally:
            for sdk in sdks:
                sdk.close()
            shutil.rmtree(directory, ignore_errors=True)
        table, runs = self.table, self.runs
        table.add("eval", "Flagstaff core, value (CompiledFlagSet.value)", median(own["core"]), "ns", runs)
        table.add("eval", "Flagstaff core, detail (CompiledFlagSet.evaluate)", median(own["detail"]), "ns", runs)
        table.add("eval", "Flagstaff session, first read", median(own["first"]), "ns", runs,
                  goal="≤ 200 ns", met=median(own["first"]) <= 200)
        table.add("eval", "Flagstaff session, frozen read", median(own["frozen"]), "ns", runs,
                  goal="≤ 20 ns", met=median(own["frozen"]) <= 20)
        for sdk in sdks:
            table.add("eval", f"{sdk.name} (Python SDK, offline)", median(peer_ns[sdk.name]), "ns", runs,
                      compare=f"{median(ratios[sdk.name]):,.0f}× Flagstaff core")
        tolerance = peers.share_tolerance(population)
        goal = f"25 ± {tolerance:.2f} % (5σ)"
        share, rule_ok = peers.rollout_share(population, answers_seen)
        table.check("eval", "rollout share outside NL: Flagstaff", f"{share:.2f} %", goal, abs(share - 25) <= tolerance)
        table.check("eval", "NL rule served to every NL unit: Flagstaff", "yes" if rule_ok else "no", "yes", rule_ok)
        for name, answers in peer_answers.items():
            value, rule_ok = peers.rollout_share(population, answers)
            table.check("eval", f"rollout share outside NL: {name}", f"{value:.2f} %", goal,
                        abs(value - 25) <= tolerance)
            table.check("eval", f"NL rule served to every NL unit: {name}", "yes" if rule_ok else "no", "yes", rule_ok)
        # Independent 25 % draws agree on 0.25² + 0.75² = 62.5 % of units: shown to make the point, not checked.
        outside = [index for index, (_, country) in enumerate(population) if country != "NL"]
        for name, answers in peer_answers.items():
            same = sum(1 for index in outside if answers[index] == answers_seen[index]) / len(outside) * 100
            table.rows.append(("eval", f"same answer as Flagstaff outside NL: {name}", f"{same:.1f} %", "", "",
                               "≈ 62.5 % (independent hashes)", "info"))
        spec = peers.spec_answers(population)
        differing = sum(1 for mine, theirs in zip(answers_seen, spec) if mine != theirs)
        table.check("eval", "Flagstaff = SPEC §2.1 via mmh3, per unit", f"{differing} of {units:,} differ", "0 differ",
                    differing == 0 and len(answers_seen) == len(spec))

    # ---- serving ----

    def start_servers(self, streams):
        port = self.args.port_base
        self.servers = Servers(self.bin, self.work, port, streams + 2_000)
        self.demo_key = self.servers.sdk_key("demo")
        self.nginx_version = self.servers.start_nginx(port + 1, "demo", self.demo_key)

    def serving(self):
        servers, duration = self.servers, "1s" if self.quick else "10s"
        log(f"serving: wrk -t2 -c64 -d{duration}, {self.runs} run(s), {len(servers.document):,}-byte document")
        auth = f"Authorization: Bearer {self.demo_key}"
        # The 304 path must really be a 304 on both servers before wrk counts it.
        status, _, _ = servers.request(
            "GET", "/v1/sets/demo", self.demo_key, headers={"If-None-Match": servers.flag_etag})
        nginx_request = urllib.request.Request(servers.nginx_url, headers={"If-None-Match": servers.nginx_etag})
        try:
            urllib.request.urlopen(nginx_request, timeout=10)
            nginx_status = 200
        except urllib.error.HTTPError as error:
            nginx_status = error.code
        if (status, nginx_status) != (304, 304):
            raise Failure(f"If-None-Match answered {status} (flagserver) and {nginx_status} (nginx), not 304")
        cases = {
            "200": ([auth], [], "≥ 0.9×", 0.9),
            "304": ([auth, f"If-None-Match: {servers.flag_etag}"], [f"If-None-Match: {servers.nginx_etag}"],
                    "≥ 1.2×", 1.2),
        }
        for case, (flag_headers, nginx_headers, goal, target) in cases.items():
            flag_rps, flag_p99, nginx_rps, nginx_p99, ratio = [], [], [], [], []
            for _ in range(self.runs):
                rps, p99 = wrk(duration, flag_headers, f"{servers.base}/v1/sets/demo")
                other, other_p99 = wrk(duration, nginx_headers, servers.nginx_url)
                flag_rps.append(rps)
                flag_p99.append(p99)
                nginx_rps.append(other)
                nginx_p99.append(other_p99)
                ratio.append(rps / other)
            compare = f"{median(ratio):.2f}× nginx"
            self.table.add("serve", f"{case}: flagserver req/s", median(flag_rps), "req/s", self.runs, compare,
                           f"{goal} nginx", median(ratio) >= target)
            self.table.add("serve", f"{case}: nginx req/s", median(nginx_rps), "req/s", self.runs)
            self.table.add("serve", f"{case}: flagserver p99", median(flag_p99), "ms", self.runs,
                           f"nginx {median(nginx_p99):.2f} ms", "≤ 10 ms", median(flag_p99) <= 10)

    # ---- propagation, idle streams ----

    def propagation(self, streams):
        servers = self.servers
        flags = 1_000
        document = {"schema": 1, "set": "bench", "version": 1, "cohorts": {}, "flags": {
            f"f-{n:04d}": {"type": "bool", "kind": "ops", "description": "benchmark flag", "owner": "bench",
                           "default": True, "killValue": False, "killed": False} for n in range(flags)}}
        servers.request(
            "POST", "/v1/admin/sets", servers.admin, {"name": "bench", "reason": "benchmark", "document": document})
        key = servers.sdk_key("bench")
        log(f"propagation: flagctl kill on a {flags:,}-flag set to {streams:,} SSE streams and {streams:,} long polls")
        flagctl = [os.path.join(self.bin, "flagctl"), "--server", servers.base, "--token", servers.admin,
                   "--set", "bench"]
        # The CLI's own start is part of what a user waits for; the admin API variant shows the server's share.
        modes = [("SSE streams", "flagctl kill", sse_load.kill, True),
                 ("long polls", "flagctl kill", sse_load.poll, True),
                 ("SSE streams", "admin API POST", sse_load.kill, False)]
        results = {mode[:2]: [] for mode in modes}
        for round_index in range(self.runs):
            for offset, (clients, trigger, function, cli) in enumerate(modes):
                flag = f"f-{round_index * len(modes) + offset:04d}"
                command = flagctl + ["kill", flag, "--reason", "benchmark"] if cli else None
                arguments = argparse.Namespace(url=servers.base, set="bench", key=key, admin=servers.admin, flag=flag,
                                               streams=streams, command=command)
                try:
                    results[(clients, trigger)].append(function(arguments))
                except RuntimeError as error:
                    raise Failure(f"propagation to {clients}: {error}") from error
        for (clients, trigger), found in results.items():
            label = f"{trigger} → {streams:,} {clients}"
            # The kernel's receive time: when the patch reached the client's socket, not when this one Python
            # thread got round to reading 1,000 sockets.
            p50 = median([r["kernel"]["p50Ms"] for r in found])
            self.table.add("propagate", f"{label}: p50", p50, "ms", self.runs)
            p99 = median([r["kernel"]["p99Ms"] for r in found])
            if (clients, trigger) == ("SSE streams", "flagctl kill"):
                self.table.add("propagate", f"{label}: p99", p99, "ms", self.runs, goal="≤ 50 ms", met=p99 <= 50)
            else:
                self.table.add("propagate", f"{label}: p99", p99, "ms", self.runs)
            self.table.add("propagate", f"{label}: max", median([r["kernel"]["maxMs"] for r in found]), "ms", self.runs,
                           f"{trigger.split()[0]} done after {median([r['killAnsweredMs'] for r in found]):.1f} ms")

    def idle_streams(self, streams):
        log(f"idle streams: {streams:,} SSE connections (one run: memory freed by closed streams is reused)")
        arguments = argparse.Namespace(
            url=self.servers.base, set="demo", key=self.demo_key, pid=self.servers.server.pid, streams=streams)
        try:
            found = sse_load.idle(arguments)
        except RuntimeError as error:
            raise Failure(f"idle streams: {error}") from error
        after_mb = found["rssAfterKiB"] * 1024 / 1e6
        self.table.add("idle", f"{streams:,} open streams: server RSS", after_mb, "MB", 1,
                       f"{found['rssBeforeKiB'] * 1024 / 1e6:.1f} MB before", "≤ 150 MB (10,000)", after_mb <= 150)
        self.table.add("idle", "per connection", found["perStreamBytes"], "B", 1,
                       f"opened in {found['openSeconds']} s")

    # ---- client start, write path ----

    def client_start(self):
        log("client start")
        found = self.flagbench("suite-client-start", "--runs", "3" if self.quick else "9")
        values = found["suite.client-start.1000flags"]
        self.table.add("client", "FlagClient init from a cached 1,000-flag set → first value", median(values), "ms",
                       len(values), goal="≤ 5 ms", met=median(values) <= 5)

    def write_path(self):
        log("write path: flagctl create + kill, flagctl import of 1,000 flags")
        create, kill, both, imports = [], [], [], []
        path = os.path.join(self.work, "import-1000.json")
        with open(path, "w") as file:
            json.dump(import_document(1_000), file)
        for round_index in range(self.runs):
            key = f"suite-write-{round_index}"
            created = self.flagctl("demo", "create", key, "--type", "bool", "--default", "false", "--kind", "ops",
                                   "--reason", "benchmark")
            killed = self.flagctl("demo", "kill", key, "--reason", "benchmark")
            create.append(created)
            kill.append(killed)
            both.append(created + killed)
            set_name = f"suite-import-{round_index}"
            self.flagctl(set_name, "sets", "create", set_name)
            imports.append(self.flagctl(set_name, "import", path, "--reason", "benchmark"))
        _, _, body = self.servers.request("GET", "/v1/sets/suite-import-0", self.servers.admin)
        stored = len(json.loads(body)["flags"])
        self.table.check("write", "flags stored by the import", f"{stored:,}", "1,000", stored == 1_000)
        table = self.table
        table.add("write", "flagctl create (process wall time)", median(create), "ms", self.runs)
        table.add("write", "flagctl kill (process wall time)", median(kill), "ms", self.runs)
        table.add("write", "create + kill round trip", median(both), "ms", self.runs)
        table.add("write", "flagctl import, 1,000 flags, end to end", median(imports), "ms", self.runs,
                  f"{os.path.getsize(path):,} B file", "≤ 200 ms", median(imports) <= 200)

    def main(self):
        idle, kill_streams = (50, 50) if self.quick else (10_000, 1_000)
        started = time.monotonic()
        try:
            self.evaluation()
            self.start_servers(idle + kill_streams)
            self.serving()
            self.idle_streams(idle)
            self.propagation(kill_streams)
            self.client_start()
            self.write_path()
        finally:
            if self.servers:
                self.servers.stop()
            shutil.rmtree(self.work, ignore_errors=True)
        print()
        if self.quick:
            print("SMOKE CHECK (--quick: debug build allowed, few units, 1 s wrk, 50 streams, 1 run): these are not "
                  "figures and are not judged against the goals; only the checks count.")
        cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
                   "?")
        print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {os.cpu_count()} cores ({cpu}); "
              f"load average {os.getloadavg()[0]:.1f}; build {self.bin}; {self.nginx_version}; "
              f"{time.monotonic() - started:.0f} s")
        print()
        self.table.print()
        print()
        print("Each SDK hashes units its own way (GrowthBook FNV-1a, Unleash MurmurHash3 with its seed into 100 "
              "buckets, LaunchDarkly SHA-1),\nso only their rollout shares are compared, not which units are inside; "
              "Flagstaff is checked unit by unit against SPEC §2.1 via mmh3.")
        if self.table.failed:
            print()
            for failure in self.table.failed:
                print(f"FAILED: {failure}")
            return 1
        return 0


def import_document(count):
    """A flag-set document of `count` flags, each with an attribute rule and a 25 % rollout, for `flagctl import`."""
    flags = {}
    for n in range(count):
        flags[f"imp-{n:04d}"] = {
            "type": "bool", "kind": "release", "description": f"imported flag {n}", "owner": f"team-{n % 12}",
            "default": False, "killValue": False, "killed": False,
            "rules": [{"name": "nl", "conditions": [{"attribute": "country", "op": "eq", "values": ["NL"]}],
                       "value": True}],
            "rollout": {"value": True, "percent": 25},
        }
    return {"schema": 1, "set": "import", "version": 1, "cohorts": {}, "flags": flags}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True, help="the build's bin directory (flagserver, flagctl, flagbench)")
    parser.add_argument("--quick", action="store_true", help="a smoke check in seconds, not figures")
    parser.add_argument("--runs", type=int, help="runs per figure (default 3, 1 with --quick)")
    parser.add_argument("--units", type=int, help="units evaluated (default 100,000, 2,000 with --quick)")
    parser.add_argument("--port-base", type=int, default=18210, help="flagserver's port; nginx takes the next")
    args = parser.parse_args()
    try:
        return Suite(args).main()
    except Failure as failure:
        print(f"suite: FAILED: {failure}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
