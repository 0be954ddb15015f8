//! The example plugin end to end through the registry: call, render, pictures from a local
//! HTTP server, a host the manifest does not list refused, install/list/remove.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use base64::Engine;
use common::{env, example_dir};
use serde_json::{Value, json};
use sidenote_plugins::PluginHost;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A 1×1 PNG.
const PNG_B64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/// An image server on 127.0.0.1: `/img/<name>.png` answers a PNG; counts requests.
async fn image_server() -> (String, Arc<AtomicUsize>) {
    let hits = Arc::new(AtomicUsize::new(0));
    let h = hits.clone();
    let app = axum::Router::new().route(
        "/img/{name}",
        axum::routing::get(
            move |axum::extract::Path(name): axum::extract::Path<String>| {
                let h = h.clone();
                async move {
                    h.fetch_add(1, Ordering::SeqCst);
                    let png = base64::engine::general_purpose::STANDARD
                        .decode(PNG_B64)
                        .unwrap();
                    if name.ends_with(".png") {
                        ([("content-type", "image/png")], png)
                    } else {
                        ([("content-type", "text/plain")], b"no".to_vec())
                    }
                }
            },
        ),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("127.0.0.1:{port}"), hits)
}

fn lake_district() -> Value {
    json!({"destination": "Lake District", "days": 5, "companions": ["dog"]})
}

fn items(out: &Value) -> Vec<(String, String, i64)> {
    out["categories"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| {
            c["items"].as_array().unwrap().iter().map(move |i| {
                (
                    c["name"].as_str().unwrap().to_string(),
                    i["id"].as_str().unwrap().to_string(),
                    i["quantity"].as_i64().unwrap(),
                )
            })
        })
        .collect()
}

fn qty(out: &Value, id: &str) -> Option<i64> {
    items(out)
        .into_iter()
        .find(|(_, i, _)| i == id)
        .map(|(_, _, q)| q)
}

fn thumbnails(spec: &Value) -> Vec<String> {
    spec["children"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["type"] == "list")
        .flat_map(|l| {
            l["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["thumbnail"].as_str().unwrap().to_string())
        })
        .collect()
}

#[tokio::test]
async fn plans_a_packing_list_without_network_by_default() {
    let e = env();
    let report = e.host.load_dir(&example_dir()).await.unwrap();
    assert_eq!(report.tools, vec!["plan_trip_packing"]);
    let info = e.registry.list();
    let t = info.iter().find(|t| t.id == "plan_trip_packing").unwrap();
    assert_eq!(t.access, sidenote_tools::Access::Read);
    assert!(t.description.contains("pack"));

    let out = e.call("plan_trip_packing", lake_district()).await.unwrap();
    assert_eq!(out["region"]["id"], "uk-uplands");
    // quantities scale with days
    assert_eq!(qty(&out, "socks"), Some(6));
    assert_eq!(qty(&out, "underwear"), Some(6));
    assert_eq!(qty(&out, "t-shirts"), Some(4));
    // weather gear for a wet region, dog extras
    assert_eq!(qty(&out, "waterproof-jacket"), Some(1));
    assert_eq!(qty(&out, "dog-food"), Some(5));
    assert_eq!(qty(&out, "poo-bags"), Some(20));
    assert_eq!(qty(&out, "dog-towel"), Some(2));
    assert_eq!(qty(&out, "tick-remover"), Some(1));
    assert_eq!(qty(&out, "sun-hat"), None);
    assert_eq!(out["pictures"]["source"], "generated");
    assert_eq!(
        out["total_items"].as_u64().unwrap() as usize,
        items(&out).len()
    );

    // a longer beach trip without a dog
    let out2 = e
        .call(
            "plan_trip_packing",
            json!({"destination": "Crete, Greece", "days": 12, "companions": [], "activities": ["swimming"]}),
        )
        .await
        .unwrap();
    assert_eq!(out2["region"]["id"], "mediterranean");
    assert_eq!(qty(&out2, "socks"), Some(10));
    assert_eq!(qty(&out2, "sun-cream"), Some(1));
    assert_eq!(qty(&out2, "towel"), Some(1));
    assert_eq!(qty(&out2, "dog-food"), None);

    // schema validation before the plugin runs
    let err = e
        .call_err(
            "plan_trip_packing",
            json!({"destination": "x", "days": 0, "companions": []}),
        )
        .await;
    assert!(err.contains("'days'"), "{err}");

    // the render: a stack of lists with generated SVG thumbnails, validated by the host
    let tool = e.host.tool("plan_trip_packing").unwrap();
    let spec = tool
        .render_checked(&lake_district(), &out)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(spec["version"], 1);
    assert_eq!(spec["type"], "stack");
    assert!(
        spec["children"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Lake District")
    );
    let dog = spec["children"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["title"] == "For the dog")
        .unwrap();
    assert!(
        dog["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["label"] == "Dog food" && i["badge"] == "×5" && i["checkbox"] == false)
    );
    let thumbs = thumbnails(&spec);
    assert_eq!(thumbs.len(), items(&out).len());
    assert!(thumbs.iter().all(|t| t.starts_with("data:image/svg+xml")));
}

#[tokio::test]
async fn fetches_pictures_from_a_permitted_host_and_refuses_others() {
    let e = env();
    e.host.load_dir(&example_dir()).await.unwrap();
    let (addr, hits) = image_server().await;
    let port = addr.rsplit(':').next().unwrap().to_string();
    let tool = e.host.tool("plan_trip_packing").unwrap();

    // permitted host (127.0.0.1 is in the manifest): one request per item, PNG thumbnails
    e.store
        .set_setting(
            "plugin.vacation-packing.imageBaseUrl",
            &format!("http://{addr}/img/"),
        )
        .unwrap();
    let out = e.call("plan_trip_packing", lake_district()).await.unwrap();
    let n = items(&out).len();
    assert_eq!(out["pictures"]["source"], "fetched", "{}", out["pictures"]);
    assert_eq!(out["pictures"]["fetched"].as_u64().unwrap() as usize, n);
    assert_eq!(hits.load(Ordering::SeqCst), n);
    // the model's output carries no image bytes
    assert!(!out.to_string().contains("base64"));
    let spec = tool
        .render_checked(&lake_district(), &out)
        .await
        .unwrap()
        .unwrap();
    let thumbs = thumbnails(&spec);
    assert_eq!(thumbs.len(), n);
    assert!(
        thumbs
            .iter()
            .all(|t| *t == format!("data:image/png;base64,{PNG_B64}")),
        "{:?}",
        thumbs.first()
    );

    // same server, but named "localhost": not in the manifest, refused before any request
    e.store
        .set_setting(
            "plugin.vacation-packing.imageBaseUrl",
            &format!("http://localhost:{port}/img"),
        )
        .unwrap();
    let before = hits.load(Ordering::SeqCst);
    let out = e.call("plan_trip_packing", lake_district()).await.unwrap();
    assert_eq!(out["pictures"]["source"], "generated");
    let note = out["pictures"]["note"].as_str().unwrap();
    assert!(
        note.contains("permission denied") && note.contains("'localhost'"),
        "{note}"
    );
    assert_eq!(hits.load(Ordering::SeqCst), before);
    let spec = tool
        .render_checked(&lake_district(), &out)
        .await
        .unwrap()
        .unwrap();
    assert!(
        thumbnails(&spec)
            .iter()
            .all(|t| t.starts_with("data:image/svg+xml"))
    );

    // a server that fails: generated thumbnails again
    e.store
        .set_setting(
            "plugin.vacation-packing.imageBaseUrl",
            &format!("http://{addr}/nowhere"),
        )
        .unwrap();
    let out = e.call("plan_trip_packing", lake_district()).await.unwrap();
    assert_eq!(out["pictures"]["source"], "generated");
    assert!(
        out["pictures"]["note"]
            .as_str()
            .unwrap()
            .contains("HTTP 404")
    );
}

#[tokio::test]
async fn a_running_host_follows_installs_made_elsewhere() {
    let e = env();
    let ws = e.dir.path().join("ws");
    // `sidenote plugin install` in another process: its own host over the same workspace
    let other = PluginHost::new(
        &ws,
        e.store.clone(),
        sidenote_tools::Registry::new(),
        common::fast_options(),
    )
    .unwrap();
    let mut changes = e.registry.subscribe();
    other.install(&example_dir()).await.unwrap();
    other.shutdown();
    assert_eq!(
        e.host.sync().await,
        (vec!["vacation-packing".to_string()], vec![])
    );
    assert_eq!(
        changes.try_recv().unwrap(),
        sidenote_tools::RegistryChange::Added("plan_trip_packing".into())
    );
    assert_eq!(e.host.sync().await, (vec![], vec![]));
    // disabled elsewhere → unloaded here; enabled again → loaded again
    e.store
        .set_setting("plugin.vacation-packing.enabled", "false")
        .unwrap();
    assert_eq!(
        e.host.sync().await,
        (vec![], vec!["vacation-packing".to_string()])
    );
    assert!(e.registry.get("plan_trip_packing").is_none());
    e.store
        .set_setting("plugin.vacation-packing.enabled", "true")
        .unwrap();
    assert_eq!(e.host.sync().await.0, vec!["vacation-packing".to_string()]);
    // removed elsewhere → unloaded here
    std::fs::remove_dir_all(ws.join("plugins/vacation-packing")).unwrap();
    assert_eq!(
        e.host.sync().await,
        (vec![], vec!["vacation-packing".to_string()])
    );
    // a broken plugin is reported once, not retried until its files change
    let broken = ws.join("plugins/broken");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(
        broken.join("manifest.json"),
        r#"{"id":"broken","name":"B","version":"1","main":"main.js"}"#,
    )
    .unwrap();
    std::fs::write(broken.join("main.js"), "throw new Error('nope');").unwrap();
    assert_eq!(e.host.sync().await, (vec![], vec![]));
    let st = e.host.status();
    assert!(
        st[0].error.as_deref().unwrap().contains("Error: nope"),
        "{st:?}"
    );
    assert_eq!(e.host.sync().await, (vec![], vec![]));
}

#[tokio::test]
async fn install_list_disable_enable_remove() {
    let e = env();
    let ws = e.dir.path().join("ws");
    let mut changes = e.registry.subscribe();
    let report = e.host.install(&example_dir()).await.unwrap();
    assert_eq!(report.id, "vacation-packing");
    assert!(ws.join("plugins/vacation-packing/main.js").is_file());
    assert_eq!(
        changes.try_recv().unwrap(),
        sidenote_tools::RegistryChange::Added("plan_trip_packing".into())
    );
    // installing twice is refused
    let err = e
        .host
        .install(&example_dir())
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("already installed"), "{err}");

    let st = e.host.status();
    assert_eq!(st.len(), 1);
    assert!(st[0].enabled && st[0].loaded);
    assert_eq!(st[0].tools, vec!["plan_trip_packing"]);
    assert_eq!(st[0].permissions.net, vec!["127.0.0.1"]);

    e.host.disable("vacation-packing").await.unwrap();
    assert!(e.registry.get("plan_trip_packing").is_none());
    assert!(!e.host.status()[0].enabled);

    // a fresh start (another process) loads only enabled plugins
    let registry2 = sidenote_tools::Registry::new();
    let host2 = PluginHost::load_all(&ws, e.store.clone(), registry2.clone())
        .await
        .unwrap();
    assert!(host2.loaded().is_empty());
    e.host.enable("vacation-packing").await.unwrap();
    assert!(e.registry.get("plan_trip_packing").is_some());
    let registry3 = sidenote_tools::Registry::new();
    let host3 = PluginHost::load_all(&ws, e.store.clone(), registry3.clone())
        .await
        .unwrap();
    assert_eq!(host3.loaded(), vec!["vacation-packing"]);
    assert!(registry3.get("plan_trip_packing").is_some());
    host3.shutdown();
    host2.shutdown();

    e.store
        .set_setting("plugin.vacation-packing.imageBaseUrl", "http://127.0.0.1:1")
        .unwrap();
    e.host.remove("vacation-packing").await.unwrap();
    assert!(!ws.join("plugins/vacation-packing").exists());
    assert!(e.registry.get("plan_trip_packing").is_none());
    assert_eq!(
        e.store
            .setting("plugin.vacation-packing.imageBaseUrl")
            .unwrap(),
        None
    );
    assert!(e.host.status().is_empty());
    assert!(matches!(
        e.host.remove("vacation-packing").await,
        Err(sidenote_plugins::PluginError::NotFound(_))
    ));
}
