#!/usr/bin/env python3
"""The floor under any fan-out on this machine: what the kernel alone takes to put one small message on each of N
loopback TCP connections, with no server in the way. Not part of CI.

  fanout_floor.py [--streams 18500] [--senders 2] [--bytes 300] [--runs 3]

A sender process accepts N connections from a receiver process (two processes, since each may hold 20,000
descriptors), then forks `--senders` processes, each of which writes one message of `--bytes` bytes to its share of
the connections with one `send` each, as a flagserver's event loops write a patch to their streams. The receiver
reads nothing until every message is sent (as `scale.py --quiet`), then takes each socket's kernel receive timestamp
(SO_TIMESTAMPNS). Times run from the moment the parent tells the senders to start. Prints p50, p99 and max in ms per
run, then their medians: a flagserver's fan-out to N streams cannot beat these figures on the same cores. Standard
library only.
"""

import argparse
import os
import socket
import statistics
import struct
import sys
import time

SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)


def receive(port, count, ready, done, results):
    """The receiver: connects `count` sockets, says so, waits for the senders to finish, then reads every stamp."""
    socks = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        socks.append(sock)
    time.sleep(0.2)  # timestamping is enabled machine-wide in deferred work
    os.write(ready, b"r")
    while True:
        line = os.read(done, 64)
        if not line or line == b"q":
            return
        started = float(line.decode())
        stamps = []
        for sock in socks:
            _, ancillary, _, _ = sock.recvmsg(1 << 16, 64)
            for level, kind, data in ancillary:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                    seconds, nanoseconds = struct.unpack("qq", data[:16])
                    stamps.append((seconds + nanoseconds / 1e9 - started) * 1000)
        os.write(results, (" ".join(f"{stamp:.3f}" for stamp in stamps) + "\n").encode())


def send_share(conns, message, go):
    """One sender: waits for the word, then writes `message` once to each of its connections."""
    os.read(go, 1)
    for conn in conns:
        conn.send(message)
    os._exit(0)


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def read_line(fd):
    data = bytearray()
    while not data.endswith(b"\n"):
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            raise RuntimeError("the receiver ended early")
        data += chunk
    return data.decode().split()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streams", type=int, default=18_500)
    parser.add_argument("--senders", type=int, default=2)
    parser.add_argument("--bytes", type=int, default=300)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(4096)
    port = listener.getsockname()[1]
    ready_r, ready_w = os.pipe()
    done_r, done_w = os.pipe()
    results_r, results_w = os.pipe()
    receiver = os.fork()
    if receiver == 0:
        listener.close()
        receive(port, args.streams, ready_w, done_r, results_w)
        os._exit(0)

    conns = []
    while len(conns) < args.streams:
        conn, _ = listener.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conns.append(conn)
    os.read(ready_r, 1)
    message = b"x" * (args.bytes - 1) + b"\n"
    rows = []
    for run in range(args.runs):
        gates = []
        for index in range(args.senders):
            go_r, go_w = os.pipe()
            if os.fork() == 0:
                send_share(conns[index::args.senders], message, go_r)
            gates.append(go_w)
        time.sleep(0.5)
        started = time.time()
        for gate in gates:
            os.write(gate, b"g")
        for _ in gates:
            os.wait()
        time.sleep(0.5)
        os.write(done_w, f"{started}\n".encode())
        stamps = [float(value) for value in read_line(results_r)]
        if len(stamps) != args.streams:
            raise RuntimeError(f"{len(stamps)} of {args.streams} stamps")
        row = (percentile(stamps, 0.5), percentile(stamps, 0.99), max(stamps))
        rows.append(row)
        print(f"run {run + 1}: p50 {row[0]:.1f} ms, p99 {row[1]:.1f} ms, max {row[2]:.1f} ms", flush=True)
    os.write(done_w, b"q")
    os.waitpid(receiver, 0)
    medians = [statistics.median(row[i] for row in rows) for i in range(3)]
    print(f"| {args.streams:,} streams, {args.senders} senders, {args.bytes} B | "
          f"{medians[0]:.1f} | {medians[1]:.1f} | {medians[2]:.1f} |")


if __name__ == "__main__":
    sys.exit(main())
