//! A small WebDriver client: Debian's headless Chromium driven through chromedriver, spoken to
//! with the W3C WebDriver JSON protocol over a minimal blocking HTTP/1.1 client, so tests can
//! load the hub's dashboard (self-signed certificate and all) and check what a user would see.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};

/// The key under which W3C WebDriver wraps a reference to a page element.
const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";

/// How long one chromedriver request may take before the test gives up on it (page loads and
/// scripts are limited to 30 s by the session's own timeouts).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(90);

/// A fresh directory for test `name`'s screenshots and logs: `target/test-artifacts/NAME/`,
/// emptied of what an earlier run left there, so a failed run's evidence is easy to find.
pub fn artifacts_dir(name: &str) -> PathBuf {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("CARGO_TARGET_TMPDIR lies inside the target directory");
    let dir = target.join("test-artifacts").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the artifacts directory");
    dir
}

/// A headless Chromium session driven through its own chromedriver process; dropping it ends
/// the session (closing Chromium) and stops chromedriver.
pub struct Browser {
    driver: Child,
    port: u16,
    session: String,
    artifacts: PathBuf,
    /// Chromium's profile, deleted with the browser.
    _profile: tempfile::TempDir,
}

/// A reference to an element of the current page, valid until the page replaces that element.
pub struct Element<'a> {
    browser: &'a Browser,
    id: String,
}

/// A request chromedriver refused: its HTTP status and W3C error code and message.
#[derive(Debug)]
struct WebDriverError {
    status: u16,
    error: String,
    message: String,
}

impl Browser {
    /// Starts chromedriver on a free loopback port and opens a headless Chromium session that
    /// accepts self-signed certificates, with a fresh profile. `chromium` and `chromedriver`
    /// are taken from PATH, installing Debian's `chromium chromium-driver` packages if either
    /// is missing. Screenshots and chromedriver's log (`chromedriver.log`) go to `artifacts`.
    /// Panics, explaining why, if the browser cannot be started.
    pub fn start(artifacts: &Path) -> Browser {
        let (chromium, chromedriver) = locate_or_install();
        std::fs::create_dir_all(artifacts).expect("create the artifacts directory");
        let profile_dir = tempfile::tempdir().expect("tempdir for the Chromium profile");
        let profile = format!("--user-data-dir={}", profile_dir.path().display());
        let args = [
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-quic",
            "--no-first-run",
            // Keep Chromium from calling home (update checks, field trials, sync): on a
            // closed network those connections are refused.
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1400,1000",
            &profile,
        ];
        let (driver, port) = start_driver(&chromedriver, artifacts);
        let mut browser = Browser {
            driver,
            port,
            session: String::new(),
            artifacts: artifacts.to_path_buf(),
            _profile: profile_dir,
        };
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "acceptInsecureCerts": true,
            "timeouts": {"pageLoad": 30_000, "script": 30_000, "implicit": 0},
            "goog:loggingPrefs": {"browser": "ALL"},
            "goog:chromeOptions": {"binary": chromium, "args": args},
        }}});
        let created = browser
            .try_request("POST", "/session", Some(&capabilities))
            .unwrap_or_else(|error| {
                panic!(
                    "chromedriver could not start Chromium ({}): {error:?}\n\
                     see {}/chromedriver.log",
                    chromium.display(),
                    artifacts.display()
                )
            });
        browser.session = created["sessionId"]
            .as_str()
            .expect("new session has an id")
            .to_owned();
        browser
    }

    /// Loads `url` in the window, returning once the page has loaded.
    pub fn goto(&self, url: &str) {
        self.command("POST", "url", json!({ "url": url }));
    }

    /// The URL of the page now shown (after any redirects or client-side navigation).
    pub fn url(&self) -> String {
        let url = self.command("GET", "url", Value::Null);
        url.as_str().expect("the URL is a string").to_owned()
    }

    /// Runs `script` as the body of a synchronous function in the page, with `args` as
    /// `arguments`, and returns what it returns (elements come back as WebDriver references).
    /// Panics if the script throws.
    pub fn execute(&self, script: &str, args: &[Value]) -> Value {
        self.command(
            "POST",
            "execute/sync",
            json!({ "script": script, "args": args }),
        )
    }

    /// The first element matching the CSS selector `css`, if any.
    pub fn find(&self, css: &str) -> Option<Element<'_>> {
        let body = json!({ "using": "css selector", "value": css });
        match self.try_command("POST", "element", body) {
            Ok(found) => Some(self.element(&found)),
            Err(error) if error.error == "no such element" => None,
            Err(error) => panic!("finding {css:?}: {error:?}"),
        }
    }

    /// Every element matching the CSS selector `css`, in document order.
    pub fn find_all(&self, css: &str) -> Vec<Element<'_>> {
        let body = json!({ "using": "css selector", "value": css });
        let found = self.command("POST", "elements", body);
        let found = found.as_array().expect("a list of elements");
        found.iter().map(|element| self.element(element)).collect()
    }

    /// The visible text of the first element matching `css`, if there is one. An element the
    /// page replaces while it is being read is looked up again, so this is safe to poll while
    /// the page re-renders.
    pub fn text(&self, css: &str) -> Option<String> {
        for _ in 0..5 {
            let element = self.find(css)?;
            match element.try_text() {
                Ok(text) => return Some(text),
                Err(error) if error.error == "stale element reference" => continue,
                Err(error) => panic!("reading the text of {css:?}: {error:?}"),
            }
        }
        panic!("{css:?} kept being replaced while its text was read")
    }

    /// Polls `probe` every 100 ms for up to `secs` seconds and returns its first `Some`. On
    /// timeout, saves a screenshot `timeout-WHAT.png` into the artifacts directory and panics
    /// with the page's URL and text, so the failure shows what the page said instead.
    pub fn wait_for<T>(&self, what: &str, secs: u64, mut probe: impl FnMut() -> Option<T>) -> T {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            if let Some(value) = probe() {
                return value;
            }
            if Instant::now() >= deadline {
                self.timed_out(what, secs);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits up to `secs` seconds until the first element matching `css` shows text containing
    /// `needle`, and returns that element's whole text (panicking as [`Browser::wait_for`]).
    pub fn wait_for_text(&self, css: &str, needle: &str, secs: u64) -> String {
        self.wait_for(&format!("{css} shows {needle}"), secs, || {
            self.text(css).filter(|text| text.contains(needle))
        })
    }

    /// Clicks the first element matching `css` (panicking if there is none, or if something
    /// covers it).
    pub fn click(&self, css: &str) {
        self.expect(css).click();
    }

    /// Types `text` into the first element matching `css` as keystrokes (panicking if there is
    /// none, or if it does not take input).
    pub fn type_into(&self, css: &str, text: &str) {
        self.expect(css).type_text(text);
    }

    /// Saves a PNG screenshot of the window as `<artifacts>/NAME.png` and returns its path.
    pub fn screenshot(&self, name: &str) -> PathBuf {
        self.try_screenshot(name)
            .unwrap_or_else(|error| panic!("screenshot {name:?}: {error}"))
    }

    /// The messages of the errors the page reported to the console (`console.error`, uncaught
    /// exceptions, failed loads) since the session started or since the last call:
    /// chromedriver hands each log entry out only once.
    pub fn console_errors(&self) -> Vec<String> {
        let log = self.command("POST", "se/log", json!({ "type": "browser" }));
        let entries = log.as_array().expect("a list of log entries");
        entries
            .iter()
            .filter(|entry| entry["level"] == "SEVERE")
            .filter_map(|entry| entry["message"].as_str().map(str::to_owned))
            .collect()
    }

    /// The first element matching `css`, panicking if there is none.
    fn expect(&self, css: &str) -> Element<'_> {
        self.find(css)
            .unwrap_or_else(|| panic!("no element matches {css:?} on {}", self.url()))
    }

    /// The element a WebDriver reference names.
    fn element(&self, reference: &Value) -> Element<'_> {
        let id = reference[ELEMENT_KEY].as_str();
        let id = id.unwrap_or_else(|| panic!("not an element reference: {reference}"));
        Element {
            browser: self,
            id: id.to_owned(),
        }
    }

    /// Saves a screenshot, if that works, and panics after a [`Browser::wait_for`] timeout.
    fn timed_out(&self, what: &str, secs: u64) -> ! {
        let name: String = format!("timeout-{what}")
            .chars()
            .map(|c| match c {
                'a'..='z' | 'A'..='Z' | '0'..='9' | '-' | '_' => c,
                _ => '_',
            })
            .take(100)
            .collect();
        let screenshot = match self.try_screenshot(&name) {
            Ok(path) => format!("screenshot: {}", path.display()),
            Err(error) => format!("no screenshot: {error}"),
        };
        let script =
            json!({ "script": "return document.body ? document.body.innerText : ''", "args": [] });
        let page = self.try_command("GET", "url", Value::Null).ok();
        let text = self.try_command("POST", "execute/sync", script);
        let text = text.map_or_else(
            |e| format!("{e:?}"),
            |t| t.as_str().unwrap_or("").to_owned(),
        );
        panic!(
            "timed out after {secs}s waiting for {what} ({screenshot})\n\
             page {}:\n{text}",
            page.as_ref().and_then(Value::as_str).unwrap_or("?")
        )
    }

    fn try_screenshot(&self, name: &str) -> Result<PathBuf, String> {
        let png = self
            .try_command("GET", "screenshot", Value::Null)
            .map_err(|error| format!("{error:?}"))?;
        let png = base64::engine::general_purpose::STANDARD
            .decode(png.as_str().unwrap_or(""))
            .map_err(|error| error.to_string())?;
        let path = self.artifacts.join(format!("{name}.png"));
        std::fs::write(&path, png).map_err(|error| format!("{}: {error}", path.display()))?;
        Ok(path)
    }

    /// Sends a command to this session (`path` is relative to `/session/ID/`), panicking if
    /// chromedriver refuses it.
    fn command(&self, method: &str, path: &str, body: Value) -> Value {
        self.try_command(method, path, body)
            .unwrap_or_else(|error| panic!("WebDriver {method} {path}: {error:?}"))
    }

    fn try_command(&self, method: &str, path: &str, body: Value) -> Result<Value, WebDriverError> {
        // W3C wants a JSON object as the body of every POST, even one without parameters.
        let body = match (method, body) {
            ("POST", Value::Null) => Some(json!({})),
            (_, Value::Null) => None,
            (_, body) => Some(body),
        };
        let path = format!("/session/{}/{path}", self.session);
        self.try_request(method, &path, body.as_ref())
    }

    /// Sends one request to chromedriver and returns the `value` of its answer.
    fn try_request(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, WebDriverError> {
        let (status, answer) =
            http(self.port, method, path, body).map_err(|error| WebDriverError {
                status: 0,
                error: "no answer".to_owned(),
                message: error.to_string(),
            })?;
        let mut answer: Value = serde_json::from_slice(&answer).map_err(|_| WebDriverError {
            status,
            error: "not JSON".to_owned(),
            message: String::from_utf8_lossy(&answer).into_owned(),
        })?;
        let value = answer["value"].take();
        if status == 200 {
            return Ok(value);
        }
        Err(WebDriverError {
            status,
            error: value["error"]
                .as_str()
                .unwrap_or("unknown error")
                .to_owned(),
            // The first line; the rest is chromedriver's stack trace and session info.
            message: value["message"]
                .as_str()
                .unwrap_or("")
                .lines()
                .next()
                .unwrap_or("")
                .to_owned(),
        })
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let path = format!("/session/{}", self.session);
            let _ = http(self.port, "DELETE", &path, None);
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

impl Element<'_> {
    /// The element's visible text, as a user sees it rendered.
    pub fn text(&self) -> String {
        self.try_text()
            .unwrap_or_else(|error| panic!("reading an element's text: {error:?}"))
    }

    /// Clicks the middle of the element, as a user would (panicking if something covers it).
    pub fn click(&self) {
        self.command("click", Value::Null);
    }

    /// Types `text` into the element as keystrokes.
    pub fn type_text(&self, text: &str) {
        self.command("value", json!({ "text": text }));
    }

    /// The element's visible text, `None` if it is gone (the page redrew it).
    pub fn current_text(&self) -> Option<String> {
        self.try_text().ok()
    }

    fn try_text(&self) -> Result<String, WebDriverError> {
        let path = format!("element/{}/text", self.id);
        let text = self.browser.try_command("GET", &path, Value::Null)?;
        Ok(text.as_str().unwrap_or("").to_owned())
    }

    fn command(&self, what: &str, body: Value) -> Value {
        let path = format!("element/{}/{what}", self.id);
        self.browser.command("POST", &path, body)
    }
}

/// The `chromium` and `chromedriver` executables on PATH, installing Debian's `chromium` and
/// `chromium-driver` packages first if either is missing (through `sudo -n` unless running as
/// root, refreshing the package lists if the first attempt fails), as `.ci/run` does.
fn locate_or_install() -> (PathBuf, PathBuf) {
    let locate = || Some((on_path("chromium")?, on_path("chromedriver")?));
    if let Some(found) = locate() {
        return found;
    }
    let installed = flotilla_store::etcd::testing::apt_install(&["chromium", "chromium-driver"]);
    if let Err(error) = installed {
        panic!("chromium or chromedriver is not on PATH and installing them failed: {error}");
    }
    locate().expect("chromium and chromedriver on PATH after installing them")
}

/// The executable `name` in a directory of PATH, if there is one.
fn on_path(name: &str) -> Option<PathBuf> {
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .map(|dir| dir.join(name))
        .find(|path| path.is_file())
}

/// Starts `chromedriver` on a free loopback port, logging to `<artifacts>/chromedriver.log`,
/// and waits until it is ready for sessions. Tries a few ports, as one found free may be
/// taken by someone else before chromedriver binds it.
fn start_driver(chromedriver: &Path, artifacts: &Path) -> (Child, u16) {
    let log_path = artifacts.join("chromedriver.log");
    for _ in 0..3 {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free loopback port")
            .port();
        let log = File::create(&log_path).expect("create chromedriver.log");
        let mut driver = Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("clone the log file"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|error| panic!("spawn {}: {error}", chromedriver.display()));
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if driver.try_wait().ok().flatten().is_some() {
                break; // Most likely the port was taken: try another.
            }
            let status = http(port, "GET", "/status", None);
            let ready = status.ok().and_then(|(_, body)| {
                let status: Value = serde_json::from_slice(&body).ok()?;
                status["value"]["ready"].as_bool()
            });
            if ready == Some(true) {
                return (driver, port);
            }
            if Instant::now() >= deadline {
                let _ = driver.kill();
                let _ = driver.wait();
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    let log = std::fs::read_to_string(&log_path).unwrap_or_default();
    panic!(
        "{} did not become ready; its log:\n{log}",
        chromedriver.display()
    )
}

/// One HTTP/1.1 request to `127.0.0.1:PORT` with a JSON body, on a fresh connection; returns
/// the response's status and body.
fn http(port: u16, method: &str, path: &str, body: Option<&Value>) -> io::Result<(u16, Vec<u8>)> {
    let body = body.map(Value::to_string).unwrap_or_default();
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(REQUEST_TIMEOUT))?;
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\n\
         Host: 127.0.0.1:{port}\r\n\
         Content-Type: application/json; charset=utf-8\r\n\
         Content-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )?;
    stream.flush()?;
    let mut reader = BufReader::new(stream);
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_owned());
    let status_line = read_line(&mut reader)?;
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| bad(&format!("bad status line {status_line:?}")))?;
    let mut length = None;
    loop {
        let line = read_line(&mut reader)?;
        if line.is_empty() {
            break;
        }
        // chromedriver writes `Name:value`, without the customary space.
        let Some((name, value)) = line.split_once(':') else {
            return Err(bad(&format!("bad header {line:?}")));
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            length = Some(value.parse().map_err(|_| bad("bad Content-Length"))?);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            // chromedriver 148 sizes every answer; a chunked one would need decoding here.
            return Err(bad(&format!("unsupported Transfer-Encoding {value:?}")));
        }
    }
    let mut body = Vec::new();
    match length {
        Some(length) => {
            body.resize(length, 0);
            reader.read_exact(&mut body)?;
        }
        None => {
            reader.read_to_end(&mut body)?;
        }
    }
    Ok((status, body))
}

/// One CRLF-terminated line, without its terminator; an error at end of input.
fn read_line(reader: &mut impl BufRead) -> io::Result<String> {
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "connection closed",
        ));
    }
    Ok(line.trim_end_matches(['\r', '\n']).to_owned())
}
