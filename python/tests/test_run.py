"""Runs from Python against `agora run`: the same records, the store as frames, the analysis."""

import os
import signal
import subprocess

import pytest

import agora
from agora import _agora


def cli(agora_bin, *args, cwd):
    return subprocess.run([agora_bin, *args], cwd=cwd, capture_output=True, text=True)


def test_the_classical_study_from_python_and_from_agora_run_has_identical_record_hashes(tmp_path, root, agora_bin):
    study = root / "scenarios" / "studies" / "classical.ron"
    by_cli = tmp_path / "cli.sqlite"
    out = cli(agora_bin, "run", str(study), "--store", str(by_cli), "--runs", "2", cwd=root)
    assert out.returncode == 0, out.stderr
    by_py = tmp_path / "py.sqlite"
    done = agora.run(agora.load_study(study), by_py, runs=2, progress=False)
    assert done["executed"] == 124 and done["skipped"] == 0 and done["study"] == "classical"
    cli_hashes = agora.Store(by_cli).record_hashes()
    py_hashes = agora.Store(by_py).record_hashes()
    assert len(py_hashes) == 124
    assert py_hashes == cli_hashes
    # The same call again resumes: nothing is left to run.
    again = agora.run(agora.load_study(study), by_py, runs=2, progress=False)
    assert again["executed"] == 0 and again["skipped"] == 124


def test_the_store_reads_as_polars_frames_and_pandas(tmp_path, root):
    import polars as pl

    store = tmp_path / "t.sqlite"
    agora.run(agora.load_study(root / "scenarios" / "studies" / "tipping.ron"), store, runs=1, progress=False)
    s = agora.Store(store)
    runs = s.runs()
    assert isinstance(runs, pl.DataFrame) and runs.height == 26
    assert {"run_key", "study", "record_hash"} <= set(runs.columns)
    decisions = s.decisions()
    assert decisions.height > 0 and "run_id" in decisions.columns
    metrics = s.metrics()
    assert metrics.height > 0
    assert s.transcripts().height == 0
    pdf = runs.to_pandas()
    assert len(pdf) == 26


def test_analyze_gives_the_verdict_table_and_the_contrasts_as_frames(tmp_path, root):
    store = tmp_path / "t.sqlite"
    agora.run(agora.load_study(root / "scenarios" / "studies" / "tipping.ron"), store, runs=2, progress=False)
    a = agora.analyze(store)
    assert a.runs == 52
    assert "claim" in a.verdicts.columns
    assert a.contrasts is not None
    assert "Tier" in a.to_markdown() or "tier" in a.to_markdown()
    path = agora.report(store, tmp_path / "report")
    assert os.path.exists(path)


def test_an_edited_study_is_refused_by_the_one_plan_rule_with_the_cli_message(tmp_path, root):
    from test_study import PD_DICT

    store = tmp_path / "s.sqlite"
    agora.run(PD_DICT, store, progress=False)
    edited = dict(PD_DICT, blocks=[dict(PD_DICT["blocks"][0], environment={"PrisonersDilemma": {"rounds": 7}})])
    with pytest.raises(agora.AgoraError, match="runs under one name must mean one thing — pass new_version=True"):
        agora.run(edited, store, progress=False)
    done = agora.run(edited, store, new_version=True, progress=False)
    assert done["study"] == "py-pd@2" and done["executed"] == 3


def test_an_interrupted_run_keeps_its_runs_and_the_same_call_resumes(tmp_path, root):
    plan = agora.load_study(root / "scenarios" / "studies" / "tipping.ron").limit_runs(2)
    store = tmp_path / "i.sqlite"
    seen = []

    def ctrl_c_after_five(done, total, skipped):
        seen.append(done)
        if done == 5:
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(KeyboardInterrupt, match="run the same call again to resume"):
        _agora.run(plan, str(store), {}, False, 1, ctrl_c_after_five)
    kept = agora.Store(store).runs().height
    assert 5 <= kept < 52
    done = agora.run(plan, store, progress=False)
    assert done["skipped"] == kept and done["executed"] == 52 - kept
    whole = tmp_path / "whole.sqlite"
    agora.run(plan, whole, progress=False)
    assert agora.Store(store).record_hashes() == agora.Store(whole).record_hashes()


def test_a_missing_store_is_an_agora_error(tmp_path):
    with pytest.raises(agora.AgoraError):
        agora.analyze(tmp_path / "none.sqlite")


def test_the_paper_replay_grades_the_papers_models_as_the_command_line_does(tmp_path, root, agora_bin):
    store = tmp_path / "replay.sqlite"
    a = agora.replicate_paper(store)
    verdicts = a.verdicts
    row = verdicts.filter(verdicts["claim"] == "convention-forms")
    assert row.height == 1
    assert "Tier 2" in row["tier"][0], row
    assert a.replay_report is not None and "none is asserted" in a.replay_report
    # The command line prints the same tables from a store of its own.
    other = tmp_path / "cli.sqlite"
    out = subprocess.run([agora_bin, "replicate", "--verdicts", "--store", str(other)], capture_output=True, text=True, check=True)
    assert out.stdout == a.replay_report
