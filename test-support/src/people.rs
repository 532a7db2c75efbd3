//! The people's side of `agora serve` as tests drive it over HTTP: a client that follows no
//! redirect (each step is checked), the administrator's session codes and a participant's
//! state.

use std::time::Duration;

use serde_json::Value;

/// An HTTP client that does not follow redirects and gives up on a request after 30 s.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client")
}

/// Creates `n` session codes through the admin API of the server at `base`, authorised by
/// `token`.
pub async fn codes(base: &str, token: &str, n: usize) -> Vec<String> {
    let r = client()
        .post(format!("{base}/admin/api/sessions"))
        .bearer_auth(token)
        .json(&serde_json::json!({ "count": n }))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200, "creating session codes");
    let v: Value = r.json().await.expect("json");
    v["codes"].as_array().expect("codes").iter().map(|c| c.as_str().expect("code").to_string()).collect()
}

/// Where the participant of `code` is (`/p/{code}/state`).
pub async fn state(base: &str, code: &str) -> Value {
    client().get(format!("{base}/p/{code}/state")).send().await.expect("state").json().await.expect("json")
}
