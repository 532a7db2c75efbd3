#!/usr/bin/env python3
"""Agora's classical rules on the libraries users would otherwise reach for, for `agora-bench`.

Each game is written the way a user of that library would write it, on the library's own
objects and random streams, and plays the same rules as the engine's shipped blocks:

  naming     Mesa 3: a `mesa.Model` of 24 `mesa.Agent`s playing the engine's minimal naming
             game with simultaneous proposals. One model step is one interaction: a pair drawn
             uniformly; each proposes a name drawn from its inventory (a random name of the pool
             of 10 when empty); on a match both keep only that name, on a mismatch each learns
             the other's. A convention forms when at least 95 % of the last 50 interactions
             matched; a run stops there or at 20,000 interactions. Statistic: interactions to
             convention.
  pgg        Mesa 3: four conditional cooperators (Agora's `conditional-cooperator`) in a
             10-round public goods game (endowment 20, MPCR 0.4); one model step is one round.
             Round 1 contributes a share drawn from N(0.5, 0.15) clamped to [0, 1], later rounds
             0.43 times the others' previous mean; amounts rounded half away from zero, as Rust
             does. Statistic: mean contribution by round.
  pd         Axelrod: 10-turn matches between two Roth-Erev learners (Agora's `roth-erev`: phi
             0.1, epsilon 0.2, strength 9) written as an `axelrod.Player`, on Axelrod's default
             game (R, S, T, P) = (3, 0, 5, 1). Statistic: cooperation rate by turn and overall.
  pd-floor   Axelrod: 10-turn matches between two built-in strategies (TitForTat vs Defector),
             the floor of what any Axelrod match costs.
  naming-large N
             Mesa 3: the same naming model at N agents, stopping at the same window rule or
             after 20 interactions per agent, for throughput beside Agora's network kernel.

Usage: peers.py GAME RUNS SEED [AGENTS]. Run r is seeded with SEED + r (distinct seeds).
Prints one JSON line: game, runs, library versions, work units (interactions or decisions),
seconds (time.perf_counter around building and playing the runs only) and the statistics.
"""

import json
import math
import sys
import time

import axelrod as axl
import mesa


# ---------------------------------------------------------------------------------------------
# The minimal naming game in Mesa


class NamingAgent(mesa.Agent):
    """An inventory of names; proposes one at random, collapses on success, learns on failure."""

    def __init__(self, model):
        super().__init__(model)
        self.inventory = []

    def propose(self):
        if self.inventory:
            return self.random.choice(self.inventory)
        return self.random.randrange(self.model.pool)

    def hear(self, own, other):
        if own == other:
            self.inventory = [own]
        elif other not in self.inventory:
            self.inventory.append(other)


class NamingModel(mesa.Model):
    """One step is one interaction of a uniformly drawn pair; stops at the window rule."""

    def __init__(self, agents=24, pool=10, window=50, threshold=0.95, cap=20000, stop=True, seed=None):
        super().__init__(seed=seed)
        self.pool, self.window, self.cap, self.stop = pool, window, cap, stop
        self.needed = math.ceil(threshold * window)
        NamingAgent.create_agents(self, agents)
        # A list of the AgentSet's members, for O(1) uniform draws of a pair.
        self.members = list(self.agents)
        self.recent = [False] * window
        self.matches = 0
        self.interactions = 0
        self.converged_at = None

    def step(self):
        n = len(self.members)
        i = self.random.randrange(n)
        j = self.random.randrange(n - 1)
        if j >= i:
            j += 1
        a, b = self.members[i], self.members[j]
        na, nb = a.propose(), b.propose()
        a.hear(na, nb)
        b.hear(nb, na)
        self.interactions += 1
        matched = na == nb
        slot = (self.interactions - 1) % self.window
        self.matches += matched - self.recent[slot]
        self.recent[slot] = matched
        if self.stop and self.interactions >= self.window and self.matches >= self.needed:
            self.converged_at = self.interactions
            self.running = False
        elif self.interactions >= self.cap:
            self.running = False


def naming(runs, seed, _agents):
    per_run = []
    start = time.perf_counter()
    for r in range(runs):
        model = NamingModel(seed=seed + r)
        while model.running:
            model.step()
        per_run.append(model.interactions)
    seconds = time.perf_counter() - start
    return {"interactions": sum(per_run), "seconds": seconds, "stats": {"interactions_per_run": summary(per_run)}}


def naming_large(runs, seed, agents):
    total = 0
    converged = []
    start = time.perf_counter()
    for r in range(runs):
        model = NamingModel(agents=agents, cap=20 * agents, seed=seed + r)
        while model.running:
            model.step()
        total += model.interactions
        converged.append(model.converged_at)
    seconds = time.perf_counter() - start
    # Heap of a freshly built model, per agent (tracemalloc, outside the timed runs).
    import tracemalloc

    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    model = NamingModel(agents=agents, cap=20 * agents, seed=seed)
    built = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    return {
        "interactions": total,
        "seconds": seconds,
        "agents": agents,
        "bytes_per_agent_built": built / agents,
        "stats": {"converged_at": converged},
    }


# ---------------------------------------------------------------------------------------------
# Public goods with conditional cooperators in Mesa


class ConditionalCooperator(mesa.Agent):
    """Contributes 0.43 x the others' previous mean; round 1 a share from N(0.5, 0.15)."""

    def __init__(self, model, initial=0.5, initial_sd=0.15, slope=0.43, intercept=0.0):
        super().__init__(model)
        self.initial, self.initial_sd, self.slope, self.intercept = initial, initial_sd, slope, intercept
        self.others_last = None
        self.contribution = 0

    def contribute(self):
        e = self.model.endowment
        if self.others_last is None:
            # Box-Muller, as the engine draws it.
            u1 = max(self.random.random(), sys.float_info.min)
            u2 = self.random.random()
            z = math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)
            wanted = min(max(self.initial + self.initial_sd * z, 0.0), 1.0) * e
        else:
            wanted = self.intercept * e + self.slope * self.others_last
        # Rust's f64::round: half away from zero (wanted is never negative).
        self.contribution = min(max(int(math.floor(wanted + 0.5)), 0), e)

    def observe(self, total, group):
        self.others_last = (total - self.contribution) / (group - 1)


class PublicGoodsModel(mesa.Model):
    """One step is one round: every agent contributes, the pot is shared, each sees the others."""

    def __init__(self, agents=4, rounds=10, endowment=20, mpcr=0.4, seed=None):
        super().__init__(seed=seed)
        self.rounds, self.endowment, self.mpcr = rounds, endowment, mpcr
        ConditionalCooperator.create_agents(self, agents)
        self.by_round = []

    def step(self):
        self.agents.shuffle_do("contribute")
        contributions = self.agents.get("contribution")
        total = sum(contributions)
        pot = total * self.mpcr
        self.payoffs = [self.endowment - c + pot for c in contributions]
        self.agents.do("observe", total, len(contributions))
        self.by_round.append(total / len(contributions))
        if len(self.by_round) >= self.rounds:
            self.running = False


def pgg(runs, seed, _agents):
    sums = None
    sq = None
    decisions = 0
    start = time.perf_counter()
    for r in range(runs):
        model = PublicGoodsModel(seed=seed + r)
        while model.running:
            model.step()
        decisions += len(model.agents) * len(model.by_round)
        if sums is None:
            sums = [0.0] * len(model.by_round)
            sq = [0.0] * len(model.by_round)
        for k, v in enumerate(model.by_round):
            sums[k] += v
            sq[k] += v * v
    seconds = time.perf_counter() - start
    means = [s / runs for s in sums]
    sds = [math.sqrt(max(q / runs - m * m, 0.0) * runs / max(runs - 1, 1)) for q, m in zip(sq, means)]
    return {
        "decisions": decisions,
        "seconds": seconds,
        "stats": {"contribution_by_round": {"mean": means, "sd": sds, "n": runs}},
    }


# ---------------------------------------------------------------------------------------------
# The prisoner's dilemma between Roth-Erev learners in Axelrod

C, D = axl.Action.C, axl.Action.D


class RothErev(axl.Player):
    """Agora's `roth-erev`: propensities q with forgetting phi and experimentation epsilon.

    Chooses each action with probability proportional to its propensity; after a turn,
    q_k <- (1 - phi) q_k + E_k with E_k = R (1 - epsilon) for the chosen action and
    R epsilon / (M - 1) otherwise, R = payoff - min payoff, floored at 1e-9. Axelrod calls no
    update hook, so the previous turn is learned from the history at the start of the next.
    """

    name = "Roth-Erev"
    classifier = {
        "memory_depth": float("inf"),
        "stochastic": True,
        "long_run_time": False,
        "inspects_source": False,
        "manipulates_source": False,
        "manipulates_state": False,
    }

    def __init__(self, phi=0.1, epsilon=0.2, strength=9.0):
        super().__init__()
        self.phi, self.epsilon, self.strength = phi, epsilon, strength
        self.q = None

    def strategy(self, opponent):
        game = self.match_attributes["game"]
        if self.q is None:
            # q(1) = S(1) * A(1) / M, A(1) the mean absolute payoff of the game.
            r, p, s, t = game.RPST()
            self.mean_abs = (abs(r) + abs(s) + abs(t) + abs(p)) / 4.0
            self.payoff_min = min(s, p)
            self.q = [max(self.strength * self.mean_abs / 2, 1e-6)] * 2
        elif self.history:
            own, other = self.history[-1], opponent.history[-1]
            reward = max(game.score((own, other))[0] - self.payoff_min, 0.0)
            k = 0 if own == C else 1
            for i in range(2):
                e = reward * (1 - self.epsilon) if i == k else reward * self.epsilon
                self.q[i] = max((1 - self.phi) * self.q[i] + e, 1e-9)
        draw = self._random.random() * (self.q[0] + self.q[1])
        return C if draw < self.q[0] else D


def pd_matches(make, runs, seed, turns=10):
    coop_by_turn = [0] * turns
    per_run = []
    start = time.perf_counter()
    for r in range(runs):
        match = axl.Match(make(), turns=turns, seed=seed + r)
        cooperations = 0
        for k, (a, b) in enumerate(match.play()):
            both = (a == C) + (b == C)
            coop_by_turn[k] += both
            cooperations += both
        per_run.append(cooperations / (2 * turns))
    seconds = time.perf_counter() - start
    rate = [c / (2 * runs) for c in coop_by_turn]
    overall = sum(coop_by_turn) / (2 * runs * turns)
    return {
        "decisions": 2 * turns * runs,
        "seconds": seconds,
        "stats": {"cooperation_by_turn": rate, "cooperation_rate": overall, "cooperation_per_run": summary(per_run)},
    }


def pd(runs, seed, _agents):
    return pd_matches(lambda: (RothErev(), RothErev()), runs, seed)


def pd_floor(runs, seed, _agents):
    return pd_matches(lambda: (axl.TitForTat(), axl.Defector()), runs, seed)


# ---------------------------------------------------------------------------------------------


def summary(xs):
    n = len(xs)
    mean = sum(xs) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / max(n - 1, 1))
    return {"mean": mean, "sd": sd, "n": n}


GAMES = {"naming": naming, "naming-large": naming_large, "pgg": pgg, "pd": pd, "pd-floor": pd_floor}


def main():
    if len(sys.argv) not in (4, 5) or sys.argv[1] not in GAMES:
        print("usage: peers.py naming|pgg|pd|pd-floor|naming-large RUNS SEED [AGENTS]", file=sys.stderr)
        sys.exit(2)
    game, runs, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    agents = int(sys.argv[4]) if len(sys.argv) == 5 else 24
    out = {"game": game, "runs": runs, "mesa": mesa.__version__, "axelrod": axl.__version__}
    out.update(GAMES[game](runs, seed, agents))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
