"""Peer SDKs for Benchmarks/suite.py: the suite's flag in GrowthBook, Unleash and LaunchDarkly, all offline.

The flag is the one `flagbench suite-eval` builds (Sources/flagbench/PeerWorkloads.swift):
`country == "NL"` → true, else a 25 % rollout → true, else false; units `unit-0…unit-(n-1)` with countries
US, DE, NL, FR, GB in turn. Each SDK buckets with its own hash (GrowthBook FNV-1a, Unleash MurmurHash3 with its
own seed and 100 buckets, LaunchDarkly SHA-1), so the units inside the 25 % differ from SDK to SDK: only the share
is comparable. Flagstaff's per-unit answers are checked against SPEC §2.1 computed with the `mmh3` package.

Each evaluator is built once (not timed) and then timed over prebuilt contexts, as flagbench times Flagstaff.
"""

import json
import logging
import math
import os
import time
from pathlib import Path

FLAG = "peer-flag"
COUNTRIES = ["US", "DE", "NL", "FR", "GB"]
PERCENT = 25


def units(count):
    return [(f"unit-{index}", COUNTRIES[index % len(COUNTRIES)]) for index in range(count)]


class GrowthBookPeer:
    """GrowthBook's Python SDK with the feature definitions passed in (no API host): a forced rule with a
    condition, then a forced rule with 25 % coverage hashed on `id`. One instance; per unit `set_attributes` and
    `is_on`, the SDK's documented per-request use."""

    name = "GrowthBook"

    def __init__(self, population):
        from growthbook import GrowthBook

        features = {FLAG: {"defaultValue": False, "rules": [
            {"condition": {"country": "NL"}, "force": True},
            {"force": True, "coverage": PERCENT / 100, "hashAttribute": "id"},
        ]}}
        self.client = GrowthBook(features=features)
        self.contexts = [{"id": unit, "country": country} for unit, country in population]

    def run(self):
        client, answers = self.client, []
        append = answers.append
        for attributes in self.contexts:
            client.set_attributes(attributes)
            append(client.is_on(FLAG))
        return answers

    def close(self):
        self.client.destroy()


class UnleashPeer:
    """Unleash's Python SDK (its Rust engine, yggdrasil) bootstrapped from a local feature file; the client is
    never initialised, so it makes no request, registers nothing and sends no metrics."""

    name = "Unleash"

    def __init__(self, population, directory):
        from UnleashClient import UnleashClient
        from UnleashClient.cache import FileCache

        document = {"version": 2, "features": [{
            "name": FLAG, "type": "release", "enabled": True, "project": "default",
            "strategies": [
                {"name": "default", "parameters": {},
                 "constraints": [{"contextName": "country", "operator": "IN", "values": ["NL"]}]},
                {"name": "flexibleRollout", "constraints": [],
                 "parameters": {"rollout": str(PERCENT), "stickiness": "userId", "groupId": FLAG}},
            ]}]}
        path = os.path.join(directory, "unleash-features.json")
        with open(path, "w") as file:
            json.dump(document, file)
        cache = FileCache("flagstaff-suite", directory=directory)
        cache.bootstrap_from_file(Path(path))
        self.client = UnleashClient(
            url="http://127.0.0.1:9/api", app_name="flagstaff-suite", cache=cache, disable_metrics=True,
            disable_registration=True)
        self.contexts = [{"userId": unit, "properties": {"country": country}} for unit, country in population]

    def run(self):
        client, answers = self.client, []
        append = answers.append
        for context in self.contexts:
            append(client.is_enabled(FLAG, context))
        return answers

    def close(self):
        self.client.destroy()


class LaunchDarklyPeer:
    """LaunchDarkly's Python server SDK with a local file data source (no connection) and events off: a rule
    `country in [NL]`, then a fallthrough rollout of 25,000/75,000 weights."""

    name = "LaunchDarkly"

    def __init__(self, population, directory):
        import ldclient
        from ldclient import Context
        from ldclient.config import Config
        from ldclient.integrations import Files

        flag = {
            "key": FLAG, "version": 1, "on": True, "salt": FLAG, "variations": [True, False], "offVariation": 1,
            "targets": [], "contextTargets": [], "prerequisites": [],
            "rules": [{"id": "nl", "variation": 0,
                       "clauses": [{"attribute": "country", "op": "in", "values": ["NL"], "negate": False}]}],
            "fallthrough": {"rollout": {"variations": [
                {"variation": 0, "weight": PERCENT * 1000}, {"variation": 1, "weight": (100 - PERCENT) * 1000}]}},
        }
        path = os.path.join(directory, "launchdarkly-flags.json")
        with open(path, "w") as file:
            json.dump({"flags": {FLAG: flag}}, file)
        config = Config(
            "sdk-offline", update_processor_class=Files.new_data_source(paths=[path]), send_events=False,
            diagnostic_opt_out=True)
        self.client = ldclient.LDClient(config=config, start_wait=5)
        if not self.client.is_initialized():
            raise RuntimeError("LaunchDarkly did not load its flag file")
        self.contexts = [Context.builder(unit).set("country", country).build() for unit, country in population]

    def run(self):
        client, answers = self.client, []
        append = answers.append
        for context in self.contexts:
            append(client.variation(FLAG, context, False))
        return answers

    def close(self):
        self.client.close()


def build(population, directory):
    # The SDKs log their offline state (no server, no events) as warnings; that is the setup asked for.
    logging.getLogger("UnleashClient").setLevel(logging.ERROR)
    logging.getLogger("ldclient").setLevel(logging.ERROR)
    return [GrowthBookPeer(population), UnleashPeer(population, directory), LaunchDarklyPeer(population, directory)]


def timed(peer):
    """(ns per evaluation, answers) of one pass over every unit."""
    started = time.perf_counter_ns()
    answers = peer.run()
    return (time.perf_counter_ns() - started) / len(answers), answers


def rollout_share(population, answers):
    """Percent on among units outside NL, and whether every NL unit got the rule's value."""
    outside = [answer for (_, country), answer in zip(population, answers) if country != "NL"]
    rule_ok = all(answer is True for (_, country), answer in zip(population, answers) if country == "NL")
    return 100 * sum(1 for answer in outside if answer is True) / len(outside), rule_ok


def share_tolerance(population):
    """Five binomial standard deviations, in percent, for the units outside NL: a correct SDK fails by chance
    about once in 1.7 million runs."""
    n = sum(1 for _, country in population if country != "NL")
    p = PERCENT / 100
    return 500 * math.sqrt(p * (1 - p) / n)


def spec_answers(population):
    """SPEC §2.1 with an independent MurmurHash3: bucket(salt = flag key, unit) < 2,500, after the NL rule."""
    import mmh3

    # The SPEC's own vectors first, so that a wrong call of mmh3 cannot pass.
    for text, expected in [("new-checkout:user-1", 2230340631), ("a", 1009084850), ("checkout:42", 2630045384)]:
        if mmh3.hash(text, 0, signed=False) != expected:
            raise RuntimeError(f"mmh3 does not reproduce SPEC §2.1's vector for {text!r}")
    return [country == "NL" or mmh3.hash(f"{FLAG}:{unit}", 0, signed=False) % 10000 < PERCENT * 100
            for unit, country in population]
