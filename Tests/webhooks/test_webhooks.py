"""flagserver's webhook deliveries, verified by the Standard Webhooks reference library for Python.

Run by Tests/webhooks/run, which passes FLAGSERVER_BIN. This test starts that flagserver on a free port with a fresh
data directory (the seed set `demo`), `--allow-private-webhooks` (its receiver is on 127.0.0.1) and a public URL for
Slack's links, and runs a receiver of its own that records every delivery.
"""

import http.server
import json
import os
import re
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

ADMIN_TOKEN = "fsa_webhooks_" + os.urandom(16).hex()
PUBLIC_URL = "https://flags.example.com"


class Receiver:
    """An HTTP server on 127.0.0.1 that answers 204 to every POST and keeps (path, headers by lower-case name, body)
    of each."""

    def __init__(self):
        self.received = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver.lock:
                    receiver.received.append(
                        (self.path, {name.lower(): value for name, value in self.headers.items()}, body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *arguments):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, path):
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def at(self, path):
        with self.lock:
            return [(headers, body) for (where, headers, body) in self.received if where == path]

    def wait(self, path, count, timeout=15):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(self.at(path)) >= count:
                return self.at(path)
            time.sleep(0.05)
        raise AssertionError(f"{path}: {len(self.at(path))} deliveries after {timeout} s, expected {count}")


class Server:
    """The built flagserver on a free port, stopped by `stop()`."""

    def __init__(self, work):
        self.log_path = os.path.join(work, "server.log")
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            [os.environ["FLAGSERVER_BIN"], "--listen", "127.0.0.1:0", "--data", os.path.join(work, "data"),
             "--allow-private-webhooks", "--public-url", PUBLIC_URL],
            env={**os.environ, "FLAGSERVER_ADMIN_TOKEN": ADMIN_TOKEN}, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with open(self.log_path) as log:
                found = re.search(r"listening on http://127\.0\.0\.1:(\d+)", log.read())
            if found:
                self.base = f"http://127.0.0.1:{found.group(1)}"
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.1)
        self.stop()
        raise RuntimeError("flagserver did not start:\n" + open(self.log_path).read())

    def call(self, method, path, body=None):
        """One admin request; returns (status, parsed JSON body or None)."""
        request = urllib.request.Request(
            self.base + path, data=None if body is None else json.dumps(body).encode(), method=method)
        request.add_header("Authorization", f"Bearer {ADMIN_TOKEN}")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                raw = response.read()
                return response.status, json.loads(raw) if raw else None
        except urllib.error.HTTPError as error:
            raw = error.read()
            return error.code, json.loads(raw) if raw else None

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=15)
        self.log.close()


class StandardWebhooksTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.TemporaryDirectory()
        cls.receiver = Receiver()
        cls.server = Server(cls.work.name)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        cls.receiver.server.shutdown()
        cls.work.cleanup()

    def create(self, name, path, **members):
        status, answer = self.server.call(
            "POST", "/v1/admin/webhooks", {"name": name, "url": self.receiver.url(path), **members})
        self.assertEqual(status, 201, answer)
        self.assertTrue(answer["secret"].startswith("whsec_"))
        return answer["secret"]

    def test_every_delivery_verifies_once_per_event_in_order(self):
        secret = self.create("all", "/all")
        calls = [
            ("POST", "/v1/admin/sets/demo/flags/new-checkout/kill", {"reason": "payment errors"}),
            ("POST", "/v1/admin/sets/demo/flags/new-checkout/restore", {}),
            ("POST", "/v1/admin/sets/demo/keys", {"name": "web-app"}),
            ("DELETE", "/v1/admin/sets/demo/keys/web-app", None),
            ("POST", "/v1/admin/webhooks/all/test", {}),
        ]
        sdk_key = None
        for method, path, body in calls:
            status, answer = self.server.call(method, path, body)
            self.assertLess(status, 300, answer)
            if path.endswith("/keys"):
                sdk_key = answer["token"]
        deliveries = self.receiver.wait("/all", len(calls))
        time.sleep(0.5)  # nothing more comes
        deliveries = self.receiver.at("/all")
        self.assertEqual(len(deliveries), len(calls))
        hook = Webhook(secret)
        events = [hook.verify(body, headers) for headers, body in deliveries]
        self.assertEqual(
            [event["type"] for event in events],
            ["version.created", "version.created", "key.created", "key.revoked", "webhook.test"])
        self.assertEqual(len({headers["webhook-id"] for headers, _ in deliveries}), len(calls))
        kill = events[0]["data"]
        self.assertEqual((kill["set"], kill["action"], kill["reason"]), ("demo", "flag.kill", "payment errors"))
        self.assertEqual(kill["flags"], ["new-checkout"])
        self.assertEqual(events[2]["data"]["role"], "sdk")
        for _, body in deliveries:
            self.assertNotIn(sdk_key.encode(), body)
            self.assertNotIn(ADMIN_TOKEN.encode(), body)
        # The library does check: a changed body or another secret is refused.
        headers, body = deliveries[0]
        with self.assertRaises(WebhookVerificationError):
            hook.verify(body.replace(b"payment", b"paymenT"), headers)
        with self.assertRaises(WebhookVerificationError):
            Webhook("whsec_" + "QUJD" * 8).verify(body, headers)

    def test_a_slack_hook_posts_slacks_shape_signed_the_same_way(self):
        secret = self.create("chat", "/chat", format="slack", events=["version.created"])
        status, _ = self.server.call("POST", "/v1/admin/sets/demo/flags/dark-mode/kill", {"reason": "contrast bug"})
        self.assertEqual(status, 200)
        headers, body = self.receiver.wait("/chat", 1)[0]
        message = Webhook(secret).verify(body, headers)
        # Slack's incoming webhooks: `text`, and `blocks` of `section` and `context` with mrkdwn text.
        self.assertRegex(message["text"], r"^env killed dark-mode in demo: contrast bug \(v\d+\)$")
        self.assertEqual([block["type"] for block in message["blocks"]], ["section", "context"])
        self.assertEqual(message["blocks"][0]["text"], {"type": "mrkdwn", "text": message["text"]})
        link = message["blocks"][1]["elements"][0]
        self.assertEqual(link["type"], "mrkdwn")
        self.assertEqual(link["text"], f"<{PUBLIC_URL}/ui/#/sets/demo/flags/dark-mode|Open in the Flagstaff dashboard>")

    def test_after_a_rotation_both_secrets_verify(self):
        old = self.create("rotated", "/rotated", events=["webhook.test"])
        status, answer = self.server.call("POST", "/v1/admin/webhooks/rotated/rotate-secret", {})
        self.assertEqual(status, 200, answer)
        new = answer["secret"]
        self.assertNotEqual(new, old)
        status, _ = self.server.call("POST", "/v1/admin/webhooks/rotated/test", {})
        self.assertEqual(status, 200)
        headers, body = self.receiver.wait("/rotated", 1)[0]
        self.assertEqual(len(headers["webhook-signature"].split(" ")), 2)
        self.assertEqual(Webhook(new).verify(body, headers)["type"], "webhook.test")
        self.assertEqual(Webhook(old).verify(body, headers)["type"], "webhook.test")


if __name__ == "__main__":
    unittest.main(verbosity=2)
