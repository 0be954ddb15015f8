//! The async side: loads plugins into the registry, forwards tool calls and renders to their
//! sandbox threads, performs their fetches and data calls, counts failures and disables a
//! plugin that keeps failing.

use crate::manifest::{Manifest, Permissions, disabled_reason_key, enabled_key};
use crate::net::{self, NetPolicy};
use crate::render::{self, ImageSource};
use crate::sandbox::{
    self, Budget, Failure, FailureKind, HostOp, Inbox, InboxTx, MemoryStats, SandboxConfig,
    ToolDecl,
};
use crate::{HostOptions, PluginError};
use serde::Serialize;
use serde_json::Value;
use sidenote_store::{Actor, Store};
use sidenote_tools::{
    Access, Registry, RenderSpec, Tool, ToolCtx, ToolError, ToolOutput, ToolSource,
};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::oneshot;

/// Largest plugin script we load.
const MAX_SCRIPT_BYTES: u64 = 4 * 1024 * 1024;
/// Largest plugin folder `install` copies.
const MAX_INSTALL_BYTES: u64 = 32 * 1024 * 1024;
const MAX_INSTALL_FILES: usize = 2000;
/// Extra time the host waits for a sandbox beyond its own deadlines before stopping it.
const GRACE: Duration = Duration::from_secs(5);

/// `<workspace>/plugins`: one folder per installed plugin, named by its id.
pub fn plugins_dir(workspace: &Path) -> PathBuf {
    workspace.join("plugins")
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// What loading a plugin did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoadReport {
    pub id: String,
    pub name: String,
    pub version: String,
    /// The tools it registered, in order.
    pub tools: Vec<String>,
}

/// One plugin as `sidenote plugin list` shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PluginStatus {
    pub id: String,
    pub name: String,
    pub version: String,
    pub description: String,
    pub dir: PathBuf,
    pub enabled: bool,
    /// Running, with its tools in the registry.
    pub loaded: bool,
    pub tools: Vec<String>,
    pub permissions: Permissions,
    /// Why it is not loaded, when loading failed.
    pub error: Option<String>,
    /// Why it was disabled automatically, if it was.
    pub disabled_reason: Option<String>,
}

/// One running plugin: its sandbox thread and failure accounting, shared by its tools.
struct Running {
    manifest: Manifest,
    dir: PathBuf,
    tx: InboxTx,
    budget: Arc<Budget>,
    options: HostOptions,
    decls: Vec<ToolDecl>,
    access: Access,
    failures: AtomicU32,
    disabled: Mutex<Option<String>>,
    registry: Registry,
    store: Store,
    http: reqwest::Client,
    policy: NetPolicy,
}

impl Running {
    fn id(&self) -> &str {
        &self.manifest.id
    }

    fn tool_ids(&self) -> Vec<String> {
        self.decls.iter().map(|d| d.id.clone()).collect()
    }

    fn disabled_message(&self) -> Option<String> {
        lock(&self.disabled).clone()
    }

    /// Send a message and wait for the sandbox's answer (or give up and stop it).
    async fn ask(
        &self,
        what: &str,
        make: impl FnOnce(sandbox::CallReply) -> Inbox,
        wait: Duration,
    ) -> Result<Value, Failure> {
        if let Some(msg) = self.disabled_message() {
            return Err(Failure {
                kind: FailureKind::Dead,
                message: msg,
            });
        }
        let (reply, rx) = oneshot::channel();
        if self.tx.send(make(reply)).is_err() {
            return Err(Failure {
                kind: FailureKind::Dead,
                message: format!("{what}: the plugin is not running (its sandbox stopped)"),
            });
        }
        match tokio::time::timeout(wait, rx).await {
            Ok(Ok(r)) => r,
            Ok(Err(_)) => Err(Failure {
                kind: FailureKind::Dead,
                message: format!("{what}: the plugin stopped unexpectedly"),
            }),
            Err(_) => {
                self.budget.kill();
                Err(Failure {
                    kind: FailureKind::Killed,
                    message: format!(
                        "{what} did not answer within {} s and was stopped; the plugin was restarted",
                        wait.as_secs()
                    ),
                })
            }
        }
    }

    async fn call(&self, tool: &str, input: Value) -> Result<Value, String> {
        let l = &self.options.limits;
        let what = format!("plugin '{}' tool '{tool}'", self.id());
        let r = self
            .ask(
                &what,
                |reply| Inbox::Call {
                    tool: tool.to_string(),
                    input,
                    reply,
                },
                l.wall_per_call + l.cpu_per_call + GRACE,
            )
            .await;
        match r {
            Ok(v) => {
                self.failures.store(0, Ordering::SeqCst);
                Ok(v)
            }
            Err(f) => Err(self.record_failure(f)),
        }
    }

    /// Count a failure; disable the plugin when it keeps failing. Returns the message.
    fn record_failure(&self, f: Failure) -> String {
        if !f.kind.counts_toward_disable() || self.disabled_message().is_some() {
            return f.message;
        }
        let n = self.failures.fetch_add(1, Ordering::SeqCst) + 1;
        let max = self.options.max_consecutive_failures.max(1);
        if n < max {
            return f.message;
        }
        let reason = format!(
            "plugin '{}' was disabled after {n} failures in a row (last: {}). Fix it, then run \
             `sidenote plugin enable {}`.",
            self.id(),
            f.message,
            self.id()
        );
        self.disable(&reason);
        format!("{} {reason}", f.message)
    }

    fn disable(&self, reason: &str) {
        *lock(&self.disabled) = Some(reason.to_string());
        tracing::error!(plugin = %self.id(), "{reason}");
        self.registry.remove_plugin(self.id());
        let _ = self.store.set_setting(&enabled_key(self.id()), "false");
        let _ = self
            .store
            .set_setting(&disabled_reason_key(self.id()), reason);
        self.stop();
    }

    fn stop(&self) {
        let _ = self.tx.send(Inbox::Shutdown);
        self.budget.kill();
    }

    async fn render(
        &self,
        tool: &str,
        input: &Value,
        output: &Value,
    ) -> Result<Option<Value>, String> {
        let l = &self.options.limits;
        let what = format!("plugin '{}' render of '{tool}'", self.id());
        let spec = self
            .ask(
                &what,
                |reply| Inbox::Render {
                    tool: tool.to_string(),
                    input: input.clone(),
                    output: output.clone(),
                    reply,
                },
                l.render_wall + l.render_cpu + GRACE,
            )
            .await
            .map_err(|f| f.message)?;
        if spec.is_null() {
            return Ok(None);
        }
        let mut spec = spec;
        let pending = render::validate(&spec).map_err(|e| format!("{what}: {e}"))?;
        for img in pending {
            let data_url = match &img.source {
                ImageSource::Data => continue,
                ImageSource::Resource(id) => self.resource_image(id).await,
                ImageSource::Remote(url) => {
                    // a host the manifest does not list is a plugin error, not a network one
                    self.policy
                        .check(url)
                        .map_err(|e| format!("{what}: image {e}"))?;
                    self.remote_image(url).await
                }
            };
            match data_url {
                Ok(u) => {
                    if let Some(slot) = spec.pointer_mut(&img.pointer) {
                        *slot = Value::String(u);
                    }
                }
                Err(e) => {
                    tracing::warn!(plugin = %self.id(), "{what}: image dropped: {e}");
                    drop_field(&mut spec, &img.pointer);
                }
            }
        }
        Ok(Some(spec))
    }

    async fn resource_image(&self, id: &str) -> Result<String, String> {
        let store = self.store.clone();
        let id = id.to_string();
        tokio::task::spawn_blocking(move || {
            let res = store
                .resource(&id)
                .map_err(|e| e.to_string())?
                .ok_or_else(|| format!("no resource '{id}'"))?;
            let bytes = std::fs::read(store.resource_path(&res)).map_err(|e| e.to_string())?;
            render::image_data_url(&res.mime, &bytes)
        })
        .await
        .map_err(|e| e.to_string())?
    }

    async fn remote_image(&self, url: &str) -> Result<String, String> {
        let got = net::fetch(
            &self.http,
            &self.policy,
            &self.options.fetch,
            url,
            &net::FetchOptions::default(),
        )
        .await?;
        if !(200..300).contains(&got.status) {
            return Err(format!("{url} answered HTTP {}", got.status));
        }
        render::image_data_url(&got.content_type, &got.body)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // the sandbox thread (and its ops task) end when nothing uses the plugin any more
        let _ = self.tx.send(Inbox::Shutdown);
    }
}

fn drop_field(spec: &mut Value, pointer: &str) {
    if let Some((parent, key)) = pointer.rsplit_once('/')
        && let Some(Value::Object(o)) = spec.pointer_mut(parent)
    {
        o.remove(key);
    }
}

/// A registry tool backed by a plugin's handler.
pub struct PluginTool {
    running: Arc<Running>,
    decl: ToolDecl,
    access: Access,
}

impl PluginTool {
    /// The plugin that registered it.
    pub fn plugin_id(&self) -> &str {
        self.running.id()
    }

    /// Run the plugin's `render(input, output)` and validate the result: `Ok(None)` when
    /// the tool has no render function, `Err` with the reason when it failed or returned
    /// something outside the RenderSpec vocabulary.
    pub async fn render_checked(
        &self,
        input: &Value,
        output: &Value,
    ) -> Result<Option<RenderSpec>, String> {
        if !self.decl.has_render {
            return Ok(None);
        }
        self.running.render(&self.decl.id, input, output).await
    }
}

#[async_trait::async_trait]
impl Tool for PluginTool {
    fn id(&self) -> &str {
        &self.decl.id
    }
    fn description(&self) -> &str {
        &self.decl.description
    }
    fn input_schema(&self) -> &Value {
        &self.decl.input_schema
    }
    fn access(&self) -> Access {
        self.access
    }
    async fn call(&self, input: Value, _ctx: &ToolCtx) -> Result<ToolOutput, ToolError> {
        self.running
            .call(&self.decl.id, input)
            .await
            .map(ToolOutput::Json)
            .map_err(ToolError::Recoverable)
    }
    async fn render(&self, input: &Value, output: &Value) -> Option<RenderSpec> {
        match self.render_checked(input, output).await {
            Ok(spec) => spec,
            Err(e) => {
                tracing::warn!(plugin = %self.plugin_id(), "{e}; showing the output as JSON");
                None
            }
        }
    }
    fn activity(&self, _input: &Value, output: Option<&ToolOutput>) -> String {
        match output {
            None => format!(
                "Asking plugin {}: {}",
                self.running.manifest.name, self.decl.id
            ),
            Some(_) => format!("Plugin {} answered", self.running.manifest.name),
        }
    }
}

struct Inner {
    dir: PathBuf,
    store: Store,
    registry: Registry,
    options: HostOptions,
    http: reqwest::Client,
    loaded: Mutex<BTreeMap<String, Arc<Running>>>,
    /// Folders that failed to load, with the file times they had then (not retried by
    /// [`PluginHost::sync`] until they change).
    failed_fingerprints: Mutex<HashMap<PathBuf, u128>>,
    /// Load failures, by plugin id (or folder name when the manifest is unreadable).
    errors: Mutex<BTreeMap<String, String>>,
}

/// Loads and runs plugins. Cheap to clone.
#[derive(Clone)]
pub struct PluginHost {
    inner: Arc<Inner>,
}

impl PluginHost {
    /// A host for `<workspace>/plugins` that adds plugin tools to `registry`. Loads nothing.
    pub fn new(
        workspace: &Path,
        store: Store,
        registry: Registry,
        options: HostOptions,
    ) -> Result<PluginHost, PluginError> {
        Ok(PluginHost {
            inner: Arc::new(Inner {
                dir: plugins_dir(workspace),
                store,
                registry,
                options,
                http: net::client()?,
                loaded: Mutex::new(BTreeMap::new()),
                failed_fingerprints: Mutex::new(HashMap::new()),
                errors: Mutex::new(BTreeMap::new()),
            }),
        })
    }

    /// Start-up: a host with default limits that has loaded every enabled plugin in
    /// `<workspace>/plugins`. Call it after the built-in tools are registered (so collisions
    /// name them). A plugin that fails to load is logged and shown by [`PluginHost::status`];
    /// the others load anyway.
    pub async fn load_all(
        workspace: &Path,
        store: Store,
        registry: Registry,
    ) -> Result<PluginHost, PluginError> {
        let host = PluginHost::new(workspace, store, registry, HostOptions::default())?;
        host.load_installed().await;
        Ok(host)
    }

    /// Load every enabled plugin in the plugins folder that is not loaded yet.
    pub async fn load_installed(&self) -> Vec<Result<LoadReport, PluginError>> {
        self.load_installed_filtered(false).await
    }

    async fn load_installed_filtered(
        &self,
        skip_known_failures: bool,
    ) -> Vec<Result<LoadReport, PluginError>> {
        let mut out = Vec::new();
        for dir in self.installed_dirs() {
            let fp = fingerprint(&dir);
            if skip_known_failures && lock(&self.inner.failed_fingerprints).get(&dir) == Some(&fp) {
                continue;
            }
            let id = match Manifest::read(&dir) {
                Ok(m) => m.id,
                Err(e) => {
                    let key = dir_name(&dir);
                    tracing::warn!("plugin in {}: {e}", dir.display());
                    lock(&self.inner.errors).insert(key, e.to_string());
                    out.push(Err(e));
                    continue;
                }
            };
            if !self.is_enabled(&id) || lock(&self.inner.loaded).contains_key(&id) {
                continue;
            }
            let r = self.load_dir(&dir).await;
            if let Err(e) = &r {
                tracing::warn!(plugin = %id, "{e}");
                lock(&self.inner.failed_fingerprints).insert(dir.clone(), fp);
            }
            out.push(r);
        }
        out
    }

    fn installed_dirs(&self) -> Vec<PathBuf> {
        let Ok(rd) = std::fs::read_dir(&self.inner.dir) else {
            return Vec::new();
        };
        let mut dirs: Vec<PathBuf> = rd
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path())
            .filter(|p| p.join("manifest.json").is_file())
            .collect();
        dirs.sort();
        dirs
    }

    fn is_enabled(&self, id: &str) -> bool {
        self.inner
            .store
            .setting(&enabled_key(id))
            .ok()
            .flatten()
            .and_then(|v| sidenote_tools::toggles::parse_bool(&v))
            .unwrap_or(true)
    }

    /// Load the plugin in `dir` (any folder; `install` copies into the workspace first):
    /// run its script in a new sandbox and add its tools to the registry. Nothing is added
    /// when any of its tools is refused.
    pub async fn load_dir(&self, dir: &Path) -> Result<LoadReport, PluginError> {
        let r = self.load_dir_inner(dir).await;
        if let Err(e) = &r {
            let key = Manifest::read(dir)
                .map(|m| m.id)
                .unwrap_or_else(|_| dir_name(dir));
            lock(&self.inner.errors).insert(key, e.to_string());
        }
        r
    }

    async fn load_dir_inner(&self, dir: &Path) -> Result<LoadReport, PluginError> {
        let inner = &self.inner;
        let manifest = Manifest::read(dir)?;
        let id = manifest.id.clone();
        if lock(&inner.loaded).contains_key(&id) {
            return Err(PluginError::Conflict(format!(
                "plugin '{id}' is already loaded"
            )));
        }
        let main = dir.join(&manifest.main);
        let meta = std::fs::metadata(&main).map_err(|e| {
            PluginError::Load(format!(
                "plugin '{id}': cannot read {}: {e}",
                main.display()
            ))
        })?;
        if meta.len() > MAX_SCRIPT_BYTES {
            return Err(PluginError::Load(format!(
                "plugin '{id}': {} is larger than {MAX_SCRIPT_BYTES} bytes",
                manifest.main
            )));
        }
        let script = std::fs::read_to_string(&main).map_err(|e| {
            PluginError::Load(format!(
                "plugin '{id}': cannot read {}: {e}",
                main.display()
            ))
        })?;
        let taken: HashMap<String, String> = inner
            .registry
            .list()
            .into_iter()
            .map(|t| {
                let owner = match t.source {
                    ToolSource::Builtin => "a built-in tool".to_string(),
                    ToolSource::Plugin(p) => format!("plugin '{p}'"),
                };
                (t.id, owner)
            })
            .collect();
        let policy = NetPolicy::new(&id, &manifest.permissions.net)?;

        let (tx, rx) = std::sync::mpsc::channel();
        let (ops_tx, ops_rx) = tokio::sync::mpsc::unbounded_channel();
        let (ready_tx, ready_rx) = oneshot::channel();
        let budget = Budget::new();
        sandbox::spawn(
            SandboxConfig {
                manifest: manifest.clone(),
                script,
                limits: inner.options.limits.clone(),
                taken,
                store: Some(inner.store.clone()),
            },
            rx,
            ops_tx,
            budget.clone(),
            ready_tx,
        )
        .map_err(|e| PluginError::Internal(format!("cannot start a plugin thread: {e}")))?;
        tokio::spawn(run_ops(
            ops_rx,
            tx.clone(),
            OpsEnv {
                plugin_id: id.clone(),
                registry: inner.registry.clone(),
                http: inner.http.clone(),
                policy: policy.clone(),
                fetch: inner.options.fetch.clone(),
            },
        ));
        let wait = inner.options.limits.wall_per_call + inner.options.limits.cpu_per_call + GRACE;
        let decls = match tokio::time::timeout(wait, ready_rx).await {
            Ok(Ok(Ok(d))) => d,
            Ok(Ok(Err(e))) => return Err(PluginError::Load(e)),
            Ok(Err(_)) => {
                return Err(PluginError::Load(format!(
                    "plugin '{id}' failed to start: its sandbox stopped"
                )));
            }
            Err(_) => {
                budget.kill();
                let _ = tx.send(Inbox::Shutdown);
                return Err(PluginError::Load(format!(
                    "plugin '{id}' failed to start: its script did not finish within {} s",
                    wait.as_secs()
                )));
            }
        };
        let access = if manifest.can_write_notes() {
            Access::Write
        } else {
            Access::Read
        };
        let running = Arc::new(Running {
            manifest: manifest.clone(),
            dir: dir.to_path_buf(),
            tx,
            budget,
            options: inner.options.clone(),
            decls: decls.clone(),
            access,
            failures: AtomicU32::new(0),
            disabled: Mutex::new(None),
            registry: inner.registry.clone(),
            store: inner.store.clone(),
            http: inner.http.clone(),
            policy,
        });
        for decl in &decls {
            let tool = Arc::new(PluginTool {
                running: running.clone(),
                decl: decl.clone(),
                access,
            });
            if let Err(e) = inner.registry.add(tool, ToolSource::Plugin(id.clone())) {
                inner.registry.remove_plugin(&id);
                running.stop();
                return Err(PluginError::Load(format!("plugin '{id}': {e}")));
            }
        }
        if decls.is_empty() {
            tracing::warn!(plugin = %id, "the plugin registered no tools");
        }
        lock(&inner.loaded).insert(id.clone(), running);
        lock(&inner.errors).remove(&id);
        Ok(LoadReport {
            id,
            name: manifest.name,
            version: manifest.version,
            tools: decls.into_iter().map(|d| d.id).collect(),
        })
    }

    /// Stop a plugin and take its tools out of the registry. True when it was loaded.
    pub fn unload(&self, id: &str) -> bool {
        let running = lock(&self.inner.loaded).remove(id);
        match running {
            Some(r) => {
                self.inner.registry.remove_plugin(id);
                r.stop();
                true
            }
            None => false,
        }
    }

    /// Copy the plugin folder `src` into `<workspace>/plugins/<id>/`, enable it and load it.
    /// Refused when a plugin with that id is installed; nothing stays installed when it
    /// fails to load.
    pub async fn install(&self, src: &Path) -> Result<LoadReport, PluginError> {
        let manifest = Manifest::read(src)?;
        let id = manifest.id.clone();
        let dest = self.inner.dir.join(&id);
        if dest.exists() || lock(&self.inner.loaded).contains_key(&id) {
            return Err(PluginError::Conflict(format!(
                "plugin '{id}' is already installed; remove it first (`sidenote plugin remove {id}`)"
            )));
        }
        if !src.join(&manifest.main).is_file() {
            return Err(PluginError::Manifest(format!(
                "plugin '{id}': its main script '{}' is missing",
                manifest.main
            )));
        }
        std::fs::create_dir_all(&self.inner.dir).map_err(|e| PluginError::Io(e.to_string()))?;
        let mut budget = (0usize, 0u64);
        if let Err(e) = copy_dir(src, &dest, &mut budget) {
            let _ = std::fs::remove_dir_all(&dest);
            return Err(e);
        }
        let store = &self.inner.store;
        let _ = store.unset_setting(&disabled_reason_key(&id));
        store
            .set_setting(&enabled_key(&id), "true")
            .map_err(|e| PluginError::Io(e.to_string()))?;
        match self.load_dir(&dest).await {
            Ok(r) => Ok(r),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dest);
                let _ = store.unset_setting(&enabled_key(&id));
                lock(&self.inner.errors).remove(&id);
                Err(e)
            }
        }
    }

    /// Unload a plugin, delete its folder and its settings.
    pub async fn remove(&self, id: &str) -> Result<(), PluginError> {
        let dest = self.inner.dir.join(id);
        let was_loaded = self.unload(id);
        let installed = crate::manifest::valid_plugin_id(id) && dest.is_dir();
        if !installed && !was_loaded {
            return Err(PluginError::NotFound(id.to_string()));
        }
        if installed {
            std::fs::remove_dir_all(&dest)
                .map_err(|e| PluginError::Io(format!("cannot delete {}: {e}", dest.display())))?;
        }
        let prefix = format!("plugin.{id}.");
        if let Ok(all) = self.inner.store.settings() {
            for (k, _) in all.into_iter().filter(|(k, _)| k.starts_with(&prefix)) {
                let _ = self.inner.store.unset_setting(&k);
            }
        }
        lock(&self.inner.errors).remove(id);
        Ok(())
    }

    /// Switch a plugin on (clearing an automatic disable) and load it.
    pub async fn enable(&self, id: &str) -> Result<Option<LoadReport>, PluginError> {
        let dir = self.installed_dir(id)?;
        let store = &self.inner.store;
        store
            .set_setting(&enabled_key(id), "true")
            .map_err(|e| PluginError::Io(e.to_string()))?;
        let _ = store.unset_setting(&disabled_reason_key(id));
        if lock(&self.inner.loaded).contains_key(id) {
            return Ok(None);
        }
        self.load_dir(&dir).await.map(Some)
    }

    /// Switch a plugin off and unload it (its tools disappear from the registry).
    pub async fn disable(&self, id: &str) -> Result<(), PluginError> {
        self.installed_dir(id)?;
        self.inner
            .store
            .set_setting(&enabled_key(id), "false")
            .map_err(|e| PluginError::Io(e.to_string()))?;
        self.unload(id);
        Ok(())
    }

    fn installed_dir(&self, id: &str) -> Result<PathBuf, PluginError> {
        let dir = self.inner.dir.join(id);
        if crate::manifest::valid_plugin_id(id) && dir.join("manifest.json").is_file() {
            Ok(dir)
        } else {
            Err(PluginError::NotFound(id.to_string()))
        }
    }

    /// Installed plugins (and plugins loaded from elsewhere), by id.
    pub fn status(&self) -> Vec<PluginStatus> {
        let mut out: BTreeMap<String, PluginStatus> = BTreeMap::new();
        let loaded = lock(&self.inner.loaded).clone();
        let errors = lock(&self.inner.errors).clone();
        let reason = |id: &str| {
            self.inner
                .store
                .setting(&disabled_reason_key(id))
                .ok()
                .flatten()
        };
        for dir in self.installed_dirs() {
            match Manifest::read(&dir) {
                Ok(m) => {
                    let running = loaded.get(&m.id);
                    out.insert(
                        m.id.clone(),
                        PluginStatus {
                            enabled: self.is_enabled(&m.id),
                            loaded: running.is_some_and(|r| r.disabled_message().is_none()),
                            tools: running.map(|r| r.tool_ids()).unwrap_or_default(),
                            error: errors.get(&m.id).cloned(),
                            disabled_reason: reason(&m.id),
                            id: m.id,
                            name: m.name,
                            version: m.version,
                            description: m.description,
                            dir,
                            permissions: m.permissions,
                        },
                    );
                }
                Err(e) => {
                    let id = dir_name(&dir);
                    out.insert(
                        id.clone(),
                        PluginStatus {
                            id,
                            name: String::new(),
                            version: String::new(),
                            description: String::new(),
                            dir,
                            enabled: false,
                            loaded: false,
                            tools: Vec::new(),
                            permissions: Permissions::default(),
                            error: Some(e.to_string()),
                            disabled_reason: None,
                        },
                    );
                }
            }
        }
        for (id, r) in loaded {
            out.entry(id.clone()).or_insert_with(|| PluginStatus {
                id: id.clone(),
                name: r.manifest.name.clone(),
                version: r.manifest.version.clone(),
                description: r.manifest.description.clone(),
                dir: r.dir.clone(),
                enabled: true,
                loaded: r.disabled_message().is_none(),
                tools: r.tool_ids(),
                permissions: r.manifest.permissions.clone(),
                error: None,
                disabled_reason: r.disabled_message(),
            });
        }
        out.into_values().collect()
    }

    /// QuickJS heap figures for a loaded plugin.
    pub async fn memory(&self, id: &str) -> Option<MemoryStats> {
        let running = lock(&self.inner.loaded).get(id).cloned()?;
        let (reply, rx) = oneshot::channel();
        running.tx.send(Inbox::Memory { reply }).ok()?;
        tokio::time::timeout(Duration::from_secs(5), rx)
            .await
            .ok()?
            .ok()
    }

    /// A loaded plugin tool by id (for [`PluginTool::render_checked`]).
    pub fn tool(&self, tool_id: &str) -> Option<Arc<PluginTool>> {
        let loaded = lock(&self.inner.loaded);
        loaded.values().find_map(|r| {
            r.decls.iter().find(|d| d.id == tool_id).map(|d| {
                Arc::new(PluginTool {
                    running: r.clone(),
                    decl: d.clone(),
                    access: r.access,
                })
            })
        })
    }

    /// Bring the running plugins in line with the plugins folder and the enabled switches
    /// (changed by `sidenote plugin ...` in another process): load new or re-enabled
    /// plugins, unload removed or disabled ones. Their tools come and go in the registry, so
    /// MCP clients get `tools/list_changed`. Returns (loaded, unloaded) plugin ids.
    pub async fn sync(&self) -> (Vec<String>, Vec<String>) {
        let stale: Vec<String> = lock(&self.inner.loaded)
            .iter()
            .filter(|(id, r)| {
                r.dir.starts_with(&self.inner.dir)
                    && (!r.dir.join("manifest.json").is_file() || !self.is_enabled(id))
            })
            .map(|(id, _)| id.clone())
            .collect();
        for id in &stale {
            self.unload(id);
        }
        let loaded = self
            .load_installed_filtered(true)
            .await
            .into_iter()
            .filter_map(Result::ok)
            .map(|r| r.id)
            .collect();
        (loaded, stale)
    }

    /// Call [`PluginHost::sync`] every `every` until the host is dropped.
    pub fn watch(&self, every: Duration) -> tokio::task::JoinHandle<()> {
        let weak = Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                let Some(inner) = weak.upgrade() else { break };
                let host = PluginHost { inner };
                let (loaded, unloaded) = host.sync().await;
                if !loaded.is_empty() || !unloaded.is_empty() {
                    tracing::info!(?loaded, ?unloaded, "plugins changed on disk");
                }
            }
        })
    }

    /// Ids of the loaded plugins.
    pub fn loaded(&self) -> Vec<String> {
        lock(&self.inner.loaded).keys().cloned().collect()
    }

    /// Stop every plugin.
    pub fn shutdown(&self) {
        for id in self.loaded() {
            self.unload(&id);
        }
    }
}

/// Changes when a plugin's manifest or files are replaced.
fn fingerprint(dir: &Path) -> u128 {
    let mtime = |p: PathBuf| {
        std::fs::metadata(p)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos())
    };
    let main = Manifest::read(dir)
        .map(|m| dir.join(m.main))
        .unwrap_or_else(|_| dir.join("main.js"));
    mtime(dir.join("manifest.json")).wrapping_add(mtime(main))
}

fn dir_name(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Copy regular files and folders (symlinks are skipped), within size and count limits.
fn copy_dir(src: &Path, dest: &Path, used: &mut (usize, u64)) -> Result<(), PluginError> {
    let io = |e: std::io::Error| PluginError::Io(format!("cannot copy the plugin: {e}"));
    std::fs::create_dir_all(dest).map_err(io)?;
    for entry in std::fs::read_dir(src).map_err(io)? {
        let entry = entry.map_err(io)?;
        let ty = entry.file_type().map_err(io)?;
        let to = dest.join(entry.file_name());
        if ty.is_dir() {
            copy_dir(&entry.path(), &to, used)?;
        } else if ty.is_file() {
            used.0 += 1;
            used.1 += entry.metadata().map_err(io)?.len();
            if used.0 > MAX_INSTALL_FILES || used.1 > MAX_INSTALL_BYTES {
                return Err(PluginError::Io(format!(
                    "the plugin folder is too large (at most {MAX_INSTALL_FILES} files, \
                     {MAX_INSTALL_BYTES} bytes)"
                )));
            }
            std::fs::copy(entry.path(), &to).map_err(io)?;
        }
    }
    Ok(())
}

struct OpsEnv {
    plugin_id: String,
    registry: Registry,
    http: reqwest::Client,
    policy: NetPolicy,
    fetch: net::FetchLimits,
}

/// Perform a plugin's host operations, each in its own task; results go back to its inbox.
async fn run_ops(
    mut rx: tokio::sync::mpsc::UnboundedReceiver<HostOp>,
    inbox: InboxTx,
    env: OpsEnv,
) {
    let env = Arc::new(env);
    while let Some(op) = rx.recv().await {
        let env = env.clone();
        let inbox = inbox.clone();
        tokio::spawn(async move {
            let (id, result) = match op {
                HostOp::Fetch { op, url, options } => {
                    let r = net::fetch(&env.http, &env.policy, &env.fetch, &url, &options)
                        .await
                        .map(|f| net::response_json(f.status, &f.url, &f.content_type, &f.body));
                    (op, r)
                }
                HostOp::Data { op, tool, args } => {
                    let ctx = ToolCtx::new(Actor::Plugin(env.plugin_id.clone()));
                    let r = env
                        .registry
                        .call(&tool, args, &ctx)
                        .await
                        .map(|o| o.to_json())
                        .map_err(|e| e.to_string());
                    (op, r)
                }
            };
            let _ = inbox.send(Inbox::OpDone { op: id, result });
        });
    }
}
