//! The analysis's mean interval against scipy's t interval (the reference values the statistics
//! crate's script made, `stats/tests/reference.json`).

use serde_json::Value;

fn reference() -> Value {
    serde_json::from_str(include_str!("../../stats/tests/reference.json")).expect("reference.json parses")
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array().expect("array").iter().map(|x| x.as_f64().expect("number")).collect()
}

fn close(got: f64, want: f64, rel: f64, abs: f64, call: &str) {
    let ok = (got - want).abs() <= abs.max(rel * want.abs());
    assert!(ok, "got {got}, reference {want} from `{call}`");
}

fn call(e: &Value) -> String {
    e["call"].as_str().unwrap_or("?").to_string()
}

#[test]
fn mean_interval_matches_scipy_t_interval() {
    use agora_analysis::analyze::MeanInterval;
    let cases = reference()["mean_interval"].as_array().expect("cases").clone();
    assert!(!cases.is_empty());
    for e in &cases {
        let m = MeanInterval::of(&floats(&e["x"])).expect("non-empty");
        let c = call(e);
        close(m.mean, e["mean"].as_f64().expect("mean"), 1e-12, 1e-12, &c);
        close(m.low.expect("n >= 2"), e["low"].as_f64().expect("low"), 1e-9, 1e-12, &c);
        close(m.high.expect("n >= 2"), e["high"].as_f64().expect("high"), 1e-9, 1e-12, &c);
    }
    assert!(MeanInterval::of(&[]).is_none());
    let one = MeanInterval::of(&[0.4]).expect("one value");
    assert_eq!((one.mean, one.low, one.high), (0.4, None, None));
}
