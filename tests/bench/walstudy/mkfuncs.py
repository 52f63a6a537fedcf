#!/usr/bin/env python3
"""mkfuncs.py DEF.sql OUTDIR: from pg_get_functiondef($FUNC, attestd_verdict or attestd_verdicts) write func-orig.sql and the
variants: b (no nonces_used purge/insert), c (no results prune DELETE), d (no EXCEPTION block:
no subtransaction), bc, bcd. Each is CREATE OR REPLACE of the same signature."""
import re
import sys

src = open(sys.argv[1]).read().strip()
outdir = sys.argv[2]
assert src.startswith("CREATE OR REPLACE FUNCTION"), src[:80]

cuts = {
    "b": [r"IF p_purge > 0 THEN DELETE FROM nonces_used WHERE expires <= p_purge; END IF;",
          r"IF p_nonce IS NOT NULL THEN\s+INSERT INTO nonces_used.*?RETURN; END IF;\s+END IF;"],
    "c": [r"DELETE FROM results WHERE agent = p_agent(\[k\])? AND id <= \(SELECT r\.id FROM results r"
          r"\s+WHERE r\.agent = p_agent(\[k\])? ORDER BY r\.id DESC LIMIT 1 OFFSET p_retain\);"],
    "d": [r"EXCEPTION WHEN OTHERS THEN\s+rc := 5; rid := 0; msg := SQLSTATE \|\| ' ' \|\| SQLERRM;"],
}


def variant(keys):
    s = src
    for k in keys:
        for pat in cuts[k]:
            s, n = re.subn(pat, " ", s, flags=re.S)
            assert n == 1, (k, pat, n)
    return s


for name, keys in {"orig": "", "b": "b", "c": "c", "d": "d", "bc": "bc", "bcd": "bcd"}.items():
    try:
        text = variant(keys)
    except AssertionError:  # a cut this function does not have (attestd_verdicts: no b, no d)
        continue
    with open(f"{outdir}/func-{name}.sql", "w") as f:
        f.write(text + ";\n")
