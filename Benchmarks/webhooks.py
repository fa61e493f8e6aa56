#!/usr/bin/env python3
"""Webhooks (docs/webhooks.md): how fast an event reaches a receiver, what the outbox adds to a write, how many
deliveries a server makes per second, and that three replicas on one PostgreSQL deliver every event when the one
sending is killed. Prints Markdown; not part of CI except as `--quick` smoke runs.

  webhooks.py --bin .build/release [--kills 300]                       one flagserver on SQLite: the speed parts
  webhooks.py --bin .build/bench-release/release --replicas [--writes 1000]
                                                                      three on PostgreSQL (under with-postgres, or
                                                                      a throwaway cluster of its own)

Speed, on SQLite: a fast receiver in this process (Python's threaded HTTP server, answering 204).
  1. What the outbox adds to a kill: --kills kills and restores of one flag, timed from send to answer over one
     kept-alive connection: with no hook; with a hook for other events (the hooks are read in the write's
     transaction, nothing is queued); with one hook whose receiver hangs (each kill queues its event, and the
     sender, waiting on the first, writes nothing); with one hook covering every event, each kill sent once the one
     before was delivered (so the sender's own two transactions, the lease and the outcome, come between the
     kills).
  2. Commit to POST: for each kill with the hook, from the kill's answer (its transaction committed) to the
     receiver's reading of the delivery's body, and from the send.
  3. Deliveries per second: 8 hooks, then 400 writes queued as fast as one connection makes them; from the first
     write to the last delivery. A hook's deliveries go one at a time, so this counts a pass's parallel posts.

Replicas: --writes kills and restores, sent to replicas 1, 2, 3 in turn, to a receiver that takes 20 ms to answer
(so that a delivery is in flight most of the time). After a third of the writes, the replica holding a lease
(`lease_owner` names its pid) is killed with SIGKILL, and the writes go on through the other two. Then every event
must arrive: each event's first arrival is counted, in the order of the versions, and the duplicates (deliveries in
flight at the kill) are printed. Standard library only; reuses replicas.py and writes.py. Ports PORT_BASE+0..4 (18640 on) and
+19.
"""

import argparse
import base64
import http.server
import json
import os
import signal
import statistics
import sys
import threading
import time
import urllib.parse

import replicas
import writes


class Receiver:
    """A receiver on 127.0.0.1 that answers 204 and notes when each delivery's body was read, by path; `/stuck`
    answers after 10 s (past the sender's timeout), every other path after `delay`."""

    def __init__(self, delay=0.0):
        self.arrivals = []  # (perf_counter, path, webhook-id, event)
        self.lock = threading.Lock()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                at = time.perf_counter()
                with receiver.lock:
                    receiver.arrivals.append((at, self.path, self.headers.get("webhook-id"), json.loads(body)))
                time.sleep(10 if self.path == "/stuck" else delay)
                self.send_response(204)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *arguments):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, path):
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def count(self):
        with self.lock:
            return len(self.arrivals)

    def wait(self, count, timeout):
        deadline = time.monotonic() + timeout
        while self.count() < count:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.count()} deliveries after {timeout} s, expected {count}")
            time.sleep(0.005)

    def stop(self):
        self.server.shutdown()


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def summary(values):
    return f"p50 {statistics.median(values):.2f} ms, p99 {percentile(values, 0.99):.2f} ms, max {max(values):.2f} ms"


def hook(server, name, url):
    server.request("POST", "/v1/admin/webhooks", {"name": name, "url": url})


def kill_path(index):
    return f"{replicas.kill_path('kill' if index % 2 == 0 else 'restore')}"


def speed(args):
    receiver = Receiver()
    server = writes.Server(os.path.abspath(args.bin), args.port_base, arguments=("--allow-private-webhooks",))
    try:
        without = [server.request("POST", kill_path(index), {})[0] for index in range(args.kills)]
        server.request(
            "POST", "/v1/admin/webhooks", {"name": "other", "url": receiver.url("/other"), "events": ["key.created"]})
        checked = [server.request("POST", kill_path(index), {})[0] for index in range(args.kills)]
        server.request("DELETE", "/v1/admin/webhooks/other")
        # The first event is posted and hangs: the others are queued behind it, and the sender writes nothing.
        hook(server, "stuck", receiver.url("/stuck"))
        queued = [server.request("POST", kill_path(index), {})[0] for index in range(args.kills)]
        server.request("DELETE", "/v1/admin/webhooks/stuck")
        hook(server, "fast", receiver.url("/fast"))
        with_hook, after_answer, after_send = [], [], []
        for index in range(args.kills):
            expected = receiver.count() + 1
            sent = time.perf_counter()
            elapsed, _ = server.request("POST", kill_path(index), {})
            answered = time.perf_counter()
            receiver.wait(expected, timeout=10)
            arrived = receiver.arrivals[-1][0]
            with_hook.append(elapsed)
            after_answer.append((arrived - answered) * 1000)
            after_send.append((arrived - sent) * 1000)
        for number in range(8):
            hook(server, f"many-{number}", receiver.url(f"/many-{number}"))
        before = receiver.count()
        writes_made = 400 if not args.quick else 40
        started = time.perf_counter()
        for index in range(writes_made):
            server.request("POST", kill_path(index), {})
        # Each write goes to the hook `fast` and the 8 others.
        receiver.wait(before + 9 * writes_made, timeout=120)
        seconds = receiver.arrivals[-1][0] - started
    finally:
        server.stop()
        receiver.stop()
    print("| kill, send to answer (ms) | p50 | p90 | ratio of p50 |")
    print("|---|---:|---:|---:|")
    print(f"| no hook | {statistics.median(without):.2f} | {percentile(without, 0.9):.2f} | 1.00× |")
    print(f"| a hook for other events (the hooks read, nothing queued) | {statistics.median(checked):.2f} | "
          f"{percentile(checked, 0.9):.2f} | {statistics.median(checked) / statistics.median(without):.2f}× |")
    print(f"| one hook whose receiver hangs (each event queued; the sender waits on the first) | "
          f"{statistics.median(queued):.2f} | {percentile(queued, 0.9):.2f} | "
          f"{statistics.median(queued) / statistics.median(without):.2f}× |")
    print(f"| one hook: the event queued, then leased, posted and recorded by the sender | "
          f"{statistics.median(with_hook):.2f} | {percentile(with_hook, 0.9):.2f} | "
          f"{statistics.median(with_hook) / statistics.median(without):.2f}× |")
    print()
    print(f"commit (the kill's answer) to POST read by the receiver: {summary(after_answer)} ({args.kills} kills)")
    print(f"send to POST read by the receiver: {summary(after_send)}")
    print(f"deliveries per second, 9 hooks, {9 * writes_made} deliveries: {9 * writes_made / seconds:.0f}")


def lease_holder(run, database):
    """The pid in the `lease_owner` of a delivery leased now, if one is (host:pid:suffix)."""
    owners = run.postgres.sql(
        "SELECT lease_owner FROM webhook_delivery WHERE lease_owner IS NOT NULL LIMIT 1",
        uri=database).splitlines()
    return int(owners[0].split(":")[1]) if owners else None


def kill_the_sender(run, database, servers, receiver):
    """SIGKILLs the server of `servers` that holds a delivery's lease now (waiting up to 10 s for one); its name and
    how many deliveries had arrived."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        pid = lease_holder(run, database)
        holder = next((server for server in servers if server.pid == pid), None)
        if holder:
            os.kill(holder.pid, signal.SIGKILL)
            return holder.name, receiver.count()
        time.sleep(0.01)
    raise RuntimeError("no server held a lease within 10 s")


def replicated(args):
    run = replicas.Run(argparse.Namespace(bin=os.path.abspath(args.bin)))
    # Hooks' secrets are sealed with the key-encryption key, which every replica must share.
    os.environ["FLAGSERVER_SIGNING_KEY"] = base64.b64encode(os.urandom(32)).decode()
    receiver = Receiver(delay=0.02)
    try:
        servers, _ = replicas.start_on_one_database(
            run, 3, args.port_base, "flagstaff_webhooks", arguments=("--allow-private-webhooks",))
        database = urllib.parse.urlsplit(run.postgres.uri)._replace(path=f"/{run.postgres.databases[-1]}").geturl()
        hook(servers[0], "all", receiver.url("/all"))
        alive = list(servers)
        killed = None
        versions = []
        for index in range(args.writes):
            server = alive[index % len(alive)]
            _, body = server.request("POST", kill_path(index), {})
            versions.append(json.loads(body)["version"])
            if index + 1 == args.writes // 3:
                killed = kill_the_sender(run, database, alive, receiver)
                alive = [server for server in alive if server.name != killed[0]]
                killed = (*killed, index + 1)
        # Every version's event, at least once; the lease of the killed server runs out after 30 s.
        deadline = time.monotonic() + 120
        while True:
            with receiver.lock:
                seen = {event["data"]["version"] for _, _, _, event in receiver.arrivals}
            if seen >= set(versions) or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        with receiver.lock:
            arrivals = list(receiver.arrivals)
    finally:
        receiver.stop()
        run.processes.stop_all()
        if run.postgres:
            run.postgres.close()
    first, duplicates = [], 0
    ids = set()
    for _, _, webhook_id, event in arrivals:
        if webhook_id in ids:
            duplicates += 1
            continue
        ids.add(webhook_id)
        first.append(event["data"]["version"])
    missing = sorted(set(versions) - set(first))
    print(f"3 replicas, {args.writes} writes in turn through each ({len(set(versions))} made a version; a kill of a "
          f"killed flag makes none); killed: {killed[0]} (SIGKILL) after {killed[2]} writes and "
          f"{killed[1]} deliveries")
    print(f"events delivered: {len(set(first))} of {len(set(versions))}; missing: {missing[:10] or 'none'}; "
          f"duplicates: {duplicates}; first arrivals in version order: {first == sorted(first)}")
    if missing or first != sorted(first):
        sys.exit(1)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True, help="directory of the flagserver binary")
    parser.add_argument("--replicas", action="store_true", help="three replicas on PostgreSQL instead")
    parser.add_argument("--kills", type=int, default=300)
    parser.add_argument("--writes", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 30 kills, 60 replicated writes")
    parser.add_argument("--port-base", type=int, default=18640)
    args = parser.parse_args()
    if args.quick:
        args.kills, args.writes = 30, 60
    replicated(args) if args.replicas else speed(args)


if __name__ == "__main__":
    main()
