//! `sidenote-testkit` — a scripted fake AI provider **server** for tests.
//!
//! [`FakeProvider::start`] binds an axum server on `127.0.0.1:0` that speaks both wire formats:
//!
//! * OpenAI Chat Completions: `POST /v1/chat/completions` — SSE `data: {...}` chunks ending
//!   with `data: [DONE]` when the request says `"stream": true`, one JSON object otherwise;
//! * Anthropic Messages: `POST /v1/messages` — SSE events `message_start`, `ping`,
//!   `content_block_start` / `content_block_delta` (`text_delta`, `input_json_delta`) /
//!   `content_block_stop`, `message_delta`, `message_stop`; or one JSON message.
//!
//! It is **scripted**: push [`Step`]s (what the model answers next — text, tool calls, invalid
//! JSON arguments, an HTTP error with `Retry-After`, a cut mid tool call, a stall, a delay, a raw
//! response), or rules (`Fn(&RecordedRequest) -> Step`) that decide from what the client sent.
//! Steps are consumed one per request, in order; when the queue is empty the fallback rule (if
//! any) answers, otherwise the request is a violation and gets a 400.
//!
//! It **records** every request ([`FakeProvider::requests`]) and **validates** it, recording
//! [`FakeProvider::violations`]: every tool call answered exactly once with matching ids (and
//! only ids this server issued), for Anthropic roles alternating, all tool results of one step in
//! one user message, `system` only as the top-level field, `max_tokens` and `anthropic-version`
//! present; tool schemas are objects with `properties` and no `$schema`.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use sidenote_testkit::{FakeProvider, Reply, Step};
//! let fake = FakeProvider::start().await?;
//! fake.push(Step::reply(Reply::text("Looking.").tool("search", serde_json::json!({"q": "x"}))));
//! fake.push_rule(|req| Step::text(format!("got {} results", req.tool_results().len())));
//! // point a client at fake.base_url() (".../v1"), run it, then:
//! fake.assert_no_violations();
//! # Ok(()) }
//! ```
//!
//! The `fake-provider` binary serves the same thing for non-Rust tests: it reads a JSON list
//! of steps (`--script FILE`), prints its base URL on stdout, and exposes `GET /_fake/requests`,
//! `GET /_fake/violations`, `POST /_fake/script` (append steps) and `POST /_fake/reset`.

mod render;
pub mod scenario;
pub mod script;
mod validate;

pub use script::{FakeToolCall, FakeUsage, Reply, Step};

use axum::Router;
use axum::body::Body;
use axum::extract::State as AxState;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use bytes::Bytes;
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashSet, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Which wire format a request used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Api {
    OpenAi,
    Anthropic,
}

/// A tool result the client sent (provider-neutral view).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SeenToolResult {
    pub call_id: String,
    pub content: String,
    pub is_error: bool,
}

/// One request the server received.
#[derive(Debug, Clone, Serialize)]
pub struct RecordedRequest {
    /// 0-based arrival order.
    pub index: usize,
    pub api: Api,
    pub path: String,
    /// Lower-cased header names.
    pub headers: BTreeMap<String, String>,
    pub body: Value,
    pub stream: bool,
    /// Milliseconds since the server started.
    pub at_ms: u64,
}

impl RecordedRequest {
    /// The model requested.
    pub fn model(&self) -> &str {
        self.body["model"].as_str().unwrap_or_default()
    }

    /// The conversation messages as sent.
    pub fn messages(&self) -> &[Value] {
        self.body["messages"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// Names of the tools offered.
    pub fn tool_names(&self) -> Vec<String> {
        self.body["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["function"]["name"].as_str().or(t["name"].as_str()))
            .map(str::to_string)
            .collect()
    }

    /// The tool results at the end of the conversation (the answers to the last step).
    pub fn tool_results(&self) -> Vec<SeenToolResult> {
        let msgs = self.messages();
        match self.api {
            Api::OpenAi => {
                let tail: Vec<&Value> = msgs
                    .iter()
                    .rev()
                    .take_while(|m| m["role"] == "tool")
                    .collect();
                tail.into_iter()
                    .rev()
                    .map(|m| SeenToolResult {
                        call_id: m["tool_call_id"].as_str().unwrap_or_default().into(),
                        content: text_of(&m["content"]),
                        is_error: false,
                    })
                    .collect()
            }
            Api::Anthropic => msgs
                .last()
                .filter(|m| m["role"] == "user")
                .and_then(|m| m["content"].as_array())
                .into_iter()
                .flatten()
                .filter(|b| b["type"] == "tool_result")
                .map(|b| SeenToolResult {
                    call_id: b["tool_use_id"].as_str().unwrap_or_default().into(),
                    content: text_of(&b["content"]),
                    is_error: b["is_error"].as_bool().unwrap_or(false),
                })
                .collect(),
        }
    }

    /// The last tool result's content parsed as JSON (as a JSON string when it is not
    /// JSON), or `None` when the request carries no tool results.
    pub fn last_tool_result_json(&self) -> Option<Value> {
        let last = self.tool_results().pop()?;
        Some(serde_json::from_str(&last.content).unwrap_or(Value::String(last.content)))
    }

    /// The text of the last user message (tool results excluded).
    pub fn last_user_text(&self) -> Option<String> {
        self.messages()
            .iter()
            .rev()
            .filter(|m| m["role"] == "user")
            .map(|m| match &m["content"] {
                Value::Array(blocks) => blocks
                    .iter()
                    .filter(|b| b["type"] == "text")
                    .map(|b| b["text"].as_str().unwrap_or_default())
                    .collect::<Vec<_>>()
                    .join(""),
                other => text_of(other),
            })
            .find(|t| !t.is_empty())
    }

    /// The system prompt: Anthropic's top-level field, or the OpenAI system messages joined.
    pub fn system(&self) -> Option<String> {
        match self.api {
            Api::Anthropic => self.body.get("system").map(text_of),
            Api::OpenAi => {
                let s: Vec<String> = self
                    .messages()
                    .iter()
                    .filter(|m| m["role"] == "system")
                    .map(|m| text_of(&m["content"]))
                    .collect();
                (!s.is_empty()).then(|| s.join("\n\n"))
            }
        }
    }
}

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// A rule: decides the answer from the request.
pub type Rule = Arc<dyn Fn(&RecordedRequest) -> Step + Send + Sync>;

enum Entry {
    Step(Step),
    Rule(Rule),
}

struct Shared {
    started: Instant,
    queue: Mutex<VecDeque<Entry>>,
    fallback: Mutex<Option<Rule>>,
    requests: Mutex<Vec<RecordedRequest>>,
    violations: Mutex<Vec<String>>,
    issued: Mutex<HashSet<String>>,
    check_issued_ids: std::sync::atomic::AtomicBool,
    ids: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// Handle to a running fake provider. Dropping it stops the server.
pub struct FakeProvider {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeProvider {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeProvider {
    /// Start on `127.0.0.1:0` (a free port).
    pub async fn start() -> std::io::Result<FakeProvider> {
        Self::start_on(SocketAddr::from(([127, 0, 0, 1], 0))).await
    }

    /// Start on a given loopback address.
    pub async fn start_on(addr: SocketAddr) -> std::io::Result<FakeProvider> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            started: Instant::now(),
            queue: Mutex::new(VecDeque::new()),
            fallback: Mutex::new(None),
            requests: Mutex::new(Vec::new()),
            violations: Mutex::new(Vec::new()),
            issued: Mutex::new(HashSet::new()),
            check_issued_ids: std::sync::atomic::AtomicBool::new(true),
            ids: AtomicU64::new(1),
        });
        let app = Router::new()
            .route("/v1/chat/completions", post(openai_handler))
            .route("/v1/messages", post(anthropic_handler))
            .route("/_fake/requests", get(requests_handler))
            .route("/_fake/violations", get(violations_handler))
            .route("/_fake/script", post(script_handler))
            .route("/_fake/reset", post(reset_handler))
            .with_state(shared.clone());
        let task = tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                tracing::error!("fake provider server stopped: {e}");
            }
        });
        Ok(FakeProvider { addr, shared, task })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
    /// `http://127.0.0.1:PORT`
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
    /// `http://127.0.0.1:PORT/v1` — the base URL for both wire formats.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Append a step to the script.
    pub fn push(&self, step: Step) {
        lock(&self.shared.queue).push_back(Entry::Step(step));
    }
    /// Append several steps.
    pub fn push_all(&self, steps: impl IntoIterator<Item = Step>) {
        let mut q = lock(&self.shared.queue);
        q.extend(steps.into_iter().map(Entry::Step));
    }
    /// Append a rule: the step is computed from the request it answers.
    pub fn push_rule(&self, rule: impl Fn(&RecordedRequest) -> Step + Send + Sync + 'static) {
        lock(&self.shared.queue).push_back(Entry::Rule(Arc::new(rule)));
    }
    /// Answer with this rule whenever the queue is empty ("script by rule" mode).
    pub fn set_fallback(&self, rule: impl Fn(&RecordedRequest) -> Step + Send + Sync + 'static) {
        *lock(&self.shared.fallback) = Some(Arc::new(rule));
    }
    /// Steps not consumed yet.
    pub fn pending_steps(&self) -> usize {
        lock(&self.shared.queue).len()
    }
    /// Turn off the check that tool-call ids in the history were issued by this server (for
    /// tests that hand-build histories).
    pub fn allow_foreign_tool_ids(&self) {
        self.shared.check_issued_ids.store(false, Ordering::Relaxed);
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests).clone()
    }
    /// Every violation recorded so far.
    pub fn violations(&self) -> Vec<String> {
        lock(&self.shared.violations).clone()
    }
    /// Panic (in a test) with the list of violations, if any.
    pub fn assert_no_violations(&self) {
        let v = self.violations();
        assert!(
            v.is_empty(),
            "the fake provider recorded violations:\n  {}",
            v.join("\n  ")
        );
    }
}

impl Shared {
    fn next_step(&self, req: &RecordedRequest) -> Option<Step> {
        let entry = lock(&self.queue).pop_front();
        match entry {
            Some(Entry::Step(s)) => Some(s),
            Some(Entry::Rule(r)) => Some(r(req)),
            None => {
                let fb = lock(&self.fallback).clone();
                fb.map(|r| r(req))
            }
        }
    }

    fn violation(&self, index: usize, msg: String) {
        tracing::warn!("fake provider violation in request #{index}: {msg}");
        lock(&self.violations).push(format!("request #{index}: {msg}"));
    }

    fn new_id(&self, api: Api) -> String {
        let n = self.ids.fetch_add(1, Ordering::Relaxed);
        let id = match api {
            Api::OpenAi => format!("call_{n}"),
            Api::Anthropic => format!("toolu_{n:024}"),
        };
        lock(&self.issued).insert(id.clone());
        id
    }
}

async fn openai_handler(
    AxState(s): AxState<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    handle(s, Api::OpenAi, "/v1/chat/completions", headers, body).await
}

async fn anthropic_handler(
    AxState(s): AxState<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    handle(s, Api::Anthropic, "/v1/messages", headers, body).await
}

async fn handle(s: Arc<Shared>, api: Api, path: &str, headers: HeaderMap, body: Bytes) -> Response {
    let headers: BTreeMap<String, String> = headers
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_ascii_lowercase(),
                v.to_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let parsed: Result<Value, _> = serde_json::from_slice(&body);
    let body_len = body.len();
    let (req, problems) = {
        let mut requests = lock(&s.requests);
        let index = requests.len();
        let (value, mut problems) = match parsed {
            Ok(v) => (v, Vec::new()),
            Err(e) => (Value::Null, vec![format!("body is not JSON: {e}")]),
        };
        if !value.is_null() {
            problems.extend(match api {
                Api::OpenAi => validate::openai(&value),
                Api::Anthropic => validate::anthropic(&headers, &value),
            });
            if s.check_issued_ids.load(Ordering::Relaxed) {
                let issued = lock(&s.issued);
                for id in validate::assistant_call_ids(api, &value) {
                    if !issued.contains(&id) {
                        problems.push(format!(
                            "tool call id {id} in the history was never issued by this server"
                        ));
                    }
                }
            }
        }
        let req = RecordedRequest {
            index,
            api,
            path: path.to_string(),
            stream: value["stream"].as_bool().unwrap_or(false),
            headers,
            body: value,
            at_ms: u64::try_from(s.started.elapsed().as_millis()).unwrap_or(u64::MAX),
        };
        requests.push(req.clone());
        (req, problems)
    };
    for p in problems {
        s.violation(req.index, p);
    }
    let Some(step) = s.next_step(&req) else {
        s.violation(
            req.index,
            "unexpected request: the script has no more steps".into(),
        );
        return json_response(
            api,
            400,
            "fake provider: the script has no more steps",
            None,
        );
    };
    respond(&s, api, &req, step, body_len).await
}

fn json_response(api: Api, status: u16, message: &str, retry_after: Option<&str>) -> Response {
    let mut resp = (
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        [(header::CONTENT_TYPE, "application/json")],
        render::error_body(api, status, message).to_string(),
    )
        .into_response();
    if let Some(ra) = retry_after
        && let Ok(v) = ra.parse()
    {
        resp.headers_mut().insert(header::RETRY_AFTER, v);
    }
    resp
}

enum Action {
    Send(Bytes),
    Sleep(Duration),
    Fail,
}

fn body_from(actions: Vec<Action>) -> Body {
    let stream = futures::stream::unfold(actions.into_iter(), |mut it| async move {
        loop {
            match it.next()? {
                Action::Send(b) => return Some((Ok::<Bytes, std::io::Error>(b), it)),
                Action::Sleep(d) => tokio::time::sleep(d).await,
                Action::Fail => {
                    return Some((
                        Err(std::io::Error::new(
                            std::io::ErrorKind::ConnectionReset,
                            "fake provider: scripted cut",
                        )),
                        it,
                    ));
                }
            }
        }
    });
    Body::from_stream(stream)
}

async fn respond(
    s: &Shared,
    api: Api,
    req: &RecordedRequest,
    step: Step,
    body_len: usize,
) -> Response {
    let mut step = step;
    while let Step::Delay {
        delay_ms,
        step: inner,
    } = step
    {
        tokio::time::sleep(Duration::from_millis(delay_ms)).await;
        step = *inner;
    }
    let (reply, mode) = match step {
        Step::Error {
            status,
            retry_after,
            message,
        } => {
            let msg = message.unwrap_or_else(|| format!("fake provider: scripted HTTP {status}"));
            return json_response(api, status, &msg, retry_after.as_deref());
        }
        Step::Raw {
            status,
            content_type,
            body,
        } => {
            return (
                StatusCode::from_u16(status).unwrap_or(StatusCode::OK),
                [(header::CONTENT_TYPE, content_type)],
                body,
            )
                .into_response();
        }
        Step::Reply(r) => (r, Mode::Whole),
        Step::Cut(r) => (r, Mode::Cut),
        Step::Stall { reply, stall_ms } => (reply, Mode::Stall(Duration::from_millis(stall_ms))),
        Step::Delay { .. } => (Reply::default(), Mode::Whole), // unreachable: unwrapped above
    };
    let ids: Vec<String> = reply
        .tool_calls
        .iter()
        .map(|c| match &c.id {
            Some(id) => {
                lock(&s.issued).insert(id.clone());
                id.clone()
            }
            None => s.new_id(api),
        })
        .collect();
    let model = req.model().to_string();
    let rendered = render::render(api, &reply, &ids, &model, req.stream, body_len);
    let mut actions = Vec::new();
    let frames = rendered.frames;
    match mode {
        Mode::Whole => actions.extend(frames.into_iter().map(|f| Action::Send(Bytes::from(f)))),
        Mode::Cut => {
            if rendered.content_type == "application/json" {
                let whole = frames.concat();
                let half = whole.len() / 2;
                actions.push(Action::Send(Bytes::copy_from_slice(
                    &whole.as_bytes()[..half],
                )));
            } else {
                let cut = rendered.cut_at.min(frames.len());
                actions.extend(
                    frames
                        .into_iter()
                        .take(cut)
                        .map(|f| Action::Send(Bytes::from(f))),
                );
            }
            actions.push(Action::Sleep(Duration::from_millis(20)));
            actions.push(Action::Fail);
        }
        Mode::Stall(d) => {
            if rendered.content_type == "application/json" {
                let whole = frames.concat().into_bytes();
                let half = whole.len() / 2;
                actions.push(Action::Send(Bytes::copy_from_slice(&whole[..half])));
                actions.push(Action::Sleep(d));
                actions.push(Action::Send(Bytes::copy_from_slice(&whole[half..])));
            } else {
                let mut it = frames.into_iter();
                if let Some(first) = it.next() {
                    actions.push(Action::Send(Bytes::from(first)));
                }
                actions.push(Action::Sleep(d));
                actions.extend(it.map(|f| Action::Send(Bytes::from(f))));
            }
        }
    }
    let mut resp = Response::new(body_from(actions));
    if let Ok(v) = rendered.content_type.parse() {
        resp.headers_mut().insert(header::CONTENT_TYPE, v);
    }
    if let Ok(v) = "no-cache".parse() {
        resp.headers_mut().insert(header::CACHE_CONTROL, v);
    }
    resp
}

enum Mode {
    Whole,
    Cut,
    Stall(Duration),
}

async fn requests_handler(AxState(s): AxState<Arc<Shared>>) -> Response {
    axum::Json(lock(&s.requests).clone()).into_response()
}

async fn violations_handler(AxState(s): AxState<Arc<Shared>>) -> Response {
    axum::Json(lock(&s.violations).clone()).into_response()
}

async fn script_handler(AxState(s): AxState<Arc<Shared>>, body: Bytes) -> Response {
    match serde_json::from_slice::<Vec<Step>>(&body) {
        Ok(steps) => {
            let n = steps.len();
            lock(&s.queue).extend(steps.into_iter().map(Entry::Step));
            axum::Json(json!({"appended": n})).into_response()
        }
        Err(e) => (StatusCode::BAD_REQUEST, format!("invalid script: {e}")).into_response(),
    }
}

async fn reset_handler(AxState(s): AxState<Arc<Shared>>) -> Response {
    lock(&s.queue).clear();
    lock(&s.requests).clear();
    lock(&s.violations).clear();
    StatusCode::NO_CONTENT.into_response()
}

/// Parse a script file's contents: a JSON list of [`Step`]s.
pub fn parse_script(text: &str) -> Result<Vec<Step>, serde_json::Error> {
    serde_json::from_str(text)
}
