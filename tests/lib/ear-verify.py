#!/usr/bin/python3
# An independent EAR consumer (PyJWT + cryptography from Debian, no attestd code): verifies the
# ES256 JWT of GET /v1/agents/ID/ear with the key from GET /v1/ear/keys and checks every claim
# against the verdict of GET /v1/agents/ID/results, by its own reading of docs/ear.md.
#
#   ear-verify.py verify JWKS TOKEN RESULTS AGENT STATUS BUILD [NONCE]
#       the token verifies; header, kid (RFC 7638, recomputed), every claim as docs/ear.md says;
#       ear.status must be STATUS
#   ear-verify.py refuse JWKS TOKEN
#       the token verifies, and copies with one flipped byte in the payload, in the signature or
#       in the header are refused
#   ear-verify.py foreign JWKS TOKEN KEY.pem
#       the token's header and claims signed with another key (same kid) are refused
# Exit 0 when all holds, 1 with the reason otherwise.
import base64
import hashlib
import json
import sys
import time

import jwt
from jwt.exceptions import InvalidSignatureError, InvalidTokenError

PROFILE = "tag:github.com,2023:veraison/ear"
# AR4SI values (draft-ietf-rats-ar4si §2.3.4) as docs/ear.md maps them:
# category -> (affirming, warning: an unanchored claim, contraindicated: a claim not passing)
CATEGORY = {
    "configuration": (2, 36, 96),
    "executables": (3, 33, 96),
    "hardware": (2, 32, 96),
}


def fail(msg):
    print("ear-verify: " + msg, file=sys.stderr)
    sys.exit(1)


def b64u_dec(s):
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def b64u_enc(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def load_jwks(path):
    with open(path) as f:
        jwks = json.load(f)
    keys = jwks.get("keys")
    if not isinstance(keys, list) or len(keys) != 1:
        fail("JWKS: want exactly one key: %r" % jwks)
    k = keys[0]
    for m, v in (("kty", "EC"), ("crv", "P-256"), ("alg", "ES256"), ("use", "sig")):
        if k.get(m) != v:
            fail("JWKS: %s is %r, want %r" % (m, k.get(m), v))
    if len(b64u_dec(k["x"])) != 32 or len(b64u_dec(k["y"])) != 32:
        fail("JWKS: coordinates are not 32 bytes")
    canon = json.dumps({"crv": k["crv"], "kty": k["kty"], "x": k["x"], "y": k["y"]},
                       separators=(",", ":"), sort_keys=True)
    thumb = b64u_enc(hashlib.sha256(canon.encode()).digest())
    if k.get("kid") != thumb:
        fail("JWKS: kid %r is not the RFC 7638 thumbprint %r" % (k.get("kid"), thumb))
    return k


def decode(token, jwk):
    key = jwt.PyJWK(jwk).key
    return jwt.decode(token, key=key, algorithms=["ES256"],
                      options={"require": ["iat"], "verify_aud": False})


# claim id -> category, docs/ear.md "Trustworthiness vector" (claim ids with an argument, like
# "tpm.pcrs.sha256.7" or "boot.variables.PK", by their id)
HARDWARE = ("tpm.pcrs", "boot.pcrs_replay", "boot.separators", "boot.startup_locality",
            "boot.secureboot", "boot.variables")
EXECUTABLES = ("ima.boot_aggregate", "ima.runtime", "boot.bootloaders", "boot.kernels")


def category(name):
    def of(ids):
        return any(name == i or name.startswith(i + ".") for i in ids)
    if of(HARDWARE):
        return "hardware"
    if of(EXECUTABLES):
        return "executables"
    if name.split(".")[0] in ("selinux", "trusted_keys", "cfi", "kernel"):
        return "configuration"
    fail("claim %r has no category in docs/ear.md" % name)


def expected(verdict):
    """(status, vector) from the verdict JSON, the rule of docs/ear.md."""
    if verdict.get("status") == "error":  # verified, but the round could not be judged
        return "none", {k: -1 for k in ("instance-identity", *CATEGORY)}
    if isinstance(verdict.get("reason"), dict):  # the evidence failed verification
        return "contraindicated", {k: 99 for k in ("instance-identity", *CATEGORY)}
    claims = verdict.get("claims") or []
    vec = {"instance-identity": 2}
    for cat, (good, loose, bad) in CATEGORY.items():
        mine = [c for c in claims if category(c["name"]) == cat]
        if not mine:
            vec[cat] = 0
        elif any(c["result"] != "pass" for c in mine):
            vec[cat] = bad
        elif any(not c["anchored"] for c in mine):
            vec[cat] = loose
        elif cat == "executables" and any(c["name"] == "ima.runtime" for c in mine):
            vec[cat] = 2  # approved during and after boot: every run-time file judged
        else:
            vec[cat] = good
    if verdict["status"] != "pass" or any(c["result"] != "pass" for c in claims):
        status = "contraindicated"
    elif not claims:
        status = "none"
    elif any(not c["anchored"] for c in claims):
        status = "warning"
    else:
        status = "affirming"
    return status, vec


def verify(jwks_path, token_path, results_path, agent, want_status, build, nonce=None):
    jwk = load_jwks(jwks_path)
    token = open(token_path).read().strip()
    hdr = jwt.get_unverified_header(token)
    if hdr.get("alg") != "ES256" or hdr.get("kid") != jwk["kid"]:
        fail("header %r: want alg ES256 and kid %s" % (hdr, jwk["kid"]))
    try:
        c = decode(token, jwk)
    except InvalidTokenError as e:
        fail("the token does not verify: %r" % e)
    with open(results_path) as f:
        res = json.load(f)
    if res.get("id") != agent or not res.get("results"):
        fail("results of %r: %r" % (agent, res))
    latest = res["results"][0]
    if c.get("eat_profile") != PROFILE:
        fail("eat_profile %r" % c.get("eat_profile"))
    if not isinstance(c["iat"], int) or abs(c["iat"] - time.time()) > 300:
        fail("iat %r is not now" % c["iat"])
    if c.get("ear.verifier-id") != {"developer": "attestd", "build": build}:
        fail("ear.verifier-id %r, want build %r" % (c.get("ear.verifier-id"), build))
    if nonce is None:
        if "eat_nonce" in c:
            fail("eat_nonce %r without a nonce asked for" % c["eat_nonce"])
    elif c.get("eat_nonce") != nonce:
        fail("eat_nonce %r, want %r" % (c.get("eat_nonce"), nonce))
    subs = c.get("submods")
    if not isinstance(subs, dict) or list(subs) != [agent]:
        fail("submods %r: want one submodule %s" % (subs, agent))
    sub = subs[agent]
    status, vec = expected(latest["verdict"])
    if status != want_status:
        fail("the verdict maps to %s, the test wants %s: %r" % (status, want_status, latest))
    if sub.get("ear.status") != status:
        fail("ear.status %r, the verdict says %s" % (sub.get("ear.status"), status))
    if sub.get("ear.trustworthiness-vector") != vec:
        fail("vector %r, the verdict says %r" % (sub.get("ear.trustworthiness-vector"), vec))
    if latest.get("policy") is None:
        if "ear.appraisal-policy-id" in sub:
            fail("policy id %r without a policy" % sub["ear.appraisal-policy-id"])
    elif sub.get("ear.appraisal-policy-id") != latest["policy"]:
        fail("ear.appraisal-policy-id %r, result policy %r"
             % (sub.get("ear.appraisal-policy-id"), latest["policy"]))
    ext = sub.get("attestd.result") or {}
    if ext.get("id") != latest["id"]:
        fail("attestd.result.id %r, latest result %r" % (ext.get("id"), latest["id"]))
    want_keys = {"ear.status", "ear.trustworthiness-vector", "attestd.result"}
    if latest.get("policy") is not None:
        want_keys.add("ear.appraisal-policy-id")
    if set(sub) != want_keys:
        fail("submodule members %r, want %r" % (sorted(sub), sorted(want_keys)))
    print("ear-verify: verified %s: %s %s policy %s" % (
        agent, status, json.dumps(vec, sort_keys=True), latest.get("policy")))


def refused(token, jwk, what):
    try:
        decode(token, jwk)
    except InvalidSignatureError:
        return
    except InvalidTokenError as e:
        fail("%s: refused, but not for its signature: %r" % (what, e))
    fail("%s: accepted" % what)


def flip(seg, pos):
    raw = bytearray(b64u_dec(seg))
    raw[pos] ^= 0x01
    return b64u_enc(bytes(raw))


def refuse(jwks_path, token_path):
    jwk = load_jwks(jwks_path)
    token = open(token_path).read().strip()
    decode(token, jwk)  # the original verifies: the refusals below are the flips' doing
    h, p, s = token.split(".")
    raw = b64u_dec(p)
    # a byte inside the profile string: the payload stays valid JSON, only its bytes change
    at = raw.index(b"veraison")
    refused(".".join([h, flip(p, at), s]), jwk, "flipped payload byte")
    refused(".".join([h, p, flip(s, 5)]), jwk, "flipped signature byte (r)")
    refused(".".join([h, p, flip(s, 40)]), jwk, "flipped signature byte (s)")
    hraw = b64u_dec(h)
    refused(".".join([flip(h, hraw.index(b"kid") + 7), p, s]), jwk, "flipped header byte")
    print("ear-verify: flipped payload, signature and header bytes refused")


def foreign(jwks_path, token_path, key_path):
    jwk = load_jwks(jwks_path)
    token = open(token_path).read().strip()
    hdr = jwt.get_unverified_header(token)
    claims = jwt.decode(token, options={"verify_signature": False})
    forged = jwt.encode(claims, open(key_path).read(), algorithm="ES256",
                        headers={"kid": hdr["kid"]})
    if jwt.get_unverified_header(forged)["kid"] != jwk["kid"]:
        fail("forged token lost the kid")
    refused(forged, jwk, "token signed by another key")
    print("ear-verify: the same claims signed by another key refused")


def main(argv):
    if len(argv) in (8, 9) and argv[1] == "verify":
        verify(*argv[2:9])
    elif len(argv) == 4 and argv[1] == "refuse":
        refuse(argv[2], argv[3])
    elif len(argv) == 5 and argv[1] == "foreign":
        foreign(argv[2], argv[3], argv[4])
    else:
        fail("usage: see the head of " + argv[0])


if __name__ == "__main__":
    main(sys.argv)
