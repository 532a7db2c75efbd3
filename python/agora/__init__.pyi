"""Type stubs of the `agora` package (editors complete the API from these)."""

import os
from typing import Any, Callable, Dict, List, Literal, Mapping, Optional, Tuple, TypedDict, Union

import polars

PathLike = Union[str, os.PathLike[str]]

class AgoraError(Exception):
    """An error of Agora, with the message the command line gives."""

class PlanLine(TypedDict):
    block: str
    environment: str
    arm: str
    variant: str
    cell: str
    level: str
    roster: str
    conditions: int
    runs: int
    decisions: int

class Plan:
    """A resolved study: every run specified, hashed and seeded."""
    @property
    def study(self) -> str: ...
    @property
    def master_seed(self) -> int: ...
    @property
    def hash(self) -> str: ...
    def run_keys(self) -> List[str]: ...
    def lines(self) -> List[PlanLine]: ...
    def limit_runs(self, n: int) -> Plan: ...
    def __len__(self) -> int: ...

class ChoiceSpace(TypedDict):
    kind: Literal["choice"]
    labels: List[str]

class AmountSpace(TypedDict):
    kind: Literal["amount"]
    min: int
    max: int

class AllocationSpace(TypedDict):
    kind: Literal["allocation"]
    targets: int
    max_each: int

class PayoffBounds(TypedDict):
    min: float
    mean_abs: float

class Observation(TypedDict):
    """What a seat is shown before one decision."""

    environment: str
    variant: str
    role: str
    round: int
    rounds: Optional[int]
    space: Union[ChoiceSpace, AmountSpace, AllocationSpace]
    context: Optional[Dict[str, Any]]
    payoffs: PayoffBounds
    memory: int

class Feedback(TypedDict):
    """What a seat learns once a stage it took part in is resolved."""

    round: int
    own: List[Tuple[str, Union[int, List[int]]]]
    others: List[Union[int, List[int]]]
    partner: Optional[int]
    payoff: float

Action = Union[int, str, List[int]]

class RunReport(TypedDict):
    study: str
    executed: int
    skipped: int
    decisions: int
    seconds: float
    store: str

def load_study(path: PathLike, cells: Optional[PathLike] = ..., models: Optional[PathLike] = ...) -> Plan: ...
def study(spec: Union[Mapping[str, Any], PathLike], cells: Optional[PathLike] = ...) -> Plan: ...
def run(
    plan: Union[Plan, Mapping[str, Any], PathLike],
    store: PathLike = ...,
    *,
    new_version: bool = ...,
    threads: Optional[int] = ...,
    runs: Optional[int] = ...,
    progress: bool = ...,
) -> RunReport: ...

class Store:
    path: str
    def __init__(self, path: PathLike = ...) -> None: ...
    def table(self, name: str) -> polars.DataFrame: ...
    def runs(self) -> polars.DataFrame: ...
    def decisions(self) -> polars.DataFrame: ...
    def metrics(self) -> polars.DataFrame: ...
    def transcripts(self) -> polars.DataFrame: ...
    def record_hashes(self) -> Dict[str, str]: ...

class Analysis:
    data: Dict[str, Any]
    tables: Dict[str, polars.DataFrame]
    titles: Dict[str, str]
    replay_report: Optional[str]
    @property
    def verdicts(self) -> polars.DataFrame: ...
    @property
    def contrasts(self) -> polars.DataFrame: ...
    @property
    def runs(self) -> int: ...
    def to_markdown(self) -> str: ...

def analyze(store: PathLike = ..., study: Optional[str] = ..., *, classical_in_cross_model: bool = ...) -> Analysis: ...
def report(store: PathLike = ..., out: PathLike = ...) -> str: ...
def replicate_paper(store: PathLike = ...) -> Analysis: ...
def policy_identity(obj: Any) -> Tuple[str, str, str]: ...
def policy(obj: Union[Callable[[Observation, Any], Action], type]) -> Dict[str, Any]: ...

__version__: str
