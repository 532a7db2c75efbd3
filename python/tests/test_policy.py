"""Python policies in Agora's rosters: deterministic, identified, refused when edited, reported
when they fail, and seated beside LLM and classical agents."""

import importlib
import sys
import textwrap

import pytest

import agora


def pd_study(seat, rounds=6, runs=4, name="py-policy"):
    return {
        "version": 1,
        "name": name,
        "master_seed": 5,
        "runs": runs,
        "blocks": [
            {
                "name": "pd",
                "environment": {"PrisonersDilemma": {"rounds": rounds}},
                "rosters": [{"name": "py-vs-tft", "members": [{"policy": seat, "count": 1}, {"policy": "TitForTat", "count": 1}]}],
            }
        ],
    }


class Mirror:
    """Tit-for-tat in Python: cooperates first, then plays the partner's last move."""

    def __init__(self):
        self.last = None

    def decide(self, observation, rng):
        assert observation["environment"] == "prisoners-dilemma"
        assert observation["space"]["kind"] == "choice"
        return 0 if self.last is None else self.last

    def update(self, feedback):
        self.last = feedback["others"][0]


def noisy(observation, rng):
    """Cooperates with probability 0.7, from the seat's own stream."""
    return 0 if rng.random() < 0.7 else 1


def test_a_python_class_plays_tit_for_tat_against_the_rust_one(tmp_path):
    store = tmp_path / "m.sqlite"
    done = agora.run(pd_study(agora.policy(Mirror)), store, progress=False)
    assert done["executed"] == 4 and done["decisions"] == 4 * 6 * 2
    s = agora.Store(store)
    actions = set(s.decisions()["action"].to_list())
    assert actions == {"c0"}, actions
    agents = s.table("agents")
    assert "python" in agents["policy"].to_list()


def test_a_stochastic_python_policy_is_deterministic_per_seed(tmp_path):
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    agora.run(pd_study(agora.policy(noisy), rounds=20), a, progress=False)
    agora.run(pd_study(agora.policy(noisy), rounds=20), b, progress=False)
    ha, hb = agora.Store(a).record_hashes(), agora.Store(b).record_hashes()
    assert ha == hb and len(ha) == 4
    moves = agora.Store(a).decisions()["action"].to_list()
    assert "c0" in moves and "c1" in moves


def test_the_identity_is_module_name_and_source_hash_or_declared_version():
    module, name, version = agora.policy_identity(noisy)
    assert (module, name) == ("test_policy", "noisy") and version.startswith("sha256:")

    def declared(observation, rng):
        return 0

    declared.__version__ = "2.1"
    assert agora.policy_identity(declared)[2] == "2.1"


def load_module(tmp_path, sub, body):
    d = tmp_path / sub
    d.mkdir()
    (d / "mystrategy.py").write_text(textwrap.dedent(body))
    sys.modules.pop("mystrategy", None)
    sys.path.insert(0, str(d))
    try:
        return importlib.import_module("mystrategy")
    finally:
        sys.path.remove(str(d))


def test_an_edited_policy_is_refused_by_the_one_plan_rule_never_pooled(tmp_path):
    v1 = load_module(tmp_path, "v1", "def strategy(observation, rng):\n    return 0\n")
    store = tmp_path / "e.sqlite"
    agora.run(pd_study(agora.policy(v1.strategy)), store, progress=False)
    v2 = load_module(tmp_path, "v2", "def strategy(observation, rng):\n    return 1\n")
    seat = agora.policy(v2.strategy)
    with pytest.raises(agora.AgoraError, match=r"must mean one thing") as e:
        agora.run(pd_study(seat), store, progress=False)
    assert "seats[0].Python.version" in str(e.value) and "sha256:" in str(e.value)
    assert agora.Store(store).runs().height == 4
    done = agora.run(pd_study(seat), store, new_version=True, progress=False)
    assert done["study"] == "py-policy@2"


def test_a_policy_that_raises_is_reported_for_its_decision_and_nothing_is_recorded(tmp_path):
    def broken(observation, rng):
        if observation["round"] == 3:
            raise ValueError("no idea")
        return 0

    store = tmp_path / "b.sqlite"
    with pytest.raises(agora.AgoraError, match=r"Python policy `test_policy.*broken` at player round 3: raised ValueError: no idea"):
        agora.run(pd_study(agora.policy(broken)), store, progress=False)
    assert agora.Store(store).runs().height == 0


def test_an_illegal_action_is_reported_not_recorded(tmp_path):
    def seven(observation, rng):
        return 7

    store = tmp_path / "x.sqlite"
    with pytest.raises(agora.AgoraError, match=r"returned c7, not a legal action of a choice among 2 labels"):
        agora.run(pd_study(agora.policy(seven)), store, progress=False)
    assert agora.Store(store).runs().height == 0


def test_a_policy_not_made_in_this_session_is_named(tmp_path):
    seat = {"Python": {"module": "elsewhere", "name": "gone", "version": "1"}}
    with pytest.raises(agora.AgoraError, match="elsewhere.gone"):
        agora.run(pd_study(seat), tmp_path / "g.sqlite", progress=False)


def pick_first_shown(observation, rng):
    """Proposes the first name in the order this agent sees the pool."""
    return observation["context"]["order"][0]


def society(endpoint, seats, name):
    return {
        "version": 1,
        "name": name,
        "master_seed": 3,
        "runs": 2,
        "models": [
            {"name": "fake", "family": "Fake", "endpoints": [endpoint], "served_id": "fake-1", "max_attempts": 2, "backoff_ms": 5}
        ],
        "blocks": [
            {
                "name": "naming",
                "environment": {"NamingGame": {"population": 4, "cap": 12, "window": 4}},
                "rosters": [{"name": "mixed", "members": seats}],
            }
        ],
    }


def test_a_python_policy_plays_in_a_society_with_llm_and_classical_seats(tmp_path, fake_server):
    seats = [
        {"policy": {"Llm": {"model": "fake"}}, "count": 2},
        {"policy": agora.policy(pick_first_shown), "count": 1},
        {"policy": "MinimalNaming", "count": 1},
    ]
    store = tmp_path / "soc.sqlite"
    done = agora.run(society(fake_server, seats, "society"), store, progress=False)
    assert done["executed"] == 2
    s = agora.Store(store)
    policies = sorted(set(s.table("agents")["policy"].to_list()))
    assert "python" in policies and "minimal-naming" in policies and any(p != "python" and p != "minimal-naming" for p in policies)
    assert s.transcripts().height > 0


def test_an_llm_study_from_python_and_from_agora_run_makes_the_same_decisions_and_transcripts(tmp_path, root, agora_bin, fake_server):
    import json
    import subprocess

    seats = [{"policy": {"Llm": {"model": "fake"}}, "count": 2}, {"policy": "MinimalNaming", "count": 2}]
    spec = society(fake_server, seats, "llm-society")
    ron = tmp_path / "llm.ron"
    # The same study as a RON file for the command line (JSON's shape, written as RON).
    ron.write_text(
        f"""Study(version: 1, name: "llm-society", master_seed: 3, runs: 2,
    models: [Model(name: "fake", family: "Fake", endpoints: ["{fake_server}"], served_id: "fake-1", max_attempts: 2, backoff_ms: 5)],
    blocks: [Block(name: "naming", environment: NamingGame(population: 4, cap: 12, window: 4),
        rosters: [Roster(name: "mixed", members: [Member(policy: Llm(model: "fake"), count: 2), Member(policy: MinimalNaming, count: 2)])])])
"""
    )
    by_cli, by_py = tmp_path / "cli.sqlite", tmp_path / "py.sqlite"
    out = subprocess.run([agora_bin, "run", str(ron), "--store", str(by_cli)], cwd=root, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    agora.run(agora.study(spec), by_py, progress=False)
    assert agora.study(spec).hash == agora.load_study(ron).hash
    a, b = agora.Store(by_cli), agora.Store(by_py)
    assert sorted(a.runs()["run_key"].to_list()) == sorted(b.runs()["run_key"].to_list())

    def keyed(store, frame):
        # Runs are numbered in the order they completed; they are compared by their keys.
        keys = store.runs().select("run_id", "run_key")
        out = frame.join(keys, on="run_id").drop("run_id")
        return out.sort(out.columns)

    assert keyed(a, a.decisions()).equals(keyed(b, b.decisions()))
    cols = ["run_id", "seat", "slot", "kind", "attempt", "round", "role", "model", "messages_json", "raw_reply", "action", "parse_status"]
    ta, tb = keyed(a, a.transcripts().select(cols)), keyed(b, b.transcripts().select(cols))
    assert ta.height > 0 and ta.equals(tb)
    assert json.loads(ta["messages_json"][0])
