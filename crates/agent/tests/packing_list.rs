//! The seed's first use case, end to end against the fake provider server in every wire
//! mode: "Find my last packing list and add socks to it" with several packing lists in
//! different notebooks → search → read the newest → update → reply; only that note changed,
//! journaled under the turn, and revertible.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use serde_json::json;
use sidenote_agent::*;
use sidenote_store::{Actor, JournalKind, JournalQuery, NotePatch};
use sidenote_testkit::{FakeProvider, Step, scenario};

struct Corpus {
    ws: Workspace,
    newest: String,
}

fn corpus() -> Corpus {
    let ws = Workspace::new();
    let travel = ws.notebook("Travel");
    let camping = ws.notebook("Camping");
    let archive = ws.notebook("Archive");
    ws.note(
        &archive,
        "Packing list — Paris 2023",
        "# Packing list\n- [x] passport\n",
        1_690_000_000_000,
    );
    let newest = ws
        .note(
            &camping,
            "Packing list — Lake District",
            "# Packing list\n- [ ] tent\n- [ ] boots",
            1_730_000_000_000,
        )
        .id;
    ws.note(
        &travel,
        "Packing list — Rome",
        "# Packing list\n- [x] sunscreen\n",
        1_710_000_000_000,
    );
    ws.note(&travel, "Recipes", "Pasta and more", 1_720_000_000_000);
    Corpus { ws, newest }
}

#[tokio::test]
async fn find_the_last_packing_list_and_add_socks() {
    for (ty, streaming) in MODES {
        let Corpus { ws, newest } = corpus();
        let before = ws.snapshot();
        let fake = FakeProvider::start().await.unwrap();
        scenario::packing_list(&fake);
        let agent = ws.agent(&fake, ty, streaming);
        let done = agent
            .run(TurnRequest::new(
                NoteContext::workspace(),
                "Find my last packing list and add socks to it",
            ))
            .await
            .unwrap();
        let mode = mode_name(ty, streaming);
        assert_eq!(
            done.reply, "Added socks to \"Packing list — Lake District\".",
            "{mode}"
        );
        assert_eq!(
            done.transcript
                .iter()
                .map(|t| t.tool.as_str())
                .collect::<Vec<_>>(),
            ["search_notes", "read_note", "update_note"],
            "{mode}"
        );
        assert!(
            done.transcript
                .iter()
                .all(|t| t.error.is_none() && t.tier == Some(Tier::Workspace))
        );
        assert_eq!(done.transcript[0].activity, "Found 3 notes");
        assert!(done.edits.is_empty(), "workspace writes are not edits");
        assert_eq!(done.usage.model_calls, 4);

        // only the newest packing list changed
        let after = ws.snapshot();
        for (b, a) in before.iter().zip(&after) {
            if a.id == newest {
                assert_eq!(
                    a.body, "# Packing list\n- [ ] tent\n- [ ] boots\n- [ ] socks",
                    "{mode}"
                );
            } else {
                assert_eq!(a, b, "{mode}: {} must not change", b.title);
            }
        }
        // journaled under the turn
        let actor = format!("agent:{}", done.turn_id);
        let rows = ws
            .store
            .journal(&JournalQuery {
                actor: Some(actor.clone()),
                ..Default::default()
            })
            .unwrap();
        assert_eq!(rows.len(), 1, "{mode}");
        assert_eq!(rows[0].kind, JournalKind::NoteUpdate);
        assert_eq!(rows[0].item_id, newest);
        let turns = list_turns(&ws.store, 10).unwrap();
        assert_eq!(turns[0].turn_id, done.turn_id);
        assert_eq!(
            turns[0].writes[0].title.as_deref(),
            Some("Packing list — Lake District")
        );

        // revertible
        let report = revert_turn(&ws.store, &done.turn_id).unwrap();
        assert_eq!(report.reverted.len(), 1, "{mode}: {report:?}");
        assert!(report.conflicts.is_empty());
        let restored = ws.store.note(&newest).unwrap().unwrap();
        assert_eq!(restored.body, "# Packing list\n- [ ] tent\n- [ ] boots");
        // the revert is itself a journaled turn, and reverting it re-applies the change
        let rows = ws
            .store
            .journal(&JournalQuery {
                actor: Some(format!("agent:{}", report.revert_turn_id)),
                ..Default::default()
            })
            .unwrap();
        assert_eq!(rows.len(), 1);
        let redo = revert_turn(&ws.store, &report.revert_turn_id).unwrap();
        assert_eq!(redo.reverted.len(), 1);
        assert!(
            ws.store
                .note(&newest)
                .unwrap()
                .unwrap()
                .body
                .ends_with("- [ ] socks")
        );
        fake.assert_no_violations();
    }
}

#[tokio::test]
async fn a_note_changed_by_someone_else_is_a_revert_conflict() {
    let Corpus { ws, newest } = corpus();
    let fake = FakeProvider::start().await.unwrap();
    scenario::packing_list(&fake);
    let agent = ws.agent(&fake, sidenote_ai::ProviderType::OpenAiCompatible, true);
    let done = agent
        .run(TurnRequest::new(
            NoteContext::workspace(),
            "Find my last packing list and add socks to it",
        ))
        .await
        .unwrap();
    let user_body = "# Packing list\n- [ ] tent\n- [ ] boots\n- [ ] socks\n- [ ] hat";
    ws.store
        .update_note(
            &Actor::Panel,
            &newest,
            NotePatch {
                body: Some(user_body.into()),
                ..Default::default()
            },
        )
        .unwrap();
    let report = revert_turn(&ws.store, &done.turn_id).unwrap();
    assert!(report.reverted.is_empty());
    assert_eq!(report.conflicts.len(), 1);
    assert!(
        report.conflicts[0].reason.contains("panel"),
        "{:?}",
        report.conflicts
    );
    assert_eq!(
        ws.store.note(&newest).unwrap().unwrap().body,
        user_body,
        "left alone"
    );
    assert!(matches!(
        revert_turn(&ws.store, "0000000000000000000000000000dead"),
        Err(RevertError::UnknownTurn(_))
    ));
}

#[tokio::test]
async fn revert_undoes_creates_tags_moves_and_trash() {
    let ws = Workspace::new();
    let travel = ws.notebook("Travel");
    let camping = ws.notebook("Camping");
    let keep = ws.note(&travel, "Keep", "old body", 1_700_000_000_000);
    let gone = ws.note(&travel, "Gone", "bye", 1_700_000_000_000);
    ws.store.add_tag(&Actor::Cli, &keep.id, "old").unwrap();
    let fake = FakeProvider::start().await.unwrap();
    fake.push_all([
        Step::reply(
            sidenote_testkit::Reply::default()
                .tool("create_note", json!({"title": "New", "body": "fresh"}))
                .tool("update_note", json!({"id": keep.id, "title": "Kept", "body": "new body", "notebook_id": camping}))
                .tool("manage_tags", json!({"note_id": keep.id, "add": ["trip"], "remove": ["old"]}))
                .tool("delete_note", json!({"id": gone.id})),
        ),
        Step::text("Reorganised."),
    ]);
    let agent = ws.agent(&fake, sidenote_ai::ProviderType::Anthropic, false);
    let done = agent
        .run(TurnRequest::new(NoteContext::workspace(), "reorganise"))
        .await
        .unwrap();
    assert!(
        done.transcript.iter().all(|t| t.error.is_none()),
        "{:?}",
        done.transcript
    );
    let created = done.transcript[0].output.as_ref().unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let report = revert_turn(&ws.store, &done.turn_id).unwrap();
    assert!(report.conflicts.is_empty(), "{report:?}");
    assert_eq!(report.reverted.len(), 3, "{report:?}");
    let k = ws.store.note(&keep.id).unwrap().unwrap();
    assert_eq!(
        (k.title.as_str(), k.body.as_str(), k.parent_id.as_str()),
        ("Keep", "old body", travel.as_str())
    );
    let tags: Vec<String> = ws
        .store
        .note_tags(&keep.id)
        .unwrap()
        .into_iter()
        .map(|t| t.title)
        .collect();
    assert_eq!(tags, ["old"]);
    assert!(!ws.store.note(&gone.id).unwrap().unwrap().is_trashed());
    assert!(ws.store.note(&created).unwrap().unwrap().is_trashed());
}
