//! Dashboard test steps shared by the browser tests.

use super::HubProcess;
use super::browser::Browser;

/// Signs in on the login page with `token` and waits for the fleet page.
pub fn sign_in(browser: &Browser, hub: &HubProcess, token: &str) {
    browser.goto(&format!("{}/ui/", hub.server()));
    browser.wait_for("the login form", 30, || browser.find("#token"));
    browser.type_into("#token", token);
    browser.click("#sign-in");
    browser.wait_for_text("#who", "read-only", 30);
}
