//! The admin export lists each participant of the study with their stage, consent and seat, in
//! the order they joined, and nothing that identifies them (no code, no pool id).

mod common;

use common::*;
use serde_json::Value;

#[test]
fn the_admin_export_lists_participants_in_order_with_their_stage_and_no_code() {
    let (_dir, s) = serve_people("people-export", 2, 60, 60, None);
    let store = s.store.clone();
    let base = s.base.clone();
    let export = s.rt.block_on(async {
        let c = client();
        let codes = codes(&base, 2).await;
        // The first declines, the second agrees.
        let r = c.post(format!("{base}/p/{}/consent", codes[0])).form(&[("agree", "no")]).send().await.expect("s");
        assert_eq!(r.status(), 303);
        let r = c.post(format!("{base}/p/{}/consent", codes[1])).form(&[("agree", "yes")]).send().await.expect("s");
        assert_eq!(r.status(), 303);
        let r = c.get(format!("{base}/admin/api/export")).bearer_auth(TOKEN).send().await.expect("s");
        assert_eq!(r.status(), 200);
        let body = r.text().await.expect("t");
        for code in &codes {
            assert!(!body.contains(code.as_str()), "the export holds no code: {body}");
        }
        serde_json::from_str::<Value>(&body).expect("json")
    });
    assert_eq!(export["study"], "people-export");
    let listed = export["participants"].as_array().expect("a list");
    assert_eq!(listed.len(), 2, "{export}");
    let stored: Vec<(String, String)> = rows(
        &store,
        "SELECT participant_id, stage FROM serve_participants ORDER BY created_at, participant_id",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    );
    for (row, (id, stage)) in listed.iter().zip(&stored) {
        assert_eq!(row["participant"], id.as_str());
        assert_eq!(row["stage"], stage.as_str());
    }
    let stages: Vec<&str> = listed.iter().map(|p| p["stage"].as_str().expect("stage")).collect();
    assert!(stages.contains(&"released") && stages.contains(&"instructions"), "{stages:?}");
    let consented: Vec<bool> = listed.iter().map(|p| !p["consent_at"].is_null()).collect();
    assert_eq!(consented.iter().filter(|c| **c).count(), 1, "{export}");
    assert!(listed.iter().all(|p| p["seat"].is_null() && p["completion_code"].is_null()), "{export}");
}
