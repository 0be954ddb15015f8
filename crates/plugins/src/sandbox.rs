//! One plugin's sandbox: a QuickJS runtime on its own thread. The async host talks to it
//! through channels ([`Inbox`] in, [`HostOp`] out); the plugin never sees host objects other
//! than the frozen `joplin` API the prelude builds.
//!
//! Limits, per call: a CPU slice (time spent running JS, enforced by QuickJS's interrupt
//! handler, so infinite loops, catch-wrapped loops and regex bombs stop), a wall-clock
//! deadline (a promise that never settles), and per runtime a heap limit and a stack limit.
//! After a fatal failure (CPU budget, out of memory, killed) the runtime is thrown away and the
//! plugin's script runs again in a fresh one.

use crate::Limits;
use crate::manifest::Manifest;
use crate::net::{FetchOptions, NetPolicy};
use base64::Engine;
use rquickjs::function::Opt;
use rquickjs::promise::PromiseState;
use rquickjs::{
    CatchResultExt, Context, Ctx, Exception, Function, Object, Persistent, Promise, Runtime, Value,
};
use serde_json::Value as Json;
use sidenote_store::Store;
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc::UnboundedSender, oneshot};

const PRELUDE: &str = include_str!("prelude.js");
/// Most concurrent host operations (fetches, data calls) one plugin may have in flight.
const MAX_OPS_IN_FLIGHT: usize = 64;
const MAX_TIMERS: usize = 1000;
/// Largest handler output (serialised JSON) passed back to the host.
pub const MAX_OUTPUT_BYTES: usize = 1024 * 1024;

/// A tool the plugin registered.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDecl {
    pub id: String,
    pub description: String,
    pub input_schema: Json,
    pub has_render: bool,
}

/// Why a call failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// The plugin threw or rejected (including permission errors it did not catch).
    Threw,
    /// Exceeded the stack limit (deep recursion).
    StackOverflow,
    /// Used up its CPU slice; the runtime was restarted.
    CpuBudget,
    /// Its promise did not settle before the wall-clock deadline.
    Deadline,
    /// Ran out of heap; the runtime was restarted.
    OutOfMemory,
    /// The output is not JSON or too large.
    BadOutput,
    /// Stopped by the host (not responding, unloading); the runtime was restarted.
    Killed,
    /// The sandbox is not running.
    Dead,
}

impl FailureKind {
    /// Failures after which the runtime is rebuilt.
    pub fn is_fatal(self) -> bool {
        matches!(
            self,
            FailureKind::CpuBudget | FailureKind::OutOfMemory | FailureKind::Killed
        )
    }
    /// Failures that count toward disabling a plugin that keeps failing.
    pub fn counts_toward_disable(self) -> bool {
        matches!(
            self,
            FailureKind::CpuBudget
                | FailureKind::OutOfMemory
                | FailureKind::Killed
                | FailureKind::Deadline
                | FailureKind::Dead
        )
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub kind: FailureKind,
    pub message: String,
}

/// QuickJS heap figures for one plugin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct MemoryStats {
    /// Bytes allocated by the runtime (QuickJS `malloc_size`).
    pub malloc_bytes: u64,
    /// Bytes in use by JS objects (QuickJS `memory_used_size`).
    pub used_bytes: u64,
    /// The heap limit.
    pub limit_bytes: u64,
}

pub type CallReply = oneshot::Sender<Result<Json, Failure>>;

/// Messages to the sandbox thread.
pub enum Inbox {
    Call {
        tool: String,
        input: Json,
        reply: CallReply,
    },
    Render {
        tool: String,
        input: Json,
        output: Json,
        reply: CallReply,
    },
    OpDone {
        op: u64,
        result: Result<Json, String>,
    },
    Memory {
        reply: oneshot::Sender<MemoryStats>,
    },
    Shutdown,
}

/// Work the sandbox asks the async host to do.
#[derive(Debug)]
pub enum HostOp {
    Fetch {
        op: u64,
        url: String,
        options: FetchOptions,
    },
    Data {
        op: u64,
        tool: String,
        args: Json,
    },
}

/// Shared between the sandbox thread (its interrupt handler) and the host.
pub struct Budget {
    base: Instant,
    /// Nanoseconds since `base` after which running JS is interrupted; 0 = no slice active.
    cpu_deadline: AtomicU64,
    tripped: AtomicBool,
    kill: AtomicBool,
}

impl Budget {
    pub fn new() -> Arc<Budget> {
        Arc::new(Budget {
            base: Instant::now(),
            cpu_deadline: AtomicU64::new(0),
            tripped: AtomicBool::new(false),
            kill: AtomicBool::new(false),
        })
    }

    fn now_ns(&self) -> u64 {
        u64::try_from(self.base.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// Called by QuickJS while it runs JS: true stops it with an uncatchable error.
    fn interrupt(&self) -> bool {
        if self.kill.load(Ordering::Relaxed) {
            return true;
        }
        let d = self.cpu_deadline.load(Ordering::Relaxed);
        if d != 0 && self.now_ns() > d {
            self.tripped.store(true, Ordering::Relaxed);
            return true;
        }
        false
    }

    /// Ask the sandbox to stop whatever JS it runs (and restart).
    pub fn kill(&self) {
        self.kill.store(true, Ordering::SeqCst);
    }

    /// Run `f` with at most `left` of CPU time, then take the time used off `left`.
    fn slice<R>(&self, left: &mut Duration, f: impl FnOnce() -> R) -> R {
        let start = Instant::now();
        let deadline = self
            .now_ns()
            .saturating_add(u64::try_from(left.as_nanos()).unwrap_or(u64::MAX))
            .max(1);
        self.cpu_deadline.store(deadline, Ordering::SeqCst);
        let r = f();
        self.cpu_deadline.store(0, Ordering::SeqCst);
        *left = left.saturating_sub(start.elapsed());
        r
    }
}

/// Everything the sandbox needs to (re)start.
pub struct SandboxConfig {
    pub manifest: Manifest,
    pub script: String,
    pub limits: Limits,
    /// Tool ids already taken (id → "a built-in tool" / "plugin 'x'").
    pub taken: HashMap<String, String>,
    pub store: Option<Store>,
}

/// Rust-side state the native functions use (no JS values: no reference cycles).
struct Env {
    plugin_id: String,
    manifest: Manifest,
    policy: NetPolicy,
    store: Option<Store>,
    taken: HashMap<String, String>,
    ops_tx: UnboundedSender<HostOp>,
    next_id: Cell<u64>,
    in_render: Cell<bool>,
}

impl Env {
    fn next(&self) -> u64 {
        let n = self.next_id.get() + 1;
        self.next_id.set(n);
        n
    }
}

struct JsTool {
    decl: ToolDecl,
    handler: Persistent<Function<'static>>,
    render: Option<Persistent<Function<'static>>>,
}

/// JS values the host keeps between entries into the runtime. Lives in a thread-local so
/// native functions can reach it without holding JS values in Rust closures; it is emptied
/// before its runtime is dropped.
#[derive(Default)]
struct JsState {
    tools: Vec<JsTool>,
    ops: HashMap<u64, (Persistent<Function<'static>>, Persistent<Function<'static>>)>,
    timers: HashMap<u64, (Instant, Persistent<Function<'static>>)>,
}

thread_local! {
    static JS: RefCell<JsState> = RefCell::new(JsState::default());
}

fn js<R>(f: impl FnOnce(&mut JsState) -> R) -> R {
    JS.with(|s| f(&mut s.borrow_mut()))
}

struct Sandbox {
    // field order = drop order: the context before its runtime
    ctx: Context,
    rt: Runtime,
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        // Persistent values must go before the runtime does.
        let old = js(std::mem::take);
        drop(old);
    }
}

fn mib(n: usize) -> String {
    format!("{} MiB", n / (1024 * 1024))
}

fn ms(d: Duration) -> String {
    format!("{} ms", d.as_millis())
}

/// Turn a caught JS exception into a failure; `budget` tells interrupts apart.
fn describe<'js>(ctx: &Ctx<'js>, v: &Value<'js>, budget: &Budget) -> (FailureKind, String) {
    let (name, message, at) = match v.as_object() {
        Some(o) if v.is_error() => {
            let name: String = o.get("name").unwrap_or_else(|_| "Error".to_string());
            let message: String = o.get("message").unwrap_or_default();
            let stack: String = o.get("stack").unwrap_or_default();
            let at = stack
                .lines()
                .map(str::trim)
                .find(|l| {
                    l.starts_with("at ") && !l.contains("<native>") && !l.contains("eval_script")
                })
                .map(|l| l.trim_start_matches("at ").to_string());
            (name, message, at)
        }
        _ => {
            let text = if v.is_null() {
                "null".to_string()
            } else if let Some(s) = v.as_string() {
                s.to_string().unwrap_or_default()
            } else {
                ctx.json_stringify(v.clone())
                    .ok()
                    .flatten()
                    .and_then(|s| s.to_string().ok())
                    .unwrap_or_else(|| format!("a {}", v.type_name()))
            };
            ("thrown value".to_string(), text, None)
        }
    };
    let kind = if budget.tripped.load(Ordering::SeqCst) {
        FailureKind::CpuBudget
    } else if budget.kill.load(Ordering::SeqCst) || message == "interrupted" {
        FailureKind::Killed
    } else if message.contains("out of memory") {
        FailureKind::OutOfMemory
    } else if message.contains("stack overflow") || message.contains("call stack size") {
        FailureKind::StackOverflow
    } else {
        FailureKind::Threw
    };
    let text = match at {
        Some(at) => format!("{name}: {message} (at {at})"),
        None if name == "thrown value" => format!("threw {message}"),
        None => format!("{name}: {message}"),
    };
    (kind, text)
}

fn throw_err<'js>(ctx: &Ctx<'js>, msg: &str) -> rquickjs::Error {
    Exception::throw_message(ctx, msg)
}

fn capability_check<'js>(ctx: &Ctx<'js>, env: &Env, what: &str) -> rquickjs::Result<()> {
    if env.in_render.get() {
        return Err(throw_err(
            ctx,
            &format!("{what} is not available inside render() (render runs with no capabilities)"),
        ));
    }
    Ok(())
}

fn rejected<'js>(ctx: &Ctx<'js>, msg: &str) -> rquickjs::Result<Promise<'js>> {
    let (p, _res, rej) = ctx.promise()?;
    let e = Exception::from_message(ctx.clone(), msg)?;
    e.set("name", "PermissionError")?;
    rej.call::<_, ()>((e,))?;
    Ok(p)
}

/// The host object handed to the prelude (kept in its closure only).
fn host_object<'js>(ctx: &Ctx<'js>, env: Rc<Env>) -> rquickjs::Result<Object<'js>> {
    let host = Object::new(ctx.clone())?;

    let e = env.clone();
    host.set(
        "register",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>,
                  id: String,
                  description: String,
                  schema: String,
                  handler: Function<'js>,
                  render: Opt<Value<'js>>|
                  -> rquickjs::Result<()> {
                if !sidenote_tools::valid_tool_id(&id) {
                    return Err(throw_err(
                        &ctx,
                        &format!("invalid tool id '{id}': use 1-64 letters, digits, '_' or '-'"),
                    ));
                }
                if let Some(owner) = e.taken.get(&id) {
                    return Err(throw_err(
                        &ctx,
                        &format!("tool id '{id}' is already registered by {owner}"),
                    ));
                }
                if js(|s| s.tools.iter().any(|t| t.decl.id == id)) {
                    return Err(throw_err(
                        &ctx,
                        &format!("tool id '{id}' is already registered by this plugin"),
                    ));
                }
                let input_schema: Json = serde_json::from_str(&schema).map_err(|err| {
                    throw_err(
                        &ctx,
                        &format!("tool '{id}': inputSchema is not JSON: {err}"),
                    )
                })?;
                if let Err(sidenote_tools::ToolError::Internal(m)) =
                    sidenote_tools::validate_args(&input_schema, &serde_json::json!({}))
                {
                    return Err(throw_err(&ctx, &format!("tool '{id}': {m}")));
                }
                let render = match render.0 {
                    Some(v) if v.is_function() => v.into_function(),
                    _ => None,
                };
                let decl = ToolDecl {
                    id,
                    description,
                    input_schema,
                    has_render: render.is_some(),
                };
                let tool = JsTool {
                    decl,
                    handler: Persistent::save(&ctx, handler),
                    render: render.map(|r| Persistent::save(&ctx, r)),
                };
                js(|s| s.tools.push(tool));
                Ok(())
            },
        )?,
    )?;

    let e = env.clone();
    host.set(
        "op",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, kind: String, args: String| -> rquickjs::Result<Promise<'js>> {
                let what = if kind == "fetch" {
                    "joplin.net.fetch"
                } else {
                    "joplin.data"
                };
                capability_check(&ctx, &e, what)?;
                let args: Json = serde_json::from_str(&args)
                    .map_err(|err| throw_err(&ctx, &format!("{what}: bad arguments: {err}")))?;
                if js(|s| s.ops.len()) >= MAX_OPS_IN_FLIGHT {
                    return rejected(
                        &ctx,
                        &format!("too many requests in flight (at most {MAX_OPS_IN_FLIGHT})"),
                    );
                }
                let op = e.next();
                let host_op = if kind == "fetch" {
                    let url = args
                        .get("url")
                        .and_then(Json::as_str)
                        .unwrap_or("")
                        .to_string();
                    if let Err(m) = e.policy.check(&url) {
                        return rejected(&ctx, &m);
                    }
                    let options: FetchOptions =
                        serde_json::from_value(args.get("options").cloned().unwrap_or(Json::Null))
                            .unwrap_or_default();
                    HostOp::Fetch { op, url, options }
                } else {
                    let tool = args.get("tool").and_then(Json::as_str).unwrap_or("");
                    let (allowed, need) = match tool {
                        "search_notes" | "read_note" => {
                            (e.manifest.can_read_notes(), crate::manifest::NOTES_READ)
                        }
                        "create_note" | "update_note" => {
                            (e.manifest.can_write_notes(), crate::manifest::NOTES_WRITE)
                        }
                        _ => return rejected(&ctx, &format!("unknown data operation '{tool}'")),
                    };
                    if !allowed {
                        return rejected(
                            &ctx,
                            &format!(
                                "permission denied: plugin '{}' needs \"{need}\" in its \
                                 manifest's permissions.data",
                                e.plugin_id
                            ),
                        );
                    }
                    HostOp::Data {
                        op,
                        tool: tool.to_string(),
                        args: args.get("args").cloned().unwrap_or(Json::Null),
                    }
                };
                let (promise, resolve, reject) = ctx.promise()?;
                js(|s| {
                    s.ops.insert(
                        op,
                        (
                            Persistent::save(&ctx, resolve),
                            Persistent::save(&ctx, reject),
                        ),
                    )
                });
                if e.ops_tx.send(host_op).is_err() {
                    js(|s| s.ops.remove(&op));
                    return rejected(&ctx, "the host is shutting down");
                }
                Ok(promise)
            },
        )?,
    )?;

    let e = env.clone();
    host.set(
        "setting",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, key: String| -> rquickjs::Result<Value<'js>> {
                capability_check(&ctx, &e, "joplin.settings")?;
                let stored = match &e.store {
                    Some(store) => store
                        .setting(&crate::manifest::setting_key(&e.plugin_id, &key))
                        .map_err(|err| throw_err(&ctx, &format!("cannot read setting: {err}")))?,
                    None => None,
                };
                match stored {
                    Some(v) => rquickjs::String::from_str(ctx.clone(), &v).map(|s| s.into_value()),
                    None => match e.manifest.settings.get(&key) {
                        Some(decl) => ctx.json_parse(decl.default.to_string()),
                        None => Ok(Value::new_undefined(ctx.clone())),
                    },
                }
            },
        )?,
    )?;

    host.set(
        "utf8",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, b64: String| -> rquickjs::Result<String> {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(b64)
                    .map_err(|err| throw_err(&ctx, &format!("bad body: {err}")))?;
                Ok(String::from_utf8_lossy(&bytes).into_owned())
            },
        )?,
    )?;

    let e = env.clone();
    host.set(
        "log",
        Function::new(ctx.clone(), move |level: String, msg: String| {
            let plugin = e.plugin_id.as_str();
            let msg: String = msg.chars().take(4000).collect();
            match level.as_str() {
                "error" => tracing::error!(target: "plugin", plugin, "{msg}"),
                "warn" => tracing::warn!(target: "plugin", plugin, "{msg}"),
                "debug" => tracing::debug!(target: "plugin", plugin, "{msg}"),
                _ => tracing::info!(target: "plugin", plugin, "{msg}"),
            }
        })?,
    )?;

    let e = env.clone();
    host.set(
        "setTimeout",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, f: Function<'js>, delay: f64| -> rquickjs::Result<f64> {
                capability_check(&ctx, &e, "setTimeout")?;
                if js(|s| s.timers.len()) >= MAX_TIMERS {
                    return Err(throw_err(
                        &ctx,
                        &format!("too many timers (at most {MAX_TIMERS})"),
                    ));
                }
                let delay = if delay.is_finite() {
                    delay.clamp(0.0, 3_600_000.0)
                } else {
                    0.0
                };
                let id = e.next();
                let due = Instant::now() + Duration::from_millis(delay as u64);
                js(|s| s.timers.insert(id, (due, Persistent::save(&ctx, f))));
                Ok(id as f64)
            },
        )?,
    )?;

    host.set(
        "clearTimeout",
        Function::new(ctx.clone(), move |id: f64| {
            if id.is_finite() && id >= 0.0 {
                js(|s| s.timers.remove(&(id as u64)));
            }
        })?,
    )?;

    Ok(host)
}

impl Sandbox {
    /// Build a runtime, run the prelude and the plugin's script. Returns the tools it
    /// registered, or the reason it could not start.
    fn start(
        cfg: &SandboxConfig,
        env: Rc<Env>,
        budget: &Arc<Budget>,
    ) -> Result<(Sandbox, Vec<ToolDecl>), String> {
        let id = &cfg.manifest.id;
        let rt = Runtime::new().map_err(|e| format!("cannot create a JS runtime: {e}"))?;
        rt.set_memory_limit(cfg.limits.memory_bytes);
        rt.set_max_stack_size(cfg.limits.stack_bytes);
        rt.set_gc_threshold((cfg.limits.memory_bytes / 4).max(256 * 1024));
        let b = budget.clone();
        rt.set_interrupt_handler(Some(Box::new(move || b.interrupt())));
        let ctx = Context::full(&rt).map_err(|e| format!("cannot create a JS context: {e}"))?;
        let sandbox = Sandbox { ctx, rt };
        js(|s| *s = JsState::default());
        budget.tripped.store(false, Ordering::SeqCst);
        budget.kill.store(false, Ordering::SeqCst);

        let mut left = cfg.limits.cpu_per_call;
        let started = budget.slice(&mut left, || {
            sandbox.ctx.with(|ctx| -> Result<(), String> {
                let prelude: Function = ctx
                    .eval(PRELUDE)
                    .map_err(|e| format!("prelude failed: {e}"))?;
                let host = host_object(&ctx, env.clone()).map_err(|e| format!("host API: {e}"))?;
                let info = Object::new(ctx.clone()).map_err(|e| e.to_string())?;
                for (k, v) in [
                    ("id", &cfg.manifest.id),
                    ("name", &cfg.manifest.name),
                    ("version", &cfg.manifest.version),
                ] {
                    info.set(k, v.as_str()).map_err(|e| e.to_string())?;
                }
                prelude
                    .call::<_, ()>((host, info))
                    .map_err(|e| format!("prelude failed: {e}"))?;
                let mut opts = rquickjs::context::EvalOptions::default();
                opts.strict = false;
                opts.filename = Some(cfg.manifest.main.clone());
                match ctx
                    .eval_with_options::<Value, _>(cfg.script.as_bytes(), opts)
                    .catch(&ctx)
                {
                    Ok(_) => Ok(()),
                    Err(rquickjs::CaughtError::Exception(ex)) => {
                        let (_, msg) = describe(&ctx, &ex.into_value(), budget);
                        Err(msg)
                    }
                    Err(rquickjs::CaughtError::Value(v)) => Err(describe(&ctx, &v, budget).1),
                    Err(rquickjs::CaughtError::Error(e)) => Err(e.to_string()),
                }
            })
        });
        let started = started.and_then(|()| sandbox.pump(budget, &mut left).map_err(|f| f.message));
        match started {
            Ok(()) => {}
            Err(msg) => {
                let why = if budget.tripped.load(Ordering::SeqCst) {
                    format!(
                        "its script used more than its CPU budget of {} while starting",
                        ms(cfg.limits.cpu_per_call)
                    )
                } else {
                    msg
                };
                return Err(format!("plugin '{id}' failed to start: {why}"));
            }
        }
        let decls = js(|s| s.tools.iter().map(|t| t.decl.clone()).collect());
        Ok((sandbox, decls))
    }

    /// Run queued promise jobs until there are none (or the slice runs out).
    fn pump(&self, budget: &Budget, left: &mut Duration) -> Result<(), Failure> {
        let mut failure = None;
        budget.slice(left, || {
            loop {
                match self.rt.execute_pending_job() {
                    Ok(true) => continue,
                    Ok(false) => break,
                    Err(job) => {
                        let (kind, message) = job.0.with(|ctx| {
                            let v = ctx.catch();
                            describe(&ctx, &v, budget)
                        });
                        if kind.is_fatal() {
                            failure = Some(Failure { kind, message });
                            break;
                        }
                        tracing::warn!(target: "plugin", "uncaught error in a promise job: {message}");
                    }
                }
            }
        });
        match failure {
            Some(f) => Err(f),
            None => Ok(()),
        }
    }

    /// Fire due timers. Returns the next due time, if any.
    fn fire_timers(
        &self,
        budget: &Budget,
        left: &mut Duration,
    ) -> Result<Option<Instant>, Failure> {
        loop {
            let now = Instant::now();
            let due = js(|s| {
                let id = s
                    .timers
                    .iter()
                    .filter(|(_, (t, _))| *t <= now)
                    .min_by_key(|(id, (t, _))| (*t, **id))
                    .map(|(id, _)| *id);
                id.and_then(|id| s.timers.remove(&id)).map(|(_, f)| f)
            });
            let Some(f) = due else {
                return Ok(js(|s| s.timers.values().map(|(t, _)| *t).min()));
            };
            let mut failure = None;
            budget.slice(left, || {
                self.ctx.with(|ctx| {
                    let Ok(f) = f.restore(&ctx) else { return };
                    if let Err(rquickjs::Error::Exception) = f.call::<_, ()>(()) {
                        let v = ctx.catch();
                        let (kind, message) = describe(&ctx, &v, budget);
                        if kind.is_fatal() {
                            failure = Some(Failure { kind, message });
                        } else {
                            tracing::warn!(target: "plugin", "uncaught error in a setTimeout callback: {message}");
                        }
                    }
                })
            });
            if let Some(f) = failure {
                return Err(f);
            }
            self.pump(budget, left)?;
        }
    }

    fn complete_op(&self, op: u64, result: Result<Json, String>) {
        let Some((res, rej)) = js(|s| s.ops.remove(&op)) else {
            return; // from a runtime that was replaced
        };
        self.ctx.with(|ctx| {
            let outcome = match result {
                Ok(v) => match (res.restore(&ctx), ctx.json_parse(v.to_string())) {
                    (Ok(f), Ok(v)) => f.call::<_, ()>((v,)),
                    (Err(e), _) | (_, Err(e)) => Err(e),
                },
                Err(msg) => match rej.restore(&ctx) {
                    Ok(f) => Exception::from_message(ctx.clone(), &msg)
                        .and_then(|e| f.call::<_, ()>((e,))),
                    Err(e) => Err(e),
                },
            };
            if outcome.is_err() {
                let _ = ctx.catch();
            }
        });
    }

    fn memory(&self, limit: usize) -> MemoryStats {
        let m = self.rt.memory_usage();
        MemoryStats {
            malloc_bytes: u64::try_from(m.malloc_size).unwrap_or(0),
            used_bytes: u64::try_from(m.memory_used_size).unwrap_or(0),
            limit_bytes: limit as u64,
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Phase {
    Handler,
    Render,
}

/// What a running call waits on.
enum Started {
    Done(Result<Json, Failure>),
    Waiting(Persistent<Promise<'static>>),
}

struct Worker {
    cfg: SandboxConfig,
    env: Rc<Env>,
    budget: Arc<Budget>,
    rx: Receiver<Inbox>,
    sandbox: Option<Sandbox>,
    /// Why the sandbox could not be rebuilt, when it could not.
    broken: Option<String>,
    queue: VecDeque<Inbox>,
    shutting_down: bool,
}

impl Worker {
    fn pid(&self) -> &str {
        &self.cfg.manifest.id
    }

    fn restart(&mut self, why: &str) {
        tracing::warn!(target: "plugin", plugin = %self.pid(), "restarting the plugin runtime: {why}");
        self.sandbox = None; // drop the old runtime first
        match Sandbox::start(&self.cfg, self.env.clone(), &self.budget) {
            Ok((sb, _)) => {
                self.sandbox = Some(sb);
                self.broken = None;
            }
            Err(e) => {
                tracing::error!(target: "plugin", plugin = %self.pid(), "{e}");
                self.broken = Some(e);
            }
        }
    }

    fn run(mut self) {
        loop {
            let msg = match self.queue.pop_front() {
                Some(m) => m,
                None => {
                    if self.shutting_down {
                        break;
                    }
                    let next_timer = self.background_timers();
                    let got = match next_timer {
                        Some(t) => self
                            .rx
                            .recv_timeout(t.saturating_duration_since(Instant::now())),
                        None => self.rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
                    };
                    match got {
                        Ok(m) => m,
                        Err(RecvTimeoutError::Timeout) => continue,
                        Err(RecvTimeoutError::Disconnected) => break,
                    }
                }
            };
            match msg {
                Inbox::Call { tool, input, reply } => {
                    let r = self.invoke(Phase::Handler, &tool, vec![input]);
                    let _ = reply.send(r);
                }
                Inbox::Render {
                    tool,
                    input,
                    output,
                    reply,
                } => {
                    let r = self.invoke(Phase::Render, &tool, vec![input, output]);
                    let _ = reply.send(r);
                }
                Inbox::OpDone { op, result } => {
                    if let Some(sb) = &self.sandbox {
                        sb.complete_op(op, result);
                        let mut left = self.cfg.limits.cpu_per_call;
                        if let Err(f) = sb.pump(&self.budget, &mut left) {
                            self.restart(&f.message);
                        }
                    }
                }
                Inbox::Memory { reply } => {
                    if let Some(sb) = &self.sandbox {
                        let _ = reply.send(sb.memory(self.cfg.limits.memory_bytes));
                    }
                }
                Inbox::Shutdown => self.shutting_down = true,
            }
            if self.budget.kill.load(Ordering::SeqCst) && !self.shutting_down {
                self.restart("stopped by the host");
            }
        }
        self.sandbox = None;
    }

    /// Timers that fire while no call runs. Returns the next due time.
    fn background_timers(&mut self) -> Option<Instant> {
        let sb = self.sandbox.as_ref()?;
        let mut left = self.cfg.limits.cpu_per_call;
        match sb.fire_timers(&self.budget, &mut left) {
            Ok(next) => next,
            Err(f) => {
                self.restart(&f.message);
                None
            }
        }
    }

    fn invoke(&mut self, phase: Phase, tool: &str, args: Vec<Json>) -> Result<Json, Failure> {
        let limits = self.cfg.limits.clone();
        let (cpu, wall) = match phase {
            Phase::Handler => (limits.cpu_per_call, limits.wall_per_call),
            Phase::Render => (limits.render_cpu, limits.render_wall),
        };
        let what = match phase {
            Phase::Handler => format!("plugin '{}' tool '{tool}'", self.pid()),
            Phase::Render => format!("plugin '{}' render of '{tool}'", self.pid()),
        };
        if self.shutting_down {
            return Err(Failure {
                kind: FailureKind::Dead,
                message: format!("{what}: the plugin is shutting down"),
            });
        }
        if self.sandbox.is_none() {
            // a previous restart failed: try again once per call
            self.restart("a previous start failed");
        }
        let Some(sb) = self.sandbox.as_ref() else {
            return Err(Failure {
                kind: FailureKind::Dead,
                message: format!(
                    "{what}: the plugin is not running ({})",
                    self.broken.as_deref().unwrap_or("unknown reason")
                ),
            });
        };
        self.budget.tripped.store(false, Ordering::SeqCst);
        self.env.in_render.set(phase == Phase::Render);
        let deadline = Instant::now() + wall;
        let mut left = cpu;
        let result = drive(
            sb,
            &self.budget,
            &self.rx,
            &mut self.queue,
            limits.memory_bytes,
            phase,
            tool,
            args,
            deadline,
            &mut left,
            &what,
        );
        self.env.in_render.set(false);
        let result = result.map_err(|f| {
            let message = match f.kind {
                FailureKind::CpuBudget => format!(
                    "{what} used more than its CPU budget of {} and was stopped (an endless \
                     loop?); the plugin was restarted",
                    ms(cpu)
                ),
                FailureKind::OutOfMemory => format!(
                    "{what} ran out of memory (limit {}); the plugin was restarted",
                    mib(limits.memory_bytes)
                ),
                FailureKind::StackOverflow => format!(
                    "{what} exceeded the stack limit of {} KiB (recursion too deep): {}",
                    limits.stack_bytes / 1024,
                    f.message
                ),
                FailureKind::Deadline => format!(
                    "{what} did not finish within {} (its promise never settled?)",
                    ms(wall)
                ),
                FailureKind::Killed => {
                    format!("{what} was stopped by the host; the plugin was restarted")
                }
                FailureKind::Threw => format!("{what} failed: {}", f.message),
                FailureKind::BadOutput | FailureKind::Dead => format!("{what}: {}", f.message),
            };
            Failure {
                kind: f.kind,
                message,
            }
        });
        if let Err(f) = &result
            && f.kind.is_fatal()
        {
            let why = f.message.clone();
            self.restart(&why);
        }
        result
    }
}

/// Run one handler or render call to completion (or failure). Calls and renders that
/// arrive meanwhile wait in `queue`.
#[allow(clippy::too_many_arguments)]
fn drive(
    sb: &Sandbox,
    budget: &Budget,
    rx: &Receiver<Inbox>,
    queue: &mut VecDeque<Inbox>,
    memory_limit: usize,
    phase: Phase,
    tool: &str,
    args: Vec<Json>,
    deadline: Instant,
    left: &mut Duration,
    what: &str,
) -> Result<Json, Failure> {
    let func = js(|s| {
        s.tools
            .iter()
            .find(|t| t.decl.id == tool)
            .map(|t| match phase {
                Phase::Handler => Some(t.handler.clone()),
                Phase::Render => t.render.clone(),
            })
    });
    let func = match func {
        None => {
            return Err(Failure {
                kind: FailureKind::Dead,
                message: format!("the plugin no longer registers tool '{tool}'"),
            });
        }
        Some(None) => return Ok(Json::Null), // no render function
        Some(Some(f)) => f,
    };
    // Call the function.
    let started = budget.slice(left, || {
        sb.ctx.with(|ctx| -> Result<Started, Failure> {
            let fail = |ctx: &Ctx<'_>| {
                let v = ctx.catch();
                let (kind, message) = describe(ctx, &v, budget);
                Failure { kind, message }
            };
            let f = func.restore(&ctx).map_err(|e| Failure {
                kind: FailureKind::Dead,
                message: e.to_string(),
            })?;
            let mut js_args = Vec::new();
            for a in &args {
                js_args.push(ctx.json_parse(a.to_string()).map_err(|_| fail(&ctx))?);
            }
            let r: Value = match js_args.len() {
                1 => f.call((js_args[0].clone(),)),
                _ => f.call((js_args[0].clone(), js_args[1].clone())),
            }
            .map_err(|_| fail(&ctx))?;
            match r.clone().into_promise() {
                Some(p) => Ok(Started::Waiting(Persistent::save(&ctx, p))),
                None => Ok(Started::Done(to_json(&ctx, r, budget))),
            }
        })
    });
    let promise = match started? {
        Started::Waiting(p) => p,
        Started::Done(r) => return r,
    };
    loop {
        sb.pump(budget, left)?;
        let settled = budget.slice(left, || {
            sb.ctx.with(|ctx| -> Option<Result<Json, Failure>> {
                let p = promise.clone().restore(&ctx).ok()?;
                match p.state() {
                    PromiseState::Pending => None,
                    PromiseState::Resolved => {
                        let v: Value = match p.result::<Value>() {
                            Some(Ok(v)) => v,
                            _ => return Some(Err(catch_failure(&ctx, budget))),
                        };
                        Some(to_json(&ctx, v, budget))
                    }
                    PromiseState::Rejected => {
                        let _ = p.result::<Value>();
                        Some(Err(catch_failure(&ctx, budget)))
                    }
                }
            })
        });
        if let Some(r) = settled {
            return r;
        }
        if budget.tripped.load(Ordering::SeqCst) {
            return Err(Failure {
                kind: FailureKind::CpuBudget,
                message: String::new(),
            });
        }
        let next_timer = sb.fire_timers(budget, left)?;
        // timers may have settled it
        let pending = budget.slice(left, || {
            sb.ctx.with(|ctx| {
                promise
                    .clone()
                    .restore(&ctx)
                    .map(|p| p.state() == PromiseState::Pending)
                    .unwrap_or(false)
            })
        });
        if !pending {
            continue;
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(Failure {
                kind: FailureKind::Deadline,
                message: String::new(),
            });
        }
        let wait_until = next_timer.map_or(deadline, |t| t.min(deadline));
        match rx.recv_timeout(wait_until.saturating_duration_since(now)) {
            Ok(Inbox::OpDone { op, result }) => sb.complete_op(op, result),
            Ok(Inbox::Memory { reply }) => {
                let _ = reply.send(sb.memory(memory_limit));
            }
            Ok(Inbox::Shutdown) => {
                queue.push_front(Inbox::Shutdown);
                return Err(Failure {
                    kind: FailureKind::Dead,
                    message: format!("{what}: the plugin was unloaded during the call"),
                });
            }
            Ok(other) => queue.push_back(other),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                return Err(Failure {
                    kind: FailureKind::Dead,
                    message: format!("{what}: the host went away"),
                });
            }
        }
        if budget.kill.load(Ordering::SeqCst) {
            return Err(Failure {
                kind: FailureKind::Killed,
                message: String::new(),
            });
        }
    }
}

fn catch_failure(ctx: &Ctx<'_>, budget: &Budget) -> Failure {
    let v = ctx.catch();
    let (kind, message) = describe(ctx, &v, budget);
    Failure { kind, message }
}

fn to_json<'js>(ctx: &Ctx<'js>, v: Value<'js>, budget: &Budget) -> Result<Json, Failure> {
    if v.is_undefined() {
        return Ok(Json::Null);
    }
    let s = match ctx.json_stringify(v) {
        Ok(Some(s)) => s.to_string().map_err(|e| Failure {
            kind: FailureKind::BadOutput,
            message: e.to_string(),
        })?,
        Ok(None) => return Ok(Json::Null),
        Err(_) => {
            let f = catch_failure(ctx, budget);
            return Err(if f.kind == FailureKind::Threw {
                Failure {
                    kind: FailureKind::BadOutput,
                    message: format!("its result is not JSON-serialisable: {}", f.message),
                }
            } else {
                f
            });
        }
    };
    if s.len() > MAX_OUTPUT_BYTES {
        return Err(Failure {
            kind: FailureKind::BadOutput,
            message: format!(
                "its result is {} bytes of JSON, more than the {MAX_OUTPUT_BYTES} byte limit",
                s.len()
            ),
        });
    }
    serde_json::from_str(&s).map_err(|e| Failure {
        kind: FailureKind::BadOutput,
        message: format!("its result is not valid JSON: {e}"),
    })
}

/// Start a plugin's sandbox thread. `ready` receives its tools, or why it could not start.
pub fn spawn(
    cfg: SandboxConfig,
    rx: Receiver<Inbox>,
    ops_tx: UnboundedSender<HostOp>,
    budget: Arc<Budget>,
    ready: oneshot::Sender<Result<Vec<ToolDecl>, String>>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    let name = format!("plugin-{}", cfg.manifest.id);
    let thread_stack = (cfg.limits.stack_bytes * 4).max(8 * 1024 * 1024);
    std::thread::Builder::new()
        .name(name)
        .stack_size(thread_stack)
        .spawn(move || {
            let policy = match NetPolicy::new(&cfg.manifest.id, &cfg.manifest.permissions.net) {
                Ok(p) => p,
                Err(e) => {
                    let _ = ready.send(Err(e.to_string()));
                    return;
                }
            };
            let env = Rc::new(Env {
                plugin_id: cfg.manifest.id.clone(),
                manifest: cfg.manifest.clone(),
                policy,
                store: cfg.store.clone(),
                taken: cfg.taken.clone(),
                ops_tx,
                next_id: Cell::new(0),
                in_render: Cell::new(false),
            });
            match Sandbox::start(&cfg, env.clone(), &budget) {
                Ok((sb, decls)) => {
                    let _ = ready.send(Ok(decls));
                    Worker {
                        cfg,
                        env,
                        budget,
                        rx,
                        sandbox: Some(sb),
                        broken: None,
                        queue: VecDeque::new(),
                        shutting_down: false,
                    }
                    .run();
                }
                Err(e) => {
                    let _ = ready.send(Err(e));
                }
            }
        })
}

/// A `Sender` to a sandbox thread.
pub type InboxTx = Sender<Inbox>;
