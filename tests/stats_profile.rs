//! `agora stats` for the behavioural profile's computations (the profile methods §M04, §A0, §GR1, §GR2;
//! the power calculation of the SUVA audit paper §240.5.3): JSON in, JSON out, the seeds' worked examples
//! reproduced end to end at their printed precision, and bad input refused with a message
//! naming the field and exit code 2.

use serde_json::{json, Value};

mod common;
use common::{agora_stats, answer, assert_stats_refused, text};

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("{v} is not a number"))
}

/// |got − want| ≤ tol.
fn close(got: &Value, want: f64, tol: f64, what: &str) {
    let g = num(got);
    assert!((g - want).abs() <= tol, "{what}: got {g}, want {want} (±{tol})");
}

/// The profile methods §M04 line 131: u = 30, 32, …, 50.
fn m04_reference() -> Vec<f64> {
    (0..11).map(|k| 30.0 + 2.0 * f64::from(k)).collect()
}

#[test]
fn profile_range_reproduces_m04() {
    // The profile methods §M04 line 131: "Their sum is 440, giving M=40 and I=[30,50]. If the smallest and
    // largest checked results are 25 and 55, then O=[25,55]. The average remains 40."
    let v = answer("profile-range", &json!({"reference": m04_reference(), "checked": [25, 55]}));
    close(&v["centre"], 40.0, 1e-12, "M");
    assert_eq!(v["inner"], json!([30.0, 50.0]));
    assert_eq!(v["outer"], json!([25.0, 55.0]));
    assert_eq!((v["versions"].clone(), v["checks"].clone()), (json!(11), json!(2)));
}

#[test]
fn profile_measure_reproduces_the_category_examples() {
    // §A2 lines 320–333: BASE public goods 20, 40, 60 (u = 40) with a middle check 40 → 70
    // (z = 50); the other ten versions average 18, so M_PGG = (40 + 10×18)/11 = 20.
    let mut versions = vec![json!({"points": [20, 40, 60], "checks": [{"condition": "middle", "values": [70]}]})];
    versions.extend((0..10).map(|_| json!({"points": [18, 18, 18]})));
    let v = answer("profile-measure", &json!({"measure": "a", "versions": versions}));
    assert_eq!(v["measure"], "a");
    close(&v["reference"][0], 40.0, 1e-12, "u_0");
    close(&v["checked"][0][0], 50.0, 1e-12, "z");
    close(&v["centre"], 20.0, 1e-12, "M_PGG");
    assert_eq!(v["inner"], json!([18.0, 40.0]));
    assert_eq!(v["outer"], json!([18.0, 50.0]));

    // §B4 line 628: "300 of 450 … u≈66.67% … from 30 to 36 … z=100×306/450=68%".
    let b4 = json!({"matches": 300, "checks": [{"condition": "middle", "reference_matches": 30, "check_matches": 36}]});
    let v = answer("profile-measure", &json!({"measure": "b4", "versions": vec![b4; 11]}));
    close(&v["centre"], 66.67, 0.005, "B4 u");
    close(&v["checked"][0][0], 68.0, 1e-9, "B4 z");

    // §C1 line 712: 162 of 405 B choices (six at each of the 27 points) → u = 40; the middle
    // stake's 50 % point 6 → 9 → z = 40 + 20/27 ≈ 40.74.
    let six = 100.0 * 6.0 / 15.0;
    let nine = 100.0 * 9.0 / 15.0;
    let c1 = json!({"points": vec![six; 27], "checks": [{"condition": "middle", "values": [six, nine, six]}]});
    let v = answer("profile-measure", &json!({"measure": "c1", "versions": vec![c1; 11]}));
    close(&v["centre"], 40.0, 1e-9, "C1 u");
    close(&v["outer"][1], 40.74, 0.005, "C1 z");

    // §D1 line 875: 12, 12, 3 of 15 → v = 60; five others at 100 (the check's 9, 9, 3) →
    // u ≈ 93.33; the check 9, 9, 3 on this P1 set → 100.
    let (a, b) = ([12.0 / 15.0, 12.0 / 15.0, 3.0 / 15.0], [9.0 / 15.0, 9.0 / 15.0, 3.0 / 15.0]);
    let d1 = json!({"points": [a, b, b, b, b, b], "checks": [{"condition": "low", "values": b}]});
    let v = answer("profile-measure", &json!({"measure": "d1", "versions": vec![d1; 11]}));
    close(&v["centre"], 93.33, 0.005, "D1 u");
    close(&v["checked"][0][0], 100.0, 1e-9, "D1 z");

    // §D3 line 936: X/Y 6 and 9 of 15, X/Y/DX 9, 5 and 1 → v = 20 at P2's lowest stake; the other
    // eleven comparisons zero (their menus repeat 6 and 9) → u = 20/12 ≈ 1.67.
    let two = [6.0 / 15.0, 9.0 / 15.0];
    let flat = json!({"two": two, "dx": two, "dy": two});
    let p2 = json!({"two": two, "dx": [9.0 / 15.0, 5.0 / 15.0], "dy": two});
    let d3 = json!({"points": [flat, flat, flat, p2, flat, flat],
                    "checks": [{"condition": "low", "two": two, "dx": two, "dy": two}]});
    let v = answer("profile-measure", &json!({"measure": "d3", "versions": vec![d3; 11]}));
    close(&v["centre"], 1.67, 0.005, "D3 u");
}

#[test]
fn profile_combine_reproduces_m04_and_the_a_centres() {
    // §M04 line 133: "averages 40 and 60 … 50. Inner ranges [30, 50] and [55, 65] give … [42.5,
    // 57.5]. Outer ranges [25, 55] and [50, 70] give [37.5, 62.5]."
    let tasks = json!([{"centre": 40, "inner": [30, 50], "outer": [25, 55]},
                       {"centre": 60, "inner": [55, 65], "outer": [50, 70]}]);
    let v = answer("profile-combine", &json!({"measure": "a1", "tasks": tasks}));
    close(&v["centre"], 50.0, 1e-12, "M");
    assert_eq!(v["inner"], json!([42.5, 57.5]));
    assert_eq!(v["outer"], json!([37.5, 62.5]));
    assert_eq!(v["weights"], json!([0.5, 0.5]));
    assert_eq!(v["tasks"], json!(["dictator giving", "ultimatum proposal"]));
    // The same with the weights given instead of the measure.
    let w = answer("profile-combine", &json!({"weights": [0.5, 0.5], "tasks": tasks}));
    assert_eq!(
        (w["centre"].clone(), w["inner"].clone(), w["outer"].clone()),
        (v["centre"].clone(), v["inner"].clone(), v["outer"].clone())
    );
    assert_eq!(w["measure"], Value::Null);
    // §A2 line 333: "The A2 center is therefore (60+40+20)/3=40."
    let at = |m: f64| json!({"centre": m, "inner": [m, m], "outer": [m, m]});
    let v = answer("profile-combine", &json!({"measure": "a2", "tasks": [at(60.0), at(40.0), at(20.0)]}));
    close(&v["centre"], 40.0, 1e-12, "M_A2");
    // §A5 line 429: "task centers of 50 and 60. The A5 center is (50+60)/2=55."
    let v = answer("profile-combine", &json!({"measure": "a5", "tasks": [at(50.0), at(60.0)]}));
    close(&v["centre"], 55.0, 1e-12, "M_A5");
    // A task whose check is unavailable: its outer range is null, and so is the combined one
    // (the profile methods' rule for categories E and F, carried to the combination); the
    // centre and the inner range combine as before.
    let tasks = json!([{"centre": 40, "inner": [30, 50], "outer": [25, 55]},
                       {"centre": 60, "inner": [55, 65], "outer": null}]);
    let v = answer("profile-combine", &json!({"measure": "a1", "tasks": tasks}));
    close(&v["centre"], 50.0, 1e-12, "M");
    assert_eq!((v["inner"].clone(), v["outer"].clone()), (json!([42.5, 57.5]), Value::Null));
    assert_eq!(v["outer_unavailable_in"], json!([1]));
}

#[test]
fn gr_open_takes_unequal_counts_and_says_it_is_outside_the_protocol() {
    // scipy.stats.wasserstein_distance([1, 2, 3, 4], [2, 2, 7]) = 1.5.
    let v = answer("gr-open", &json!({"reference": [1, 2, 3, 4], "check": [2, 2, 7], "seed": 1, "resamples": 100}));
    close(&v["w1"], 1.5, 1e-12, "W1");
    assert_eq!((v["n"].clone(), v["n_check"].clone()), (json!(4), json!(3)));
    assert!(v["protocol"].as_str().is_some_and(|p| p.contains("outside GR's thirty-each protocol")), "{v}");
}

#[test]
fn samples_per_arm_takes_a_rate_of_zero() {
    // (z_0.975 + z_0.8)² · 0.1 · 0.9 / 0.1² = 70.639918 (scipy.stats.norm.ppf) → 71 per arm.
    let v = answer("samples-per-arm", &json!({"p1": 0.1, "p0": 0.0}));
    assert_eq!(v["n_independent"], json!(71), "{v}");
}

#[test]
fn gr_open_reproduces_the_w1_example() {
    // §GR1 lines 1620–1622: all thirty reference answers $5; the check $0 fifteen times and $10
    // fifteen times: Δμ = 0, W₁ = 5. Every resample is again $5 away rank by rank, so W₁'s
    // bootstrap interval is [5, 5].
    let mut check = vec![0; 15];
    check.extend([10; 15]);
    let input = json!({"reference": vec![5; 30], "check": check, "model": "fake", "condition": "OE-PL1"});
    let v = answer("gr-open", &input);
    close(&v["mean_shift"], 0.0, 1e-12, "Δμ");
    close(&v["w1"], 5.0, 1e-12, "W1");
    assert_eq!(v["w1_ci"], json!([5.0, 5.0]));
    assert!(num(&v["mean_shift_ci"][0]) < 0.0 && num(&v["mean_shift_ci"][1]) > 0.0, "{v}");
    assert_eq!((v["n"].clone(), v["resamples"].clone()), (json!(30), json!(10_000)));
    assert_eq!(v["counts_reference"][5], 30);
    assert_eq!((v["counts_check"][0].clone(), v["counts_check"][10].clone()), (json!(15), json!(15)));
    assert_eq!((v["model"].clone(), v["condition"].clone()), (json!("fake"), json!("OE-PL1")));
    // Deterministic: the same model and condition, the same seed and interval; the seed given
    // back as a number gives them too.
    assert_eq!(answer("gr-open", &input), v);
    let by_seed =
        answer("gr-open", &json!({"reference": input["reference"], "check": input["check"], "seed": v["seed"]}));
    assert_eq!(by_seed["mean_shift_ci"], v["mean_shift_ci"]);
    let other = answer(
        "gr-open",
        &json!({"reference": input["reference"], "check": input["check"],
                                         "model": "fake", "condition": "OE-PLX"}),
    );
    assert_ne!(other["seed"], v["seed"]);
}

#[test]
fn gr_binary_reproduces_the_newcombe_example() {
    // §GR2 lines 1638–1642: 18/30 vs 24/30: Δp = 0.2 (+20 points); Wilson [0.4232, 0.7541] and
    // [0.6269, 0.9049]; Newcombe [−0.0317, 0.4056], displayed as [−3.17, 40.56].
    let v = answer(
        "gr-binary",
        &json!({"reference": {"equal": 18, "self_only": 12}, "check": {"equal": 24, "self_only": 6}}),
    );
    close(&v["delta_p"], 0.2, 1e-12, "Δp");
    close(&v["delta_points"], 20.0, 1e-9, "points");
    for (got, want) in [
        (&v["wilson_reference"][0], 0.4232),
        (&v["wilson_reference"][1], 0.7541),
        (&v["wilson_check"][0], 0.6269),
        (&v["wilson_check"][1], 0.9049),
        (&v["ci"][0], -0.0317),
        (&v["ci"][1], 0.4056),
    ] {
        close(got, want, 0.5e-4, "four decimals");
    }
    close(&v["ci_points"][0], -3.17, 0.005, "points low");
    close(&v["ci_points"][1], 40.56, 0.005, "points high");
}

#[test]
fn samples_per_arm_reproduces_seed_003() {
    // The SUVA audit paper Table 240.4 (lines 318–323), baseline 0.40, two-sided α 0.05, power 0.8:
    // independent 95, 385, 1531.
    for (p1, n) in [(0.60, 95), (0.50, 385), (0.45, 1531)] {
        let v = answer("samples-per-arm", &json!({"p1": p1, "p0": 0.40}));
        assert_eq!(v["n_independent"], n, "{v}");
        assert_eq!(v["deff"], 1.0);
    }
    // The clustered 188 with "design effect = 1.99" (line 316).
    let v = answer("samples-per-arm", &json!({"p1": 0.60, "p0": 0.40, "deff": 1.99}));
    assert_eq!(v["n_clustered"], 188);
    // Line 914: "n per arm 0.45 vs 0.30, deff 1.8: 288", deff = design_effect(5, 0.2).
    let v = answer("samples-per-arm", &json!({"p1": 0.45, "p0": 0.30, "replicates": 5, "icc": 0.2}));
    close(&v["deff"], 1.8, 1e-12, "deff");
    assert_eq!(v["n_clustered"], 288);
    // ρ estimated per arm and averaged (lines 292–307); states with identical means have ρ = 0.
    let v = answer("samples-per-arm", &json!({"p1": 0.45, "p0": 0.30, "arms": [[[0, 1], [1, 0]], [[1, 0], [0, 1]]]}));
    assert_eq!((v["icc"].clone(), v["deff"].clone(), v["replicates"].clone()), (json!(0.0), json!(1.0), json!(2.0)));
    assert_eq!(v["icc_by_arm"].as_array().map(Vec::len), Some(2));
}

#[test]
fn bad_input_is_refused_naming_the_field() {
    let eleven = json!(m04_reference()).to_string();
    let a = r#"{"points": [20, 40, 60], "checks": [{"condition": "middle", "values": [70]}]}"#;
    let versions = |v: &str, n: usize| vec![v; n].join(", ");
    let task = r#"{"centre": 40, "inner": [30, 50], "outer": [25, 55]}"#;
    for (test, input, needles) in [
        ("profile-range", r#"{"reference": [], "checked": [1]}"#.to_string(), &["`reference`", "empty"][..]),
        ("profile-range", format!(r#"{{"reference": {eleven}, "checked": []}}"#), &["`checked`", "empty"]),
        ("profile-range", r#"{"reference": [1, 2, 3], "checked": [1]}"#.to_string(), &["`reference`", "eleven"]),
        (
            "profile-range",
            format!(r#"{{"reference": {eleven}, "checked": [1, 1e999]}}"#),
            &["`checked`", "out of range"],
        ),
        ("profile-range", format!(r#"{{"reference": {eleven}}}"#), &["`checked`"]),
        (
            "profile-measure",
            format!(r#"{{"measure": "a", "versions": [{}]}}"#, versions(a, 10)),
            &["`versions`", "eleven"],
        ),
        (
            "profile-measure",
            format!(r#"{{"measure": "e1", "versions": [{}]}}"#, versions(a, 11)),
            &["`measure`", "unknown variant"],
        ),
        (
            "profile-measure",
            format!(r#"{{"measure": "c1", "versions": [{}]}}"#, versions(a, 11)),
            &["`versions[0].points`", "27 points"],
        ),
        (
            "profile-measure",
            format!(r#"{{"measure": "a", "versions": [{}, {{"points": [20, 40, 160]}}]}}"#, versions(a, 10)),
            &["`versions[10].points[2]`", "outside"],
        ),
        (
            "profile-measure",
            format!(
                r#"{{"measure": "a", "versions": [{}, {{"points": [20, 40, 60], "check": []}}]}}"#,
                versions(a, 10)
            ),
            &["`versions[10]`", "unknown field `check`"],
        ),
        (
            "profile-measure",
            format!(r#"{{"measure": "a", "versions": [{}]}}"#, versions(r#"{"points": [20, 40, 60]}"#, 11)),
            &["`versions[].checks`", "no version has a check"],
        ),
        (
            "profile-combine",
            format!(r#"{{"weights": [0.5, 0.4], "tasks": [{task}, {task}]}}"#),
            &["`weights`", "sum to"],
        ),
        ("profile-combine", format!(r#"{{"measure": "a2", "tasks": [{task}, {task}]}}"#), &["`tasks`", "3 task"]),
        ("profile-combine", r#"{"measure": "a1", "tasks": []}"#.to_string(), &["`tasks`"]),
        (
            "profile-combine",
            format!(r#"{{"weights": [1], "tasks": [{task}, {task}]}}"#),
            &["`tasks`", "2 tasks for 1 weights"],
        ),
        ("profile-combine", format!(r#"{{"tasks": [{task}]}}"#), &["`measure`"]),
        (
            "profile-combine",
            r#"{"measure": "a3", "tasks": [{"centre": 60, "inner": [30, 50], "outer": [25, 55]}]}"#.to_string(),
            &["`tasks[0].centre`", "outside the inner range"],
        ),
        ("gr-open", r#"{"reference": [], "check": [], "seed": 1}"#.to_string(), &["`reference`", "empty"]),
        ("gr-open", r#"{"reference": [5, 11], "check": [5, 5], "seed": 1}"#.to_string(), &["`reference[1]`", "$11"]),
        ("gr-open", r#"{"reference": [5, 2.5], "check": [5, 5], "seed": 1}"#.to_string(), &["`reference`"]),
        ("gr-open", r#"{"reference": [5, 5], "check": [5, 5]}"#.to_string(), &["`model`", "20260826"]),
        ("gr-open", r#"{"reference": [5, 5], "check": [5, 5], "model": "m"}"#.to_string(), &["`condition`"]),
        (
            "gr-binary",
            r#"{"reference": {"equal": 0, "self_only": 0}, "check": {"equal": 24, "self_only": 6}}"#.to_string(),
            &["`reference`", "no answers"],
        ),
        (
            "gr-binary",
            r#"{"reference": {"equal": 18}, "check": {"equal": 24, "self_only": 6}}"#.to_string(),
            &["missing field `self_only`"],
        ),
        ("samples-per-arm", r#"{"p1": 0.4, "p0": 0.4}"#.to_string(), &["`p1`", "no gap"]),
        ("samples-per-arm", r#"{"p1": 1.4, "p0": 0.4}"#.to_string(), &["`p1`"]),
        (
            "samples-per-arm",
            r#"{"p1": 0.6, "p0": 0.4, "deff": 1.5, "icc": 0.2}"#.to_string(),
            &["`deff`", "not several"],
        ),
        ("samples-per-arm", r#"{"p1": 0.6, "p0": 0.4, "replicates": 5}"#.to_string(), &["`icc`"]),
        ("samples-per-arm", r#"{"p1": 0.6, "p0": 0.4, "arms": []}"#.to_string(), &["`arms`", "empty"]),
        (
            "samples-per-arm",
            r#"{"p1": 0.6, "p0": 0.4, "arms": [[[1, 1], [1, 1]]]}"#.to_string(),
            &["`arms[0].states`", "undefined"],
        ),
        ("samples-per-arm", r#"{"p1": 0.6, "p0": 0.4, "deff": 1e999}"#.to_string(), &["`deff`", "out of range"]),
    ] {
        assert_stats_refused(test, &input, needles);
    }
}

/// A resample count beyond the declared bound is refused with its memory figure before anything
/// is allocated (10¹² used to abort on allocation); a normal count runs.
#[test]
fn resamples_beyond_the_bound_are_refused_with_their_memory_figure() {
    let o = agora_stats(
        "gr-open",
        &json!({"reference": [1, 2, 3, 4], "check": [1, 2, 3, 5], "resamples": 1_000_000_000_000u64, "seed": 1})
            .to_string(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("`resamples`: 1000000000000; 1 to 1000000") && text(&o).contains("8000.0 GB"),
        "{}",
        text(&o)
    );
    let o = agora_stats(
        "gr-open",
        &json!({"reference": [1, 2, 3, 4], "check": [1, 2, 3, 5], "resamples": 200, "seed": 1}).to_string(),
    );
    assert!(o.status.success(), "{}", text(&o));
}
