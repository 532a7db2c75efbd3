#!/usr/bin/env python3
"""Reference matches from the Axelrod library (axelrod on PyPI) for Agora's tournament test.

    python3 bench/peers/axelrod_reference.py > tests/fixtures/axelrod_matches.json

Plays every pair of Agora's deterministic prisoner's-dilemma strategies, each against a copy of
itself too, for 200 turns with Axelrod's default game (R, P, S, T) = (3, 1, 0, 5), the
instrument's payoffs, and writes each match's total payoffs and cooperation counts, keyed by the
pair's names as Agora labels them. `tests/tournament.rs` plays the same pairs through `agora run`
and compares every figure exactly.
"""

import json
import sys

import axelrod as axl

TURNS = 200

# Agora's policy name -> the Axelrod library's strategy of the same definition.
STRATEGIES = {
    "tit-for-tat": axl.TitForTat,
    "always-cooperate": axl.Cooperator,
    "always-defect": axl.Defector,
    "grim-trigger": axl.Grudger,
    "win-stay-lose-shift": axl.WinStayLoseShift,
    "tit-for-two-tats": axl.TitFor2Tats,
    "suspicious-tit-for-tat": axl.SuspiciousTitForTat,
}


def main():
    names = list(STRATEGIES)
    out = {"axelrod": axl.__version__, "turns": TURNS, "matches": {}}
    for i, a in enumerate(names):
        for b in names[i:]:
            match = axl.Match((STRATEGIES[a](), STRATEGIES[b]()), turns=TURNS, game=axl.Game())
            match.play()
            scores = match.scores()
            coop = match.cooperation()
            out["matches"][f"{a} vs {b}"] = {
                "payoff": [int(sum(s[0] for s in scores)), int(sum(s[1] for s in scores))],
                "cooperations": [int(coop[0]), int(coop[1])],
            }
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
