//! Editor sessions: one [`EditorSession`] per open note, shared with running turns. Every
//! change of the text (typing, accept, undo, redo) is saved to the store at once: typing,
//! undo and redo as the `panel`, an accepted AI batch as the turn that proposed it.

use super::{ApiError, ApiResult, PanelState, lock};
use axum::Json;
use axum::extract::{Path, State};
use serde::Deserialize;
use serde_json::{Value, json};
use sidenote_agent::SharedSession;
use sidenote_editor::{EditorSession, ProposalId};
use sidenote_store::{Actor, Note, NotePatch};
use std::ops::Range;
use std::sync::{Arc, Mutex};

/// The session of note `id`, opened from the store when there is none; brought in line with
/// the store when the note changed behind it (e.g. a workspace tool updated it).
pub(crate) fn ensure_session(st: &PanelState, id: &str) -> ApiResult<SharedSession> {
    ensure_session_with_note(st, id).map(|(session, _)| session)
}

/// [`ensure_session`] that also hands back the note it read (so callers need not read it again).
pub(crate) fn ensure_session_with_note(
    st: &PanelState,
    id: &str,
) -> ApiResult<(SharedSession, Note)> {
    let note = match st.store.note(id)? {
        Some(n) if !n.is_trashed() => n,
        _ => return Err(ApiError::not_found(format!("Note not found: {id}"))),
    };
    let mut map = lock(&st.sessions);
    let session = map
        .entry(id.to_string())
        .or_insert_with(|| Arc::new(Mutex::new(EditorSession::new(id, note.body.clone()))))
        .clone();
    drop(map);
    {
        let mut s = lock(&session);
        if s.text() != note.body {
            s.set_text(&note.body);
            s.mark_saved();
        }
    }
    Ok((session, note))
}

fn existing(st: &PanelState, id: &str) -> ApiResult<SharedSession> {
    match lock(&st.sessions).get(id) {
        Some(s) => Ok(s.clone()),
        None => ensure_session(st, id),
    }
}

fn snapshot(s: &EditorSession) -> Value {
    json!({"text": s.text(), "state": s.state()})
}

/// Save the session text to the store when it changed.
fn save(st: &PanelState, s: &mut EditorSession, actor: &Actor) -> ApiResult<()> {
    if !s.is_dirty() {
        return Ok(());
    }
    st.store.update_note(
        actor,
        s.note_id(),
        NotePatch {
            body: Some(s.text().to_string()),
            ..Default::default()
        },
    )?;
    s.mark_saved();
    Ok(())
}

/// A UTF-16 range from the browser.
#[derive(Debug, Deserialize)]
pub(crate) struct Utf16Range {
    pub start: usize,
    pub end: usize,
}

impl Utf16Range {
    pub fn range(&self) -> Option<Range<usize>> {
        (self.start < self.end).then_some(self.start..self.end)
    }
}

pub(crate) async fn open(
    State(st): State<PanelState>,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    let session = ensure_session(&st, &id)?;
    let mut v = {
        let s = lock(&session);
        snapshot(&s)
    };
    v["note"] = super::notes::note_json(&st, &id)?;
    v["tags"] = v["note"]["tags"].clone();
    Ok(Json(v))
}

pub(crate) async fn get_state(
    State(st): State<PanelState>,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    let session = existing(&st, &id)?;
    let s = lock(&session);
    Ok(Json(snapshot(&s)))
}

#[derive(Deserialize)]
pub(crate) struct EditBody {
    text: String,
    selection: Option<Utf16Range>,
}

/// The browser's full text after typing: one undo step, saved as the panel.
pub(crate) async fn edit(
    State(st): State<PanelState>,
    Path(id): Path<String>,
    Json(b): Json<EditBody>,
) -> ApiResult<Json<Value>> {
    let session = existing(&st, &id)?;
    let mut s = lock(&session);
    let conflicts = s.set_text(&b.text);
    s.set_selection_utf16(b.selection.as_ref().and_then(Utf16Range::range));
    save(&st, &mut s, &Actor::Panel)?;
    let mut v = snapshot(&s);
    v["conflicts"] = json!(conflicts);
    Ok(Json(v))
}

#[derive(Deserialize)]
pub(crate) struct SelectionBody {
    selection: Option<Utf16Range>,
    cursor: Option<usize>,
}

pub(crate) async fn selection(
    State(st): State<PanelState>,
    Path(id): Path<String>,
    Json(b): Json<SelectionBody>,
) -> ApiResult<Json<Value>> {
    let session = existing(&st, &id)?;
    let mut s = lock(&session);
    s.set_selection_utf16(b.selection.as_ref().and_then(Utf16Range::range));
    if let Some(c) = b.cursor {
        s.set_cursor_utf16(c);
    }
    Ok(Json(json!({"state": s.state()})))
}

#[derive(Deserialize, Default)]
pub(crate) struct IdsBody {
    /// `None`: every pending proposal.
    ids: Option<Vec<ProposalId>>,
}

fn ids_body(b: Option<Json<IdsBody>>) -> IdsBody {
    b.map(|Json(b)| b).unwrap_or_default()
}

/// Accept some or all pending proposals: one undo step, saved once under the turn.
pub(crate) async fn accept(
    State(st): State<PanelState>,
    Path(id): Path<String>,
    body: Option<Json<IdsBody>>,
) -> ApiResult<Json<Value>> {
    let b = ids_body(body);
    let session = existing(&st, &id)?;
    let mut s = lock(&session);
    let outcome = match &b.ids {
        Some(ids) => {
            for pid in ids {
                if s.proposal(*pid).is_none() {
                    return Err(ApiError::not_found(format!("no proposal with id {pid}")));
                }
            }
            s.accept_many(ids)
        }
        None => s.accept_all(),
    };
    let actor = match outcome.turns.as_slice() {
        [t] => Actor::Agent(t.clone()),
        _ => Actor::Panel,
    };
    save(&st, &mut s, &actor)?;
    let mut v = snapshot(&s);
    v["outcome"] = serde_json::to_value(&outcome).map_err(|e| ApiError::internal(e.to_string()))?;
    Ok(Json(v))
}

pub(crate) async fn reject(
    State(st): State<PanelState>,
    Path(id): Path<String>,
    body: Option<Json<IdsBody>>,
) -> ApiResult<Json<Value>> {
    let b = ids_body(body);
    let session = existing(&st, &id)?;
    let mut s = lock(&session);
    let rejected: Vec<ProposalId> = match &b.ids {
        Some(ids) => {
            let mut out = Vec::new();
            for pid in ids {
                if s.reject(*pid)
                    .map_err(|e| ApiError::not_found(e.to_string()))?
                {
                    out.push(*pid);
                }
            }
            out
        }
        None => s.reject_all(),
    };
    let mut v = snapshot(&s);
    v["rejected"] = json!(rejected);
    Ok(Json(v))
}

pub(crate) async fn undo(st: State<PanelState>, id: Path<String>) -> ApiResult<Json<Value>> {
    history_step(st, id, EditorSession::undo)
}

pub(crate) async fn redo(st: State<PanelState>, id: Path<String>) -> ApiResult<Json<Value>> {
    history_step(st, id, EditorSession::redo)
}

/// Undo or redo one step, then save the note once if the text changed.
fn history_step(
    State(st): State<PanelState>,
    Path(id): Path<String>,
    step: fn(&mut EditorSession) -> bool,
) -> ApiResult<Json<Value>> {
    let session = existing(&st, &id)?;
    let mut s = lock(&session);
    let changed = step(&mut s);
    save(&st, &mut s, &Actor::Panel)?;
    let mut v = snapshot(&s);
    v["changed"] = json!(changed);
    Ok(Json(v))
}
