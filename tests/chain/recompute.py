"""Recomputes a ledger's hash chain from docs/chain.md alone (standard library only), to show
that the specification is complete. Prints {"head": ..., "matches": bool, "items": n}.
Usage: recompute.py LEDGER_INDEX.json
"""

import hashlib
import json
import sys


def jcs(value):
    # The ledger holds strings, integers, booleans, nulls, arrays and objects only.
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def sha256hex(data):
    return hashlib.sha256(data).hexdigest()


def main(path):
    with open(path, encoding="utf-8") as handle:
        index = json.load(handle)
    items = 0
    ok = True
    for url, entry in index["servers"].items():
        base = entry.get("history_base")
        prev = base["link"] if base else sha256hex(
            ("mcp-surface-ledger/history@1\n" + url).encode())[:32]
        base_seq = base["seq"] if base else 0
        # History items and moves form one chain, in order of their seq; a history item's
        # kept values are covered by the index head, not by its link.
        moves = [m for m in entry.get("moves", []) if m["seq"] > base_seq]
        for item in sorted(entry["history"] + moves, key=lambda i: i["seq"]):
            body = {k: v for k, v in item.items() if k not in ("link", "values")}
            link = sha256hex(prev.encode() + b"\n" + jcs(body))[:32]
            ok = ok and link == item["link"]
            prev = link
            items += 1
        ok = ok and index["chain"]["servers"][url]["link"] == prev
    # The log rule: the consecutive writes before this one, ending with seq - 1, every one of
    # them for a chain that began at write 1 (at most 1000), and prev is the last one's head.
    chain = index["chain"]
    seq, log, genesis = chain["seq"], chain["log"], chain["genesis"]
    first = seq - len(log)
    ok = ok and [item["seq"] for item in log] == list(range(first, seq))
    ok = ok and chain["prev"] == (log[-1]["head"] if log else "0" * 64)
    if genesis["kind"] != "rebased":
        ok = ok and genesis["seq"] == 1 and len(log) == min(seq - 1, 1000)
    else:
        ok = ok and len(log) >= min(seq - genesis["seq"], 1000)
    chain = {k: v for k, v in index["chain"].items() if k not in ("head", "signature")}
    head = sha256hex(jcs(dict(index, chain=chain)))
    print(json.dumps({"head": head, "matches": ok and head == index["chain"]["head"],
                      "items": items}))


if __name__ == "__main__":
    main(sys.argv[1])
