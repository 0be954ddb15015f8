//! The turn journal: every workspace write of a turn carries the actor `agent:<turn_id>`.
//! [`list_turns`] shows recent turns and what they wrote; [`revert_turn`] restores every item
//! a turn changed to its state before the turn, as a new (itself revertible) turn. An item
//! someone else changed after the turn is reported as a conflict and left alone.

use serde::Serialize;
use serde_json::Value;
use sidenote_store::{
    Actor, JournalEntry, JournalKind, JournalQuery, Note, NotePatch, Notebook, Store, StoreError,
};
use std::collections::BTreeMap;

/// One write of a turn.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnWrite {
    pub seq: i64,
    pub time: i64,
    pub kind: JournalKind,
    pub item_id: String,
    /// The note or notebook title (after the write, else before).
    pub title: Option<String>,
    /// For tag writes: the tag.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
}

/// A turn that wrote something.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnSummary {
    pub turn_id: String,
    pub first_time: i64,
    pub last_time: i64,
    pub writes: Vec<TurnWrite>,
}

fn turn_actor(turn_id: &str) -> String {
    Actor::Agent(turn_id.to_string()).to_string()
}

fn str_field(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

fn write_of(e: &JournalEntry) -> TurnWrite {
    let tag = match e.kind {
        JournalKind::TagAdd => str_field(&e.after, "tag"),
        JournalKind::TagRemove => str_field(&e.before, "tag"),
        _ => None,
    };
    TurnWrite {
        seq: e.seq,
        time: e.time,
        kind: e.kind,
        item_id: e.item_id.clone(),
        title: str_field(&e.after, "title").or_else(|| str_field(&e.before, "title")),
        tag,
    }
}

/// The most recent `limit` agent turns that wrote something, newest first.
pub fn list_turns(store: &Store, limit: usize) -> Result<Vec<TurnSummary>, StoreError> {
    let entries = store.journal(&JournalQuery {
        actor_prefix: Some("agent:".into()),
        ..Default::default()
    })?;
    let mut by_turn: BTreeMap<String, TurnSummary> = BTreeMap::new();
    let mut last_seq: BTreeMap<String, i64> = BTreeMap::new();
    for e in &entries {
        let Some(turn_id) = e.actor.strip_prefix("agent:") else {
            continue;
        };
        let s = by_turn
            .entry(turn_id.to_string())
            .or_insert_with(|| TurnSummary {
                turn_id: turn_id.to_string(),
                first_time: e.time,
                last_time: e.time,
                writes: Vec::new(),
            });
        s.last_time = e.time;
        let mut w = write_of(e);
        if w.title.is_none() && matches!(e.kind, JournalKind::TagAdd | JournalKind::TagRemove) {
            w.title = store.note(&e.item_id)?.map(|n| n.title);
        }
        s.writes.push(w);
        last_seq.insert(turn_id.to_string(), e.seq);
    }
    let mut turns: Vec<TurnSummary> = by_turn.into_values().collect();
    turns.sort_by_key(|t| std::cmp::Reverse(last_seq.get(&t.turn_id).copied().unwrap_or(0)));
    turns.truncate(limit);
    Ok(turns)
}

/// What the revert did to one item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RevertedItem {
    pub item_id: String,
    pub title: String,
    /// E.g. `restored`, `trashed (created by the turn)`.
    pub action: String,
}

/// An item the revert left alone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RevertSkip {
    pub item_id: String,
    pub title: String,
    pub reason: String,
}

/// The outcome of [`revert_turn`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RevertReport {
    pub turn_id: String,
    /// The revert's own turn id (journal actor `agent:<revert_turn_id>`): revert it to redo.
    pub revert_turn_id: String,
    pub reverted: Vec<RevertedItem>,
    /// Changed by someone else after the turn: not touched.
    pub conflicts: Vec<RevertSkip>,
    /// Writes a revert cannot undo (e.g. a created notebook) or items that are gone.
    pub skipped: Vec<RevertSkip>,
}

#[derive(Debug, thiserror::Error)]
pub enum RevertError {
    #[error("no writes are recorded for turn {0}; see `sidenote turns list`")]
    UnknownTurn(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

fn is_note_kind(k: JournalKind) -> bool {
    matches!(
        k,
        JournalKind::NoteCreate
            | JournalKind::NoteUpdate
            | JournalKind::NoteTrash
            | JournalKind::NoteRestore
            | JournalKind::TagAdd
            | JournalKind::TagRemove
    )
}

/// Restore every item turn `turn_id` changed to its state before the turn.
pub fn revert_turn(store: &Store, turn_id: &str) -> Result<RevertReport, RevertError> {
    let turn_id = turn_id.trim();
    let actor = turn_actor(turn_id);
    let entries = store.journal(&JournalQuery {
        actor: Some(actor.clone()),
        ..Default::default()
    })?;
    if entries.is_empty() {
        return Err(RevertError::UnknownTurn(turn_id.to_string()));
    }
    let revert_turn_id = sidenote_store::new_id();
    let revert_actor = Actor::Agent(revert_turn_id.clone());
    let mut report = RevertReport {
        turn_id: turn_id.to_string(),
        revert_turn_id,
        reverted: Vec::new(),
        conflicts: Vec::new(),
        skipped: Vec::new(),
    };
    // group by item, in order of first write
    let mut order: Vec<String> = Vec::new();
    let mut groups: BTreeMap<String, Vec<&JournalEntry>> = BTreeMap::new();
    for e in &entries {
        if !groups.contains_key(&e.item_id) {
            order.push(e.item_id.clone());
        }
        groups.entry(e.item_id.clone()).or_default().push(e);
    }
    for item_id in order {
        let group = &groups[&item_id];
        let first_seq = group.first().map_or(0, |e| e.seq);
        let title = group
            .iter()
            .rev()
            .find_map(|e| str_field(&e.after, "title").or_else(|| str_field(&e.before, "title")))
            .unwrap_or_default();
        // anyone else touching the item since the turn first wrote it is a conflict
        let foreign: Vec<String> = store
            .journal(&JournalQuery {
                item_id: Some(item_id.clone()),
                after_seq: Some(first_seq),
                ..Default::default()
            })?
            .into_iter()
            .filter(|e| e.actor != actor)
            .map(|e| e.actor)
            .collect();
        if !foreign.is_empty() {
            let mut by: Vec<String> = foreign;
            by.sort();
            by.dedup();
            report.conflicts.push(RevertSkip {
                item_id,
                title,
                reason: format!("changed after the turn by {}", by.join(", ")),
            });
            continue;
        }
        if group.iter().all(|e| is_note_kind(e.kind)) {
            revert_note(store, &revert_actor, &item_id, &title, group, &mut report)?;
        } else {
            revert_other(store, &revert_actor, &item_id, &title, group, &mut report)?;
        }
    }
    Ok(report)
}

fn revert_note(
    store: &Store,
    actor: &Actor,
    id: &str,
    title: &str,
    group: &[&JournalEntry],
    report: &mut RevertReport,
) -> Result<(), StoreError> {
    let Some(current) = store.note(id)? else {
        report.skipped.push(RevertSkip {
            item_id: id.to_string(),
            title: title.to_string(),
            reason: "the note no longer exists".into(),
        });
        return Ok(());
    };
    let mut actions: Vec<&str> = Vec::new();
    // the note's state before the turn: the `before` of its first note write
    let first_note_write = group
        .iter()
        .find(|e| !matches!(e.kind, JournalKind::TagAdd | JournalKind::TagRemove));
    match first_note_write {
        Some(e) if e.kind == JournalKind::NoteCreate && !current.is_trashed() => {
            store.trash_note(actor, id)?;
            actions.push("moved to the trash (the turn created it)");
        }
        Some(e) if e.kind == JournalKind::NoteCreate => {}
        Some(e) => {
            let before: Note = serde_json::from_value(e.before.clone()).map_err(|err| {
                StoreError::Invalid(format!("journal row {} has no readable note: {err}", e.seq))
            })?;
            restore_fields(store, actor, &current, &before, &mut actions)?;
        }
        None => {}
    }
    // tags: undo the turn's tag writes, newest first
    for e in group.iter().rev() {
        match e.kind {
            JournalKind::TagAdd => {
                if let Some(tag) = str_field(&e.after, "tag") {
                    store.remove_tag(actor, id, &tag)?;
                    actions.push("tags restored");
                }
            }
            JournalKind::TagRemove => {
                if let Some(tag) = str_field(&e.before, "tag") {
                    store.add_tag(actor, id, &tag)?;
                    actions.push("tags restored");
                }
            }
            _ => {}
        }
    }
    actions.dedup();
    if actions.is_empty() {
        report.skipped.push(RevertSkip {
            item_id: id.to_string(),
            title: title.to_string(),
            reason: "already in its state before the turn".into(),
        });
    } else {
        report.reverted.push(RevertedItem {
            item_id: id.to_string(),
            title: title.to_string(),
            action: actions.join(", "),
        });
    }
    Ok(())
}

fn restore_fields(
    store: &Store,
    actor: &Actor,
    current: &Note,
    before: &Note,
    actions: &mut Vec<&str>,
) -> Result<(), StoreError> {
    let mut patch = NotePatch {
        if_updated_time: Some(current.updated_time),
        ..NotePatch::default()
    };
    let mut changed = false;
    if current.title != before.title {
        patch.title = Some(before.title.clone());
        changed = true;
    }
    if current.body != before.body {
        patch.body = Some(before.body.clone());
        changed = true;
    }
    if current.parent_id != before.parent_id && store.notebook(&before.parent_id)?.is_some() {
        patch.parent_id = Some(before.parent_id.clone());
        changed = true;
    }
    if current.is_todo != before.is_todo {
        patch.is_todo = Some(before.is_todo);
        changed = true;
    }
    if current.todo_completed != before.todo_completed {
        patch.todo_completed = Some(before.todo_completed);
        changed = true;
    }
    if current.todo_due != before.todo_due {
        patch.todo_due = Some(before.todo_due);
        changed = true;
    }
    if current.source_url != before.source_url {
        patch.source_url = Some(before.source_url.clone());
        changed = true;
    }
    if changed {
        store.update_note(actor, &current.id, patch)?;
        actions.push("restored");
    }
    if before.is_trashed() && !current.is_trashed() {
        store.trash_note(actor, &current.id)?;
        actions.push("moved back to the trash");
    } else if !before.is_trashed() && current.is_trashed() {
        store.restore_note(actor, &current.id)?;
        actions.push("restored from the trash");
    }
    Ok(())
}

fn revert_other(
    store: &Store,
    actor: &Actor,
    id: &str,
    title: &str,
    group: &[&JournalEntry],
    report: &mut RevertReport,
) -> Result<(), StoreError> {
    let skip = |reason: &str| RevertSkip {
        item_id: id.to_string(),
        title: title.to_string(),
        reason: reason.to_string(),
    };
    let Some(first) = group.first() else {
        return Ok(());
    };
    match first.kind {
        JournalKind::NotebookCreate => {
            report.skipped.push(skip(
                "notebook created by the turn; notebooks are not deleted by a revert",
            ));
        }
        JournalKind::NotebookUpdate => {
            let before: Notebook = serde_json::from_value(first.before.clone()).map_err(|err| {
                StoreError::Invalid(format!(
                    "journal row {} has no readable notebook: {err}",
                    first.seq
                ))
            })?;
            match store.notebook(id)? {
                None => report.skipped.push(skip("the notebook no longer exists")),
                Some(cur) if cur.title == before.title && cur.parent_id == before.parent_id => {
                    report
                        .skipped
                        .push(skip("already in its state before the turn"));
                }
                Some(_) => {
                    store.update_notebook(
                        actor,
                        id,
                        Some(&before.title),
                        Some(before.parent_id.as_deref()),
                    )?;
                    report.reverted.push(RevertedItem {
                        item_id: id.to_string(),
                        title: before.title.clone(),
                        action: "restored".into(),
                    });
                }
            }
        }
        _ => report
            .skipped
            .push(skip("attachments added by the turn are left in place")),
    }
    Ok(())
}

/// `YYYY-MM-DD HH:MM:SS` in local time, for listings.
pub fn format_time(ms: i64) -> String {
    use chrono::TimeZone;
    match chrono::Local.timestamp_millis_opt(ms) {
        chrono::LocalResult::Single(t) | chrono::LocalResult::Ambiguous(t, _) => {
            t.format("%Y-%m-%d %H:%M:%S").to_string()
        }
        chrono::LocalResult::None => ms.to_string(),
    }
}
