"""Agora from Python: run studies, read the store as data frames, grade claims.

A thin layer over Agora's Rust crates (the extension module ``agora._agora``): a study is
resolved, run, stored, analysed and reported by the same code as the ``agora`` command line,
so a run made here and one made by ``agora run`` give the same records, byte for byte.

    >>> import agora
    >>> plan = agora.load_study("scenarios/studies/tipping.ron")
    >>> agora.run(plan, "tipping.sqlite")
    >>> store = agora.Store("tipping.sqlite")
    >>> store.runs()             # a polars DataFrame; .to_pandas() for pandas
    >>> agora.analyze("tipping.sqlite").verdicts
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Dict, Mapping, Optional, Tuple, Union

from . import _agora
from ._agora import AgoraError, Plan

__all__ = [
    "AgoraError",
    "Plan",
    "Store",
    "Analysis",
    "load_study",
    "study",
    "run",
    "analyze",
    "report",
    "policy",
    "policy_identity",
    "replicate_paper",
]
__version__ = _agora.__version__

PathLike = Union[str, "os.PathLike[str]"]

# The Python policies of this session, by identity (module, name, version): what a roster's
# `Python(...)` seat names and what `run` hands the engine.
_POLICIES: Dict[Tuple[str, str, str], Callable[[], Tuple[Any, Any]]] = {}


def _cells_default() -> str:
    return str(Path(_agora.checkout_dir()) / "scenarios" / "cells")


def load_study(path: PathLike, cells: Optional[PathLike] = None, models: Optional[PathLike] = None) -> Plan:
    """Load and resolve a study file (RON), as ``agora run FILE`` does."""
    return _agora.load_study(
        os.fspath(path),
        None if cells is None else os.fspath(cells),
        None if models is None else os.fspath(models),
    )


def study(spec: Union[Mapping[str, Any], PathLike], cells: Optional[PathLike] = None) -> Plan:
    """Build a study from a dict (the study file's fields, checked by the same schema and
    rules as a file) or load it from a RON file.

    In a dict, a policy is written as a study file writes it in JSON: ``"TitForTat"``,
    ``{"RothErev": {"phi": 0.1}}``, or the value :func:`policy` returns for a Python policy.
    """
    if isinstance(spec, Mapping):
        cells_dir = os.fspath(cells) if cells is not None else _cells_default()
        return _agora.study_from_json(json.dumps(spec), cells_dir)
    return load_study(spec, cells)


def _progress_bar(total_hint: int, desc: str):
    """A tqdm bar that draws as a widget in a notebook and as text in a terminal."""
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency; this keeps a bare install usable
        return None
    return tqdm(total=total_hint, desc=desc, unit="run")


def run(
    plan: Union[Plan, Mapping[str, Any], PathLike],
    store: PathLike = "agora.sqlite",
    *,
    new_version: bool = False,
    threads: Optional[int] = None,
    runs: Optional[int] = None,
    progress: bool = True,
) -> Dict[str, Any]:
    """Run a study into a store, as ``agora run`` does; returns what was done.

    Runs already in the store are skipped, so an interrupted call resumes where it stopped:
    Ctrl-C (or the notebook's stop button) stops after the run being written, keeps every run
    written so far and raises ``KeyboardInterrupt``. A study whose configuration differs from
    the runs the store already holds under its name is refused (the one-plan rule), unless
    ``new_version=True`` stores it as the study's next version (``NAME@2``).
    """
    if not isinstance(plan, Plan):
        plan = study(plan)
    if runs is not None:
        plan = plan.limit_runs(runs)
    bar = _progress_bar(len(plan), f"run {plan.study}") if progress else None

    def on_progress(done: int, total: int, skipped: int) -> None:
        if bar is not None:
            if bar.total != total + skipped:
                bar.total = total + skipped
            bar.n = done + skipped
            bar.refresh()

    try:
        return _agora.run(plan, os.fspath(store), dict(_POLICIES), new_version, threads, on_progress)
    finally:
        if bar is not None:
            bar.close()


class Store:
    """A store read as data frames (polars; ``.to_pandas()`` for pandas).

    The tables are written once as Parquet by the store's own export (``agora export``) and
    read by polars, whose Parquet reader builds Arrow columns directly; they are written again
    when the store changes.
    """

    def __init__(self, path: PathLike = "agora.sqlite") -> None:
        self.path = os.fspath(path)
        if not os.path.exists(self.path):
            raise AgoraError(f"store {self.path} does not exist")
        self._dir: Optional[tempfile.TemporaryDirectory] = None
        self._stamp: Optional[Tuple[float, ...]] = None

    def _stamp_now(self) -> Tuple[float, ...]:
        return tuple(
            os.stat(p).st_mtime_ns if os.path.exists(p) else 0
            for p in (self.path, self.path + "-wal")
        )

    def _export(self) -> str:
        stamp = self._stamp_now()
        if self._dir is None or stamp != self._stamp:
            if self._dir is not None:
                self._dir.cleanup()
            self._dir = tempfile.TemporaryDirectory(prefix="agora-frames-")
            _agora.export_parquet(self.path, self._dir.name)
            self._stamp = stamp
        return self._dir.name

    def table(self, name: str):
        """One table of the store (``runs``, ``agents``, ``decisions``, ``payoffs``,
        ``interactions``, ``metrics``, ``transcripts``, ``studies``, ``models``)."""
        import polars as pl

        path = os.path.join(self._export(), f"{name}.parquet")
        if not os.path.exists(path):
            raise AgoraError(f"store {self.path}: no table `{name}`")
        return pl.read_parquet(path)

    def runs(self):
        """One row per run: its key, study, block, roster, variant, cell, seed, record hash."""
        return self.table("runs")

    def decisions(self):
        """One row per decision: run, round, seat, role and action."""
        return self.table("decisions")

    def metrics(self):
        """One row per run-level outcome: run, name, value."""
        return self.table("metrics")

    def transcripts(self):
        """One row per model call: the messages, the raw reply, the parsed action."""
        return self.table("transcripts")

    def record_hashes(self) -> Dict[str, str]:
        """Each run's record hash by run key."""
        runs = self.runs()
        return dict(zip(runs["run_key"].to_list(), runs["record_hash"].to_list()))

    def __repr__(self) -> str:
        return f"Store({self.path!r})"


def _frame(columns, rows):
    """A table of text cells as a polars frame, each column numeric where every cell is."""
    import polars as pl

    frame = pl.DataFrame(rows, schema=list(columns), orient="row") if rows else pl.DataFrame(
        {c: pl.Series([], dtype=pl.Utf8) for c in columns}
    )
    out = []
    for c in frame.columns:
        col = frame[c]
        cells = col.filter(col.is_not_null() & (col != ""))
        numeric = cells.cast(pl.Float64, strict=False)
        if len(cells) and numeric.null_count() == 0:
            out.append(col.replace("", None).cast(pl.Float64, strict=False))
        else:
            out.append(col)
    return pl.DataFrame(out)


class Analysis:
    """What ``agora analyze`` writes, as frames: every table by name, the verdict table and
    the contrasts first among them."""

    def __init__(self, data: Dict[str, Any], tables: Dict[str, Any], titles: Dict[str, str], markdown: str):
        self.data = data
        self.tables = tables
        self.titles = titles
        self._markdown = markdown
        # What `agora replicate --verdicts` prints, for the analysis of a paper replay.
        self.replay_report: Optional[str] = None

    @property
    def verdicts(self):
        """One row per claim: its tier on the certification ladder and the first unmet step."""
        return self.tables["verdicts"]

    @property
    def contrasts(self):
        """Every contrast: exact Mann–Whitney, Cliff's δ, Holm within each family."""
        return self.tables["contrasts"]

    @property
    def runs(self) -> int:
        return int(self.data.get("runs", 0))

    def to_markdown(self) -> str:
        """The analysis as ``analysis.md``."""
        return self._markdown

    def __repr__(self) -> str:
        return f"Analysis(runs={self.runs}, tables={list(self.tables)})"


def analyze(store: PathLike = "agora.sqlite", study: Optional[str] = None, *, classical_in_cross_model: bool = False) -> Analysis:
    """Analyse a store (or one study of it), as ``agora analyze`` does."""
    text, tables = _agora.analyze(os.fspath(store), study, classical_in_cross_model)
    frames = {name: _frame(columns, rows) for name, _title, columns, rows in tables}
    titles = {name: title for name, title, _c, _r in tables}
    markdown = _agora.analysis_markdown(os.fspath(store), study)
    return Analysis(json.loads(text), frames, titles, markdown)


def report(store: PathLike = "agora.sqlite", out: PathLike = "out/report") -> str:
    """Write the HTML report of a store, as ``agora report`` does; returns its path."""
    return os.fspath(_agora.report(os.fspath(store), os.fspath(out)))


def replicate_paper(store: PathLike = "paper-replay.sqlite") -> Analysis:
    """Replay the instrument paper's twelve models through the same games and grade them, as
    ``agora replicate --verdicts`` does: the models are scripted from the paper's printed
    figures, played into ``store`` at the paper's run counts and graded by the same analysis.

    Returns the analysis of the replay (its ``verdicts`` frame holds the ladder's verdicts);
    ``replay_report`` holds what the command prints: the verdict table beside the paper's and
    the status of every printed figure (reproduced, encoded, not reproduced, differs). A store
    played from another roster, or altered since, is refused (:class:`AgoraError`).
    """
    text = _agora.replicate_paper(os.fspath(store))
    analysis = analyze(store, study="paper-replay")
    analysis.replay_report = text
    return analysis


def policy_identity(obj: Any) -> Tuple[str, str, str]:
    """A Python policy's identity: its module, qualified name, and its declared ``__version__``
    or ``sha256:`` and the hash of its source. Editing the source changes the identity, so an
    edited policy's runs never share a name with the old one's."""
    module = getattr(obj, "__module__", None) or "__main__"
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or type(obj).__name__
    version = getattr(obj, "__version__", None)
    if version is None:
        try:
            source = inspect.getsource(obj)
        except (OSError, TypeError) as e:
            raise AgoraError(
                f"Python policy `{module}.{name}`: its source cannot be read ({e}); declare `__version__` on it"
            ) from None
        version = "sha256:" + hashlib.sha256(source.encode("utf-8")).hexdigest()
    return (module, name, str(version))


def _seat_maker(obj: Any) -> Callable[[], Tuple[Any, Any]]:
    """What makes one seat of a policy: a class is instantiated per seat and run (so its state
    is the seat's own); a function is called as it is."""
    if inspect.isclass(obj):

        def make():
            seat = obj()
            if not callable(getattr(seat, "decide", None)):
                raise TypeError(f"{obj.__qualname__} has no decide(observation, rng) method")
            return seat.decide, getattr(seat, "update", None)

        return make
    if callable(obj):
        return lambda: (obj, None)
    raise TypeError(f"{obj!r} is neither a callable nor a class with decide(observation, rng)")


def policy(obj: Any) -> Dict[str, Any]:
    """A roster seat played by Python code, for a study dict's ``Member(policy=...)``.

    ``obj`` is a callable ``decide(observation, rng) -> action`` or a class whose instances
    have that method (and optionally ``update(feedback)``; one instance per seat and run). The
    observation is a dict (``agora.Observation``); ``rng`` is a ``random.Random`` seeded from
    the seat's own stream, so a run is deterministic. The action is an int (a choice's index or
    an amount), a choice's label, or a list of ints (an allocation).
    """
    module, name, version = policy_identity(obj)
    _POLICIES[(module, name, version)] = _seat_maker(obj)
    return {"Python": {"module": module, "name": name, "version": version}}
