"""FlagSigning against an independent implementation: Python's `cryptography` (Tests/signing/run).

    crosscheck.py make DIR    writes DIR/python.json: signatures and sealed keys made here, for the Swift test
    crosscheck.py check DIR   reads DIR/swift.json: verifies the Swift test's signatures, opens its sealed keys

Both sides build the signed message, the header value, the key id and the sealed-key layout from their parts, each
from docs/signing.md ("Primitives"); nothing here reads the Swift code.
"""

import base64
import hashlib
import json
import os
import re
import sys

from cryptography.exceptions import InvalidSignature, InvalidTag
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

HEADER = re.compile(r"v1; key=(?P<key>[0-9a-f]{16}); sig=(?P<sig>[A-Za-z0-9+/]{86}==)")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def raw_public_key(private_key: Ed25519PrivateKey) -> bytes:
    return private_key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def key_id(public_key: bytes) -> str:
    return hashlib.sha256(public_key).hexdigest()[:16]


def signed_message(set_name: str, version: int, base_version, body: bytes) -> bytes:
    base = "-" if base_version is None else str(base_version)
    lines = ["flagstaff-signature-v1", set_name, str(version), base, hashlib.sha256(body).hexdigest()]
    return "\n".join(lines).encode("utf-8")


def header(private_key: Ed25519PrivateKey, message: bytes) -> str:
    return f"v1; key={key_id(raw_public_key(private_key))}; sig={b64(private_key.sign(message))}"


def seal(kek: bytes, set_name: str, seed: bytes) -> bytes:
    nonce = os.urandom(12)
    # AESGCM.encrypt returns the ciphertext followed by the 16-byte tag.
    return b"\x01" + nonce + AESGCM(kek).encrypt(nonce, seed, set_name.encode("utf-8"))


def make(directory: str) -> None:
    signed, sealed = [], []
    bodies = [
        ("document", b'{"flags":{"checkout":{"type":"boolean","default":false}}}'),
        ("empty body", b""),
        ("every byte value", bytes(range(256))),
        ("200 KB", bytes((i * 7919) % 256 for i in range(200_000))),
    ]
    for index, set_name in enumerate(["mobile", "café-ñ", "a/b c"]):
        key = Ed25519PrivateKey.generate()
        public = b64(raw_public_key(key))
        for name, body in bodies:
            for base in (None, index + 40):
                version = index + 41
                signature = header(key, signed_message(set_name, version, base, body))
                case = dict(name=f"{set_name} {name} base {base}", publicKey=public, set=set_name, version=version,
                            baseVersion=base, body=b64(body), signature=signature, valid=True)
                signed.append(case)
        # Each part of the message matters: the same signature over another set, version, base or body is refused.
        good = signed[-1]
        for field, value in (("set", set_name + "x"), ("version", good["version"] + 1), ("baseVersion", None),
                             ("body", b64(base64.b64decode(good["body"]) + b"\n"))):
            signed.append(dict(good, name=f"{good['name']}, other {field}", valid=False, **{field: value}))
        kek = os.urandom(32)
        seed = key.private_bytes_raw()
        sealed.append(dict(name=set_name, keyEncryptionKey=b64(kek), set=set_name,
                           sealed=b64(seal(kek, set_name, seed)), publicKey=public))
    with open(os.path.join(directory, "python.json"), "w") as file:
        json.dump(dict(signed=signed, sealed=sealed), file, indent=1)
    print(f"python made {len(signed)} signed cases and {len(sealed)} sealed keys")


def check(directory: str) -> int:
    path = os.path.join(directory, "swift.json")
    if not os.path.exists(path):
        print(f"crosscheck: no {path}: the Swift test did not run", file=sys.stderr)
        return 1
    with open(path) as file:
        cases = json.load(file)
    failures = []
    for case in cases["signed"]:
        public = base64.b64decode(case["publicKey"], validate=True)
        match = HEADER.fullmatch(case["signature"])
        if match is None:
            failures.append(f"{case['name']}: header {case['signature']!r} does not read v1; key=ID; sig=BASE64")
            continue
        if match["key"] != key_id(public):
            failures.append(f"{case['name']}: key id {match['key']}, expected {key_id(public)}")
        # Swift's JSONEncoder leaves out a nil base version.
        message = signed_message(case["set"], case["version"], case.get("baseVersion"),
                                 base64.b64decode(case["body"], validate=True))
        try:
            Ed25519PublicKey.from_public_bytes(public).verify(base64.b64decode(match["sig"]), message)
        except InvalidSignature:
            failures.append(f"{case['name']}: the signature does not verify")
    for case in cases["sealed"]:
        blob = base64.b64decode(case["sealed"], validate=True)
        if len(blob) != 61 or blob[0] != 1:
            failures.append(f"{case['name']}: sealed key of {len(blob)} bytes, version {blob[:1].hex()}")
            continue
        kek = base64.b64decode(case["keyEncryptionKey"], validate=True)
        try:
            seed = AESGCM(kek).decrypt(blob[1:13], blob[13:], case["set"].encode("utf-8"))
        except InvalidTag:
            failures.append(f"{case['name']}: the sealed key does not open")
            continue
        public = raw_public_key(Ed25519PrivateKey.from_private_bytes(seed))
        if b64(public) != case["publicKey"]:
            failures.append(f"{case['name']}: the sealed key opens to another key")
        try:
            AESGCM(kek).decrypt(blob[1:13], blob[13:], (case["set"] + "x").encode("utf-8"))
            failures.append(f"{case['name']}: the sealed key opens for another set")
        except InvalidTag:
            pass
    for failure in failures:
        print(f"crosscheck: {failure}", file=sys.stderr)
    print(f"python checked {len(cases['signed'])} Swift signatures and {len(cases['sealed'])} sealed keys: "
          f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("make", "check"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        sys.exit(check(sys.argv[2]))
