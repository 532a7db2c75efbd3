//! Python policies in a roster: a seat whose specification is `PolicySpec::Python` is played by
//! the callable the package registered under that identity.
//!
//! Each decision takes the GIL, shows the policy the observation as a dict and a
//! `random.Random` seeded from the seat's own stream (one `u64` per decision), and reads its
//! answer back as an action. An exception, or an answer that is no legal action, fails that
//! decision with the policy's name and the reason: the run is reported, never recorded.

use agora_agents::{AgentError, Decision, Policy, PolicyMeta, PolicySpec, PythonPolicy, PYTHON};
use agora_engine::runner::PolicyFactory;
use agora_engine::RunSpec;
use agora_environments::{Action, ActionSpace, Feedback, Observation};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

/// The Python policies a plan's rosters name, each with the callable that makes a seat of it.
pub struct Seats {
    makers: Vec<(PythonPolicy, Py<PyAny>)>,
}

impl Seats {
    /// Looks up every Python policy the runs name in `registered`, a dict from `(module, name,
    /// version)` to a callable that returns a seat's `(decide, update)`.
    pub fn new(runs: &[RunSpec], registered: &Bound<'_, PyDict>) -> PyResult<Seats> {
        let mut makers: Vec<(PythonPolicy, Py<PyAny>)> = Vec::new();
        for id in runs.iter().flat_map(|r| r.seats.iter()).filter_map(|p| match p {
            PolicySpec::Python(id) => Some(id),
            _ => None,
        }) {
            if makers.iter().any(|(known, _)| known == id) {
                continue;
            }
            let key = (id.module.as_str(), id.name.as_str(), id.version.as_str());
            let Some(maker) = registered.get_item(key)? else {
                return Err(crate::AgoraError::new_err(format!(
                    "Python policy `{}.{}` ({}) is named by a roster but this session holds no policy of that \
                     identity: build the roster with agora.policy(...) on the current code (an edited policy has \
                     another version)",
                    id.module, id.name, id.version
                )));
            };
            makers.push((id.clone(), maker.unbind()));
        }
        Ok(Seats { makers })
    }

    /// The runner's policy factory: Python seats from their callables, the others from `inner`
    /// (the LLM seats' factory) or their specifications; `None` when there is no Python seat
    /// and no inner factory, so that classical plans take the engine's own path.
    pub fn factory(self, inner: Option<PolicyFactory>) -> Option<PolicyFactory> {
        if self.makers.is_empty() {
            return inner;
        }
        let makers = std::sync::Arc::new(self.makers);
        Some(std::sync::Arc::new(move |spec: &RunSpec, sink: &agora_agents::llm::TranscriptSink| {
            let mut seats = match &inner {
                Some(f) => f(spec, sink)?,
                None => spec.seats.iter().map(PolicySpec::build).collect(),
            };
            for (seat, p) in spec.seats.iter().enumerate() {
                let PolicySpec::Python(id) = p else { continue };
                let maker = makers
                    .iter()
                    .find(|(known, _)| known == id)
                    .map(|(_, m)| m)
                    .expect("invariant: every Python policy of the plan was looked up in Seats::new");
                seats[seat] = Box::new(PyPolicy::new(id, maker)?);
            }
            Ok(seats)
        }))
    }
}

/// One seat played by Python code.
struct PyPolicy {
    label: String,
    decide: Py<PyAny>,
    update: Option<Py<PyAny>>,
    random: Py<PyAny>,
    /// A failure of `update`, reported by the seat's next decision.
    failed: Option<String>,
}

impl PyPolicy {
    fn new(id: &PythonPolicy, maker: &Py<PyAny>) -> Result<PyPolicy, String> {
        let label = format!("Python policy `{}.{}`", id.module, id.name);
        Python::attach(|py| -> PyResult<PyPolicy> {
            let made = maker.bind(py).call0()?;
            let (decide, update): (Bound<'_, PyAny>, Bound<'_, PyAny>) = made.extract()?;
            let update = if update.is_none() { None } else { Some(update.unbind()) };
            let random = py.import("random")?.getattr("Random")?.unbind();
            Ok(PyPolicy { label: label.clone(), decide: decide.unbind(), update, random, failed: None })
        })
        .map_err(|e| format!("{label}: making a seat: {e}"))
    }

    fn ask(&self, obs: &Observation, seed: u64) -> Result<Action, String> {
        Python::attach(|py| {
            let o = observation(py, obs).map_err(|e| e.to_string())?;
            let rng = self.random.bind(py).call1((seed,)).map_err(|e| e.to_string())?;
            let answer = self.decide.bind(py).call1((o, rng)).map_err(|e| format!("raised {e}"))?;
            let action = action(&answer, &obs.space).ok_or_else(|| {
                let shown = answer.repr().map_or_else(|_| "?".to_string(), |r| r.to_string());
                format!("returned {shown}, not a legal action of {}", describe(&obs.space))
            })?;
            if obs.space.contains(&action) {
                Ok(action)
            } else {
                Err(format!("returned {}, not a legal action of {}", action.encode(), describe(&obs.space)))
            }
        })
    }
}

impl Policy for PyPolicy {
    fn meta(&self) -> &'static PolicyMeta {
        &PYTHON
    }

    fn decide(&mut self, obs: &Observation, rng: &mut dyn rand::RngCore) -> Decision {
        let seed = rng.next_u64();
        let result = match self.failed.take() {
            Some(e) => Err(e),
            None => self.ask(obs, seed),
        };
        match result {
            Ok(a) => Decision::Ready(a),
            Err(e) => {
                let message = format!("{} at {} round {}: {e}", self.label, obs.role.as_str(), obs.round);
                Decision::Deferred(Box::pin(async move { Err(AgentError::Failed(message)) }))
            }
        }
    }

    fn update(&mut self, fb: &Feedback) {
        let Some(update) = &self.update else { return };
        let r = Python::attach(|py| -> PyResult<()> {
            update.bind(py).call1((feedback(py, fb)?,))?;
            Ok(())
        });
        if let Err(e) = r {
            self.failed.get_or_insert(format!("update raised {e}"));
        }
    }
}

/// The legal actions in words, for an error.
fn describe(space: &ActionSpace) -> String {
    match space {
        ActionSpace::Choice { labels } => format!("a choice among {} labels (index 0..{})", labels.len(), labels.len()),
        ActionSpace::Amount { min, max } => format!("an amount in {min}..={max}"),
        ActionSpace::Allocation { targets, max_each } => format!("{targets} amounts in 0..={max_each}"),
    }
}

/// The answer as an action of `space`: an index or label for a choice, an integer for an
/// amount, a sequence of integers for an allocation.
fn action(answer: &Bound<'_, PyAny>, space: &ActionSpace) -> Option<Action> {
    match space {
        ActionSpace::Choice { labels } => {
            if answer.cast::<PyString>().is_ok() {
                let s: String = answer.extract().ok()?;
                return labels.iter().position(|l| *l == s).map(|i| Action::Choice(i as u32));
            }
            let i: i64 = answer.extract().ok()?;
            u32::try_from(i).ok().map(Action::Choice)
        }
        ActionSpace::Amount { .. } => answer.extract::<i64>().ok().map(Action::Amount),
        ActionSpace::Allocation { .. } => answer.extract::<Vec<i64>>().ok().map(Action::Allocation),
    }
}

/// An action as Python sees it: an int, or a list of ints.
fn action_value<'py>(py: Python<'py>, a: &Action) -> PyResult<Bound<'py, PyAny>> {
    Ok(match a {
        Action::Choice(i) => i.into_pyobject(py)?.into_any(),
        Action::Amount(x) => x.into_pyobject(py)?.into_any(),
        Action::Allocation(v) => PyList::new(py, v)?.into_any(),
    })
}

/// A JSON value as Python objects.
fn json<'py>(py: Python<'py>, v: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    use serde_json::Value;
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.into_pyobject(py)?.into_any(),
            None => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Value::String(s) => s.into_pyobject(py)?.into_any(),
        Value::Array(a) => PyList::new(py, a.iter().map(|x| json(py, x)).collect::<PyResult<Vec<_>>>()?)?.into_any(),
        Value::Object(o) => {
            let d = PyDict::new(py);
            for (k, x) in o {
                d.set_item(k, json(py, x)?)?;
            }
            d.into_any()
        }
    })
}

/// The observation as a dict (`agora.Observation` in the stubs).
fn observation<'py>(py: Python<'py>, obs: &Observation) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("environment", obs.env.as_str())?;
    d.set_item("variant", obs.variant.as_str())?;
    d.set_item("role", obs.role.as_str())?;
    d.set_item("round", obs.round)?;
    d.set_item("rounds", obs.rounds)?;
    let space = PyDict::new(py);
    match &obs.space {
        ActionSpace::Choice { labels } => {
            space.set_item("kind", "choice")?;
            space.set_item("labels", PyList::new(py, labels.iter())?)?;
        }
        ActionSpace::Amount { min, max } => {
            space.set_item("kind", "amount")?;
            space.set_item("min", min)?;
            space.set_item("max", max)?;
        }
        ActionSpace::Allocation { targets, max_each } => {
            space.set_item("kind", "allocation")?;
            space.set_item("targets", targets)?;
            space.set_item("max_each", max_each)?;
        }
    }
    d.set_item("space", space)?;
    // The context as `{"kind": "offer", "offer": 4, "pie": 10}`, or None.
    let context = match serde_json::to_value(&obs.context) {
        Ok(serde_json::Value::Object(o)) => {
            let c = PyDict::new(py);
            for (kind, fields) in o {
                c.set_item("kind", kind.to_lowercase())?;
                if let serde_json::Value::Object(f) = fields {
                    for (k, x) in f {
                        c.set_item(k, json(py, &x)?)?;
                    }
                }
            }
            c.into_any()
        }
        _ => py.None().into_bound(py),
    };
    d.set_item("context", context)?;
    let payoffs = PyDict::new(py);
    payoffs.set_item("min", obs.payoffs.min)?;
    payoffs.set_item("mean_abs", obs.payoffs.mean_abs)?;
    d.set_item("payoffs", payoffs)?;
    d.set_item("memory", obs.memory)?;
    Ok(d)
}

/// What a seat learns after a stage, as a dict (`agora.Feedback` in the stubs).
fn feedback<'py>(py: Python<'py>, fb: &Feedback) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("round", fb.round)?;
    let own = fb
        .own
        .iter()
        .map(|(role, a)| Ok(PyTuple::new(py, [role.as_str().into_pyobject(py)?.into_any(), action_value(py, a)?])?))
        .collect::<PyResult<Vec<_>>>()?;
    d.set_item("own", PyList::new(py, own)?)?;
    let others = fb.others.iter().map(|a| action_value(py, a)).collect::<PyResult<Vec<_>>>()?;
    d.set_item("others", PyList::new(py, others)?)?;
    d.set_item("partner", fb.partner)?;
    d.set_item("payoff", fb.payoff)?;
    Ok(d)
}
