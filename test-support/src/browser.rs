//! Headless Chromium for the browser checks of the report and the participant pages.

use std::path::Path;

/// The flags every browser check starts Chromium with: headless, no sandbox or GPU, nothing
/// fetched from the network in the background, no first-run pages.
pub const HEADLESS: [&str; 7] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
];

/// The installed Chromium, if any. Where none is installed the browser checks are skipped with
/// a message — except under AGORA_REQUIRE_BROWSER (set by CI, which installs Chromium).
pub fn chromium() -> Option<&'static str> {
    let found = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].into_iter().find(|p| Path::new(p).exists());
    if found.is_none() {
        assert!(std::env::var_os("AGORA_REQUIRE_BROWSER").is_none(), "AGORA_REQUIRE_BROWSER is set but no chromium");
        eprintln!("browser check not run: no chromium installed");
    }
    found
}
