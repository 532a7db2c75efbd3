#!/bin/sh
# Builds `agora` as it was when the speed targets in README's "Benchmarks" were set (commit
# e2436ab, before any of the speed work), so that agora-bench can time the recorded naming
# study through both builds in one run:
#
#   bench/baseline.sh && cargo run --release --bin agora-bench -- --baseline target/bench-baseline/release/agora
#
# The commit's tree is exported with `git archive` into target/bench-baseline-src (no work
# tree is registered) and built there into a target directory of its own: a cold release
# build, about 8 minutes on 2 cores. Prints the binary's path.
set -eu
commit=e2436ab
root=$(git rev-parse --show-toplevel)
src="$root/target/bench-baseline-src"
out="$root/target/bench-baseline"
if [ ! -f "$src/.complete" ]; then
    # Extracted whole or not at all: a tree left half-written by an interrupted run is redone.
    rm -rf "$src" "$src.part"
    mkdir -p "$src.part"
    git -C "$root" archive "$commit" | tar -x -C "$src.part"
    touch "$src.part/.complete"
    mv "$src.part" "$src"
fi
CARGO_TARGET_DIR="$out" cargo build --release --locked --quiet --bin agora --manifest-path "$src/Cargo.toml"
echo "$out/release/agora"
