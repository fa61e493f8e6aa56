#!/usr/bin/env python3
"""Captures what a build from before prerequisites evaluates on today's wire form of them.

The fixture it writes, Tests/FlagCoreTests/Vectors/prerequisites-old-client.json, is read by
PrerequisiteTests.aBuildFromBeforePrerequisitesFellBackOnEveryFlagThatHasThem. To capture it again:

    git worktree add /tmp/old 9c5ff05 && (cd /tmp/old && swift build --product flagctl)
    Tests/compat/capture-old-client.py /tmp/old/.build/debug/flagctl \
        Tests/FlagCoreTests/Vectors/prerequisites-wire.json Tests/FlagCoreTests/Vectors/prerequisites-old-client.json

9c5ff05 is the last commit before prerequisites: its evaluator is the one every app installed until then carries.
"""
import json
import subprocess
import sys


def main():
    old, document, out = sys.argv[1:4]
    flags = sorted(json.load(open(document))["flags"].keys())
    contexts = [("u-1", []), ("u-2", ["plan=pro"]), ("u-3", [])]
    results = []
    for key in flags:
        for unit, attributes in contexts:
            command = [old, "--json", "eval", key, "--file", document, "--unit", unit, "--at", "2026-12-06T12:00:00Z"]
            for attribute in attributes:
                command += ["--attr", attribute]
            answer = json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
            results.append({"flag": key, "unit": unit, "attributes": attributes, "value": answer.get("value"),
                            "reason": answer.get("reason"), "errorCode": answer.get("errorCode")})
    with open(out, "w") as file:
        json.dump({"builtFrom": "9c5ff05 (the commit before prerequisites)", "document": "prerequisites-wire.json",
                   "evaluations": results}, file, indent=1, sort_keys=True)
        file.write("\n")


if __name__ == "__main__":
    main()
