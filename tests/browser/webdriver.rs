//! A small W3C WebDriver client over `reqwest`: ChromeDriver started on a free port, headless
//! Chromium sessions, and the handful of commands the browser tests need. Waiting is done in the
//! page: a script resolves when its condition holds, checked again on every change of the page.

use std::process::Stdio;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// How long a condition may take to hold before the test fails (a CI machine is slow).
const WAIT: Duration = Duration::from_secs(60);
/// How long one in-page wait lasts before it is asked again: a navigation loses the page's
/// scripts, so a wait that spans one must start over in the new page. (A script's own budget
/// is [`WAIT`]: a loaded machine may take seconds to run axe-core once.)
const ATTEMPT: Duration = Duration::from_secs(3);

/// The W3C element reference key.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// A running ChromeDriver, killed when dropped.
pub struct Driver {
    child: Child,
    base: String,
    http: reqwest::Client,
}

/// Installs Debian's Chromium and ChromeDriver when they are missing and this process may
/// (root with apt-get), as `.ci/run` does; once per test binary.
fn ensure_installed() -> Result<(), String> {
    static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
    INSTALLED
        .get_or_init(|| {
            let have = |p: &str| std::path::Path::new(p).exists();
            if have("/usr/bin/chromedriver") && have("/usr/bin/chromium") {
                return Ok(());
            }
            let apt = std::process::Command::new("apt-get")
                .args(["install", "-y", "-qq", "chromium", "chromium-driver"])
                .env("DEBIAN_FRONTEND", "noninteractive")
                .status();
            match apt {
                Ok(s) if s.success() => Ok(()),
                other => Err(format!(
                    "the browser tests need Debian's chromium and chromium-driver \
                     (apt-get install chromium chromium-driver); installing them failed: {other:?}"
                )),
            }
        })
        .clone()
}

impl Driver {
    /// Starts ChromeDriver on a free port and waits for its "started" line.
    pub async fn start() -> Driver {
        ensure_installed().expect("Chromium and ChromeDriver");
        let mut child = Command::new("/usr/bin/chromedriver")
            .arg("--port=0")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("chromedriver starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut lines = BufReader::new(stdout).lines();
        let port = loop {
            let line = lines
                .next_line()
                .await
                .expect("chromedriver's output")
                .expect("chromedriver says on which port it listens");
            if let Some(rest) = line.split("started successfully on port ").nth(1) {
                break rest.trim_end_matches('.').trim().to_owned();
            }
        };
        // Keep reading its output so that it never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Driver {
            child,
            base: format!("http://127.0.0.1:{port}"),
            http: reqwest::Client::new(),
        }
    }

    /// A new headless Chromium whose `Accept-Language` is `languages` (e.g. `"pt-BR,pt"`).
    pub async fn session(&self, languages: &str) -> Session {
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "timeouts": {"script": WAIT.as_millis() as u64, "pageLoad": WAIT.as_millis() as u64},
            "goog:chromeOptions": {
                "binary": "/usr/bin/chromium",
                // What a test never uses is off: the component updater and other background
                // fetches (no network here), extensions, sync, first-run pages, translation.
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--window-size=1100,1000",
                         "--disable-background-networking", "--disable-component-update",
                         "--disable-default-apps", "--disable-extensions", "--disable-sync",
                         "--no-first-run", "--mute-audio",
                         "--disable-features=Translate,MediaRouter,OptimizationHints",
                         format!("--lang={}", languages.split(',').next().unwrap_or("en")),
                         format!("--accept-lang={languages}")],
                "prefs": {"intl.accept_languages": languages},
            }
        }}});
        let res = answer(self.http.post(format!("{}/session", self.base)).json(&caps)).await;
        let id = res["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("a session: {res}"));
        Session {
            base: format!("{}/session/{id}", self.base),
            http: self.http.clone(),
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

/// One browser window.
#[derive(Clone)]
pub struct Session {
    base: String,
    http: reqwest::Client,
}

/// An element of the page.
pub struct Element(String);

impl Session {
    async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let mut req = self.http.request(method, format!("{}{path}", self.base));
        if let Some(b) = body {
            req = req.json(&b);
        }
        let res = answer(req).await;
        if res["value"]["error"].is_string() {
            panic!("WebDriver {path}: {}", res["value"]);
        }
        res["value"].clone()
    }

    pub async fn goto(&self, url: &str) {
        self.call(reqwest::Method::POST, "/url", Some(json!({ "url": url })))
            .await;
    }

    pub async fn url(&self) -> String {
        self.call(reqwest::Method::GET, "/url", None)
            .await
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    pub async fn find(&self, css: &str) -> Element {
        let v = self
            .call(
                reqwest::Method::POST,
                "/element",
                Some(json!({"using": "css selector", "value": css})),
            )
            .await;
        let id = v[ELEMENT].as_str();
        Element(
            id.unwrap_or_else(|| panic!("no element `{css}`: {v}"))
                .to_owned(),
        )
    }

    /// A real click (pointer events at the element's centre). A page still laying itself out
    /// can have another element at that point for a moment ("element click intercepted"): then
    /// the element is found again and clicked after the page's next two frames, until [`WAIT`]
    /// runs out.
    pub async fn click(&self, css: &str) {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let e = self.find(css).await;
            let res = answer(
                self.http
                    .post(format!("{}/element/{}/click", self.base, e.0))
                    .json(&json!({})),
            )
            .await;
            match res["value"]["error"].as_str() {
                None => return,
                Some("element click intercepted") if tokio::time::Instant::now() < deadline => {
                    self.call(
                        reqwest::Method::POST,
                        "/execute/async",
                        Some(json!({
                            "script": "const done = arguments[arguments.length - 1]; \
                                       requestAnimationFrame(() => requestAnimationFrame(() => done(true)));",
                            "args": [],
                        })),
                    )
                    .await;
                }
                Some(_) => panic!("WebDriver click `{css}`: {}", res["value"]),
            }
        }
    }

    /// Types `text` into the element (WebDriver key codes for special keys).
    pub async fn type_into(&self, css: &str, text: &str) {
        let e = self.find(css).await;
        self.call(
            reqwest::Method::POST,
            &format!("/element/{}/value", e.0),
            Some(json!({ "text": text })),
        )
        .await;
    }

    /// Presses one key on the page (as a keyboard user would, at the focused element).
    pub async fn press(&self, key: &str) {
        let actions = json!({"actions": [{"type": "key", "id": "keyboard", "actions": [
            {"type": "keyDown", "value": key}, {"type": "keyUp", "value": key}]}]});
        self.call(reqwest::Method::POST, "/actions", Some(actions))
            .await;
    }

    /// Runs `body` (a function body: `return …`) in the page.
    pub async fn eval(&self, body: &str) -> Value {
        self.call(
            reqwest::Method::POST,
            "/execute/sync",
            Some(json!({"script": body, "args": []})),
        )
        .await
    }

    /// Waits until the expression `condition` is truthy in the page, checking it at once and
    /// after every change of the document; returns its value. Fails after [`WAIT`].
    pub async fn wait(&self, condition: &str) -> Value {
        let script = format!(
            "const done = arguments[arguments.length - 1];
             const check = () => {{ try {{ return ({condition}); }} catch (e) {{ return null; }} }};
             const first = check();
             if (first) {{ done(first); return; }}
             const seen = new MutationObserver(() => {{
               const v = check();
               if (v) {{ seen.disconnect(); done(v); }}
             }});
             seen.observe(document, {{subtree: true, childList: true, attributes: true, characterData: true}});
             setTimeout(() => {{ seen.disconnect(); done(null); }}, {attempt});",
            attempt = ATTEMPT.as_millis()
        );
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let res = answer(
                self.http
                    .post(format!("{}/execute/async", self.base))
                    .json(&json!({"script": script, "args": []})),
            )
            .await;
            // Nothing yet (the attempt ran out), or a page that navigated away: ask again.
            if !res["value"].is_null() && !res["value"]["error"].is_string() {
                return res["value"].clone();
            }
            if tokio::time::Instant::now() >= deadline {
                panic!(
                    "waited in vain for `{condition}`: {}",
                    res["value"]["error"]
                );
            }
        }
    }

    /// The squares of the board on the page: cell → disc letter ("" for empty).
    pub async fn board(&self) -> Value {
        self.eval(
            "const out = {}; for (const c of document.querySelectorAll('[data-board] [data-cell]')) \
             out[c.dataset.cell] = c.dataset.disc; return out;",
        )
        .await
    }

    /// A PNG of the window.
    pub async fn screenshot(&self) -> Option<Vec<u8>> {
        let v = self.call(reqwest::Method::GET, "/screenshot", None).await;
        v.as_str().and_then(base64_decode)
    }

    pub async fn close(&self) {
        let _ = self.http.delete(&self.base).send().await;
    }
}

/// ChromeDriver's JSON answer to a request.
async fn answer(req: reqwest::RequestBuilder) -> Value {
    req.send()
        .await
        .expect("chromedriver answers")
        .json()
        .await
        .expect("a JSON answer")
}

/// The sessions of a test, screenshotted when it fails.
#[derive(Default)]
pub struct Sessions(Mutex<Vec<Session>>);

impl Sessions {
    pub fn keep(&self, s: &Session) {
        self.0.lock().expect("not poisoned").push(s.clone());
    }

    pub fn all(&self) -> Vec<Session> {
        self.0.lock().expect("not poisoned").clone()
    }
}

/// Decodes standard base64 (WebDriver's screenshots); `None` on a malformed string.
fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0);
    for c in s.bytes().filter(|&c| c != b'=' && !c.is_ascii_whitespace()) {
        acc = (acc << 6) | u32::from(value(c)?);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}
