"""Does the time to refuse a wrong token depend on how many of its leading bytes are right?

Sends many interleaved requests to a live flagserver with wrong tokens of two kinds, for two real tokens (the
stored admin token, checked by a hash lookup, and the environment token, compared directly):

  far   the real token with its first byte changed (0 leading bytes right)
  near  the real token with its last byte changed (all but one leading byte right)

Each round sends one request of each of the four kinds in a fresh random order on one keep-alive connection, so
that load on a shared machine hits all kinds alike. Compares, per real token, the median of the paired round
differences (near - far) and its 99% confidence interval (sign-test order statistics) with a tolerance. A
comparison that exits at the first differing byte would make `near` slower by the time to compare the other 67
bytes: nanoseconds, far below what a network round trip can show, which is why the unit test
`SecurityTimingTests` proves the byte-by-byte property directly; this script checks the whole request path (header
parsing, hashing, lookup, the 401 body) for any prefix-dependent step large enough to measure.

Usage: timing.py PORT ADMIN_TOKEN ENV_TOKEN [ROUNDS]. Exit 0 when within tolerance, 1 when not.
"""

import http.client
import math
import random
import statistics
import sys
import time

TOLERANCE_NS = 5_000  # 5 us, or 3 % of the median request time, whichever is larger


def variants(token):
    first = "g" if token[0] != "g" else "h"
    last = "0" if token[-1] != "0" else "1"
    return {"far": first + token[1:], "near": token[:-1] + last}


def timed_request(connection, token):
    start = time.perf_counter_ns()
    connection.request("GET", "/v1/admin/sets", headers={"Authorization": "Bearer " + token})
    response = connection.getresponse()
    response.read()
    elapsed = time.perf_counter_ns() - start
    if response.status != 401:
        raise SystemExit(f"timing: expected 401 for a wrong token, got {response.status}")
    return elapsed


def median_interval(values, confidence=0.99):
    """The median and a distribution-free confidence interval for it (normal approximation of the sign test)."""
    ordered = sorted(values)
    n = len(ordered)
    z = 2.576 if confidence == 0.99 else 1.96
    half = z * math.sqrt(n) / 2
    low = max(0, int(math.floor(n / 2 - half)))
    high = min(n - 1, int(math.ceil(n / 2 + half)))
    return statistics.median(ordered), ordered[low], ordered[high]


def main():
    port, admin, environment = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 4000
    kinds = {}
    for name, token in (("stored", admin), ("env", environment)):
        for kind, wrong in variants(token).items():
            kinds[f"{name}-{kind}"] = wrong
    # A positive control: a wrong token 256 bytes longer costs a little more (reading and hashing 256 bytes).
    # Printed, not judged, to show what size of difference this run could see.
    kinds["control-short"] = variants(admin)["far"]
    kinds["control-long"] = variants(admin)["far"] + "0" * 256
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    samples = {kind: [] for kind in kinds}
    order = list(kinds)
    for _ in range(200):  # warm-up: connection, caches, branch predictors
        for kind in order:
            timed_request(connection, kinds[kind])
    for _ in range(rounds):
        random.shuffle(order)
        for kind in order:
            samples[kind].append(timed_request(connection, kinds[kind]))
    connection.close()

    failed = False
    for name in ("stored", "env"):
        far, near = samples[f"{name}-far"], samples[f"{name}-near"]
        differences = [n - f for n, f in zip(near, far)]
        median, low, high = median_interval(differences)
        typical = statistics.median(far + near)
        tolerance = max(TOLERANCE_NS, 0.03 * typical)
        quartiles_far = statistics.quantiles(far, n=4)
        quartiles_near = statistics.quantiles(near, n=4)
        ok = abs(median) <= tolerance and low <= tolerance and high >= -tolerance
        failed |= not ok
        print(
            f"{name} token: {rounds} rounds, median request {typical / 1000:.1f} us; "
            f"far q1/q2/q3 {'/'.join(f'{q / 1000:.1f}' for q in quartiles_far)} us, "
            f"near {'/'.join(f'{q / 1000:.1f}' for q in quartiles_near)} us; "
            f"near-far median {median / 1000:+.2f} us, 99% CI [{low / 1000:+.2f}, {high / 1000:+.2f}] us, "
            f"tolerance +-{tolerance / 1000:.1f} us: {'ok' if ok else 'DEPENDS ON THE PREFIX'}"
        )
    control = [long - short for long, short in zip(samples["control-long"], samples["control-short"])]
    median, low, high = median_interval(control)
    print(
        f"control (a wrong token 256 bytes longer): median {median / 1000:+.2f} us, 99% CI [{low / 1000:+.2f}, "
        f"{high / 1000:+.2f}] us: {'seen' if low > 0 else 'not seen: this run was too noisy to show it'}"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
