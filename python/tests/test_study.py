"""Studies from RON files and from dicts: one schema, one plan, the command line's messages."""

import pytest

import agora

PD_RON = """Study(version: 1, name: "py-pd", master_seed: 11, runs: 3,
    blocks: [Block(name: "pd", environment: PrisonersDilemma(rounds: 6),
        rosters: [Roster(name: "tft-vs-re", members: [Member(policy: TitForTat, count: 1), Member(policy: RothErev(phi: 0.1), count: 1)])])])
"""

PD_DICT = {
    "version": 1,
    "name": "py-pd",
    "master_seed": 11,
    "runs": 3,
    "blocks": [
        {
            "name": "pd",
            "environment": {"PrisonersDilemma": {"rounds": 6}},
            "rosters": [
                {
                    "name": "tft-vs-re",
                    "members": [{"policy": "TitForTat", "count": 1}, {"policy": {"RothErev": {"phi": 0.1}}, "count": 1}],
                }
            ],
        }
    ],
}


def test_a_dict_and_its_ron_file_resolve_to_the_same_plan(tmp_path, root):
    path = tmp_path / "py-pd.ron"
    path.write_text(PD_RON)
    from_file = agora.load_study(path, cells=root / "scenarios" / "cells")
    from_dict = agora.study(PD_DICT)
    assert from_file.hash == from_dict.hash
    assert from_file.run_keys() == from_dict.run_keys()
    assert len(from_dict) == 3 and from_dict.study == "py-pd"
    assert from_dict.lines()[0]["roster"] == "tft-vs-re"


def test_a_shipped_study_loads_with_its_lines(root):
    plan = agora.load_study(root / "scenarios" / "studies" / "tipping.ron")
    assert plan.study == "tipping" and len(plan) == 520
    assert len(plan.limit_runs(2)) == 52


def test_an_unknown_field_is_refused_with_the_file_message():
    bad = dict(PD_DICT, colour="blue")
    with pytest.raises(agora.AgoraError, match="unknown field `colour`"):
        agora.study(bad)


def test_an_impossible_value_names_its_field_as_the_command_line_does(tmp_path):
    bad = dict(PD_DICT, runs=0)
    with pytest.raises(agora.AgoraError, match=r"<dict>: `runs`: must be at least 1"):
        agora.study(bad)
    path = tmp_path / "bad.ron"
    path.write_text(PD_RON.replace("runs: 3", "runs: 0"))
    with pytest.raises(agora.AgoraError, match=r"bad.ron: `runs`: must be at least 1"):
        agora.load_study(path)


def test_a_missing_file_is_an_error_not_a_crash(tmp_path):
    with pytest.raises(agora.AgoraError, match="cannot read"):
        agora.load_study(tmp_path / "nope.ron")
