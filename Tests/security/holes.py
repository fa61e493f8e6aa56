"""The holes a security review found stay closed: checked against a live flagserver, over real sockets.

  1  a stream or long-poll ends when its token stops being valid (an SDK key revoked, a session signed out, the
     person's token behind a session revoked, a token reaching its expiry), within a second, and nothing written
     after the revocation reaches it; reconnecting is refused with 401
  2  telemetry ids cost their sender: new ids are rate-limited per client address, an id counts nowhere until its
     first report, and an id reports only with the key it was issued to; counts of flags and variants the set does
     not have are dropped
  4  no control character reaches a terminal: the server refuses one in a report with 400 naming the member, and
     in what admins write (422 at a description's path, 400 naming a reason); flagctl shows one from the server as
     a visible escape
  5  importing a set that does not exist needs the right to create sets
  6  an encoded slash is not a path separator

Usage: holes.py PORT ADMIN_TOKEN FLAGCTL. Prints one line per check; exit 0 when all hold, 1 when one does not.
"""

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone

PORT = 0
ADMIN = ""
FLAGCTL = ""
FAILURES = []


def check(condition, what):
    print(("ok    " if condition else "FAIL  ") + what)
    if not condition:
        FAILURES.append(what)


def api(method, path, token=None, body=None, headers=None):
    """One request on a connection of its own: (status, headers, JSON or text)."""
    connection = http.client.HTTPConnection("127.0.0.1", PORT, timeout=10)
    sent = dict(headers or {})
    sent["Authorization"] = "Bearer " + (token or ADMIN)
    payload = None if body is None else json.dumps(body)
    connection.request(method, path, body=payload, headers=sent)
    response = connection.getresponse()
    raw = response.read()
    connection.close()
    try:
        answer = json.loads(raw) if raw else None
    except ValueError:
        answer = raw.decode("utf-8", "replace")
    return response.status, {k.lower(): v for k, v in response.getheaders()}, answer


def raw_request(text, timeout=5.0):
    """Sends `text` on a new socket and returns everything until the server closes it."""
    with socket.create_connection(("127.0.0.1", PORT), timeout=timeout) as sock:
        sock.sendall(text.encode())
        received = b""
        while True:
            try:
                chunk = sock.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                break
            received += chunk
    return received.decode("utf-8", "replace")


class Stream:
    """An SSE stream of a set with a token, read past its first event."""

    def __init__(self, set_name, token):
        self.sock = socket.create_connection(("127.0.0.1", PORT), timeout=5)
        self.sock.sendall(
            f"GET /v1/sets/{set_name}/stream HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {token}\r\n\r\n".encode())
        buffer = b""
        while True:
            head, separator, body = buffer.partition(b"\r\n\r\n")
            if separator and not head.startswith(b"HTTP/1.1 200"):
                raise RuntimeError("the stream was refused: " + head.decode())
            if separator and b"\n\n" in body:
                break
            chunk = self.sock.recv(65536)
            if not chunk:
                raise RuntimeError("the stream closed before its first event: " + buffer.decode())
            buffer += chunk

    def rest_until_closed(self, limit=5.0):
        """What arrives until the server closes the stream, how long that took, and whether it closed."""
        start = time.monotonic()
        self.sock.settimeout(limit)
        rest = b""
        closed = False
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    closed = True
                    break
                rest += chunk
        except (socket.timeout, ConnectionResetError):
            closed = False
        self.sock.close()
        return rest.decode("utf-8", "replace"), time.monotonic() - start, closed


def kill(flag, reason):
    status, _, _ = api("POST", f"/v1/admin/sets/sec/flags/{flag}/kill", body={"reason": reason})
    return status


def restore(flag):
    api("POST", f"/v1/admin/sets/sec/flags/{flag}/restore")


def new_key(name):
    status, _, answer = api("POST", "/v1/admin/sets/sec/keys", body={"name": name})
    assert status == 201, answer
    return answer["token"]


def new_token(name, role, **extra):
    status, _, answer = api("POST", "/v1/admin/tokens", body={"name": name, "role": role, **extra})
    assert status == 201, answer
    return answer["token"]


def report(token, instance, counts=None, app=None):
    body = {"instance": instance, "sdk": {"name": "FlagClient", "version": "2.0.0"}, "version": 1,
            "capabilities": {"schema": 1, "operators": ["eq"]}, "counts": counts or {}}
    if app is not None:
        body["app"] = app
    return api("POST", "/v1/sets/sec/telemetry", token=token, body=body)


def metric(name):
    _, _, text = api("GET", "/metrics")
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    return 0.0


def telemetry_ids_cost_their_sender():
    key = new_key("mint")
    before = metric('flagserver_telemetry_dropped_total{reason="mint_rate_limited"}')
    ids = []
    for _ in range(25):
        _, headers, _ = api("GET", "/v1/sets/sec", token=key, headers={"Flagstaff-Instance": "new"})
        ids.append(headers.get("flagstaff-instance"))
    issued = [i for i in ids if i]
    check(len(issued) == 20 and ids[20:] == [None] * 5,
          f"2  an address gets a burst of 20 new ids, then none (got {len(issued)} of 25)")
    after = metric('flagserver_telemetry_dropped_total{reason="mint_rate_limited"}')
    check(after - before == 5, f"2  /metrics counts the 5 answers sent without an id ({after - before:.0f})")

    _, _, clients = api("GET", "/v1/admin/sets/sec/clients")
    check(clients["instances"] == [], "2  provisional ids count nowhere: clients lists none of the 20")
    status, _, answer = report(key, issued[0], counts={
        "guarded": {"default": {"STATIC": 3}, "made-up": {"X": 7}}, "no-such-flag": {"default": {"STATIC": 9}}})
    check(status == 204, f"2  a report of an issued id is taken ({status} {answer})")
    _, _, clients = api("GET", "/v1/admin/sets/sec/clients")
    check([i["id"] for i in clients["instances"]] == [issued[0]], "2  once it reported, the id is listed")

    other = new_key("other")
    status, _, answer = report(other, issued[1])
    check(status == 422 and answer["error"]["code"] == "unknown_instance",
          f"2  an id reports only with the key it was issued to ({status})")

    _, _, usage = api("GET", "/v1/admin/sets/sec/usage?days=1")
    counted = {flag["key"]: flag["days"] for flag in usage["flags"]}
    variants = counted.get("guarded", [{}])[0].get("variants", {}) if counted.get("guarded") else {}
    check(variants == {"default": 3} and "no-such-flag" not in counted,
          f"3  counts are kept only for flags and variants the set has ({variants})")
    dropped = (metric('flagserver_telemetry_dropped_total{reason="unknown_flag"}'),
               metric('flagserver_telemetry_dropped_total{reason="unknown_variant"}'))
    check(dropped == (1.0, 1.0), f"3  /metrics counts the dropped counts {dropped}")
    return key, issued


def control_characters(key, issued):
    status, _, answer = report(key, issued[2], app={"name": "Shop\u001b]0;pwned\u0007", "version": "5.3.0"})
    check(status == 400 and answer["error"]["path"] == "app.name" and "U+001B" in answer["error"]["message"],
          f"4  a control character in a report is refused with 400 naming the member ({status} {answer})")
    hostile = "evil\u001b[2J\u009b31m\u0007"
    status, _, answer = api("PUT", "/v1/admin/sets/sec/flags/hostile",
                            body={"flag": {"type": "bool", "default": False, "description": hostile}})
    check(status == 422 and answer["error"]["path"] == "flags.hostile.description"
          and "U+001B at position 5" in answer["error"]["message"],
          f"4  a description with a control character is refused with 422 at its path ({status} {answer})")
    status, _, answer = api("PUT", "/v1/admin/sets/sec/flags/hostile",
                            body={"flag": {"type": "bool", "default": False}, "reason": hostile})
    check(status == 400 and answer["error"]["path"] == "reason" and "U+001B" in answer["error"]["message"],
          f"4  a reason with a control character is refused with 400 naming it ({status} {answer})")
    env = dict(os.environ, FLAGCTL_SERVER=f"http://127.0.0.1:{PORT}", FLAGCTL_TOKEN=ADMIN, FLAGCTL_SET="sec")
    shown = subprocess.run([FLAGCTL, "get", "nope" + hostile], capture_output=True, env=env, timeout=30)
    out = shown.stdout.decode("utf-8", "replace") + shown.stderr.decode("utf-8", "replace")
    controls = [c for c in out if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) <= 0x9F]
    check(shown.returncode == 1 and not controls and "nopeevil\\e[2J\\u009b31m\\u0007" in out,
          f"4  flagctl shows the control characters of a server's message as escapes ({controls!r} {out!r})")


def streams_end_with_their_token():
    key = new_key("revoked")
    stream = Stream("sec", key)
    start = time.monotonic()
    status, _, _ = api("DELETE", "/v1/admin/sets/sec/keys/revoked")
    killed = kill("guarded", "after the revocation")
    rest, _, closed = stream.rest_until_closed()
    elapsed = time.monotonic() - start
    check(status == 200 and killed == 200 and closed and elapsed < 1.0,
          f"1  revoking an SDK key ends its stream within a second ({elapsed:.3f} s)")
    check("event:" not in rest, f"1  nothing written after the revocation reaches the stream ({rest!r})")
    status, _, _ = api("GET", "/v1/sets/sec/stream", token=key)
    check(status == 401, f"1  the client reconnects and is refused with 401 ({status})")
    restore("guarded")

    person = new_token("alice", "viewer")
    status, _, session = api("POST", "/v1/admin/sessions", token=person, body={})
    session = session["token"]
    signed_out = Stream("sec", session)
    start = time.monotonic()
    api("DELETE", "/v1/admin/sessions/current", token=session)
    _, _, closed = signed_out.rest_until_closed()
    check(closed and time.monotonic() - start < 1.0, "1  signing a dashboard session out ends its stream")

    _, _, session = api("POST", "/v1/admin/sessions", token=person, body={})
    by_person = Stream("sec", session["token"])
    start = time.monotonic()
    api("DELETE", "/v1/admin/tokens/alice")
    _, _, closed = by_person.rest_until_closed()
    check(closed and time.monotonic() - start < 1.0, "1  revoking the person's token ends its sessions' streams")

    soon = (datetime.now(timezone.utc) + timedelta(seconds=2)).replace(microsecond=0)
    brief = new_token("brief", "viewer", expiresAt=soon.strftime("%Y-%m-%dT%H:%M:%SZ"))
    expiring = Stream("sec", brief)
    _, _, closed = expiring.rest_until_closed(limit=5)
    late = (datetime.now(timezone.utc) - soon).total_seconds()
    check(closed and -0.2 < late < 0.6, f"1  an expiring token's stream ends at its expiry ({late:+.3f} s)")

    polling = new_key("polling")
    sock = socket.create_connection(("127.0.0.1", PORT), timeout=5)
    _, headers, _ = api("GET", "/v1/sets/sec", token=polling)
    etag = headers["etag"]
    sock.sendall(f"GET /v1/sets/sec?wait=30 HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {polling}\r\n"
                 f"If-None-Match: {etag}\r\n\r\n".encode())
    time.sleep(0.2)
    start = time.monotonic()
    api("DELETE", "/v1/admin/sets/sec/keys/polling")
    answer = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        answer += chunk
    sock.close()
    check(answer.startswith(b"HTTP/1.1 401") and time.monotonic() - start < 1.0,
          "1  a waiting long-poll is answered 401 when its key is revoked, and the connection closes")


def import_needs_the_right_to_create():
    editor = new_token("ed", "editor")
    body = {"document": {"schema": 1, "flags": {}}}
    status, _, _ = api("PUT", "/v1/admin/sets/fresh", token=editor, body=body)
    check(status == 403, f"5  an editor cannot create a set by importing it ({status})")
    status, _, _ = api("PUT", "/v1/admin/sets/fresh", body=body)
    check(status == 201, f"5  an admin creates it ({status})")


def encoded_slashes():
    answer = raw_request(f"GET /v1%2Fadmin%2Fwhoami HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {ADMIN}\r\n"
                         "Connection: close\r\n\r\n")
    check(answer.startswith("HTTP/1.1 400") and "%2F" in answer,
          f"6  GET /v1%2Fadmin%2Fwhoami is refused with 400 ({answer.splitlines()[0] if answer else 'nothing'})")


def main():
    global PORT, ADMIN, FLAGCTL
    PORT, ADMIN, FLAGCTL = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    status, _, answer = api("POST", "/v1/admin/sets", body={"name": "sec", "document": {"schema": 1, "flags": {
        "guarded": {"type": "bool", "kind": "ops", "default": True, "killValue": False}}}})
    assert status == 201, answer
    # First, while this address has its whole budget of new ids: every stream below takes one.
    key, issued = telemetry_ids_cost_their_sender()
    control_characters(key, issued)
    streams_end_with_their_token()
    import_needs_the_right_to_create()
    encoded_slashes()
    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed")
        sys.exit(1)
    print("every check holds")


if __name__ == "__main__":
    main()
