"""The dashboard's webhooks screen in a real browser, against the live flagserver that Tests/browser/run starts (with
--allow-private-webhooks, so that a hook may post to the receiver on this machine): a hook made in the form (a bad
address and a taken name refused under their fields first), its secret shown once, listed, a test event sent and
delivered to the receiver with a signature that the shown secret verifies, the secret rotated, the hook deleted; a
viewer and an editor are not offered the screen. The helpers are test_dashboard.py's (signing in, the API).
"""

import base64
import hashlib
import hmac
import http.server
import json
import os
import threading
import unittest

from test_dashboard import SHOTS, api, select, shot, sign_in, stored_tokens, token
from webdriver import Driver

driver = None
driver_log = None
tokens = {}


class Receiver(http.server.ThreadingHTTPServer):
    """A webhook receiver on a free loopback port that keeps every delivery: (headers, body)."""

    def __init__(self):
        self.deliveries = []
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                receiver.deliveries.append(({name.lower(): value for name, value in self.headers.items()}, body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *_):
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server_address[1]}/hooks/flagstaff"


def signed_by(secret, headers, body):
    """Whether one of the delivery's `webhook-signature`s is the Standard Webhooks HMAC of `secret` (`whsec_…`)."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    content = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
    expected = "v1," + base64.b64encode(hmac.new(key, content, hashlib.sha256).digest()).decode()
    return any(hmac.compare_digest(expected, signature) for signature in headers["webhook-signature"].split(" "))


def quiet_shot(session, name, element=None):
    """A screenshot without the toasts, which would cover the tables it is for (docs/dashboard.md shows it)."""
    session.script("document.querySelectorAll('[data-testid=\"toast\"]').forEach((toast) => toast.remove());")
    shot(session, name, element)


def setUpModule():
    global driver, driver_log
    tokens["admin"] = token("hooks-admin", "admin")
    tokens["editor"] = token("hooks-editor", "editor")
    tokens["viewer"] = token("hooks-viewer", "viewer")
    tokens["demo-admin"] = token("hooks-demo-admin", "admin", sets=["demo"])
    driver_log = open(os.path.join(SHOTS, "chromedriver-webhooks.log"), "w")
    driver = Driver(log=driver_log)


def tearDownModule():
    if driver:
        driver.stop()
    if driver_log:
        driver_log.close()


def Browser(width=1280, height=800):  # noqa: N802 (as in test_dashboard.py)
    """One headless Chromium window, quit when the `with` block ends."""
    return driver.window(width, height)


class WebhooksScreen(unittest.TestCase):
    def make_quiet_hook(self, name):
        """Makes the hook `name` through the API, of every set and only test events: none is sent to it."""
        status, _, answer = api("POST", "/v1/admin/webhooks", body={
            "name": name, "url": "https://203.0.113.10/hooks", "events": ["webhook.test"]})
        self.assertEqual(status, 201, answer)

    def test_01_a_hook_is_made_its_secret_shown_once_tested_rotated_and_deleted(self):
        receiver = Receiver()
        # A hook that holds the name "taken".
        self.make_quiet_hook("taken")
        try:
            with Browser() as session:
                sign_in(session, tokens["admin"])
                session.one("nav-webhooks").click()
                session.one("webhook-row", '[data-item="taken"]')
                session.one("webhook-create").click()

                # What the form can see: an address that is not http(s). Nothing is sent.
                session.one("webhook-name-input").type("taken")
                session.one("webhook-url-input").type("ftp://hooks.example.com/h")
                session.one("confirm").click()
                self.assertIn("https://", session.one("field-error", '[data-field="url"]').text)

                # What only the server can see: a taken name, under the name with the server's message.
                session.one("webhook-url-input").clear()
                session.one("webhook-url-input").type(receiver.url)
                session.one("confirm").click()
                refused = session.one("field-error", '[data-field="name"]')
                self.assertIn('a webhook named "taken" already exists', refused.text)

                session.one("webhook-name-input").clear()
                session.one("webhook-name-input").type("browser-chat")
                session.one("webhook-sets-input-demo").click()
                session.one("webhook-events-input-webhook.test").click()
                session.one("webhook-events-input-version.created").click()
                select(session, "webhook-format-select", "json")
                session.one("webhook-description-input").type("the #flags channel")
                session.one("reason-input").type("on-call wants kills in chat")
                shot(session, "40-webhook-create", session.one("dialog"))
                session.one("confirm").click()

                # The secret, once: the server's, and kept nowhere by the page.
                secret = session.one("secret-value").property("value")
                self.assertTrue(secret.startswith("whsec_"), secret)
                quiet_shot(session, "41-webhook-secret", session.one("secret-once"))
                stored = json.dumps(stored_tokens(session))
                self.assertNotIn(secret, stored)
                row = session.one("webhook-row", '[data-item="browser-chat"]')
                cells = [cell.text for cell in row.find_all("th, td")]
                self.assertEqual(cells[0], "browser-chat\nthe #flags channel")
                self.assertEqual(cells[1:6], ["json", "demo", "version.created, webhook.test", "0", "enabled"])
                self.assertEqual(cells[6], receiver.url)
                session.one("secret-dismiss").click()
                session.wait(lambda: not session.by_test_id("secret-once"), "the secret to go")
                shot(session, "42-webhooks")
                stored = api("GET", "/v1/admin/webhooks/browser-chat")[2]["webhook"]
                self.assertEqual((stored["sets"], stored["events"], stored["format"], stored["createdBy"]),
                                 (["demo"], ["version.created", "webhook.test"], "json", "hooks-admin"))

                # A test event, delivered to the receiver, signed with the secret shown.
                session.one("webhook-row", '[data-item="browser-chat"]').by_test_id("webhook-open")[0].click()
                session.one("webhook-details")
                session.wait(lambda: not session.by_test_id("delivery-row"), "no delivery yet")
                session.one("webhook-test").click()
                session.one("reason-input").type("checking the receiver")
                session.one("confirm").click()
                delivered = session.one("delivery-row", '[data-state="delivered"]', timeout=20)
                self.assertEqual(delivered.by_test_id("delivery-status")[0].text, "204")
                self.assertEqual(len(receiver.deliveries), 1)
                headers, body = receiver.deliveries[0]
                self.assertEqual(headers["webhook-id"], delivered.attribute("data-id"))
                self.assertEqual(json.loads(body)["type"], "webhook.test")
                self.assertTrue(signed_by(secret, headers, body), "the shown secret does not verify the delivery")
                quiet_shot(session, "43-webhook-deliveries", delivered)

                # A new secret, shown once; the old one still signs for a day, and the page says until when.
                session.one("webhook-rotate").click()
                session.one("confirm").click()
                rotated = session.one("secret-value").property("value")
                self.assertTrue(rotated.startswith("whsec_"))
                self.assertNotEqual(rotated, secret)
                session.wait(lambda: "Previous secret" in session.one("webhook-details").text, "the previous secret's end")
                session.one("secret-dismiss").click()

                # Delete: cancelled first, nothing happens; then confirmed, and the list no longer has it.
                session.one("webhook-delete").click()
                session.one("cancel").click()
                self.assertEqual(api("GET", "/v1/admin/webhooks/browser-chat")[0], 200)
                session.one("webhook-delete").click()
                session.one("reason-input").type("moved to the new channel")
                session.one("confirm").click()
                session.one("webhook-row", '[data-item="taken"]')
                self.assertEqual(session.by_test_id("webhook-row", '[data-item="browser-chat"]'), [])
                self.assertEqual(api("GET", "/v1/admin/webhooks/browser-chat")[0], 404)
        finally:
            api("DELETE", "/v1/admin/webhooks/browser-chat")
            api("DELETE", "/v1/admin/webhooks/taken")
            receiver.shutdown()

    def test_02_an_admin_limited_to_sets_makes_hooks_of_those_sets_and_sees_no_other(self):
        # Made by the unlimited admin: a hook of every set, which the limited admin may not manage.
        self.make_quiet_hook("everywhere")
        try:
            with Browser() as session:
                sign_in(session, tokens["demo-admin"])
                session.one("nav-webhooks").click()
                session.one("webhook-create").click()
                session.one("webhook-name-input").type("demo-only")
                session.one("webhook-url-input").type("https://203.0.113.10/hooks")
                session.one("webhook-events-input-webhook.test").click()
                # Only the sets of the token are offered, and one of them must be ticked.
                boxes = session.script("return [...document.querySelectorAll('[data-testid^=\"webhook-sets-input-\"]')]"
                                       ".map((box) => box.value);")
                self.assertEqual(boxes, ["demo"])
                session.one("confirm").click()
                self.assertIn("limited to sets", session.one("field-error", '[data-field="sets"]').text)
                session.one("webhook-sets-input-demo").click()
                session.one("confirm").click()
                self.assertTrue(session.one("secret-value").property("value").startswith("whsec_"))
                row = session.one("webhook-row", '[data-item="demo-only"]')
                self.assertEqual(row.by_test_id("webhook-status")[0].text, "enabled")
                self.assertEqual([r.attribute("data-item") for r in session.by_test_id("webhook-row")], ["demo-only"])
                self.assertEqual(api("GET", "/v1/admin/webhooks/demo-only")[2]["webhook"]["sets"], ["demo"])

                # On a phone the list is stacked rows, no wider than the screen.
                session.one("secret-dismiss").click()
                session.wait(lambda: not session.by_test_id("secret-once"), "the secret to go")
                session.set_size(390, 844)
                width = session.script("return [document.documentElement.scrollWidth, window.innerWidth];")
                self.assertLessEqual(width[0], width[1], "the webhooks list is wider than a phone's screen")
                quiet_shot(session, "44-webhooks-phone")
        finally:
            api("DELETE", "/v1/admin/webhooks/demo-only")
            api("DELETE", "/v1/admin/webhooks/everywhere")

    def test_03_a_viewer_and_an_editor_are_not_offered_webhooks(self):
        for role in ["viewer", "editor"]:
            with self.subTest(role=role), Browser() as session:
                sign_in(session, tokens[role])
                session.one("nav-sets")
                self.assertEqual(session.by_test_id("nav-webhooks"), [])
                session.get(f"{os.environ['FLAGSTAFF_URL']}/ui/#/webhooks")
                self.assertIn("admin", session.one("not-allowed").text)
                self.assertEqual(session.by_test_id("webhook-create"), [])


if __name__ == "__main__":
    os.makedirs(SHOTS, exist_ok=True)
    unittest.main(verbosity=2)
