#!/usr/bin/env python3
"""The whole test suite, many times over, with the CPU loaded: a test that passes only when the
machine is quick fails here.

    scripts/suite-under-load.py PASSES [--lanes L] [--load N] [--log DIR]

Builds every test binary of the workspace once (`cargo test --workspace --no-run`), then runs
them all, PASSES times in all, spread over L lanes that run side by side (each lane a whole
suite at a time, one binary after another, as `cargo test` runs them), while N processes spin
on the CPU (`yes > /dev/null`). Each binary runs in its package's directory, as cargo runs it.
It stops at the first failing binary and exits 1, naming it and keeping its output in the log
directory; otherwise it prints each pass's time and exits 0.

Two lanes and two spinning processes on a two-core machine give each test about a third of
the CPU it has alone: every wait in the suite is then two to three times longer than usual.
"""

import argparse
import json
import os
import subprocess
import sys
import threading
import time


def test_binaries():
    out = subprocess.run(
        ["cargo", "test", "--workspace", "--no-run", "--message-format=json"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    binaries = []
    for line in out.splitlines():
        try:
            m = json.loads(line)
        except ValueError:
            continue
        if m.get("reason") != "compiler-artifact" or not m.get("executable") or not m["profile"]["test"]:
            continue
        binaries.append((m["executable"], os.path.dirname(m["manifest_path"]), m["target"]["name"]))
    return binaries


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("passes", type=int)
    ap.add_argument("--lanes", type=int, default=2)
    ap.add_argument("--load", type=int, default=2)
    ap.add_argument("--log", default="target/suite-under-load")
    args = ap.parse_args()
    os.makedirs(args.log, exist_ok=True)
    binaries = test_binaries()
    print(f"{len(binaries)} test binaries; {args.passes} passes in {args.lanes} lanes, {args.load} spinning processes")
    spinners = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(args.load)]
    lock = threading.Lock()
    state = {"next": 0, "passed": 0, "failed": None}

    def lane(n):
        while True:
            with lock:
                if state["failed"] or state["next"] >= args.passes:
                    return
                state["next"] += 1
                number = state["next"]
            started = time.time()
            tests = 0
            for exe, cwd, name in binaries:
                with lock:
                    if state["failed"]:
                        return
                r = subprocess.run([exe], cwd=cwd, capture_output=True, text=True)
                tests += sum(
                    int(l.split(" passed;")[0].split()[-1])
                    for l in r.stdout.splitlines()
                    if l.startswith("test result:")
                )
                if r.returncode != 0:
                    log = os.path.join(args.log, f"pass-{number}-{name}.log")
                    with open(log, "w") as f:
                        f.write(r.stdout + r.stderr)
                    with lock:
                        state["failed"] = f"pass {number} (lane {n}): {name} failed, exit {r.returncode}; see {log}"
                    return
            with lock:
                state["passed"] += 1
                load = os.getloadavg()[0]
                print(
                    f"pass {number} (lane {n}): {tests} tests passed in {time.time() - started:.0f} s, "
                    f"load average {load:.1f}",
                    flush=True,
                )

    threads = [threading.Thread(target=lane, args=(n,)) for n in range(1, args.lanes + 1)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        for s in spinners:
            s.kill()
    if state["failed"]:
        print(state["failed"], file=sys.stderr)
        print(f"{state['passed']} passes before it", file=sys.stderr)
        return 1
    print(f"{state['passed']} passes of {args.passes}, no failure")
    return 0


if __name__ == "__main__":
    sys.exit(main())
