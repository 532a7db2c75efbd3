#!/usr/bin/env python3
"""A small reference implementation of three of Agora's classical games, for `agora bench`.

It plays the same rules as the engine's shipped classical blocks, in plain Python (standard
library only), so that the benchmark can report how much faster the engine is on the same work:

  naming  24 agents of the engine's minimal naming game (simultaneous proposals): pairs drawn
          uniformly; each proposes a name from its inventory (a random name of the pool of 10
          when the inventory is empty); on a match both keep only that name, on a mismatch both
          learn the other's. A convention forms when at least 95 % of the last 50 interactions
          matched; a run stops there or at 20,000 interactions.
  pd      two Roth-Erev learners (phi 0.1, epsilon 0.2, strength 9) in a 10-round prisoner's
          dilemma with (R, S, T, P) = (3, 0, 5, 1).
  pgg     four conditional cooperators in a 10-round public goods game (endowment 20, MPCR 0.4):
          round 1 a share drawn from N(0.5, 0.15) clamped to [0, 1], then 0.43 times the others'
          previous mean contribution, rounded.

Usage: reference.py GAME RUNS SEED. Prints one JSON line: game, runs, interactions or decisions,
seconds (time.perf_counter around the runs only).
"""

import json
import math
import random
import sys
import time


def naming_run(rng, agents=24, pool=10, window=50, threshold=0.95, cap=20000):
    inventories = [[] for _ in range(agents)]
    recent = [False] * window
    matches = 0
    needed = math.ceil(threshold * window)
    for t in range(1, cap + 1):
        a = rng.randrange(agents)
        b = rng.randrange(agents - 1)
        if b >= a:
            b += 1
        inv_a, inv_b = inventories[a], inventories[b]
        na = rng.choice(inv_a) if inv_a else rng.randrange(pool)
        nb = rng.choice(inv_b) if inv_b else rng.randrange(pool)
        matched = na == nb
        if matched:
            inventories[a] = [na]
            inventories[b] = [nb]
        else:
            if nb not in inv_a:
                inv_a.append(nb)
            if na not in inv_b:
                inv_b.append(na)
        slot = (t - 1) % window
        matches += matched - recent[slot]
        recent[slot] = matched
        if t >= window and matches >= needed:
            return t
    return cap


class RothErev:
    def __init__(self, arms, payoff_min, mean_abs, phi=0.1, epsilon=0.2, strength=9.0):
        self.q = [max(strength * mean_abs / arms, 1e-6)] * arms
        self.payoff_min = payoff_min
        self.phi, self.epsilon = phi, epsilon
        self.pending = None

    def decide(self, rng):
        total = sum(self.q)
        draw = rng.random() * total
        k = len(self.q) - 1
        for i, q in enumerate(self.q):
            if draw < q:
                k = i
                break
            draw -= q
        self.pending = k
        return k

    def update(self, payoff):
        r = max(payoff - self.payoff_min, 0.0)
        m = len(self.q)
        k = self.pending
        for i in range(m):
            e = r * (1 - self.epsilon) if i == k else r * self.epsilon / max(m - 1, 1)
            self.q[i] = max((1 - self.phi) * self.q[i] + e, 1e-9)


# (own, other) -> own payoff; action 0 = cooperate, 1 = defect.
PD = {(0, 0): 3.0, (0, 1): 0.0, (1, 0): 5.0, (1, 1): 1.0}


def pd_run(rng, rounds=10):
    mean_abs = sum(abs(v) for v in PD.values()) / len(PD)
    players = [RothErev(2, 0.0, mean_abs), RothErev(2, 0.0, mean_abs)]
    for _ in range(rounds):
        a, b = players[0].decide(rng), players[1].decide(rng)
        players[0].update(PD[(a, b)])
        players[1].update(PD[(b, a)])
    return 2 * rounds


def pgg_run(rng, agents=4, rounds=10, endowment=20, mpcr=0.4):
    others_last = [None] * agents
    for _ in range(rounds):
        contributions = []
        for i in range(agents):
            if others_last[i] is None:
                u1 = max(rng.random(), sys.float_info.min)
                u2 = rng.random()
                z = math.sqrt(-2.0 * math.log(u1)) * math.cos(2 * math.pi * u2)
                wanted = min(max(0.5 + 0.15 * z, 0.0), 1.0) * endowment
            else:
                wanted = 0.43 * others_last[i]
            contributions.append(min(max(int(round(wanted)), 0), endowment))
        pot = sum(contributions) * mpcr
        _payoffs = [endowment - c + pot for c in contributions]
        total = sum(contributions)
        for i in range(agents):
            others_last[i] = (total - contributions[i]) / (agents - 1)
    return agents * rounds


GAMES = {"naming": naming_run, "pd": pd_run, "pgg": pgg_run}


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in GAMES:
        print("usage: reference.py naming|pd|pgg RUNS SEED", file=sys.stderr)
        sys.exit(2)
    game, runs, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(seed)
    play = GAMES[game]
    start = time.perf_counter()
    work = sum(play(rng) for _ in range(runs))
    seconds = time.perf_counter() - start
    unit = "interactions" if game == "naming" else "decisions"
    print(json.dumps({"game": game, "runs": runs, unit: work, "seconds": seconds}))


if __name__ == "__main__":
    main()
