//! Notebooks, notes, tags and search.

use super::{ApiError, ApiResult, PanelState};
use axum::Json;
use axum::extract::{Path, Query, State};
use serde::Deserialize;
use serde_json::{Value, json};
use sidenote_store::{Actor, NewNote, NotePatch};

pub(crate) async fn notebooks(State(st): State<PanelState>) -> ApiResult<Json<Value>> {
    Ok(Json(
        serde_json::to_value(st.store.list_notebooks()?)
            .map_err(|e| ApiError::internal(e.to_string()))?,
    ))
}

#[derive(Deserialize)]
pub(crate) struct NewNotebook {
    title: String,
    parent_id: Option<String>,
}

pub(crate) async fn create_notebook(
    State(st): State<PanelState>,
    Json(b): Json<NewNotebook>,
) -> ApiResult<Json<Value>> {
    let nb = st.store.create_notebook(
        &Actor::Panel,
        &b.title,
        b.parent_id.as_deref().filter(|s| !s.is_empty()),
    )?;
    Ok(Json(
        serde_json::to_value(nb).map_err(|e| ApiError::internal(e.to_string()))?,
    ))
}

#[derive(Deserialize)]
pub(crate) struct ListQuery {
    notebook: Option<String>,
    q: Option<String>,
    limit: Option<usize>,
}

/// `GET /api/notes?notebook=ID` (newest first) or `?q=QUERY` (Joplin search syntax).
pub(crate) async fn list(
    State(st): State<PanelState>,
    Query(q): Query<ListQuery>,
) -> ApiResult<Json<Value>> {
    let limit = q.limit.unwrap_or(200).clamp(1, 1000);
    if let Some(query) = q.q.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        let found = st.store.search(query, limit)?;
        let notes: Vec<Value> = found
            .results
            .iter()
            .map(|h| {
                json!({"id": h.id, "title": h.title, "parent_id": h.notebook_id,
                       "updated_time": h.updated_time, "snippet": h.snippet})
            })
            .collect();
        return Ok(Json(json!({"notes": notes, "total": found.total})));
    }
    let notebook = q.notebook.as_deref().filter(|s| !s.is_empty());
    let notes = st.store.list_notes(notebook, false, limit)?;
    let total = notes.len();
    Ok(Json(json!({"notes": notes, "total": total})))
}

pub(crate) fn note_json(st: &PanelState, id: &str) -> ApiResult<Value> {
    let note = match st.store.note(id)? {
        Some(n) if !n.is_trashed() => n,
        _ => return Err(ApiError::not_found(format!("Note not found: {id}"))),
    };
    let tags: Vec<String> = st
        .store
        .note_tags(id)?
        .into_iter()
        .map(|t| t.title)
        .collect();
    let mut v = serde_json::to_value(&note).map_err(|e| ApiError::internal(e.to_string()))?;
    v["tags"] = json!(tags);
    Ok(v)
}

pub(crate) async fn read(
    State(st): State<PanelState>,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    Ok(Json(note_json(&st, &id)?))
}

#[derive(Deserialize)]
pub(crate) struct NewNoteBody {
    title: String,
    #[serde(default)]
    body: String,
    parent_id: Option<String>,
}

pub(crate) async fn create(
    State(st): State<PanelState>,
    Json(b): Json<NewNoteBody>,
) -> ApiResult<Json<Value>> {
    let note = st.store.create_note(
        &Actor::Panel,
        NewNote {
            title: b.title,
            body: b.body,
            parent_id: b.parent_id.filter(|s| !s.is_empty()),
            ..Default::default()
        },
    )?;
    Ok(Json(note_json(&st, &note.id)?))
}

#[derive(Deserialize)]
pub(crate) struct UpdateBody {
    title: Option<String>,
    parent_id: Option<String>,
}

/// Title and notebook changes; the body is edited through the editor session.
pub(crate) async fn update(
    State(st): State<PanelState>,
    Path(id): Path<String>,
    Json(b): Json<UpdateBody>,
) -> ApiResult<Json<Value>> {
    st.store.update_note(
        &Actor::Panel,
        &id,
        NotePatch {
            title: b.title,
            parent_id: b.parent_id,
            ..Default::default()
        },
    )?;
    Ok(Json(note_json(&st, &id)?))
}

pub(crate) async fn trash(
    State(st): State<PanelState>,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    st.store.trash_note(&Actor::Panel, &id)?;
    super::lock(&st.sessions).remove(&id);
    Ok(Json(json!({"trashed": id})))
}

pub(crate) async fn tags(State(st): State<PanelState>) -> ApiResult<Json<Value>> {
    Ok(Json(
        serde_json::to_value(st.store.list_tags(false)?)
            .map_err(|e| ApiError::internal(e.to_string()))?,
    ))
}

#[derive(Deserialize)]
pub(crate) struct TagBody {
    tag: String,
}

pub(crate) async fn add_tag(
    State(st): State<PanelState>,
    Path(id): Path<String>,
    Json(b): Json<TagBody>,
) -> ApiResult<Json<Value>> {
    st.store.add_tag(&Actor::Panel, &id, &b.tag)?;
    Ok(Json(note_json(&st, &id)?))
}

pub(crate) async fn remove_tag(
    State(st): State<PanelState>,
    Path((id, tag)): Path<(String, String)>,
) -> ApiResult<Json<Value>> {
    st.store.remove_tag(&Actor::Panel, &id, &tag)?;
    Ok(Json(note_json(&st, &id)?))
}
