#!/usr/bin/env python3
"""Three flagservers on one PostgreSQL database behind nginx. Prints one JSON object (a summary on stderr):

  1. kill → streams through nginx: N SSE streams (1,000) opened through nginx to an upstream of replicas 2 and 3
     (`least_conn`, so they are spread over both); each round kills or restores a flag through nginx's admin
     location, which routes every `/v1/admin/` request to replica 1; time from just before the request is sent to
     each stream's receipt of the patch (kernel receive time, and when this Python thread read it). Bound: p99 ≤
     100 ms.
  2. commit → NOTIFY → patch, per replica: streams directly on replicas 1, 2 and 3 (no nginx), kills sent to
     replica 1 directly; per replica, the time from the kill's 200 answer (the commit is done) to the patch at that
     replica's streams, and from the send. Replica 1 publishes to its own streams before it answers (negative
     figures), so its answer comes after that fan-out; hence a second pass with streams on replicas 2 and 3 only,
     where the answer is the commit, and which (as many streams per replica as part 1) is part 1 without nginx.
  3. serving through nginx: wrk for `GET /v1/sets/demo` (200s, and 304s with the current ETag) against nginx with
     an upstream of replica 1 only, then of all three, and directly against replica 1 for reference; the CPU time
     each of wrk, nginx and the replicas used (they share the machine's cores), and PostgreSQL's transactions
     (`pg_stat_database`: xact_commit + xact_rollback of the replicas' database) per second during each run and
     during a window without load: reads are served from memory, so only the replicas' own checks show.
  4. the 10,000-flag kill: one flagserver on a database of its own, another on SQLite, the same sets (built by
     writes.py) and the same kills timed over one kept-alive connection (writes.kills: first byte to answer).
  5. idle streams: the RSS of a fresh flagserver on PostgreSQL and of one on SQLite before and after N idle streams
     (10,000; at most 18,000: a process here may hold 20,000 descriptors).

  replicas.py --bin DIR [--quick] [--port-base 18500] [--postgres URI] [--sqlite-only] [--keep]

--bin is the directory of a flagserver built with the Postgres trait:
  swift build -c release --traits Postgres --scratch-path .build/bench-release --product flagserver
  python3 Benchmarks/replicas.py --bin .build/bench-release/release

PostgreSQL: with --postgres URI or FLAGSTAFF_TEST_POSTGRES set (e.g. run under Tests/postgres/with-postgres), the
databases are made from that role (it needs CREATEDB) and dropped at the end; otherwise the script starts a
throwaway cluster of its own the way Tests/postgres/with-postgres does, on 127.0.0.1:PORT_BASE+19, and deletes it.
--sqlite-only measures no replication: one SQLite flagserver plays all three replicas (a check of the script on a
build without the trait). --quick: a few seconds per part (CI smoke run); wrk is skipped when missing.

Ports PORT_BASE+0..7 and +19 (18500–18519 by default): replicas 1–3, nginx's three servers (streams and admin
writes; one replica; three replicas), the single PostgreSQL and SQLite servers of parts 4 and 5, and the cluster.
Every process runs in a process group of its own and is stopped, and every temporary directory and database
removed, on exit, also on failure or SIGTERM. Standard library only; reuses sse_load.py and writes.py.
"""

import argparse
import glob
import http.client
import json
import os
import platform
import re
import resource
import selectors
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

import sse_load
import writes

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_STREAMS_PER_PROCESS = 18_000  # a process may hold 20,000 descriptors here
SET = "demo"
FLAG = "new-checkout"


def log(message):
    print(message, file=sys.stderr, flush=True)


# ---- processes and the machine ----


class Processes:
    """Every process the run starts, each in a process group of its own, stopped with its group."""

    def __init__(self):
        self.started = []

    def start(self, argv, log_path, **kwargs):
        with open(log_path, "ab") as output:
            process = subprocess.Popen(argv, stdout=output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       start_new_session=True, **kwargs)
        self.started.append(process)
        return process

    def stop(self, process, timeout=20):
        if process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(process.pid, signal.SIGKILL)  # whatever is left of the group
        except (ProcessLookupError, PermissionError):
            pass
        if process.poll() is None:
            process.wait(timeout=timeout)

    def stop_all(self):
        for process in reversed(self.started):
            try:
                self.stop(process)
            except Exception as error:  # keep stopping the others
                log(f"could not stop pid {process.pid}: {error}")
        self.started = []


def port_is_free(port):
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def cpu_seconds(pids):
    """User + system CPU seconds the processes (every thread) used so far."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except FileNotFoundError:
            pass
    return total / os.sysconf("SC_CLK_TCK")


def children_of(parent):
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    if int(stat.read().rsplit(")", 1)[1].split()[1]) == parent:
                        found.append(int(entry))
            except (FileNotFoundError, ProcessLookupError, IndexError):
                pass
    return found


def machine():
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.processor() or "?")
    memory = next(int(line.split()[1]) for line in open("/proc/meminfo") if line.startswith("MemTotal"))
    return {"cpu": cpu, "cores": os.cpu_count(), "memoryGiB": round(memory / 1048576, 1),
            "kernel": platform.release(), "loadAverage": [round(value, 2) for value in os.getloadavg()],
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}


def tool_version(argv, pattern):
    try:
        finished = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(pattern, finished.stdout + finished.stderr)
    return found.group(1) if found else None


def ms(seconds):
    return round(seconds * 1000, 2)


def distribution(delays):
    """p50, p90, p99 and max of delays in seconds, in ms (sse_load.summary's percentiles, and p90 the same way)."""
    if not delays:
        return None
    ordered = sorted(delays)
    result = sse_load.summary(ordered)
    return {"p50Ms": result["p50Ms"], "p90Ms": ms(ordered[max(0, int(len(ordered) * 0.9) - 1)]),
            "p99Ms": result["p99Ms"], "maxMs": result["maxMs"], "count": len(ordered)}


# ---- PostgreSQL ----


def postgres_bin():
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda path: [int(part) for part in
                                                                              re.findall(r"\d+", path)])
    return found[-1] if found and os.access(os.path.join(found[-1], "initdb"), os.X_OK) else None


class Postgres:
    """A role with CREATEDB (given, or of a throwaway cluster made as Tests/postgres/with-postgres makes it), the
    databases this run makes from it, and psql for SQL."""

    def __init__(self, uri=None, port=None, processes=None):
        self.root = None
        self.databases = []
        pg_bin = postgres_bin()
        self.psql = shutil.which("psql") or (pg_bin and os.path.join(pg_bin, "psql"))
        if not self.psql:
            raise RuntimeError("psql is missing: apt-get install postgresql-client")
        if uri:
            self.uri, self.source = uri, "given (--postgres or FLAGSTAFF_TEST_POSTGRES)"
            return
        if not pg_bin:
            raise RuntimeError("no PostgreSQL server binaries in /usr/lib/postgresql/*/bin (apt-get install "
                               "postgresql), and no --postgres or FLAGSTAFF_TEST_POSTGRES")
        if not port_is_free(port):
            raise RuntimeError(f"port {port} for the PostgreSQL cluster is taken; pick another --port-base")
        self.bin = pg_bin
        self.root = tempfile.mkdtemp(prefix="flagstaff-bench-pg.")
        self.as_owner, self.data = [], os.path.join(self.root, "data")
        try:
            self._start_cluster(pg_bin, port)
        except BaseException:
            self.close()
            raise

    def _start_cluster(self, pg_bin, port):
        os.chmod(self.root, 0o755)
        superuser = None
        if os.geteuid() == 0:  # initdb refuses root
            shutil.chown(self.root, "postgres", "postgres")
            self.as_owner, superuser = ["runuser", "-u", "postgres", "--"], "postgres"
        superuser = superuser or subprocess.run(["id", "-un"], capture_output=True, text=True).stdout.strip()
        password = os.urandom(16).hex()
        data = self.data
        initdb = subprocess.run(
            self.as_owner + [os.path.join(pg_bin, "initdb"), "-D", data, "-U", superuser, "-E", "UTF8",
                             "--auth-local=trust", "--auth-host=scram-sha-256"], capture_output=True, text=True)
        if initdb.returncode != 0:
            raise RuntimeError(f"initdb failed: {initdb.stdout}{initdb.stderr}")
        started = subprocess.run(
            self.as_owner + [os.path.join(pg_bin, "pg_ctl"), "-D", data, "-l", os.path.join(self.root, "log"), "-w",
                             "-o", f"-p {port} -k {self.root} -c listen_addresses=127.0.0.1", "start"],
            capture_output=True, text=True)
        if started.returncode != 0:
            raise RuntimeError(f"pg_ctl start failed: {started.stderr}")
        subprocess.run(
            self.as_owner + [os.path.join(pg_bin, "psql"), "-h", self.root, "-p", str(port), "-U", superuser, "-d",
                             "postgres", "-X", "-q", "-v", "ON_ERROR_STOP=1",
                             "-c", f"CREATE ROLE flagstaff LOGIN CREATEDB PASSWORD '{password}'",
                             "-c", "CREATE DATABASE flagstaff OWNER flagstaff"], check=True, capture_output=True)
        self.uri = f"postgresql://flagstaff:{password}@127.0.0.1:{port}/flagstaff"
        self.source = f"a throwaway cluster of this run on 127.0.0.1:{port} (PostgreSQL's defaults)"

    def sql(self, statement, uri=None):
        finished = subprocess.run([self.psql, uri or self.uri, "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1",
                                   "-c", statement], capture_output=True, text=True, timeout=60,
                                  env={**os.environ, "PGCONNECT_TIMEOUT": "10"})
        if finished.returncode != 0:
            raise RuntimeError(f"psql: {statement}: {finished.stderr.strip()}")
        return finished.stdout.strip()

    def create_database(self, prefix):
        name = f"{prefix}_{os.urandom(4).hex()}"
        self.sql(f"CREATE DATABASE {name}")
        self.databases.append(name)
        return name, urllib.parse.urlsplit(self.uri)._replace(path=f"/{name}").geturl()

    def transactions(self, database):
        """Transactions committed and rolled back in `database` so far, as the statistics system has them (each
        backend reports its counts when it goes idle, at most once a second)."""
        return int(self.sql("SELECT xact_commit + xact_rollback FROM pg_stat_database "
                            f"WHERE datname = '{database}'"))

    def settings(self):
        version = self.sql("SHOW server_version")
        values = self.sql("SELECT name || '=' || setting FROM pg_settings WHERE name IN "
                          "('fsync', 'synchronous_commit', 'shared_buffers', 'max_connections') ORDER BY name")
        return {"serverVersion": version, "settings": dict(line.split("=", 1) for line in values.splitlines())}

    def close(self):
        for name in self.databases:
            try:
                self.sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            except Exception as error:
                log(f"could not drop database {name}: {error}")
        self.databases = []
        if self.root:
            subprocess.run(self.as_owner + [os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-m", "immediate",
                                            "-w", "stop"], capture_output=True)
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None


# ---- flagservers ----


class Replica(writes.Server):
    """One flagserver of the run: writes.Server's kept-alive admin requests (`request`, `sdk_key`, for
    writes.kills), started and stopped here, on PostgreSQL when given a URI, else on SQLite in its data directory."""

    def __init__(self, run, name, port, postgres=None, arguments=()):  # pylint: disable=super-init-not-called
        self.name, self.port, self.admin = name, port, run.admin
        self.base = f"http://127.0.0.1:{port}"
        self.work = os.path.join(run.work, name)
        os.makedirs(self.work)
        config = os.path.join(self.work, "flagserver.json")
        with open(config, "w") as file:
            json.dump({"dataDirectory": os.path.join(self.work, "data"),
                       "seedDirectory": os.path.join(ROOT, "config", "flagsets"),
                       # nginx and every benchmark client are on loopback: no cap per address, and every stream
                       # gets its instance id as before the limit on new ids per address.
                       "limits": {"maxBodyBytes": 64 << 20, "maxConnections": MAX_STREAMS_PER_PROCESS + 1000,
                                  "maxConnectionsPerAddress": 0},
                       "telemetry": {"instanceMintBurst": 1_000_000}}, file)
        environment = {key: value for key, value in os.environ.items()
                       if key not in ("FLAGSERVER_POSTGRES", "FLAGSERVER_ADMIN_TOKEN")}
        environment["FLAGSERVER_ADMIN_TOKEN"] = run.admin
        if postgres:
            environment["FLAGSERVER_POSTGRES"] = postgres  # not --postgres: a command line shows in ps
        self.log_path = os.path.join(self.work, "flagserver.log")
        self.process = run.processes.start(
            [os.path.join(run.args.bin, "flagserver"), "--config", config, "--listen", f"127.0.0.1:{port}",
             *arguments], self.log_path, env=environment, cwd=self.work)
        self.processes = run.processes
        self.connection = None

    @property
    def pid(self):
        return self.process.pid

    def wait_ready(self, timeout=120):
        deadline = time.monotonic() + timeout
        while True:
            try:
                status, _, _ = self.get("/healthz")
                if status == 200:
                    break
            except OSError:
                pass
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited ({self.process.returncode}):\n{self.log_tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name} not ready within {timeout} s:\n{self.log_tail()}")
            time.sleep(0.1)
        self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)

    def log_tail(self, lines=20):
        try:
            with open(self.log_path, errors="replace") as file:
                return "".join(file.readlines()[-lines:])
        except OSError:
            return ""

    def request(self, method, path, body=None, token=None):
        try:
            return super().request(method, path, body, token)
        except (http.client.RemoteDisconnected, ConnectionError):
            self.connection.close()  # closed while idle (idleTimeoutSeconds): once more on a new connection
            return super().request(method, path, body, token)

    def get(self, path, token=None, headers=None):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            connection.request("GET", path, headers={"Authorization": f"Bearer {token or self.admin}",
                                                     **(headers or {})})
            response = connection.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            connection.close()

    def metrics(self):
        _, _, body = self.get("/metrics")
        values = {}
        for line in body.decode().splitlines():
            if line and not line.startswith("#"):
                name, _, value = line.rpartition(" ")
                values[name] = float(value)
        return values

    def open_streams(self):
        return int(self.metrics().get("flagserver_open_streams", 0))

    def stop(self):
        if self.connection:
            self.connection.close()
        self.processes.stop(self.process)


def start_on_one_database(run, count, port, database, arguments=()):
    """`count` replicas on a fresh PostgreSQL database named `database` (FLAGSTAFF_TEST_POSTGRES's cluster, else a
    throwaway one on port + 19), on ports port + 1…, each given `arguments` too; and an SDK key of the demo set that
    each accepts."""
    run.postgres = Postgres(os.environ.get("FLAGSTAFF_TEST_POSTGRES"), port + 19)
    _, uri = run.postgres.create_database(database)
    servers = []
    for number in range(1, count + 1):
        server = Replica(run, f"replica-{number}", port + number, uri, arguments)
        server.wait_ready()  # one after the other: the first seeds the empty database
        servers.append(server)
    key = servers[0].sdk_key("demo")
    for server in servers[1:]:
        wait_for(f"{server.name} to accept the SDK key",
                 lambda server=server: server.get("/v1/sets/demo", key)[0] == 200 or "not yet")
    return servers, key


def get(url, path, token, headers=None):
    parsed = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
    try:
        connection.request("GET", path, headers={"Authorization": f"Bearer {token}", **(headers or {})})
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def wait_for(what, check, timeout=30):
    deadline = time.monotonic() + timeout
    while True:
        try:
            last = check()
        except OSError as error:  # not listening yet
            last = error
        if last is True:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} within {timeout} s (last: {last})")
        time.sleep(0.05)


# ---- nginx ----


NGINX_UPSTREAM_SETTINGS = """\
        keepalive 64;                 # idle upstream connections per worker (needs HTTP/1.1 and Connection "")
        keepalive_timeout 50s;        # below flagserver's idleTimeoutSeconds (60)"""

NGINX_PROXY_SETTINGS = """\
    # To every location: HTTP/1.1 to the replicas, so that their connections are kept alive.
    proxy_http_version 1.1;
    proxy_set_header Connection "";
    proxy_set_header Host $host;
    proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
    # Streams send a heartbeat every 15 s and long-polls wait up to longPollMaxSeconds (300 s): read longer.
    proxy_read_timeout 1h;
    proxy_send_timeout 1h;"""

NGINX_STREAM_LOCATION = """\
        # SSE: every event on at once (flagserver also sends X-Accel-Buffering: no), nothing cached or zipped.
        location ~ ^/v1/sets/[^/]+/stream$ {{
            proxy_pass http://{upstream};
            proxy_buffering off;
            proxy_cache off;
            gzip off;
        }}"""


def nginx_config(work, ports, replica_ports, workers):
    def upstream(name, members, balance=""):
        servers = "\n".join(f"        server 127.0.0.1:{port};" for port in dict.fromkeys(members))
        return f"    upstream {name} {{\n{balance}{servers}\n{NGINX_UPSTREAM_SETTINGS}\n    }}"

    def server(port, upstream_name, admin=None):
        admin_location = (f"        # Admin writes go to replica 1 (any replica would do: they share the database).\n"
                          f"        location /v1/admin/ {{ proxy_pass http://{admin}; }}\n") if admin else ""
        return (f"    server {{\n        listen 127.0.0.1:{port};\n{admin_location}"
                f"{NGINX_STREAM_LOCATION.format(upstream=upstream_name)}\n"
                f"        location / {{ proxy_pass http://{upstream_name}; }}\n    }}")

    r1, r2, r3 = replica_ports
    temp = os.path.join(work, "tmp")
    return "\n".join([
        "user root;" if os.geteuid() == 0 else "",
        f"worker_processes {workers};",
        "worker_rlimit_nofile 19000;      # a proxied stream holds two descriptors",
        f"pid {work}/nginx.pid;",
        f"error_log {work}/error.log warn;",
        "events { worker_connections 9000; }",
        "http {",
        "    access_log off;",
        f"    client_body_temp_path {temp}/body;",
        f"    proxy_temp_path {temp}/proxy;",
        f"    fastcgi_temp_path {temp}/fastcgi;",
        f"    uwsgi_temp_path {temp}/uwsgi;",
        f"    scgi_temp_path {temp}/scgi;",
        NGINX_PROXY_SETTINGS,
        upstream("flagstaff_writer", [r1]),
        # Streams are long: balance by open connections, counted across workers (zone). The two upstreams that
        # wrk compares differ in their servers only.
        upstream("flagstaff_streams", [r2, r3], "        least_conn;\n        zone flagstaff_streams 64k;\n"),
        upstream("flagstaff_one", [r1], "        least_conn;\n        zone flagstaff_one 64k;\n"),
        upstream("flagstaff_all", [r1, r2, r3], "        least_conn;\n        zone flagstaff_all 64k;\n"),
        server(ports["streams"], "flagstaff_streams", admin="flagstaff_writer"),
        server(ports["one"], "flagstaff_one"),
        server(ports["all"], "flagstaff_all"),
        "}", ""])


class Nginx:
    def __init__(self, run, ports, replica_ports):
        binary = shutil.which("nginx") or "/usr/sbin/nginx"
        self.work = os.path.join(run.work, "nginx")
        os.makedirs(os.path.join(self.work, "tmp"))
        self.config_path = os.path.join(self.work, "nginx.conf")
        self.config = nginx_config(self.work, ports, replica_ports, os.cpu_count())
        with open(self.config_path, "w") as file:
            file.write(self.config)
        error_log = os.path.join(self.work, "error.log")
        check = subprocess.run([binary, "-t", "-c", self.config_path, "-p", self.work, "-e", error_log],
                               capture_output=True, text=True)
        if check.returncode != 0:
            raise RuntimeError(f"nginx -t: {check.stderr}")
        self.process = run.processes.start(
            [binary, "-c", self.config_path, "-p", self.work, "-e", error_log, "-g", "daemon off;"],
            os.path.join(self.work, "stdout.log"))
        self.urls = {name: f"http://127.0.0.1:{port}" for name, port in ports.items()}

    def wait_ready(self, key):
        for url in self.urls.values():
            wait_for(f"nginx answering on {url}",
                     lambda url=url: get(url, f"/v1/sets/{SET}", key)[0] == 200 or self.process.poll(), timeout=30)
        if self.process.poll() is not None:
            raise RuntimeError("nginx exited")

    def worker_pids(self):
        return children_of(self.process.pid)


# ---- streams ----


class DechunkedStream(sse_load.Stream):
    """sse_load's stream, for a body sent chunked too: nginx sends an HTTP/1.1 client a stream whose length the
    replica did not give (flagserver closes a stream's connection to end it) in chunks, whose size lines would
    otherwise land inside events. Bodies that are not chunked go to sse_load's parser as they come."""

    def __init__(self, sock):
        super().__init__(sock)
        self.head = bytearray()
        self.chunked = None  # unknown until the head is in
        self.wire = bytearray()
        self.left = 0  # bytes left in the current chunk; -1: its CRLF is next; 0: a size line is next

    def feed(self, now, chunk):
        if self.chunked is None:
            self.head += chunk
            end = self.head.find(b"\r\n\r\n")
            if end < 0:
                return
            self.chunked = b"transfer-encoding: chunked" in bytes(self.head[:end]).lower()
            chunk = bytes(self.head[end + 4:])
            self.head = None
        if not self.chunked:
            super().feed(now, chunk)
            return
        self.wire += chunk
        body = bytearray()
        while self.wire:
            if self.left > 0:
                taken = self.wire[:self.left]
                body += taken
                del self.wire[:len(taken)]
                self.left -= len(taken)
                if self.left == 0:
                    self.left = -1
            elif self.left == -1:
                if len(self.wire) < 2:
                    break
                del self.wire[:2]
                self.left = 0
            else:
                end = self.wire.find(b"\r\n")
                if end < 0:
                    break
                size = int(bytes(self.wire[:end]).split(b";")[0], 16)
                del self.wire[:end + 2]
                if size == 0:
                    self.wire.clear()  # the last chunk: the stream ends
                    break
                self.left = size
        if body:
            super().feed(now, bytes(body))


def open_streams(url, key, count):
    """sse_load.open_streams with DechunkedStream for its streams (it makes them by sse_load.Stream's name)."""
    plain = sse_load.Stream
    sse_load.Stream = DechunkedStream
    try:
        return sse_load.open_streams(url, SET, key, count)
    finally:
        sse_load.Stream = plain


def merge_selectors(into, other):
    for key in list(other.get_map().values()):
        other.unregister(key.fileobj)
        into.register(key.fileobj, selectors.EVENT_READ, key.data)
    other.close()


def close_streams(selector, streams):
    for stream in streams:
        try:
            selector.unregister(stream.sock)
        except (KeyError, ValueError):
            pass
        stream.sock.close()
    selector.close()


class Answer:
    """An admin POST whose answer sse_load.pump reads (a raw sse_load.Stream: bytes and their kernel receive
    times) while it serves the streams; kept alive so that the server's close is not taken for a stream's."""

    def __init__(self, selector, url, path, admin, body):
        parsed = urllib.parse.urlsplit(url)
        self.selector = selector
        sock = socket.create_connection((parsed.hostname, parsed.port), timeout=30)
        sock.setsockopt(socket.SOL_SOCKET, sse_load.SO_TIMESTAMPNS, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(
            (f"POST {path} HTTP/1.1\r\nHost: {parsed.netloc}\r\nAuthorization: Bearer {admin}\r\n"
             f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body)
        sock.setblocking(False)
        self.stream = sse_load.Stream(sock)
        self.stream.raw = True
        selector.register(sock, selectors.EVENT_READ, self.stream)
        self.status = self.body = self.at = self.kernel_at = None

    def done(self):
        """Whether the whole answer is in (then `status`, `body`, `at`: monotonic time it was seen complete,
        `kernel_at`: wall-clock kernel receive time of its last bytes)."""
        if self.body is not None:
            return True
        buffer = self.stream.buffer
        end = buffer.find(b"\r\n\r\n")
        if end < 0:
            return False
        head = bytes(buffer[:end]).decode("latin-1").split("\r\n")
        fields = {name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in head[1:])}
        body = bytes(buffer[end + 4:])
        if "content-length" in fields:
            if len(body) < int(fields["content-length"]):
                return False
            body = body[:int(fields["content-length"])]
        elif fields.get("transfer-encoding", "").lower() == "chunked":
            if not body.endswith(b"0\r\n\r\n"):
                return False
            decoded, rest = b"", body
            while True:
                size_line, _, rest = rest.partition(b"\r\n")
                size = int(size_line.split(b";")[0], 16)
                if size == 0:
                    break
                decoded, rest = decoded + rest[:size], rest[size + 2:]
            body = decoded
        self.at = time.monotonic()
        self.kernel_at = self.stream.kernel_times[-1] if self.stream.kernel_times else None
        self.status = int(head[0].split()[1])
        self.body = body
        self.selector.unregister(self.stream.sock)
        self.stream.sock.close()
        return True


def write_round(selector, groups, url, path, admin, flag, timeout=60):
    """Sends one admin write (kill or restore of `flag`) to `url` and waits until every stream of every group has
    the patch. Returns the answer (an Answer) and, per group, (stream's read time, its kernel receive time or None,
    the patch data), with when the request was sent: monotonic and wall-clock."""
    needle = json.dumps(flag).encode()
    for streams in groups.values():
        for stream in streams:
            stream.events.clear()
            stream.kernel_times.clear()
    pending = {(group, index): stream for group, streams in groups.items() for index, stream in enumerate(streams)}
    arrivals = {group: [] for group in groups}
    sent_wall = time.time()
    sent = time.monotonic()
    answer = Answer(selector, url, path, admin, b'{"reason":"benchmark"}')
    deadline = sent + timeout
    while not answer.done() or pending:
        if answer.body is not None and (answer.status != 200 or not json.loads(answer.body).get("changed", True)):
            break  # no patch is coming
        if time.monotonic() > deadline:
            raise RuntimeError(f"{len(pending)} streams without the patch (answer: {answer.status}) after {timeout} s")
        sse_load.pump(selector, 1.0)
        for slot in [slot for slot, stream in pending.items() if stream.events]:
            stream = pending[slot]
            for at, name, data in stream.events:
                if name == "patch" and needle in data:
                    # The chunk that completed the patch is the last one read.
                    arrivals[slot[0]].append((at, stream.kernel_times[-1] if stream.kernel_times else None, data))
                    del pending[slot]
                    break
    if answer.status != 200:
        raise RuntimeError(f"POST {path} answered {answer.status}: {answer.body[:300]!r}")
    if not json.loads(answer.body).get("changed", True):
        raise RuntimeError(f"POST {path} changed nothing: {answer.body[:300]!r}")
    version = json.loads(answer.body)["version"]
    for group, found in arrivals.items():
        versions = {json.loads(data)["version"] for _, _, data in found}
        if versions != {version}:
            raise RuntimeError(f"streams of {group} got patches of versions {versions}, the write made {version}")
    return answer, arrivals, sent, sent_wall, version


# ---- the parts ----


class Run:
    def __init__(self, args):
        self.args = args
        self.processes = Processes()
        self.work = tempfile.mkdtemp(prefix="flagstaff-replicas.")
        self.admin = "fsa_bench_" + os.urandom(16).hex()
        self.postgres = None
        self.writes = 0  # kills and restores of FLAG so far: they alternate across the parts

    def next_action(self):
        self.writes += 1
        return "kill" if self.writes % 2 == 1 else "restore"


def kill_path(action):
    return f"/v1/admin/sets/{SET}/flags/{FLAG}/{action}"


def part_kill_through_nginx(run, replicas, nginx, key):
    args = run.args
    log(f"1. {args.streams} streams through nginx to replicas 2 and 3; {args.rounds} rounds of kill/restore "
        "through nginx's admin location (replica 1)")
    selector, streams = open_streams(nginx.urls["streams"], key, args.streams)
    try:
        spread = {}
        if not args.sqlite_only:
            wait_for("the streams counted by replicas 2 and 3",
                     lambda: sum(r.open_streams() for r in replicas[1:]) >= args.streams or "not yet")
            spread = {replica.name: replica.open_streams() for replica in replicas}
        sse_load.stamp(streams)
        kernel, client, first, rounds = [], [], [], []
        for index in range(args.rounds):
            action = run.next_action()
            answer, arrivals, sent, sent_wall, version = write_round(
                selector, {"nginx": streams}, nginx.urls["streams"], kill_path(action), run.admin, FLAG)
            found = arrivals["nginx"]
            round_kernel = [k - sent_wall for _, k, _ in found if k is not None]
            round_client = [at - sent for at, _, _ in found]
            kernel += round_kernel
            client += round_client
            if round_kernel:
                first.append(min(round_kernel))
            answered = answer.kernel_at - sent_wall if answer.kernel_at is not None else answer.at - sent
            rounds.append({"action": action, "version": version, "answeredMs": ms(answered),
                           "kernelP99Ms": (distribution(round_kernel) or {}).get("p99Ms"),
                           "clientP99Ms": distribution(round_client)["p99Ms"]})
            time.sleep(0.3)
    finally:
        close_streams(selector, streams)
    result = {"streams": len(streams), "rounds": args.rounds, "openStreamsPerReplica": spread,
              "writeSentTo": "nginx, location /v1/admin/ → upstream of replica 1 (a new client connection per write)",
              "kernel": distribution(kernel), "client": distribution(client), "firstStreamKernel": distribution(first),
              "answered": distribution([r["answeredMs"] / 1000 for r in rounds]), "perRound": rounds,
              "boundP99Ms": 100}
    result["boundMet"] = bool(result["kernel"] and result["kernel"]["p99Ms"] <= 100)
    return result


def part_commit_to_patch(run, replicas, key, numbers):
    args = run.args
    per = args.streams_per_replica
    log(f"2. {per} streams directly on each of replicas {', '.join(map(str, numbers))}; {args.rounds} rounds of "
        "kill/restore sent to replica 1")
    groups, selector = {}, None
    try:
        for number, replica in enumerate(replicas, start=1):
            if number not in numbers:
                continue
            replica_selector, streams = open_streams(replica.base, key, per)
            if selector is None:
                selector = replica_selector
            else:
                merge_selectors(selector, replica_selector)
            groups[f"replica {number}"] = streams
        sse_load.stamp([stream for streams in groups.values() for stream in streams])
        samples = {name: {"fromAnswerKernel": [], "fromAnswerClient": [], "fromSendKernel": [], "firstFromAnswer": []}
                   for name in groups}
        answered = []
        for index in range(args.rounds):
            action = run.next_action()
            answer, arrivals, sent, sent_wall, _ = write_round(selector, groups, replicas[0].base,
                                                               kill_path(action), run.admin, FLAG)
            answered.append(answer.kernel_at - sent_wall if answer.kernel_at is not None else answer.at - sent)
            for name, found in arrivals.items():
                kernel_times = [k for _, k, _ in found if k is not None]
                if answer.kernel_at is not None:
                    samples[name]["fromAnswerKernel"] += [k - answer.kernel_at for k in kernel_times]
                    if kernel_times:
                        samples[name]["firstFromAnswer"].append(min(kernel_times) - answer.kernel_at)
                samples[name]["fromAnswerClient"] += [at - answer.at for at, _, _ in found]
                samples[name]["fromSendKernel"] += [k - sent_wall for k in kernel_times]
            time.sleep(0.3)
    finally:
        if selector:
            close_streams(selector, [stream for streams in groups.values() for stream in streams])
    return {
        "streamsPerReplica": per, "streamsOn": [f"replica {number}" for number in numbers], "rounds": args.rounds,
        "writeSentTo": "replica 1 directly",
        "answered": distribution(answered),
        "replicas": {name: {"fromAnswer": {"kernel": distribution(s["fromAnswerKernel"]),
                                           "client": distribution(s["fromAnswerClient"])},
                            "firstStreamFromAnswer": distribution(s["firstFromAnswer"]),
                            "fromSend": {"kernel": distribution(s["fromSendKernel"])}}
                     for name, s in samples.items()},
        "note": "fromAnswer: patch receipt minus the receipt of the write's 200 (negative: published before the "
                "answer; replica 1 writes its own streams before it answers, so with streams on replica 1 the answer "
                "comes after that fan-out, not at the commit); firstStreamFromAnswer: the replica's first stream in "
                "each round, the NOTIFY path without the fan-out; fromSend: from just before the write was sent",
    }


def wrk_run(url, headers, duration, pids):
    """One wrk run: req/s, p99, and the CPU time of wrk, nginx's workers and the replicas meanwhile."""
    command = ["wrk", "-t2", "-c64", f"-d{duration}s", "--latency"]
    for header in headers:
        command += ["-H", header]
    before = {group: cpu_seconds(group_pids) for group, group_pids in pids.items()}
    children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    finished = subprocess.run(command + [url], capture_output=True, text=True, timeout=duration + 60)
    wall = time.monotonic() - started
    used = {group: cpu_seconds(group_pids) - before[group] for group, group_pids in pids.items()}
    children_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    output = finished.stdout + finished.stderr
    if finished.returncode != 0 or "Requests/sec" not in output:
        raise RuntimeError(f"wrk failed: {output}")
    if "Non-2xx or 3xx" in output:
        raise RuntimeError(f"wrk got error answers from {url}: {output}")
    requests = int(re.search(r"(\d+) requests in", output).group(1))
    p99 = re.search(r"^\s*99%\s+([\d.]+)(us|ms|s)\s*$", output, re.M)
    used["wrk"] = ((children_after.ru_utime + children_after.ru_stime)
                   - (children_before.ru_utime + children_before.ru_stime))
    cpu = {group: round(seconds / wall * 100) for group, seconds in used.items()}
    per_request = {group: round(seconds / requests * 1e6, 1) for group, seconds in used.items()}
    socket_errors = re.search(r"Socket errors:.*", output)
    return {"requestsPerSecond": round(float(re.search(r"Requests/sec:\s*([\d.]+)", output).group(1))),
            "requests": requests, "seconds": round(wall, 2),
            "p99Ms": round(float(p99.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[p99.group(2)], 2) if p99 else None,
            "cpuPercent": cpu, "cpuMicrosecondsPerRequest": per_request,
            "socketErrors": socket_errors.group(0) if socket_errors else None}


def part_serving(run, replicas, nginx, key, database):
    args = run.args
    duration = 1 if args.quick else args.wrk_seconds
    pg = run.postgres
    log(f"3. wrk -t2 -c64 -d{duration}s through nginx, upstream of 1 replica, then 3; directly to replica 1")
    url_path = f"/v1/sets/{SET}"
    status, headers, _ = get(nginx.urls["all"], url_path, key)
    etag = headers["etag"]
    etags = {replica.name: replica.get(url_path, key)[1].get("ETag") for replica in replicas}
    if len(set(etags.values())) != 1:
        raise RuntimeError(f"the replicas serve different versions: {etags}")
    for url in (nginx.urls["one"], nginx.urls["all"], replicas[0].base):
        not_modified = get(url, url_path, key, {"If-None-Match": etag})[0]
        if not_modified != 304:
            raise RuntimeError(f"{url} answered {not_modified} to If-None-Match: {etag}")
    pids = {"nginx": nginx.worker_pids(), "replicas": sorted({replica.pid for replica in replicas})}

    def served(replica):
        return sum(value for name, value in replica.metrics().items()
                   if name.startswith("flagserver_requests_total{") and f'route="GET /v1/sets/{{set}}"' in name)

    transactions = {}
    if pg:
        time.sleep(2)  # the statistics of the writes before are in (backends report at most once a second)
        before = pg.transactions(database)
        time.sleep(duration)
        transactions["idle"] = {"transactions": pg.transactions(database) - before, "seconds": duration}
    cases = {}
    for path_case, extra in (("200", []), ("304", [f"If-None-Match: {etag}"])):
        for upstream, url in (("nginx, 1 replica", nginx.urls["one"]), ("nginx, 3 replicas", nginx.urls["all"]),
                              ("direct, replica 1", replicas[0].base)):
            counts = [served(replica) for replica in replicas] if not args.sqlite_only else None
            before = pg.transactions(database) if pg else None
            result = wrk_run(url + url_path, [f"Authorization: Bearer {key}"] + extra, duration, pids)
            if pg:
                transactions[f"{path_case}, {upstream}"] = {"transactions": pg.transactions(database) - before,
                                                            "seconds": result["seconds"],
                                                            "requests": result["requests"]}
            if counts is not None:
                result["servedPerReplica"] = {replica.name: int(served(replica) - count)
                                              for replica, count in zip(replicas, counts)}
            cases[f"{path_case}, {upstream}"] = result
            log(f"   {path_case}, {upstream}: {result['requestsPerSecond']} req/s, cpu {result['cpuPercent']}")
    for entry in transactions.values():
        entry["perSecond"] = round(entry["transactions"] / entry["seconds"], 1)
    ratios = {case: round(cases[f"{case}, nginx, 3 replicas"]["requestsPerSecond"]
                          / cases[f"{case}, nginx, 1 replica"]["requestsPerSecond"], 2) for case in ("200", "304")}
    return {"wrk": f"wrk -t2 -c64 -d{duration}s --latency", "etag": etag, "cases": cases,
            "threeOverOneReplica": ratios, "postgresTransactions": transactions or None,
            "cpuPercentNote": "of one core (the machine has %d); wrk, nginx (%d workers), the replicas, PostgreSQL "
                              "and this script share them" % (os.cpu_count(), len(pids["nginx"]))}


def part_idle_streams(run, servers, key_of):
    args = run.args
    log(f"5. {args.idle_streams} idle streams on each of: {', '.join(servers)}")
    results = {}
    for label, server in servers.items():
        time.sleep(1)
        before = sse_load.rss_kib(server.pid)
        started = time.monotonic()
        selector, streams = open_streams(server.base, key_of[label], args.idle_streams)
        opened = time.monotonic() - started
        sse_load.pump(selector, 2.0)  # nothing should come now
        after = sse_load.rss_kib(server.pid)
        close_streams(selector, streams)
        results[label] = {"streams": len(streams), "openSeconds": round(opened, 2), "rssBeforeKiB": before,
                          "rssAfterKiB": after, "perStreamKiB": round((after - before) / len(streams), 2)}
        wait_for(f"{label} to close its streams", lambda: server.open_streams() == 0 or "not yet", timeout=60)
    return results


def part_big_set_kill(run, servers):
    args = run.args
    count = 1_000 if args.quick else 10_000
    runs = 10 if args.quick else args.kill_runs
    log(f"4. kills on {count:,} flags, {runs} each (after 10 warming), on: {', '.join(servers)}")
    cases = {}
    for rules in (False, True):
        name = f"s{count}{'r' if rules else ''}"
        document = writes.set_document(name, count, rules)
        for label, server in servers.items():
            started = time.perf_counter()
            server.request("POST", "/v1/admin/sets", {"name": name, "reason": "bench", "document": document})
            created = time.perf_counter() - started
            times = writes.kills(server, name, runs)
            case = f"kill, {count:,} flags, {'with' if rules else 'without'} rules"
            cases.setdefault(case, {})[label] = {
                "medianMs": round(statistics.median(times), 2), "p90Ms": round(writes.percentile(times, 0.9), 2),
                "kills": len(times), "setCreatedSeconds": round(created, 2)}
    small = {}
    for label, server in servers.items():  # the demo set's 10-odd flags, for scale
        server.request("POST", f"{kill_path('restore')}", {"reason": "bench"})
        times = []
        for index in range(runs + 10):
            elapsed, _ = server.request("POST", kill_path("kill" if index % 2 == 0 else "restore"), {"reason": "b"})
            if index >= 10:
                times.append(elapsed)
        small[label] = {"medianMs": round(statistics.median(times), 2),
                        "p90Ms": round(writes.percentile(times, 0.9), 2), "kills": len(times)}
    cases[f"kill, demo set ({FLAG})"] = small
    return {"timing": "writes.kills: one kept-alive connection, first byte to the answer's last, kills alternating "
                      "with restores", "cases": cases}


# ---- the run ----


def ports_of(base):
    return {"replicas": [base, base + 1, base + 2],
            "nginx": {"streams": base + 3, "one": base + 4, "all": base + 5},
            "singlePostgres": base + 6, "singleSQLite": base + 7, "cluster": base + 19}


def tools(args):
    """nginx (installed with apt when missing and root) and whether wrk can run (skipped in --quick when missing)."""
    missing = [tool for tool in ("nginx", "wrk") if not (shutil.which(tool) or os.path.exists(f"/usr/sbin/{tool}"))]
    if args.quick and "wrk" in missing:
        missing.remove("wrk")
    if missing:
        if os.geteuid() != 0:
            raise RuntimeError(f"missing: {' '.join(missing)} (apt-get install -y {' '.join(missing)})")
        log(f"installing: {' '.join(missing)}")
        environment = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        if subprocess.run(["apt-get", "install", "-y", "-qq"] + missing, env=environment,
                          stdout=sys.stderr).returncode != 0:
            subprocess.run(["apt-get", "update", "-qq"], env=environment, stdout=sys.stderr, check=True)
            subprocess.run(["apt-get", "install", "-y", "-qq"] + missing, env=environment, stdout=sys.stderr,
                           check=True)
    return bool(shutil.which("wrk"))


def measure(run):
    args = run.args
    ports = ports_of(args.port_base)
    wanted = ports["replicas"] + list(ports["nginx"].values()) + [ports["singlePostgres"], ports["singleSQLite"]]
    taken = [port for port in wanted if not port_is_free(port)]
    if taken:
        raise RuntimeError(f"ports {taken} are taken; pick another --port-base")
    have_wrk = tools(args)
    info = {"machine": machine(), "bin": os.path.abspath(args.bin), "quick": args.quick,
            "mode": "sqlite-only (one server plays the three replicas)" if args.sqlite_only else "postgres",
            "nginx": tool_version([shutil.which("nginx") or "/usr/sbin/nginx", "-v"], r"nginx/(\S+)"),
            "wrk": tool_version(["wrk", "--version"], r"wrk (\S+)") if have_wrk else None,
            "python": platform.python_version()}
    if not args.sqlite_only:
        run.postgres = Postgres(args.postgres or os.environ.get("FLAGSTAFF_TEST_POSTGRES"), ports["cluster"])
        info["postgres"] = {"source": run.postgres.source, **run.postgres.settings()}
    result = {"run": info}

    # ---- parts 1-3: three replicas on one database behind nginx ----
    database = None
    if args.sqlite_only:
        only = Replica(run, "replica-1", ports["replicas"][0])
        only.wait_ready()
        replicas = [only, only, only]
    else:
        database, uri = run.postgres.create_database("flagstaff_replicas")
        replicas = []
        for number, port in enumerate(ports["replicas"], start=1):
            replica = Replica(run, f"replica-{number}", port, uri)
            replica.wait_ready()  # one after the other: the first seeds the empty database
            replicas.append(replica)
    log(f"replicas up: {', '.join(r.base for r in dict.fromkeys(replicas))}")
    key = replicas[0].sdk_key(SET)
    for replica in replicas[1:]:
        wait_for(f"{replica.name} to accept the SDK key made on replica 1",
                 lambda replica=replica: replica.get(f"/v1/sets/{SET}", key)[0] == 200 or "not yet")
    nginx = Nginx(run, ports["nginx"], [replica.port for replica in replicas])
    nginx.wait_ready(key)
    result["nginxConfig"] = nginx.config
    result["killThroughNginx"] = part_kill_through_nginx(run, replicas, nginx, key)
    # As asked (streams on every replica), then with none on the writer: its answer is then the commit, and with
    # as many streams per replica as part 1 puts on replicas 2 and 3, part 1 without nginx.
    result["commitToPatch"] = {"streamsOnReplicas123": part_commit_to_patch(run, replicas, key, (1, 2, 3)),
                               "streamsOnReplicas23": part_commit_to_patch(run, replicas, key, (2, 3))}
    if have_wrk:
        result["serving"] = part_serving(run, replicas, nginx, key, database)
    else:
        result["serving"] = None
        log("3. skipped: no wrk")
    for replica in dict.fromkeys(replicas):
        replica.stop()
    run.processes.stop(nginx.process)

    # ---- parts 5 and 4: one server on PostgreSQL against one on SQLite, fresh ----
    servers = {}
    if not args.sqlite_only:
        _, uri = run.postgres.create_database("flagstaff_single")
        servers["postgres"] = Replica(run, "single-postgres", ports["singlePostgres"], uri)
    servers["sqlite"] = Replica(run, "single-sqlite", ports["singleSQLite"])
    for server in servers.values():
        server.wait_ready()
    keys = {label: server.sdk_key(SET) for label, server in servers.items()}
    result["idleStreams"] = part_idle_streams(run, servers, keys)
    result["bigSetKill"] = part_big_set_kill(run, servers)
    for server in servers.values():
        server.stop()
    result["run"]["loadAverageEnd"] = [round(value, 2) for value in os.getloadavg()]
    return result


def summarize(result):
    run = result["run"]
    m = run["machine"]
    lines = [f"{m['date']}; {m['cpu']}, {m['cores']} cores, {m['memoryGiB']} GiB; load average "
             f"{m['loadAverage']} → {run.get('loadAverageEnd')}; {run['mode']}"
             + (f"; PostgreSQL {run['postgres']['serverVersion']} {run['postgres']['settings']}"
                if "postgres" in run else "")]
    part = result["killThroughNginx"]
    k, c = part["kernel"], part["client"]
    lines.append(f"1. kill → {part['streams']:,} streams through nginx ({part['openStreamsPerReplica'] or '-'}), "
                 f"{part['rounds']} rounds: kernel p50 {k['p50Ms']} p90 {k['p90Ms']} p99 {k['p99Ms']} max "
                 f"{k['maxMs']} ms (bound p99 ≤ 100 ms: {'met' if part['boundMet'] else 'NOT met'}); read by "
                 f"Python p99 {c['p99Ms']} ms; first stream p50 {part['firstStreamKernel']['p50Ms']} ms; the write "
                 f"answered in p50 {part['answered']['p50Ms']} ms")
    for part in result["commitToPatch"].values():
        cells = []
        for name, figures in part["replicas"].items():
            kernel, first = figures["fromAnswer"]["kernel"], figures["firstStreamFromAnswer"]
            sent = figures["fromSend"]["kernel"]
            cells.append(f"{name}: p50 {kernel['p50Ms']} p99 {kernel['p99Ms']} (first stream p50 {first['p50Ms']}; "
                         f"from the send p50 {sent['p50Ms']} p99 {sent['p99Ms']})")
        lines.append(f"2. kill answered by replica 1 → patch, {part['streamsPerReplica']} streams on each of "
                     f"{', '.join(part['streamsOn'])}, kernel, ms: " + "; ".join(cells)
                     + f"; the kill answered in p50 {part['answered']['p50Ms']} ms")
    serving = result["serving"]
    if serving:
        cases = serving["cases"]
        for case in ("200", "304"):
            lines.append(f"3. {case}: nginx → 1 replica {cases[f'{case}, nginx, 1 replica']['requestsPerSecond']:,} "
                         f"req/s, → 3 replicas {cases[f'{case}, nginx, 3 replicas']['requestsPerSecond']:,} "
                         f"(×{serving['threeOverOneReplica'][case]}), direct to replica 1 "
                         f"{cases[f'{case}, direct, replica 1']['requestsPerSecond']:,}; CPU µs per request "
                         f"(nginx → 3 replicas) {cases[f'{case}, nginx, 3 replicas']['cpuMicrosecondsPerRequest']}, "
                         f"(direct) {cases[f'{case}, direct, replica 1']['cpuMicrosecondsPerRequest']}")
        if serving["postgresTransactions"]:
            rates = {case: entry["perSecond"] for case, entry in serving["postgresTransactions"].items()}
            lines.append(f"   PostgreSQL transactions per second (replicas' database): {rates}")
    for case, labels in result["bigSetKill"]["cases"].items():
        lines.append(f"4. {case}: " + "; ".join(f"{label} {figures['medianMs']} ({figures['p90Ms']}) ms"
                                                 for label, figures in labels.items()))
    lines.append("5. idle streams: " + "; ".join(
        f"{label} {figures['streams']:,} streams, RSS {figures['rssBeforeKiB']:,} → {figures['rssAfterKiB']:,} KiB, "
        f"{figures['perStreamKiB']} KiB per stream" for label, figures in result["idleStreams"].items()))
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True, help="the directory of the flagserver (built with the Postgres trait)")
    parser.add_argument("--quick", action="store_true", help="a few seconds per part: a CI smoke run")
    parser.add_argument("--port-base", type=int, default=18500, help="ports PORT_BASE+0..7 and +19 (default 18500)")
    parser.add_argument("--postgres", help="a libpq URI for a role with CREATEDB (default: FLAGSTAFF_TEST_POSTGRES, "
                                           "else a throwaway cluster of this run)")
    parser.add_argument("--sqlite-only", action="store_true",
                        help="no PostgreSQL: one SQLite server plays the three replicas (checks the script only)")
    parser.add_argument("--streams", type=int, default=1_000, help="part 1: streams through nginx")
    parser.add_argument("--streams-per-replica", type=int, default=500,
                        help="part 2: streams on each replica (default: half of part 1's, so that part 2 without "
                             "streams on replica 1 is part 1 without nginx)")
    parser.add_argument("--rounds", type=int, default=10, help="parts 1 and 2: kills and restores")
    parser.add_argument("--wrk-seconds", type=int, default=10, help="part 3: each wrk run")
    parser.add_argument("--kill-runs", type=int, default=50, help="part 4: kills per case (after 10 warming)")
    parser.add_argument("--idle-streams", type=int, default=10_000, help=f"part 5 (at most {MAX_STREAMS_PER_PROCESS})")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (logs, configs)")
    args = parser.parse_args()
    if args.quick:
        args.streams, args.streams_per_replica, args.rounds = 50, 20, 3
        args.idle_streams, args.kill_runs = 300, 10
    args.bin = os.path.abspath(args.bin)
    if not os.access(os.path.join(args.bin, "flagserver"), os.X_OK):
        parser.error(f"no flagserver in {args.bin}")
    if args.idle_streams > MAX_STREAMS_PER_PROCESS:
        parser.error(f"--idle-streams: at most {MAX_STREAMS_PER_PROCESS} (20,000 descriptors per process)")
    help_text = subprocess.run([os.path.join(args.bin, "flagserver"), "--help"], capture_output=True, text=True)
    if not args.sqlite_only and "--postgres" not in help_text.stdout + help_text.stderr:
        parser.error(f"{args.bin}/flagserver has no --postgres: build it with --traits Postgres, or use --sqlite-only")
    # Streams hold descriptors here and in the servers, which inherit the limit.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    needed = max(args.idle_streams, args.streams, 3 * args.streams_per_replica) + 1000
    if hard < needed:
        parser.error(f"the descriptor limit is {hard}; {needed} needed")

    def stop(signum, _frame):
        raise SystemExit(128 + signum)

    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, stop)
    run = Run(args)
    try:
        result = measure(run)
    except BaseException:
        for path in sorted(glob.glob(os.path.join(run.work, "*", "*.log"))):
            with open(path, errors="replace") as file:
                tail = file.readlines()[-15:]
            if tail:
                log(f"--- {path} (last lines)\n{''.join(tail)}")
        raise
    finally:
        run.processes.stop_all()
        if run.postgres:
            run.postgres.close()
        if args.keep:
            log(f"kept {run.work}")
        else:
            shutil.rmtree(run.work, ignore_errors=True)
    json.dump(result, sys.stdout, indent=1)
    print()
    log(summarize(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
