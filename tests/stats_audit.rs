//! `agora stats` for the transcript audit's statistics (kappa, ols-cr1, fe-cr1, logit-ame,
//! occurrence): JSON in, JSON out, answers equal to the statsmodels/scikit-learn reference
//! values end to end, and bad input refused with a message naming the field and exit code 2.

use serde_json::{json, Value};

mod common;
use common::{answer, assert_stats_refused};

fn reference() -> Value {
    serde_json::from_str(include_str!("../stats/tests/reference.json")).expect("reference.json parses")
}

fn assert_close(got: &Value, want: &Value, rel: f64, what: &str) {
    let (g, w) = (got.as_array().expect("array"), want.as_array().expect("array"));
    assert_eq!(g.len(), w.len(), "{what}");
    for (g, w) in g.iter().zip(w) {
        let (g, w) = (g.as_f64().expect("number"), w.as_f64().expect("number"));
        assert!((g - w).abs() <= 1e-12_f64.max(rel * w.abs()), "{what}: got {g}, reference {w}");
    }
}

#[test]
fn kappa_answers_the_reference_with_recall_and_confusion() {
    // The SUVA audit paper §240.14: κ = 0.6098.
    let v = answer("kappa", &json!({"y1": [0, 0, 1, 1, 2, 2, 0, 1], "y2": [0, 1, 1, 1, 2, 0, 0, 1]}));
    assert!((v["kappa"].as_f64().expect("kappa") - 0.6098).abs() < 5e-5, "{v}");
    assert_eq!(v["labels"], json!([0, 1, 2]));
    assert_eq!(v["confusion"], json!([[2, 1, 0], [0, 3, 0], [1, 0, 1]]));
    // The coder case of the reference: a code with zero recall, one the reference never uses
    // (recall null) and one neither uses.
    let e = &reference()["kappa"][1];
    let v = answer("kappa", &json!({"y1": e["y1"], "y2": e["y2"], "labels": e["labels"]}));
    assert_eq!(v["labels"], e["all_labels"]);
    assert_eq!(v["confusion"], e["confusion"]);
    assert_eq!(v["recall"], e["recall"]);
    assert_close(
        &json!([v["kappa"], v["se"], v["ci_low"], v["ci_high"]]),
        &json!([e["kappa"], e["se"], e["ci_low"], e["ci_high"]]),
        1e-9,
        "kappa",
    );
    let competition =
        e["all_labels"].as_array().expect("labels").iter().position(|l| l == "competition").expect("code");
    assert_eq!(v["recall"][competition], 0.0);
}

#[test]
fn ols_cr1_answers_the_reference() {
    // The SUVA audit paper §240.14: coef (1.0417, 0.9167), CR1 se (0.2503, 0.0579).
    let v = answer(
        "ols-cr1",
        &json!({"x": [[0], [1], [2], [3], [4], [5], [6], [7]], "y": [1.0, 2.5, 2.0, 4.5, 4.0, 6.5, 5.5, 8.0],
                "clusters": [0, 0, 1, 1, 2, 2, 3, 3], "names": ["round"]}),
    );
    assert_eq!(v["names"], json!(["intercept", "round"]));
    let four_digits = |got: &Value, want: [f64; 2]| {
        for (g, w) in got.as_array().expect("array").iter().zip(want) {
            assert!((g.as_f64().expect("number") - w).abs() < 5e-5, "{g} against the seed's {w}");
        }
    };
    four_digits(&v["coef"], [1.0417, 0.9167]);
    four_digits(&v["se"], [0.2503, 0.0579]);
    assert_eq!(
        (v["n"].clone(), v["k"].clone(), v["clusters"].clone(), v["df"].clone()),
        (json!(8), json!(2), json!(4), json!(3.0))
    );
    for e in reference()["ols_cr1"].as_array().expect("cases") {
        let v = answer(
            "ols-cr1",
            &json!({"x": e["x"], "y": e["y"], "clusters": e["clusters"], "intercept": e["intercept"]}),
        );
        for key in ["coef", "se", "t", "p", "ci_low", "ci_high"] {
            assert_close(&v[key], &e[key], 1e-8, key);
        }
    }
}

#[test]
fn fe_cr1_answers_the_reference_and_says_which_convention() {
    for e in reference()["fe_cr1"].as_array().expect("cases") {
        let mut input = json!({"x": e["x"], "y": e["y"], "groups": e["groups"]});
        if !e["clusters"].is_null() {
            input["clusters"] = e["clusters"].clone();
        }
        let auto = answer("fe-cr1", &input);
        assert_eq!(auto["convention"], e["auto"]);
        assert_eq!(auto["nested"], e["auto"] == "within");
        for convention in ["dummies", "within"] {
            input["df"] = json!(convention);
            let v = answer("fe-cr1", &input);
            assert_eq!(v["convention"], convention);
            for key in ["coef", "se", "t", "p", "ci_low", "ci_high"] {
                assert_close(&v[key], &e[convention][key], 1e-8, &format!("{convention} {key}"));
            }
        }
    }
}

#[test]
fn logit_ame_answers_the_reference() {
    for e in reference()["logit_ame"].as_array().expect("cases") {
        let mut input = json!({"x": e["x"], "y": e["y"], "intercept": e["intercept"]});
        if !e["clusters"].is_null() {
            input["clusters"] = e["clusters"].clone();
        }
        let v = answer("logit-ame", &input);
        for key in ["coef", "se", "p", "ame", "ame_se", "ame_p", "ame_ci_low", "ame_ci_high"] {
            assert_close(&v[key], &e[key], 1e-8, key);
        }
    }
}

#[test]
fn occurrence_counts_responses_stating_each_code() {
    let v = answer(
        "occurrence",
        &json!({"responses": [["fairness", "understanding", "fairness"], [], ["self_interest"], ["fairness"]],
                "codes": ["fairness", "self_interest", "altruism", "understanding"]}),
    );
    assert_eq!(v["count"], json!([2, 1, 0, 1]));
    assert_eq!(v["share"], json!([0.5, 0.25, 0.0, 0.25]));
    let e = &reference()["occurrence"][0];
    let v = answer("occurrence", &json!({"responses": e["responses"], "codes": e["codes"]}));
    assert_eq!(v["count"], e["count"]);
    assert_close(&v["low"], &e["low"], 1e-9, "wilson low");
}

#[test]
fn bad_input_is_refused_naming_the_field() {
    for (test, input, needles) in [
        ("kappa", r#"{"y1": [1, 2, 3], "y2": [1, 2]}"#, &["`y1` and `y2` differ in length"][..]),
        ("kappa", r#"{"y1": [], "y2": []}"#, &["`y1`"]),
        ("kappa", r#"{"y1": [1.5, 2], "y2": [1, 2]}"#, &["`y1`[0]", "string or an integer"]),
        ("kappa", r#"{"y1": ["a", "a"], "y2": ["a", "a"]}"#, &["undefined"]),
        ("kappa", r#"{"y1": ["a", "b"], "y2": ["a", "c"], "labels": ["a", "b"]}"#, &["`y2`", "\"c\""]),
        (
            "ols-cr1",
            r#"{"x": [[1], [2], [3]], "y": [1, 2, 4], "clusters": ["a", "a", "a"]}"#,
            &["`clusters`", "two clusters"],
        ),
        (
            "ols-cr1",
            r#"{"x": [[1, 2], [2, 4], [3, 6], [4, 8]], "y": [1, 2, 4, 3], "clusters": [1, 1, 2, 2]}"#,
            &["`x`", "`x2`", "collinear"],
        ),
        ("ols-cr1", r#"{"x": [[1], [2], [3]], "y": [1, 2], "clusters": [1, 2, 2]}"#, &["`x` and `y` differ in length"]),
        ("ols-cr1", r#"{"x": [], "y": [], "clusters": []}"#, &["`y`"]),
        (
            "ols-cr1",
            r#"{"x": [[], [], []], "y": [1, 2, 4], "clusters": [1, 2, 2], "intercept": false}"#,
            &["`x`", "no regressor"],
        ),
        (
            "ols-cr1",
            r#"{"x": [[1], [2], [3], [4]], "y": [1, 1e999, 3, 4], "clusters": [1, 1, 2, 2]}"#,
            &["`y`", "out of range"],
        ),
        ("ols-cr1", r#"{"x": [[1], [2, 3]], "y": [1, 2], "clusters": [1, 2]}"#, &["`x`", "row 1"]),
        (
            "ols-cr1",
            r#"{"x": [[1], [2], [3]], "y": [1, 2, 4], "clusters": [1, 2, 2], "names": ["a", "b"]}"#,
            &["`names`"],
        ),
        ("ols-cr1", r#"{"x": [[1], [2], [3]], "y": [1, 2, 4], "clusters": [1, 2, 2], "extra": 1}"#, &["extra"]),
        (
            "fe-cr1",
            r#"{"x": [[1, 0], [2, 0], [3, 1], [4, 1]], "y": [1, 2, 4, 3], "groups": [0, 0, 1, 1]}"#,
            &["`x2`", "does not vary within any group"],
        ),
        ("fe-cr1", r#"{"x": [[1], [2], [3]], "y": [1, 2, 4], "groups": [5, 5, 5]}"#, &["`groups`", "two clusters"]),
        (
            "fe-cr1",
            r#"{"x": [[1], [2], [3], [5]], "y": [1, 2, 4, 3], "groups": [0, 0, 1, 1], "df": "areg"}"#,
            &["`df`", "unknown variant"],
        ),
        ("logit-ame", r#"{"x": [[1], [2], [3], [4], [5], [6]], "y": [0, 0, 0, 1, 1, 1]}"#, &["`y`", "separated"]),
        ("logit-ame", r#"{"x": [[1], [2], [3], [4]], "y": [0, 0.5, 1, 1]}"#, &["`y`", "0 or 1"]),
        (
            "logit-ame",
            r#"{"x": [[1], [2], [3], [4], [5]], "y": [0, 1, 0, 1, 1], "clusters": [1, 1, 1, 1, 1]}"#,
            &["`clusters`"],
        ),
        ("occurrence", r#"{"responses": [["a"], ["b"]], "codes": ["a"]}"#, &["`responses`", "\"b\""]),
        ("occurrence", r#"{"responses": []}"#, &["`responses`"]),
    ] {
        assert_stats_refused(test, input, needles);
    }
}
