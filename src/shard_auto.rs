//! `--shard auto`: this task's shard of the plan, read from the scheduler that started it — a
//! Slurm job array or a Kubernetes Indexed Job.
//!
//! Slurm sets `SLURM_ARRAY_TASK_ID` in each task of an array, with `SLURM_ARRAY_TASK_COUNT`,
//! `SLURM_ARRAY_TASK_MIN`, `SLURM_ARRAY_TASK_MAX` and `SLURM_ARRAY_TASK_STEP`; the task is shard
//! `ID − MIN + 1` of `COUNT` (or of `MAX − MIN + 1` where the count is not set). Only a
//! contiguous range with step 1 (`--array=0-7`, `--array=1-8%4`) maps every shard to exactly one
//! task, so a step, a list with gaps (`--array=1,3,5`) or an index outside the range is refused
//! rather than silently leaving shards unrun.
//!
//! Kubernetes sets `JOB_COMPLETION_INDEX` (0-based) in each pod of an Indexed Job but exposes no
//! completions count to the pod, so the manifest passes it as `AGORA_SHARD_COUNT`.
//!
//! The reading is a pure function of a variable lookup, so tests need not touch the process
//! environment.

use agora_scenarios::Shard;

/// The Slurm task's index within its job array.
pub const SLURM_TASK_ID: &str = "SLURM_ARRAY_TASK_ID";
/// The number of tasks in the Slurm job array.
pub const SLURM_TASK_COUNT: &str = "SLURM_ARRAY_TASK_COUNT";
/// The Slurm job array's lowest index.
pub const SLURM_TASK_MIN: &str = "SLURM_ARRAY_TASK_MIN";
/// The Slurm job array's highest index.
pub const SLURM_TASK_MAX: &str = "SLURM_ARRAY_TASK_MAX";
/// The Slurm job array's index step.
pub const SLURM_TASK_STEP: &str = "SLURM_ARRAY_TASK_STEP";
/// The pod's index within a Kubernetes Indexed Job.
pub const K8S_INDEX: &str = "JOB_COMPLETION_INDEX";
/// Ours: the Indexed Job's `completions`, which Kubernetes does not pass to the pod.
pub const SHARD_COUNT: &str = "AGORA_SHARD_COUNT";

/// A shard read from the scheduler's variables, and where it was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AutoShard {
    /// This task's shard (1-based, as `--shard i/N`).
    pub shard: Shard,
    /// The scheduler whose variables gave it.
    pub scheduler: &'static str,
}

/// This task's shard from the scheduler's variables; `var` looks a variable up (`None` when it
/// is not set). The error names the variable at fault.
pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Result<AutoShard, String> {
    if let Some(id) = var(SLURM_TASK_ID) {
        return slurm(&id, &var).map(|shard| AutoShard { shard, scheduler: "Slurm job array" });
    }
    if let Some(index) = var(K8S_INDEX) {
        return kubernetes(&index, &var).map(|shard| AutoShard { shard, scheduler: "Kubernetes Indexed Job" });
    }
    Err(format!(
        "--shard auto: no scheduler variables found: expected {SLURM_TASK_ID} (a Slurm job array) or \
         {K8S_INDEX} with {SHARD_COUNT} (a Kubernetes Indexed Job); outside a scheduler use --shard i/N"
    ))
}

fn number(name: &str, value: &str) -> Result<usize, String> {
    value.trim().parse().map_err(|_| format!("--shard auto: {name}=`{value}` is not a non-negative integer"))
}

fn slurm(id: &str, var: &impl Fn(&str) -> Option<String>) -> Result<Shard, String> {
    let id = number(SLURM_TASK_ID, id)?;
    let get = |name: &str| var(name).map(|v| number(name, &v)).transpose();
    if let Some(step) = get(SLURM_TASK_STEP)? {
        if step != 1 {
            return Err(format!(
                "--shard auto: {SLURM_TASK_STEP}={step}: a job array with a step leaves shards without a task; \
                 submit a contiguous range such as --array=0-7"
            ));
        }
    }
    let min = get(SLURM_TASK_MIN)?.unwrap_or(0);
    let max = get(SLURM_TASK_MAX)?;
    if let Some(max) = max {
        if max < min {
            return Err(format!("--shard auto: {SLURM_TASK_MAX}={max} is below {SLURM_TASK_MIN}={min}"));
        }
    }
    let count = match (get(SLURM_TASK_COUNT)?, max) {
        (Some(count), Some(max)) if count != max - min + 1 => {
            return Err(format!(
                "--shard auto: {SLURM_TASK_COUNT}={count} but the array spans {SLURM_TASK_MIN}={min} to \
                 {SLURM_TASK_MAX}={max}: the indices are not a contiguous range, so some shards would have no \
                 task; submit a range such as --array=0-{}",
                count.saturating_sub(1)
            ));
        }
        (Some(count), _) => count,
        (None, Some(max)) => max - min + 1,
        (None, None) => {
            return Err(format!(
                "--shard auto: {SLURM_TASK_ID} is set but neither {SLURM_TASK_COUNT} nor {SLURM_TASK_MAX} is, \
                 so the number of shards is unknown"
            ))
        }
    };
    if count == 0 {
        return Err(format!("--shard auto: {SLURM_TASK_COUNT}=0: an array has at least one task"));
    }
    if id < min || id - min >= count {
        return Err(format!(
            "--shard auto: {SLURM_TASK_ID}={id} lies outside the array's {count} tasks from {SLURM_TASK_MIN}={min}"
        ));
    }
    Ok(Shard { index: id - min + 1, count })
}

fn kubernetes(index: &str, var: &impl Fn(&str) -> Option<String>) -> Result<Shard, String> {
    let index = number(K8S_INDEX, index)?;
    let count = var(SHARD_COUNT).ok_or_else(|| {
        format!(
            "--shard auto: {K8S_INDEX} is set but {SHARD_COUNT} is not; Kubernetes does not tell a pod its Job's \
             completions, so set {SHARD_COUNT} to `completions` in the manifest"
        )
    })?;
    let count = number(SHARD_COUNT, &count)?;
    if count == 0 {
        return Err(format!("--shard auto: {SHARD_COUNT}=0: a Job has at least one completion"));
    }
    if index >= count {
        return Err(format!(
            "--shard auto: {K8S_INDEX}={index} is not below {SHARD_COUNT}={count}; set {SHARD_COUNT} to the \
             Job's `completions`"
        ));
    }
    Ok(Shard { index: index + 1, count })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(vars: &[(&str, &str)]) -> Result<AutoShard, String> {
        from_env(|k| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| (*v).to_string()))
    }

    fn shard(vars: &[(&str, &str)]) -> (usize, usize) {
        let s = with(vars).unwrap_or_else(|e| panic!("{vars:?}: {e}"));
        (s.shard.index, s.shard.count)
    }

    fn refused(vars: &[(&str, &str)], naming: &str) {
        let e = with(vars).expect_err("refused");
        assert!(e.contains(naming), "{vars:?}: `{e}` should name {naming}");
    }

    #[test]
    fn a_slurm_array_task_is_its_index_from_the_lowest() {
        // As Slurm sets them for --array=0-2.
        for id in 0..3 {
            let id_s = id.to_string();
            let vars = [
                (SLURM_TASK_ID, id_s.as_str()),
                (SLURM_TASK_COUNT, "3"),
                (SLURM_TASK_MIN, "0"),
                (SLURM_TASK_MAX, "2"),
                (SLURM_TASK_STEP, "1"),
            ];
            assert_eq!(shard(&vars), (id + 1, 3));
            assert_eq!(with(&vars).map(|s| s.scheduler), Ok("Slurm job array"));
        }
        // --array=1-8%2: a throttle changes nothing; the lowest index is shard 1.
        assert_eq!(
            shard(&[(SLURM_TASK_ID, "1"), (SLURM_TASK_COUNT, "8"), (SLURM_TASK_MIN, "1"), (SLURM_TASK_MAX, "8")]),
            (1, 8)
        );
        assert_eq!(
            shard(&[(SLURM_TASK_ID, "8"), (SLURM_TASK_COUNT, "8"), (SLURM_TASK_MIN, "1"), (SLURM_TASK_MAX, "8")]),
            (8, 8)
        );
    }

    #[test]
    fn the_slurm_count_comes_from_the_range_when_not_set() {
        assert_eq!(shard(&[(SLURM_TASK_ID, "5"), (SLURM_TASK_MIN, "4"), (SLURM_TASK_MAX, "6")]), (2, 3));
        // No minimum: the range starts at 0.
        assert_eq!(shard(&[(SLURM_TASK_ID, "0"), (SLURM_TASK_MAX, "3")]), (1, 4));
        // A count alone, the minimum 0.
        assert_eq!(shard(&[(SLURM_TASK_ID, "2"), (SLURM_TASK_COUNT, "3")]), (3, 3));
        assert_eq!(shard(&[(SLURM_TASK_ID, " 2 "), (SLURM_TASK_COUNT, "3\n")]), (3, 3));
    }

    #[test]
    fn bad_slurm_arrays_are_refused_naming_the_variable() {
        // A step leaves shards without a task.
        refused(&[(SLURM_TASK_ID, "0"), (SLURM_TASK_COUNT, "3"), (SLURM_TASK_STEP, "2")], SLURM_TASK_STEP);
        // --array=1,3,5: three tasks over a range of five indices.
        refused(
            &[(SLURM_TASK_ID, "3"), (SLURM_TASK_COUNT, "3"), (SLURM_TASK_MIN, "1"), (SLURM_TASK_MAX, "5")],
            SLURM_TASK_COUNT,
        );
        // No count and no maximum.
        refused(&[(SLURM_TASK_ID, "0")], SLURM_TASK_COUNT);
        refused(&[(SLURM_TASK_ID, "0"), (SLURM_TASK_MIN, "0")], SLURM_TASK_MAX);
        // Out of range, below and above.
        refused(&[(SLURM_TASK_ID, "3"), (SLURM_TASK_COUNT, "3")], SLURM_TASK_ID);
        refused(&[(SLURM_TASK_ID, "0"), (SLURM_TASK_COUNT, "3"), (SLURM_TASK_MIN, "1")], SLURM_TASK_ID);
        refused(&[(SLURM_TASK_ID, "1"), (SLURM_TASK_MIN, "3"), (SLURM_TASK_MAX, "2")], SLURM_TASK_MAX);
        refused(&[(SLURM_TASK_ID, "0"), (SLURM_TASK_COUNT, "0")], SLURM_TASK_COUNT);
        // Not numbers.
        refused(&[(SLURM_TASK_ID, "a"), (SLURM_TASK_COUNT, "3")], SLURM_TASK_ID);
        refused(&[(SLURM_TASK_ID, "-1"), (SLURM_TASK_COUNT, "3")], SLURM_TASK_ID);
        refused(&[(SLURM_TASK_ID, ""), (SLURM_TASK_COUNT, "3")], SLURM_TASK_ID);
        refused(&[(SLURM_TASK_ID, "0"), (SLURM_TASK_COUNT, "three")], SLURM_TASK_COUNT);
        refused(&[(SLURM_TASK_ID, "0"), (SLURM_TASK_MAX, "2"), (SLURM_TASK_MIN, "x")], SLURM_TASK_MIN);
        refused(&[(SLURM_TASK_ID, "0"), (SLURM_TASK_MAX, "2.0")], SLURM_TASK_MAX);
    }

    #[test]
    fn a_kubernetes_indexed_job_pod_is_its_completion_index() {
        for i in 0..4 {
            let i_s = i.to_string();
            let vars = [(K8S_INDEX, i_s.as_str()), (SHARD_COUNT, "4")];
            assert_eq!(shard(&vars), (i + 1, 4));
            assert_eq!(with(&vars).map(|s| s.scheduler), Ok("Kubernetes Indexed Job"));
        }
        refused(&[(K8S_INDEX, "0")], SHARD_COUNT);
        refused(&[(K8S_INDEX, "4"), (SHARD_COUNT, "4")], K8S_INDEX);
        refused(&[(K8S_INDEX, "0"), (SHARD_COUNT, "0")], SHARD_COUNT);
        refused(&[(K8S_INDEX, "0"), (SHARD_COUNT, "")], SHARD_COUNT);
        refused(&[(K8S_INDEX, "x"), (SHARD_COUNT, "2")], K8S_INDEX);
    }

    #[test]
    fn slurm_wins_over_kubernetes_and_nothing_set_is_refused() {
        // A Slurm task inside a container that happens to carry Kubernetes variables.
        let s = with(&[(SLURM_TASK_ID, "1"), (SLURM_TASK_COUNT, "2"), (K8S_INDEX, "0"), (SHARD_COUNT, "5")])
            .expect("slurm");
        assert_eq!((s.shard.index, s.shard.count, s.scheduler), (2, 2, "Slurm job array"));
        let e = with(&[]).expect_err("nothing set");
        assert!(e.contains(SLURM_TASK_ID) && e.contains(K8S_INDEX) && e.contains("no scheduler variables"), "{e}");
        // A count alone is not a scheduler.
        refused(&[(SHARD_COUNT, "3")], "no scheduler variables");
    }
}
