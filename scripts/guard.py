#!/usr/bin/env python3
"""Structural-change guard: what the shipped studies produce, per run key, before and after.

    scripts/guard.py record BIN OUT     run every shipped study with the `agora` binary BIN
                                        into OUT/ and write OUT/digest.json
    scripts/guard.py compare A B        compare two recorded digests; exit 1 on a difference
    scripts/guard.py crosscheck OLD NEW A
                                        the older and the newer binary analyse the same records
                                        (A's store, runs numbered in run-key order; schema 2 for
                                        the older one); their analysis files must be identical

What is recorded, per run key: the decisions, payoffs, interactions and seats of the run, and
for LLM seats every transcript row (messages sent, raw reply, parsed action, reason, parse
status, attempt, kind). Latencies are left out (they are wall-clock). Beside the records, the
whole `analysis.json` of `agora analyze` on the store is kept, and compared key by key.

The classical and tipping studies run in full. The LLM studies (llm-smoke, and instrument with
`--runs 1`, its naming games capped at 150 interactions so that a guard run takes minutes, not
hours) run against a deterministic fake OpenAI-compatible server started by this script
(standard library only): its answer is a legal action read off the request's JSON schema,
chosen by a hash of the messages, so a change of one prompt byte changes the recorded reply too.
"""

import hashlib
import http.server
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import threading

STUDIES = [
    ("classical", "scenarios/studies/classical.ron", []),
    ("tipping", "scenarios/studies/tipping.ron", []),
    ("llm-smoke", "scenarios/studies/llm-smoke.ron", []),
    ("instrument", "scenarios/studies/instrument.ron", ["--runs", "1"]),
]


def legal_answer(body):
    messages = json.dumps(body.get("messages"), sort_keys=True, ensure_ascii=False)
    h = int.from_bytes(hashlib.sha256(messages.encode()).digest()[:8], "little")
    rf = body.get("response_format") or {}
    schema = (rf.get("json_schema") or {}).get("schema") or rf.get("schema")
    if not schema:
        # The recognition probe: free text, sometimes naming a paradigm.
        return ["I think this is the prisoner's dilemma.", "No idea.", "A public goods game."][h % 3]
    field = next((f for f in schema.get("required", []) if f != "reasoning"), "action")
    prop = schema["properties"][field]
    if prop.get("enum"):
        value = prop["enum"][h % len(prop["enum"])]
    elif prop.get("type") == "integer":
        lo, hi = prop.get("minimum", 0), prop.get("maximum", 10)
        value = lo + h % (hi - lo + 1)
    elif prop.get("type") == "array":
        n, hi = prop.get("minItems", 1), prop["items"].get("maximum", 0)
        value = [(h >> (3 * i)) % (hi + 1) for i in range(n)]
    else:
        value = 0
    out = {field: value, "reason": "guard"}
    if "reasoning" in schema.get("properties", {}):
        out = {"reasoning": "guard reasoning", **out}
    return json.dumps(out)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _send(self, obj):
        data = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self._send({"object": "list", "data": [{"id": "guard", "object": "model"}]})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        content = legal_answer(body)
        self._send({
            "id": "guard", "object": "chat.completion", "model": body.get("model", "guard"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
        })


def models_file(path, port):
    models = []
    for name, family in [("guard-a", "Guard-A"), ("guard-b", "Guard-B")]:
        models.append(
            f'Model(name: "{name}", family: "{family}", endpoints: ["http://127.0.0.1:{port}/v1"], '
            f'served_id: "{name}", quantisation: "none", notes: "guard fake server", concurrency: 16, '
            f"structured: JsonSchema, timeout_s: 30.0)"
        )
    with open(path, "w") as f:
        f.write("Models(version: 1, models: [" + ", ".join(models) + "])\n")


def table_rows(db, sql, run_id):
    return [list(r) for r in db.execute(sql, (run_id,))]


def digest_store(store):
    db = sqlite3.connect(store)
    tables = {
        "agents": "SELECT seat, policy, family, committed FROM agents WHERE run_id=? ORDER BY seat",
        "decisions": "SELECT step, round, seat, role, action, value, scale, context FROM decisions "
        "WHERE run_id=? ORDER BY step, seat",
        "payoffs": "SELECT step, round, seat, payoff FROM payoffs WHERE run_id=? ORDER BY step, seat",
        "interactions": "SELECT * FROM interactions WHERE run_id=? ORDER BY t",
        "transcripts": "SELECT seat, slot, attempt, kind, round, role, model, served_id, messages_json, "
        "raw_reply, action, reason, parse_status, detail FROM transcripts WHERE run_id=? "
        "ORDER BY seat, slot, kind, attempt",
    }
    out = {}
    for run_id, key, study, steps in db.execute("SELECT run_id, run_key, study, steps FROM runs"):
        entry = {"study": study, "steps": steps}
        for name, sql in tables.items():
            rows = table_rows(db, sql, run_id)
            if name == "interactions":
                rows = [r[1:] for r in rows]  # drop run_id
            entry[name] = hashlib.sha256(json.dumps(rows).encode()).hexdigest()
            entry[name + "_rows"] = len(rows)
        out[key] = entry
    return out


def record(binary, out):
    binary = os.path.abspath(binary)
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    models = os.path.join(out, "guard-models.ron")
    models_file(models, port)
    store = os.path.join(out, "guard.sqlite")
    for name, study, extra in STUDIES:
        text = open(study).read()
        if "include_models" in text:
            text = re.sub(r'include_models:\s*Some\("[^"]*"\)', f'include_models: Some("{os.path.abspath(models)}")', text)
            if name == "instrument":
                text = text.replace("NamingGame()", "NamingGame(cap: 150)")
                text = text.replace("NamingGame(shuffled_pool: true)", "NamingGame(shuffled_pool: true, cap: 150)")
            study_path = os.path.join(out, os.path.basename(study))
            with open(study_path, "w") as f:
                f.write(text)
            extra = extra + ["--cells", "scenarios/cells"]
        else:
            study_path = study
        cmd = [binary, "run", study_path, "--store", store, *extra]
        print("guard:", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    subprocess.run([binary, "analyze", "--store", store, "--out", os.path.join(out, "analysis")], check=True,
                   stdout=subprocess.DEVNULL)
    server.shutdown()
    digest = digest_store(store)
    with open(os.path.join(out, "digest.json"), "w") as f:
        json.dump(digest, f, indent=1, sort_keys=True)
    print(f"guard: {len(digest)} runs recorded in {out}/digest.json")


def walk(a, b, path, diffs):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a:
                diffs.append(f"{path}/{k}: only after")
            elif k not in b:
                diffs.append(f"{path}/{k}: only before")
            else:
                walk(a[k], b[k], f"{path}/{k}", diffs)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            walk(x, y, f"{path}[{i}]", diffs)
    elif a != b:
        diffs.append(f"{path}: {json.dumps(a)[:120]} -> {json.dumps(b)[:120]}")


def compare(before, after):
    a = json.load(open(os.path.join(before, "digest.json")))
    b = json.load(open(os.path.join(after, "digest.json")))
    bad = 0
    for key in sorted(set(a) | set(b)):
        if key not in b or key not in a:
            bad += 1
            print(f"run {key}: present only {'before' if key in a else 'after'}")
            continue
        for table in sorted(a[key]):
            if a[key][table] != b[key][table]:
                bad += 1
                print(f"run {key} ({a[key]['study']}): {table} differs")
    studies = {}
    for e in a.values():
        studies[e["study"]] = studies.get(e["study"], 0) + 1
    print("guard: runs per study:", json.dumps(studies, sort_keys=True))
    print(f"guard: {len(a)} runs before, {len(b)} after, {bad} record differences")
    ja = json.load(open(os.path.join(before, "analysis", "analysis.json")))
    jb = json.load(open(os.path.join(after, "analysis", "analysis.json")))
    diffs = []
    walk(ja, jb, "", diffs)
    for d in diffs[:200]:
        print("analysis.json", d)
    print(f"guard: {len(diffs)} analysis.json differences")
    return 1 if bad or diffs else 0


RUN_TABLES = ["runs", "agents", "decisions", "payoffs", "interactions", "run_rows", "transcripts", "transcript_calls", "metrics"]


def renumber(store):
    """Gives the runs of a store run ids in run-key order, as a single-threaded study in key order
    would have committed them (the analysis of a newer build reads runs in key order)."""
    db = sqlite3.connect(store)
    tables = [t for t in RUN_TABLES if db.execute(
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?", (t,)).fetchone()[0]]
    db.execute("CREATE TEMP TABLE map AS SELECT run_id + 10000000 AS old, "
               "ROW_NUMBER() OVER (ORDER BY run_key) AS new FROM runs")
    for t in tables:
        db.execute(f"UPDATE {t} SET run_id = run_id + 10000000")
    for t in tables:
        db.execute(f"UPDATE {t} SET run_id = (SELECT new FROM map WHERE old = {t}.run_id)")
    db.commit()
    db.close()


def analyse(binary, store, out):
    subprocess.run([os.path.abspath(binary), "analyze", "--store", store, "--out", out], check=True,
                   stdout=subprocess.DEVNULL)


def crosscheck(old_binary, new_binary, after):
    """Both binaries analyse the same records: A's store with its runs numbered in run-key order,
    taken back to schema 2 for the older binary. Separates what the analysis code does from
    what the run order of a store does (runs committed by threads land in any order)."""
    work = os.path.join(after, "crosscheck")
    if os.path.exists(work):
        shutil.rmtree(work)
    os.makedirs(work)
    new_store = os.path.join(work, "schema3.sqlite")
    old_store = os.path.join(work, "schema2.sqlite")
    shutil.copy(os.path.join(after, "guard.sqlite"), new_store)
    renumber(new_store)
    shutil.copy(new_store, old_store)
    db = sqlite3.connect(old_store)
    db.execute("DROP TABLE IF EXISTS metrics")
    db.execute("PRAGMA user_version = 2")
    db.commit()
    db.close()
    analyse(old_binary, old_store, os.path.join(work, "old"))
    analyse(new_binary, new_store, os.path.join(work, "new"))
    names = sorted(os.listdir(os.path.join(work, "new")))
    bad = [n for n in names
           if open(os.path.join(work, "old", n), "rb").read() != open(os.path.join(work, "new", n), "rb").read()]
    for n in bad:
        print("crosscheck: differs:", n)
    print(f"guard: crosscheck of {len(names)} analysis files, {len(bad)} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "record":
        record(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    elif len(sys.argv) == 5 and sys.argv[1] == "crosscheck":
        sys.exit(crosscheck(sys.argv[2], sys.argv[3], sys.argv[4]))
    else:
        print(__doc__)
        sys.exit(2)
