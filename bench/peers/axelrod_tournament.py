#!/usr/bin/env python3
"""The shipped tournament (`scenarios/studies/tournament.ron`) on the Axelrod library, for the
peer row of the benchmarks: the same nine strategies, 200 turns, 5 repetitions, once without
noise and once with noise 0.05, each a round robin with self-play on one process.

    python3 bench/peers/axelrod_tournament.py

Prints the library's version and each tournament's ranking (by median score).
"""

import axelrod as axl


def players():
    return [
        axl.TitForTat(),
        axl.Cooperator(),
        axl.Defector(),
        axl.Grudger(),
        axl.WinStayLoseShift(),
        axl.TitFor2Tats(),
        axl.SuspiciousTitForTat(),
        axl.GTFT(p=1 / 3),
        axl.Random(0.5),
    ]


def main():
    for noise in (0.0, 0.05):
        t = axl.Tournament(players(), turns=200, repetitions=5, noise=noise, seed=1984)
        results = t.play(processes=1, progress_bar=False, build_results=True)
        print(f"axelrod {axl.__version__}, noise {noise}: {' > '.join(results.ranked_names)}")


if __name__ == "__main__":
    main()
