#!/usr/bin/env python3
"""Summarises a V8 .cpuprofile (node --cpu-prof): self time by function, and
total (inclusive) time of the functions defined in files matching a pattern.

    bench/tools/cpuprofile.py PROFILE [--match tcrunner-jest] [--top 25]
"""
import argparse
import collections
import json


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("profile")
    ap.add_argument("--match", default=None, help="substring of the script URL whose functions to total")
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    prof = json.load(open(args.profile))
    nodes = {n["id"]: n for n in prof["nodes"]}
    parent = {}
    for n in prof["nodes"]:
        for c in n.get("children", []):
            parent[c] = n["id"]
    deltas = prof["timeDeltas"]
    samples = prof["samples"]
    hits = collections.Counter()
    for s, d in zip(samples, deltas):
        hits[s] += max(d, 0)
    total = sum(hits.values())

    def key(n):
        cf = n["callFrame"]
        url = cf["url"].rsplit("/", 1)[-1]
        return f"{cf['functionName'] or '(anon)'} {url}:{cf['lineNumber'] + 1}"

    self_by = collections.Counter()
    for nid, us in hits.items():
        self_by[key(nodes[nid])] += us
    print(f"total sampled: {total / 1e6:.3f} s")
    print("\nself time, top:")
    for k, us in self_by.most_common(args.top):
        print(f"  {us / 1e3:9.1f} ms {100 * us / total:5.1f}%  {k}")
    if args.match:
        # Samples with a frame from a matching script on their stack: their
        # time by outermost matching frame (inclusive) and by leaf (self).
        inclusive = 0
        by_entry = collections.Counter()
        inner = collections.Counter()
        for nid, us in hits.items():
            chain = []
            x = nid
            while x is not None:
                chain.append(nodes[x])
                x = parent.get(x)
            matching = [n for n in chain if args.match in n["callFrame"]["url"]]
            if matching:
                inclusive += us
                by_entry[key(matching[-1])] += us
                inner[key(nodes[nid])] += us
        print(f"\ninclusive time under {args.match!r}: {inclusive / 1e3:.1f} ms ({100 * inclusive / total:.1f}%)")
        for k, us in by_entry.most_common(args.top):
            print(f"  {us / 1e3:9.1f} ms  {k}")
        print(f"\nself time of the leaves under {args.match!r}:")
        for k, us in inner.most_common(args.top):
            print(f"  {us / 1e3:9.1f} ms  {k}")


if __name__ == "__main__":
    main()
