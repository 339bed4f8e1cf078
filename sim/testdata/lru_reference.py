#!/usr/bin/env python3
"""A plain Python LRU prefix-cache and router simulator: the reference that
kvplan's Go simulator is timed against, and an independent check of it.

Usage:
    python3 sim/testdata/lru_reference.py TRACE.jsonl [--workers 8] [--kv-slots 200000]

It replays a Mooncake trace (one JSON object a line: timestamp, input_length,
output_length, hash_ids of 512-token blocks) through five routing policies
(round-robin, random, least-loaded, kv-aware, kv-aware-no-events), each over
its own per-worker LRU caches, following the trace's timestamps, and prints
one JSON line per policy with the figures kvplan simulate reports.

The model is kvplan's cache-only model, written independently and plainly
(dicts and OrderedDicts, no NumPy):
  - a worker caches blocks of 512 tokens; a request's full prompt blocks are
    named by their hash ids (each stands for its whole prefix); they are
    pinned while the request runs and stay cached, LRU, once it ends;
  - a running request also holds scratch blocks for its partial prompt
    block and its output: ceil(kv / 512) blocks in all, where kv = input +
    output - 1 tokens (the last sampled token is never fed back); when it
    ends, its floor(kv / 512) full blocks stay cached (never matched) and
    the partial one is freed; a request's blocks are released last first;
  - when every block is pinned, a block that does not fit is not cached
    (overflow);
  - a request runs 0.03 ms x uncached prompt tokens + 20 ms x output tokens;
    completions due at or before an arrival happen before it is routed;
  - routing: round-robin; random (Python's own RNG, so its figures differ
    from kvplan's PCG stream); least-loaded: fewest requests in flight
    (Dynamo's least-loaded mode), then fewest routed so far, then lowest
    index; kv-aware: Dynamo's KV router cost, lowest
    max((booked + prompt tokens) / 512 - overlap, 0) + active + new blocks,
    where the router books a request's prompt less its overlap (x 512) when
    it routes it and unbooks it at its first token (the end of its prefill),
    and active blocks are the distinct full prompt blocks of the requests in
    flight on the worker (new: the request's blocks not among them), ties
    to the fewest routed so far, then the lowest index; kv-aware-no-events:
    the same with every overlap 0 (it books the whole prompt);
  - a request is a repeat when its first full block was seen before, and a
    hit when 2 x overlap >= its leading blocks seen before.
"""

import argparse
import heapq
import json
import random
import sys
from collections import OrderedDict

BLOCK = 512
PREFILL_MS = 0.03
DECODE_MS = 20.0


class Cache:
    def __init__(self, capacity):
        self.capacity = capacity
        self.ref = {}               # stored block id -> pins
        self.lru = OrderedDict()    # unpinned stored blocks, least recent first
        self.scratch = 0
        self.anon = 0               # kept output blocks: stored, never matched
        self.anon_next = 0
        self.evictions = 0
        self.overflow = 0
        self.peak = 0

    def used(self):
        return len(self.ref) + self.scratch

    def active(self):
        return len(self.ref) - len(self.lru) + self.scratch

    def match(self, ids):
        n = 0
        for i in ids:
            if i not in self.ref:
                break
            n += 1
        return n

    def evict_one(self):
        if not self.lru:
            return False
        victim, _ = self.lru.popitem(last=False)
        del self.ref[victim]
        if isinstance(victim, tuple):
            self.anon -= 1
        self.evictions += 1
        return True

    def acquire(self, ids, extra):
        overlap = len(ids)
        pins = []
        for k, i in enumerate(ids):
            if i in self.ref:
                if self.ref[i] == 0:
                    del self.lru[i]
                self.ref[i] += 1
                pins.append(i)
                continue
            overlap = min(overlap, k)
            if self.used() >= self.capacity and not self.evict_one():
                self.overflow += 1
                continue
            self.ref[i] = 1
            pins.append(i)
        granted = 0
        for _ in range(extra):
            if self.used() >= self.capacity and not self.evict_one():
                self.overflow += 1
                continue
            self.scratch += 1
            granted += 1
        self.peak = max(self.peak, self.used())
        return overlap, granted, pins

    def release(self, pins, granted, keep):
        self.scratch -= granted
        for _ in range(keep):
            self.anon_next += 1
            key = ("out", self.anon_next)
            self.ref[key] = 0
            self.lru[key] = True
            self.anon += 1
        for i in reversed(pins):
            self.ref[i] -= 1
            if self.ref[i] == 0:
                self.lru[i] = True


def simulate(reqs, policy, workers, capacity, seed):
    caches = [Cache(capacity) for _ in range(workers)]
    routed = [0] * workers
    # The router's own account (Dynamo's ActiveSequences): requests in
    # flight, prompt tokens booked until the first token, and the distinct
    # full prompt blocks of the requests in flight (a reference count each).
    inflight = [0] * workers
    booked = [0] * workers
    holders = [dict() for _ in range(workers)]
    rng = random.Random(seed)
    rr = 0
    events = []  # (time_ms, seq, kind, ...): kind 0 first token, 1 end
    seen = set()
    out = dict(name=policy, requests=0, repeat_requests=0, hit_requests=0,
               input_tokens=0, cached_tokens=0, blocks_referenced=0, repeated_blocks=0)
    now = 0.0
    kv_family = policy in ("kv-aware", "kv-aware-no-events")

    def handle(ev):
        if ev[2] == 0:
            _, _, _, w, charge = ev
            booked[w] -= charge
            return
        _, _, _, w, pins, granted, keep, ids = ev
        caches[w].release(pins, granted, keep)
        inflight[w] -= 1
        if kv_family:
            for i in ids:
                holders[w][i] -= 1
                if holders[w][i] == 0:
                    del holders[w][i]

    for seq, (ts, inp, outp, ids) in enumerate(reqs):
        t = max(ts, now)
        while events and events[0][0] <= t:
            handle(heapq.heappop(events))
        now = t

        seen_run = 0
        for i in ids:
            if i not in seen:
                break
            seen_run += 1

        if policy == "round-robin":
            w = rr
            rr = (rr + 1) % workers
        elif policy == "random":
            w = rng.randrange(workers)
        elif policy == "least-loaded":
            w = min(range(workers), key=lambda v: (inflight[v], routed[v], v))
        else:
            best = None
            for v in range(workers):
                overlap = caches[v].match(ids) if policy == "kv-aware" else 0
                prefill = max((booked[v] + inp) / BLOCK - overlap, 0.0)
                new = sum(1 for i in ids if i not in holders[v])
                cost = prefill + (len(holders[v]) + new)
                key = (cost, routed[v], v)
                if best is None or key < best[0]:
                    best = (key, v)
            w = best[1]
        charge = 0
        if policy == "kv-aware":
            charge = inp - caches[w].match(ids) * BLOCK
        elif policy == "kv-aware-no-events":
            charge = inp

        kv = inp + outp - 1 if outp > 0 else inp
        extra = (kv + BLOCK - 1) // BLOCK - len(ids)
        overlap, granted, pins = caches[w].acquire(ids, extra)
        keep = min(kv // BLOCK - len(ids), granted)
        inflight[w] += 1
        routed[w] += 1
        first = now + PREFILL_MS * (inp - overlap * BLOCK)
        end = first + DECODE_MS * outp
        if kv_family:
            for i in ids:
                holders[w][i] = holders[w].get(i, 0) + 1
            if first > now:
                booked[w] += charge
                heapq.heappush(events, (first, seq, 0, w, charge))
        heapq.heappush(events, (end, seq, 1, w, pins, granted, keep, ids))

        out["requests"] += 1
        out["input_tokens"] += inp
        out["cached_tokens"] += overlap * BLOCK
        out["blocks_referenced"] += len(ids)
        out["repeated_blocks"] += seen_run
        if seen_run > 0:
            out["repeat_requests"] += 1
            if 2 * overlap >= seen_run:
                out["hit_requests"] += 1
        seen.update(ids)

    out["evictions"] = sum(c.evictions for c in caches)
    out["overflow_blocks"] = sum(c.overflow for c in caches)
    out["worker_requests"] = routed
    return out


def read_trace(path):
    reqs = []
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            inp = r["input_length"]
            full = inp // BLOCK
            reqs.append((float(r["timestamp"]), inp, r["output_length"], r["hash_ids"][:full]))
    return reqs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--kv-slots", type=int, default=200000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    reqs = read_trace(a.trace)
    for policy in ("round-robin", "random", "least-loaded", "kv-aware", "kv-aware-no-events"):
        print(json.dumps(simulate(reqs, policy, a.workers, a.kv_slots // BLOCK, a.seed)))


if __name__ == "__main__":
    sys.exit(main())
