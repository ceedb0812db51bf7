//! The test browser harness itself, against a one-page HTTP server in the test: headless
//! Chromium loads the page, takes typed input and a click, and the harness sees the delayed
//! change, runs scripts, reads the console and saves screenshots; a wait that times out leaves
//! a screenshot and reports the page's text.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::panic::{AssertUnwindSafe, catch_unwind};

use common::browser::{Browser, artifacts_dir};
use serde_json::json;

/// A page whose button, 300 ms after a click, greets the name typed into its input (and logs
/// a console error, for `console_errors`).
const PAGE: &str = r#"<!doctype html>
<html>
<head><title>Harness page</title></head>
<body>
  <input id="name">
  <button id="go">Greet</button>
  <p id="out">waiting</p>
  <script>
    document.getElementById("go").addEventListener("click", () => {
      const name = document.getElementById("name").value;
      console.error("greeting " + name);
      setTimeout(() => {
        document.getElementById("out").textContent = "hello " + name;
      }, 300);
    });
  </script>
</body>
</html>
"#;

/// Serves `PAGE` at `/` (and 404 elsewhere) on a loopback port from a background thread;
/// returns the page's URL.
fn serve_page() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().expect("clone stream"));
            let mut request_line = String::new();
            let _ = reader.read_line(&mut request_line);
            // Skip the headers; the browser sends no body with GET.
            let mut header = String::new();
            while reader.read_line(&mut header).is_ok_and(|n| n > 2) {
                header.clear();
            }
            let (status, body) = if request_line.starts_with("GET / ") {
                ("200 OK", PAGE)
            } else {
                ("404 Not Found", "not found")
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    url
}

#[test]
fn the_harness_drives_headless_chromium() {
    let url = serve_page();
    let artifacts = artifacts_dir("browser_harness");
    let browser = Browser::start(&artifacts);

    browser.goto(&url);
    assert_eq!(browser.url(), url);
    assert_eq!(browser.text("#out").as_deref(), Some("waiting"));
    assert!(browser.find("#missing").is_none());
    let texts: Vec<String> = browser
        .find_all("button, p")
        .iter()
        .map(|e| e.text())
        .collect();
    assert_eq!(texts, ["Greet", "waiting"]);

    browser.type_into("#name", "fleet");
    browser.click("#go");
    assert_eq!(browser.wait_for_text("#out", "hello", 10), "hello fleet");

    assert_eq!(
        browser.execute("return document.title", &[]),
        "Harness page"
    );
    let sum = browser.execute("return arguments[0] + arguments[1]", &[json!(2), json!(3)]);
    assert_eq!(sum, 5);
    let errors = browser.console_errors();
    assert!(
        errors.iter().any(|e| e.contains("greeting fleet")),
        "console errors: {errors:?}"
    );

    let png = std::fs::read(browser.screenshot("greeted")).expect("read the screenshot");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");

    // A wait that times out saves a screenshot and says what the page shows instead.
    let timeout = catch_unwind(AssertUnwindSafe(|| {
        browser.wait_for_text("#out", "goodbye", 1)
    }));
    let panic = timeout.expect_err("waiting for text that never comes times out");
    let message = panic
        .downcast_ref::<String>()
        .expect("a formatted panic message");
    assert!(message.contains("hello fleet"), "{message}");
    let screenshot = artifacts.join("timeout-_out_shows_goodbye.png");
    assert!(screenshot.is_file(), "{message}");
}
