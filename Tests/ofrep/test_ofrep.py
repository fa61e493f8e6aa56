"""OFREP against the real OpenFeature Python SDK and its OFREP provider.

Run by Tests/ofrep/run, which starts flagserver with the seed set `demo` (config/flagsets/demo.json) and passes
OFREP_BASE_URL and OFREP_ADMIN_TOKEN. Every expectation below follows from demo.json and SPEC §2; none depends on
the wall clock except where said (the demo's dated rollout of new-checkout is not used).
"""

import json
import os
import unittest
import urllib.error
import urllib.request

import requests.adapters
from openfeature import api
from openfeature.contrib.provider.ofrep import OFREPProvider
from openfeature.evaluation_context import EvaluationContext
from openfeature.exception import ErrorCode
from openfeature.flag_evaluation import Reason

BASE_URL = os.environ["OFREP_BASE_URL"]
ADMIN_TOKEN = os.environ["OFREP_ADMIN_TOKEN"]


def call(method, path, token, body=None, headers=None):
    """One HTTP request; returns (status, headers, parsed JSON body or None)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(BASE_URL + path, data=data, method=method)
    request.add_header("Authorization", f"Bearer {token}")
    request.add_header("Content-Type", "application/json")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            raw = response.read()
            return response.status, response.headers, json.loads(raw) if raw else None
    except urllib.error.HTTPError as error:
        raw = error.read()
        return error.code, error.headers, json.loads(raw) if raw else None


def create_sdk_key(name):
    status, _, body = call("POST", "/v1/admin/sets/demo/keys", ADMIN_TOKEN, {"name": name, "reason": "ofrep test"})
    assert status == 201, (status, body)
    assert body["token"].startswith("fss_"), body
    return body["token"]


class OFREPWithPythonSDK(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sdk_key = create_sdk_key("ofrep-python")
        key = cls.sdk_key
        api.set_provider(OFREPProvider(BASE_URL, headers_factory=lambda: {"Authorization": f"Bearer {key}"}))
        cls.client = api.get_client()

    def assertDetails(self, details, value, variant, reason):
        self.assertIsNone(details.error_code, details.error_message)
        self.assertEqual(details.value, value)
        self.assertEqual(details.variant, variant)
        self.assertEqual(details.reason, reason)

    def test_bool_static_default(self):
        # No rules, overrides or rollout: STATIC. A flag with targeting that falls through answers DEFAULT.
        details = self.client.get_boolean_details("payments-enabled", False, EvaluationContext("u-100"))
        self.assertDetails(details, True, "default", Reason.STATIC)
        self.assertIsInstance(details.flag_metadata.get("version"), int)

    def test_bool_targeting_by_cohort_rule(self):
        context = EvaluationContext("u-1", {"platform": "ios"})
        details = self.client.get_boolean_details("ios-widgets", False, context)
        self.assertDetails(details, True, "ios-beta", Reason.TARGETING_MATCH)
        outside = self.client.get_boolean_details("ios-widgets", True, EvaluationContext("u-1", {"platform": "web"}))
        self.assertDetails(outside, False, "default", Reason.DEFAULT)

    def test_bool_expired_serves_kept_value(self):
        # dark-mode expired on 2026-10-01 and keeps `true` (demo.json).
        details = self.client.get_boolean_details("dark-mode", False, EvaluationContext("u-5"))
        self.assertDetails(details, True, "expired", Reason.STATIC)

    def test_string_rule_and_split(self):
        staff = EvaluationContext("u-7", {"email": "ann@flagstaff.dev"})
        self.assertDetails(
            self.client.get_string_details("checkout-button", "none", staff), "orange", "staff-preview",
            Reason.TARGETING_MATCH)
        arms = {"control": "blue", "green": "green", "orange": "orange"}
        seen = set()
        for unit in (f"user-{n}" for n in range(60)):
            details = self.client.get_string_details("checkout-button", "none", EvaluationContext(unit))
            self.assertIsNone(details.error_code, details.error_message)
            self.assertEqual(details.reason, Reason.SPLIT)
            self.assertEqual(arms[details.variant], details.value)
            again = self.client.get_string_details("checkout-button", "none", EvaluationContext(unit))
            self.assertEqual((again.value, again.variant), (details.value, details.variant))
            seen.add(details.variant)
        # 60 units over a 34/33/33 split: all three arms appear (the chance one is missed is below 1e-9).
        self.assertEqual(seen, set(arms))

    def test_integer_default_rule_and_unit_override(self):
        self.assertDetails(
            self.client.get_integer_details("api-rate-limit", 0, EvaluationContext("acct-1")), 600, "default",
            Reason.DEFAULT)
        self.assertDetails(
            self.client.get_integer_details("api-rate-limit", 0, EvaluationContext("qa-1")), 6000, "qa",
            Reason.TARGETING_MATCH)
        # A unit override until 2026-12-31.
        override = self.client.get_integer_details("api-rate-limit", 0, EvaluationContext("acct-load-test"))
        self.assertDetails(override, 100000, "override", Reason.TARGETING_MATCH)
        self.assertIs(type(override.value), int)

    def test_object_default_and_numeric_attribute(self):
        narrow = self.client.get_object_details("home-layout", {}, EvaluationContext("u-9", {"screenWidth": 800}))
        self.assertDetails(narrow, {"columns": 2, "sections": ["recent", "recommended"]}, "default", Reason.DEFAULT)
        wide = self.client.get_object_details("home-layout", {}, EvaluationContext("u-9", {"screenWidth": 1280}))
        self.assertDetails(
            wide, {"columns": 3, "sections": ["recent", "recommended", "trending"]}, "large-screens",
            Reason.TARGETING_MATCH)

    def test_missing_flag_serves_default(self):
        details = self.client.get_boolean_details("no-such-flag", True, EvaluationContext("u-1"))
        self.assertEqual(details.value, True)
        self.assertEqual(details.error_code, ErrorCode.FLAG_NOT_FOUND)
        self.assertEqual(details.reason, Reason.ERROR)

    def test_wrong_type_serves_default(self):
        details = self.client.get_string_details("payments-enabled", "fallback", EvaluationContext("u-1"))
        self.assertEqual(details.value, "fallback")
        self.assertEqual(details.error_code, ErrorCode.TYPE_MISMATCH)
        as_int = self.client.get_integer_details("checkout-button", 7, EvaluationContext("u-1"))
        self.assertEqual((as_int.value, as_int.error_code), (7, ErrorCode.TYPE_MISMATCH))

    def test_missing_targeting_key(self):
        for context in (EvaluationContext(None, {"country": "DE"}), None):
            details = self.client.get_boolean_details("payments-enabled", False, context)
            self.assertEqual(details.value, False)
            self.assertEqual(details.error_code, ErrorCode.TARGETING_KEY_MISSING)

    def test_bad_key_is_an_error_not_a_value(self):
        provider = OFREPProvider(BASE_URL, headers_factory=lambda: {"Authorization": "Bearer fss_not_a_key"})
        api.set_provider(provider, domain="bad-key")
        details = api.get_client("bad-key").get_boolean_details("payments-enabled", False, EvaluationContext("u-1"))
        self.assertEqual(details.value, False)
        self.assertEqual(details.error_code, ErrorCode.GENERAL)
        self.assertIn("unauthorized", details.error_message)

    def test_kill_reaches_the_next_evaluation(self):
        # Runs on its own flag so that the other tests do not depend on the order.
        before = self.client.get_boolean_details("new-checkout", True, EvaluationContext("qa-2"))
        self.assertDetails(before, True, "override:qa", Reason.TARGETING_MATCH)
        status, _, body = call("POST", "/v1/admin/sets/demo/flags/new-checkout/kill", ADMIN_TOKEN, {"reason": "test"})
        self.assertEqual(status, 200, body)
        try:
            for unit in ("qa-2", "u-1", "u-100"):
                killed = self.client.get_boolean_details("new-checkout", True, EvaluationContext(unit))
                self.assertDetails(killed, False, "kill", Reason.DISABLED)
        finally:
            status, _, body = call("POST", "/v1/admin/sets/demo/flags/new-checkout/restore", ADMIN_TOKEN, {})
            self.assertEqual(status, 200, body)


class Rewrite(requests.adapters.HTTPAdapter):
    """Changes each request the provider sends just before it goes out: the way to put bytes on the wire that the
    provider itself would never send, so that its handling of the server's answer to them is what is tested."""

    def __init__(self, body=None, query=None, headers=None):
        super().__init__()
        self.body, self.query, self.headers = body, query, headers or {}

    def send(self, request, **kwargs):
        if self.body is not None:
            request.body = self.body
            request.headers["Content-Length"] = str(len(self.body))
        if self.query is not None:
            request.url += "?" + self.query
        request.headers.update(self.headers)
        return super().send(request, **kwargs)


class OFREPErrorsWithPythonSDK(unittest.TestCase):
    """Every 400 and 404 on /ofrep/v1/ is in OFREP's shape, so the provider reports an error code and the caller's
    default instead of failing on the body (it raised KeyError: 'errorCode' on the API's own error shape)."""

    @classmethod
    def setUpClass(cls):
        cls.sdk_key = create_sdk_key("ofrep-errors")

    def client(self, token, **rewrite):
        provider = OFREPProvider(BASE_URL, headers_factory=lambda: {"Authorization": f"Bearer {token}"})
        if rewrite:
            provider.session.mount(BASE_URL, Rewrite(**rewrite))
        domain = f"errors-{self.id()}"
        api.set_provider(provider, domain=domain)
        return api.get_client(domain)

    def assertReported(self, client, code, message_part, key="payments-enabled"):
        # The SDK logs an exception when a provider raises something other than an OpenFeature error (a KeyError on
        # the body, say) and turns it into GENERAL: no log at all is what shows the provider understood the answer.
        with self.assertNoLogs("openfeature", level="ERROR"):
            details = client.get_boolean_details(key, False, EvaluationContext("u-1"))
        self.assertEqual(details.value, False)
        self.assertEqual(details.reason, Reason.ERROR)
        self.assertEqual(details.error_code, code, details.error_message)
        self.assertIn(message_part, details.error_message)

    def test_a_body_that_is_not_json_is_a_parse_error(self):
        client = self.client(self.sdk_key, body=b"{not json")
        self.assertReported(client, ErrorCode.PARSE_ERROR, "the body is not valid JSON")

    def test_an_admin_token_without_a_set_is_a_general_error(self):
        client = self.client(ADMIN_TOKEN)
        self.assertReported(client, ErrorCode.GENERAL, "an admin token must name the flag set with ?set=NAME")
        named = self.client(ADMIN_TOKEN, query="set=demo")
        details = named.get_boolean_details("payments-enabled", False, EvaluationContext("u-1"))
        self.assertEqual((details.value, details.error_code), (True, None))

    def test_an_unknown_set_is_flag_not_found(self):
        client = self.client(ADMIN_TOKEN, query="set=no-such-set")
        self.assertReported(client, ErrorCode.FLAG_NOT_FOUND, "no-such-set")

    def test_a_request_the_http_engine_refuses_is_a_general_error(self):
        # A control byte in a field value: refused by the HTTP engine before any route sees the request.
        client = self.client(self.sdk_key, headers={"X-Note": "a\x01b"})
        self.assertReported(client, ErrorCode.GENERAL, "invalid byte 0x01 in the X-Note value")

    def test_a_body_over_the_limit_names_the_setting(self):
        # The size of the import that found the old message (1.35 MB); the default limit is 1 MiB.
        client = self.client(self.sdk_key)
        with self.assertNoLogs("openfeature", level="ERROR"):
            details = client.get_boolean_details(
                "payments-enabled", False, EvaluationContext("u-1", {"blob": "x" * 1_345_000}))
        self.assertEqual((details.value, details.error_code), (False, ErrorCode.GENERAL))
        self.assertIn("limits.maxBodyBytes", details.error_message)


class OFREPBulk(unittest.TestCase):
    """The provider in this release evaluates flag by flag; the bulk endpoint is checked against the OFREP schema."""

    @classmethod
    def setUpClass(cls):
        cls.sdk_key = create_sdk_key("ofrep-bulk")

    def test_bulk_lists_every_live_flag_with_reason_and_variant(self):
        context = {"context": {"targetingKey": "qa-1", "screenWidth": 1280}}
        status, headers, body = call("POST", "/ofrep/v1/evaluate/flags", self.sdk_key, context)
        self.assertEqual(status, 200, body)
        flags = {flag["key"]: flag for flag in body["flags"]}
        self.assertEqual(
            set(flags),
            {"new-checkout", "checkout-button", "payments-enabled", "ios-widgets", "home-layout", "api-rate-limit",
             "dark-mode"})
        for flag in flags.values():
            self.assertIn("reason", flag)
            self.assertIn("variant", flag)
            self.assertIn("value", flag)
            self.assertNotIn("errorCode", flag)
        self.assertEqual(
            (flags["api-rate-limit"]["value"], flags["api-rate-limit"]["variant"], flags["api-rate-limit"]["reason"]),
            (6000, "qa", "TARGETING_MATCH"))
        self.assertEqual(flags["home-layout"]["value"]["columns"], 3)
        self.assertEqual((flags["new-checkout"]["value"], flags["new-checkout"]["variant"]), (True, "override:qa"))

        etag = headers["ETag"]
        self.assertTrue(etag.startswith('"') and etag.endswith('"'), etag)
        status, _, _ = call("POST", "/ofrep/v1/evaluate/flags", self.sdk_key, context, {"If-None-Match": etag})
        self.assertEqual(status, 304)
        # Another context evaluates differently, so the same ETag must not answer 304 for it.
        other = {"context": {"targetingKey": "u-9", "screenWidth": 800}}
        status, other_headers, other_body = call(
            "POST", "/ofrep/v1/evaluate/flags", self.sdk_key, other, {"If-None-Match": etag})
        self.assertEqual(status, 200, other_body)
        self.assertNotEqual(other_headers["ETag"], etag)

    def test_bulk_without_targeting_key(self):
        status, _, body = call("POST", "/ofrep/v1/evaluate/flags", self.sdk_key, {"context": {"country": "DE"}})
        self.assertEqual(status, 400)
        self.assertEqual(body["errorCode"], "TARGETING_KEY_MISSING")
        self.assertTrue(body["errorDetails"])

    def test_bulk_errors_have_the_bulk_shape(self):
        # OFREP's bulkEvaluationFailure: errorCode and errorDetails, nothing else.
        status, _, body = call("POST", "/ofrep/v1/evaluate/flags", ADMIN_TOKEN, {"context": {"targetingKey": "u"}})
        self.assertEqual((status, set(body)), (400, {"errorCode", "errorDetails"}))
        self.assertEqual(body["errorCode"], "GENERAL")
        status, _, body = call("POST", "/ofrep/v1/evaluate/flags?set=nope", ADMIN_TOKEN, {"context": {}})
        self.assertEqual((status, set(body), body["errorCode"]), (404, {"errorCode", "errorDetails"}, "GENERAL"))


if __name__ == "__main__":
    unittest.main(verbosity=2)
