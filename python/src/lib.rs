//! `agora._agora`: the extension module under the `agora` Python package.
//!
//! A thin layer over the workspace's crates: plans come from `agora_scenarios`, runs from
//! `agora_engine::execute` under the same one-plan rule as `agora run`, tables from
//! `agora_report::export` and `agora_analysis`. The Python side (`python/agora/__init__.py`)
//! shapes the results into data frames; nothing here is a second engine.

mod policy;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};

use agora_engine::{execute, Progress, RunnerOptions, Store};
use agora_scenarios::versions::{place, Placement};
use pyo3::exceptions::{PyException, PyKeyboardInterrupt};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

pyo3::create_exception!(_agora, AgoraError, PyException, "An error of Agora, with the message the command line gives.");

/// The error as the command line prints it (`{:#}`: the message and its causes).
fn err(e: impl std::fmt::Display) -> PyErr {
    AgoraError::new_err(format!("{e:#}"))
}

/// A resolved study: every run specified, hashed and seeded.
#[pyclass(module = "agora._agora", frozen)]
struct Plan {
    inner: agora_scenarios::Plan,
    /// What the store records as the study's source (the file's text, or the dict as JSON).
    source: String,
    /// How messages name the study (its file, or `<dict>`).
    label: PathBuf,
}

#[pymethods]
impl Plan {
    /// The study's name.
    #[getter]
    fn study(&self) -> String {
        self.inner.study.clone()
    }

    /// The study's master seed.
    #[getter]
    fn master_seed(&self) -> u64 {
        self.inner.master_seed
    }

    /// The hash of every run key in order.
    #[getter]
    fn hash(&self) -> String {
        self.inner.hash()
    }

    /// The run keys in plan order.
    fn run_keys(&self) -> Vec<String> {
        self.inner.runs.iter().map(agora_engine::RunSpec::key).collect()
    }

    /// One row per block, roster, variant and cell, as `agora check` prints them.
    fn lines<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let rows = PyList::empty(py);
        for l in self.inner.lines() {
            let d = PyDict::new(py);
            d.set_item("block", l.block)?;
            d.set_item("environment", l.environment.as_str())?;
            d.set_item("arm", l.arm)?;
            d.set_item("variant", l.variant.as_str())?;
            d.set_item("cell", l.cell)?;
            d.set_item("level", l.level.as_str())?;
            d.set_item("roster", l.roster)?;
            d.set_item("conditions", l.conditions)?;
            d.set_item("runs", l.runs)?;
            d.set_item("decisions", l.decisions)?;
            rows.append(d)?;
        }
        Ok(rows)
    }

    /// The first `n` runs of every condition (`agora run --runs N`).
    fn limit_runs(&self, n: u32) -> PyResult<Plan> {
        if n == 0 {
            return Err(AgoraError::new_err("--runs must be at least 1"));
        }
        Ok(Plan { inner: self.inner.limit_runs(n), source: self.source.clone(), label: self.label.clone() })
    }

    fn __len__(&self) -> usize {
        self.inner.runs.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "Plan(study={:?}, runs={}, hash={:?})",
            self.inner.study,
            self.inner.runs.len(),
            &self.inner.hash()[..16]
        )
    }
}

/// Every model a roster names must be declared, as `agora check` says before anything runs.
fn check_models(plan: &agora_scenarios::Plan, label: &Path) -> PyResult<()> {
    let declared: std::collections::BTreeSet<&str> = plan.models.iter().map(|m| m.name.as_str()).collect();
    let unknown =
        plan.runs.iter().flat_map(|r| r.seats.iter().filter_map(|s| s.model())).find(|m| !declared.contains(m));
    match unknown {
        Some(first) => Err(AgoraError::new_err(format!(
            "{}: model `{first}` is named by a roster but not declared (declare it in the study's `models` or pass \
             --models FILE)",
            label.display()
        ))),
        None => Ok(()),
    }
}

/// Loads and resolves a study file (RON), as `agora run FILE` does.
#[pyfunction]
#[pyo3(signature = (path, cells=None, models=None))]
fn load_study(path: PathBuf, cells: Option<PathBuf>, models: Option<PathBuf>) -> PyResult<Plan> {
    let inner = agora_scenarios::Plan::load_with_models(&path, cells.as_deref(), models.as_deref()).map_err(err)?;
    check_models(&inner, &path)?;
    let source = std::fs::read_to_string(&path).map_err(|e| err(format!("reading {}: {e}", path.display())))?;
    Ok(Plan { inner, source, label: path })
}

/// Resolves a study given as JSON (the study file's fields), with the same checks as a file.
#[pyfunction]
#[pyo3(signature = (json, cells, label="<dict>"))]
fn study_from_json(json: &str, cells: PathBuf, label: &str) -> PyResult<Plan> {
    let label = PathBuf::from(label);
    let study = agora_scenarios::Study::from_json(&label, json).map_err(err)?;
    let inner = agora_scenarios::Plan::resolve(&study, &label, &cells).map_err(err)?;
    check_models(&inner, &label)?;
    Ok(Plan { inner, source: json.to_string(), label })
}

/// The checkout's cell files, where the package was built from (a dict study's default cells).
#[pyfunction]
fn checkout_dir() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/..").to_string()
}

/// Runs a plan into a store under the one-plan rule, as `agora run` does; `progress(done,
/// total, skipped)` is called after each run. Ctrl-C stops after the run being committed,
/// keeps what was committed and raises `KeyboardInterrupt`; the same call resumes.
#[pyfunction]
#[pyo3(signature = (plan, store, policies, new_version=false, threads=None, progress=None))]
fn run<'py>(
    py: Python<'py>,
    plan: &Plan,
    store: PathBuf,
    policies: Bound<'py, PyDict>,
    new_version: bool,
    threads: Option<usize>,
    progress: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let mut db = Store::open(&store).map_err(err)?;
    let claim = db.claim("agora (Python) run").map_err(err)?;
    let placed = match place(&plan.inner, &plan.label, &db, &store, new_version, "new_version=True").map_err(err)? {
        Placement::Own(p) => p,
        Placement::NewVersion(p, line) => {
            py.import("sys")?.getattr("stderr")?.call_method1("write", (format!("{line}\n"),))?;
            p
        }
        Placement::Refused(message) => return Err(AgoraError::new_err(message)),
    };
    if let Some(r) = placed.runs.iter().find(|r| r.seats.iter().any(|p| p.stand_in().is_some())) {
        return Err(AgoraError::new_err(format!(
            "{}: block `{}` has human seats; people play them in a browser with `agora serve`",
            plan.label.display(),
            r.block
        )));
    }
    let seats = policy::Seats::new(&placed.runs, &policies)?;
    let llm =
        py.detach(|| agora_engine::llm_seats::prepare(&placed.runs, &placed.models, &store, false)).map_err(err)?;
    db.record_study(&placed.study_record(), &plan.source).map_err(err)?;
    let before = db.completed_keys().map_err(err)?;
    let cancel = Arc::new(AtomicBool::new(false));
    let mut opts = RunnerOptions { cancel: Some(cancel.clone()), ..RunnerOptions::default() };
    if let Some(t) = threads {
        opts.threads = t.max(1);
    }
    if llm.is_some() {
        let backoff = placed.models.iter().map(|m| m.backoff_ms).max().unwrap_or(100);
        opts.retry_backoff = std::time::Duration::from_millis(backoff.saturating_mul(8).max(1));
    }
    opts.policy_factory = seats.factory(llm.as_ref().map(|l| l.factory()));
    let started = std::time::Instant::now();
    let (tx, rx) = mpsc::channel::<Progress>();
    // Waited on with the GIL released (which asks for a `Sync` receiver).
    let rx = std::sync::Mutex::new(rx);
    let runs = &placed.runs;
    let mut interrupted = None;
    let report = std::thread::scope(|scope| -> PyResult<_> {
        let db = &mut db;
        let opts = &opts;
        let worker = scope.spawn(move || {
            execute(runs, db, opts, &mut |p| {
                // The receiver gone means the call is over: nothing is left to tell.
                let _ = tx.send(p);
            })
        });
        loop {
            let got = py.detach(|| {
                rx.lock().map_or(Err(mpsc::RecvTimeoutError::Disconnected), |rx| {
                    rx.recv_timeout(std::time::Duration::from_millis(100))
                })
            });
            match got {
                Ok(p) => {
                    if let Some(cb) = &progress {
                        // A failing progress bar must not lose the runs: it is reported once the
                        // runs stop.
                        if let Err(e) = cb.call1((p.done, p.total, p.skipped)) {
                            interrupted.get_or_insert(e);
                            cancel.store(true, Ordering::Relaxed);
                        }
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            if interrupted.is_none() {
                if let Err(e) = py.check_signals() {
                    interrupted = Some(e);
                    cancel.store(true, Ordering::Relaxed);
                }
            }
        }
        py.detach(|| worker.join()).map_err(|_| AgoraError::new_err("the run thread panicked"))
    })?;
    let report = report.map_err(err)?;
    let now = db.completed_keys().map_err(err)?;
    let made: Vec<String> =
        placed.runs.iter().map(agora_engine::RunSpec::key).filter(|k| now.contains(k) && !before.contains(k)).collect();
    db.record_provenance(
        &made,
        &agora_engine::store::deposit::Provenance { started: now_utc(), deposit: None, deviation: None },
    )
    .map_err(err)?;
    drop(db);
    drop(claim);
    if let Some(e) = interrupted {
        if e.is_instance_of::<PyKeyboardInterrupt>(py) {
            return Err(PyKeyboardInterrupt::new_err(format!(
                "interrupted: the runs completed so far are kept in {} ({} this call); run the same call again to \
                 resume",
                store.display(),
                report.executed
            )));
        }
        return Err(e);
    }
    if let Some(missing) = report.missing_summary(&placed.study, placed.runs.len(), "call") {
        return Err(AgoraError::new_err(missing));
    }
    let out = PyDict::new(py);
    out.set_item("study", &placed.study)?;
    out.set_item("executed", report.executed)?;
    out.set_item("skipped", report.skipped)?;
    out.set_item("decisions", report.decisions)?;
    out.set_item("seconds", started.elapsed().as_secs_f64())?;
    out.set_item("store", store)?;
    Ok(out)
}

// Today's date and time in UTC, ISO 8601, as `agora run` records it.
use agora_engine::store::deposit::now_utc;

/// Writes every table of a store as Parquet into `out`; returns (table, file, rows).
#[pyfunction]
fn export_parquet(py: Python<'_>, store: PathBuf, out: PathBuf) -> PyResult<Vec<(String, PathBuf, usize)>> {
    let reader = Store::open_read(&store).map_err(err)?.reader_path().to_path_buf();
    py.detach(|| agora_report::export::export(&reader, agora_report::export::Format::Parquet, &out)).map_err(err)
}

/// Analyses a store (`agora analyze`): the analysis as JSON and every table as (name, title,
/// columns, rows of text).
#[pyfunction]
#[pyo3(signature = (store, study=None, classical_in_cross_model=false))]
#[expect(clippy::type_complexity, reason = "the tuple is the Python-facing shape")]
fn analyze(
    py: Python<'_>,
    store: PathBuf,
    study: Option<String>,
    classical_in_cross_model: bool,
) -> PyResult<(String, Vec<(String, String, Vec<String>, Vec<Vec<String>>)>)> {
    let reader = Store::open_read(&store).map_err(err)?.reader_path().to_path_buf();
    let options = agora_analysis::Options { classical_in_cross_model };
    let analysis = py
        .detach(|| agora_analysis::analyze::analyze_against(&reader, study.as_deref(), &options, None))
        .map_err(err)?;
    let json = serde_json::to_string(&analysis).map_err(err)?;
    let tables = analysis
        .tables()
        .into_iter()
        .map(|t| {
            (t.name.to_string(), t.title.to_string(), t.columns.iter().map(|c| c.to_string()).collect(), t.rows.clone())
        })
        .collect();
    Ok((json, tables))
}

/// The analysis as Markdown (`analysis.md` of `agora analyze`).
#[pyfunction]
#[pyo3(signature = (store, study=None))]
fn analysis_markdown(py: Python<'_>, store: PathBuf, study: Option<String>) -> PyResult<String> {
    let reader = Store::open_read(&store).map_err(err)?.reader_path().to_path_buf();
    let analysis = py.detach(|| agora_analysis::analyze::analyze(&reader, study.as_deref())).map_err(err)?;
    Ok(analysis.to_markdown())
}

/// Writes the HTML report of a store (`agora report`); returns its path.
#[pyfunction]
fn report(py: Python<'_>, store: PathBuf, out: PathBuf) -> PyResult<PathBuf> {
    let reader = Store::open_read(&store).map_err(err)?.reader_path().to_path_buf();
    py.detach(|| agora_report::write(&reader, &out)).map_err(err)
}

/// Plays the instrument paper's twelve models, scripted from its printed figures, into `store`
/// and grades it, as `agora replicate --verdicts` does; returns what that command prints (the
/// verdict table beside the paper's and the status of every printed figure).
#[pyfunction]
fn replicate_paper(py: Python<'_>, store: PathBuf) -> PyResult<String> {
    let roster = agora_replay::PaperRoster::shipped();
    let analysis = py.detach(|| roster.play(&agora_replay::instrument_path(), &store)).map_err(err)?;
    Ok(agora_replay::report(&analysis))
}

/// The extension module.
#[pymodule]
fn _agora(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("AgoraError", m.py().get_type::<AgoraError>())?;
    m.add_class::<Plan>()?;
    m.add_function(wrap_pyfunction!(load_study, m)?)?;
    m.add_function(wrap_pyfunction!(study_from_json, m)?)?;
    m.add_function(wrap_pyfunction!(checkout_dir, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(export_parquet, m)?)?;
    m.add_function(wrap_pyfunction!(analyze, m)?)?;
    m.add_function(wrap_pyfunction!(analysis_markdown, m)?)?;
    m.add_function(wrap_pyfunction!(report, m)?)?;
    m.add_function(wrap_pyfunction!(replicate_paper, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
