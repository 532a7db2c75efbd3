//! The analysis's mean interval against scipy's t interval (the reference values the statistics
//! crate's script made, `stats/tests/reference.json`).

#[path = "../../stats/tests/common/mod.rs"]
mod common;
use common::{call, close, floats, reference};

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
