//! Chat turns over SSE, Stop, the persisted conversations and the turn journal.

use super::conversations::WORKSPACE_KEY;
use super::editor::{Utf16Range, ensure_session_with_note};
use super::{ApiError, ApiResult, PanelState, lock};
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};
use sidenote_agent::{
    Agent, AgentError, CancellationToken, FocusedNote, NoteContext, RevertError, TranscriptEntry,
    TurnEvent, TurnRequest, list_turns, revert_turn,
};
use sidenote_ai::{AiError, Message};
use sidenote_store::{Actor, JournalQuery};
use std::convert::Infallible;
use tokio::sync::mpsc;

#[derive(Deserialize)]
pub(crate) struct ChatBody {
    message: String,
    /// The note open in the editor (none: the workspace conversation).
    note_id: Option<String>,
    /// The editor selection (UTF-16 offsets of the note text).
    selection: Option<Utf16Range>,
    cursor: Option<usize>,
}

/// How a provider that cannot be built is reported.
pub(crate) fn provider_error(e: AiError) -> ApiError {
    match e {
        AiError::NotConfigured(m) => ApiError::new(StatusCode::CONFLICT, "not_configured", m),
        e @ AiError::RemoteNotAllowed { .. } => {
            ApiError::new(StatusCode::CONFLICT, "remote_blocked", e.to_string())
        }
        e => ApiError::new(StatusCode::BAD_GATEWAY, "provider_error", e.to_string()),
    }
}

/// `POST /api/chat`: run one turn; the response is an SSE stream of the turn's events.
pub(crate) async fn start(
    State(st): State<PanelState>,
    Json(b): Json<ChatBody>,
) -> ApiResult<Response> {
    let message = b.message.trim().to_string();
    if message.is_empty() {
        return Err(ApiError::bad_request("the message is empty"));
    }
    let provider = super::settings::provider(&st).map_err(provider_error)?;
    let agent = Agent::new(provider, st.registry.clone()).with_store(st.store.clone());
    let (context, session, key) = match b.note_id.as_deref().filter(|s| !s.is_empty()) {
        Some(id) => {
            let (session, note) = ensure_session_with_note(&st, id)?;
            let notebook = st.store.notebook(&note.parent_id)?.map(|n| n.title);
            let focused = {
                let mut s = lock(&session);
                s.set_selection_utf16(b.selection.as_ref().and_then(Utf16Range::range));
                if let Some(c) = b.cursor {
                    s.set_cursor_utf16(c);
                }
                FocusedNote::from_session(&s, note.title, note.parent_id, notebook)
            };
            (
                NoteContext::with_note(focused),
                Some(session),
                id.to_string(),
            )
        }
        None => (NoteContext::workspace(), None, WORKSPACE_KEY.to_string()),
    };
    let history = st.conversations.load(&key)?.history;
    let turn_id = sidenote_store::new_id();
    let cancel = CancellationToken::new();
    {
        let mut turns = lock(&st.turns);
        if turns.values().any(|(k, _)| *k == key) {
            return Err(ApiError::new(
                StatusCode::CONFLICT,
                "busy",
                "a turn is already running in this conversation; wait for it or press Stop",
            ));
        }
        turns.insert(turn_id.clone(), (key.clone(), cancel.clone()));
    }
    let mut req = TurnRequest::new(context, message.clone());
    req.history = history;
    req.session = session;
    req.cancel = cancel;
    req.turn_id = Some(turn_id);
    let (out_tx, out_rx) = mpsc::channel::<Value>(256);
    tokio::spawn(run_turn(st, agent, req, key, message, out_tx));
    let stream = futures::stream::unfold(out_rx, |mut rx| async move {
        let v = rx.recv().await?;
        Some((
            Ok::<_, Infallible>(Event::default().data(v.to_string())),
            rx,
        ))
    });
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response())
}

/// Removes a turn from the running set when dropped.
struct Running {
    turns: std::sync::Arc<
        std::sync::Mutex<std::collections::HashMap<String, (String, CancellationToken)>>,
    >,
    turn_id: String,
}

impl Drop for Running {
    fn drop(&mut self) {
        lock(&self.turns).remove(&self.turn_id);
    }
}

/// Run the turn, forward its events, then store it in the conversation and send `saved`.
/// If the browser goes away mid-turn the turn is cancelled.
async fn run_turn(
    st: PanelState,
    agent: Agent,
    mut req: TurnRequest,
    key: String,
    message: String,
    out: mpsc::Sender<Value>,
) {
    let turn_id = req.turn_id.clone().unwrap_or_default();
    // However the task ends, the conversation is no longer busy.
    let _running = Running {
        turns: st.turns.clone(),
        turn_id: turn_id.clone(),
    };
    let (tx, mut rx) = mpsc::channel::<TurnEvent>(256);
    req.events = Some(tx);
    let cancel = req.cancel.clone();
    let fwd_out = out.clone();
    let forward = tokio::spawn(async move {
        let mut gone = false;
        while let Some(ev) = rx.recv().await {
            if gone {
                continue;
            }
            let v = serde_json::to_value(&ev).unwrap_or(Value::Null);
            if fwd_out.send(v).await.is_err() {
                gone = true;
                cancel.cancel();
            }
        }
    });
    let outcome = agent.run(req).await;
    let _ = forward.await;

    let (messages, item) = match outcome {
        Ok(done) => {
            let item = assistant_item(&turn_id, &done.reply, &done.transcript, None);
            (done.messages, item)
        }
        Err(f) => {
            let item = assistant_item(&turn_id, "", &f.transcript, Some(&f.error));
            let note = format!("(This turn did not finish: {})", f.error.message);
            (
                vec![Message::user(message.clone()), Message::assistant(note)],
                item,
            )
        }
    };
    let writes = st
        .store
        .journal(&JournalQuery {
            actor: Some(Actor::Agent(turn_id.clone()).to_string()),
            ..Default::default()
        })
        .map(|rows| rows.len())
        .unwrap_or(0);
    let mut item = item;
    item["writes"] = json!(writes);
    let user = json!({"role": "user", "text": message, "time": sidenote_store::now_ms()});
    if let Err(e) = st.conversations.append(&key, messages, vec![user, item]) {
        tracing::error!("cannot save the conversation {key}: {e:#}");
        let _ = out
            .send(json!({"type": "error", "code": "internal",
                         "message": format!("the conversation could not be saved: {e:#}")}))
            .await;
    }
    lock(&st.turns).remove(&turn_id);
    let _ = out
        .send(json!({"type": "saved", "turn_id": turn_id, "writes": writes}))
        .await;
}

fn assistant_item(
    turn_id: &str,
    reply: &str,
    transcript: &[TranscriptEntry],
    error: Option<&AgentError>,
) -> Value {
    let activity: Vec<Value> = transcript
        .iter()
        .map(
            |t| json!({"call_id": t.call_id, "tool": t.tool, "text": t.activity, "error": t.error}),
        )
        .collect();
    let renders: Vec<&Value> = transcript
        .iter()
        .filter_map(|t| t.render.as_ref())
        .collect();
    json!({
        "role": "assistant",
        "turn_id": turn_id,
        "text": reply,
        "activity": activity,
        "renders": renders,
        "error": error,
        "time": sidenote_store::now_ms(),
    })
}

/// `POST /api/chat/{turn}/stop`
pub(crate) async fn stop(
    State(st): State<PanelState>,
    Path(turn): Path<String>,
) -> ApiResult<Json<Value>> {
    match lock(&st.turns).get(&turn) {
        Some((_, cancel)) => {
            cancel.cancel();
            Ok(Json(json!({"stopping": turn})))
        }
        None => Err(ApiError::not_found(format!("no running turn {turn}"))),
    }
}

fn check_key(key: &str) -> ApiResult<()> {
    if key == WORKSPACE_KEY || sidenote_store::is_id(key) {
        Ok(())
    } else {
        Err(ApiError::bad_request(format!(
            "a conversation key is a note id or \"{WORKSPACE_KEY}\", not {key:?}"
        )))
    }
}

pub(crate) async fn conversation(
    State(st): State<PanelState>,
    Path(key): Path<String>,
) -> ApiResult<Json<Value>> {
    check_key(&key)?;
    let c = st.conversations.load(&key)?;
    let running = lock(&st.turns)
        .iter()
        .find(|(_, (k, _))| *k == key)
        .map(|(t, _)| t.clone());
    Ok(Json(
        json!({"key": key, "items": c.items, "running": running}),
    ))
}

pub(crate) async fn reset_conversation(
    State(st): State<PanelState>,
    Path(key): Path<String>,
) -> ApiResult<Json<Value>> {
    check_key(&key)?;
    if lock(&st.turns).values().any(|(k, _)| *k == key) {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "busy",
            "a turn is running in this conversation; stop it first",
        ));
    }
    let existed = st.conversations.reset(&key)?;
    Ok(Json(json!({"reset": existed})))
}

pub(crate) async fn turns(State(st): State<PanelState>) -> ApiResult<Json<Value>> {
    let list = list_turns(&st.store, 50)?;
    Ok(Json(
        serde_json::to_value(list).map_err(|e| ApiError::internal(e.to_string()))?,
    ))
}

pub(crate) async fn revert(
    State(st): State<PanelState>,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    match revert_turn(&st.store, &id) {
        Ok(report) => Ok(Json(
            serde_json::to_value(report).map_err(|e| ApiError::internal(e.to_string()))?,
        )),
        Err(e @ RevertError::UnknownTurn(_)) => Err(ApiError::not_found(e.to_string())),
        Err(RevertError::Store(e)) => Err(e.into()),
    }
}
