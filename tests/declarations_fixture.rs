//! The analysis crate reads the games' declarations from the store, as the engine records them,
//! and never imports the games; its tests read them from a fixture
//! (`analysis/tests/fixtures/declarations.json`). This test holds the fixture to this build's
//! games: where a game's declaration changes, it fails and says how to write the fixture anew
//! (`AGORA_BLESS=1 cargo test --test declarations_fixture`).

use std::path::Path;

#[test]
fn the_analysis_fixture_holds_this_builds_declarations() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("analysis/tests/fixtures/declarations.json");
    let now = serde_json::to_value(agora_environments::declarations()).expect("the declarations serialise");
    let text = serde_json::to_string_pretty(&now).expect("json") + "\n";
    if std::env::var_os("AGORA_BLESS").is_some() {
        std::fs::write(&path, &text).expect("write the fixture");
    }
    let fixture: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("the fixture")).expect("the fixture is JSON");
    assert_eq!(
        fixture, now,
        "analysis/tests/fixtures/declarations.json is not this build's declarations; \
         write it anew with AGORA_BLESS=1 cargo test --test declarations_fixture"
    );
}
