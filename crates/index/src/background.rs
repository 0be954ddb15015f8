//! The background indexer: a thread that follows the store's write journal and keeps the
//! index current. It never holds the store's connection (own SQLite connection, short
//! transactions), so keyword search and the agent are never blocked. Stopped on drop.

use crate::index::SemanticIndex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

struct Shared {
    stop: AtomicBool,
    wake: Mutex<bool>,
    cv: Condvar,
    last_error: Mutex<Option<String>>,
}

pub struct BackgroundIndexer {
    shared: Arc<Shared>,
    handle: Option<JoinHandle<()>>,
}

impl BackgroundIndexer {
    /// Start following the journal; polls every `interval` (and at once on [`poke`]).
    ///
    /// [`poke`]: BackgroundIndexer::poke
    pub fn spawn(index: Arc<SemanticIndex>, interval: Duration) -> std::io::Result<Self> {
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            wake: Mutex::new(false),
            cv: Condvar::new(),
            last_error: Mutex::new(None),
        });
        let s = shared.clone();
        let handle = std::thread::Builder::new()
            .name("sidenote-indexer".into())
            .spawn(move || run(&index, &s, interval))?;
        Ok(BackgroundIndexer {
            shared,
            handle: Some(handle),
        })
    }

    /// Check the journal now instead of at the next tick.
    pub fn poke(&self) {
        let mut w = self.shared.wake.lock().unwrap_or_else(|p| p.into_inner());
        *w = true;
        self.shared.cv.notify_all();
    }

    /// The last sync error, if the last sync failed.
    pub fn last_error(&self) -> Option<String> {
        self.shared
            .last_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Stop and wait for the thread (also done on drop).
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.poke();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for BackgroundIndexer {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn run(index: &SemanticIndex, shared: &Shared, interval: Duration) {
    let mut last_head = -1i64;
    while !shared.stop.load(Ordering::SeqCst) {
        // Cheap check first: has anything been written since the last pass?
        let head = index.store().journal_head().unwrap_or(-1);
        let needs =
            head != last_head || index.status().map(|s| !s.initial_scan_done).unwrap_or(true);
        if needs {
            match index.sync(&mut |_| {}, Some(&shared.stop)) {
                Ok(r) => {
                    if r.notes_indexed + r.notes_removed > 0 {
                        tracing::info!(
                            indexed = r.notes_indexed,
                            removed = r.notes_removed,
                            embedded = r.chunks_embedded,
                            "semantic index updated"
                        );
                    }
                    *shared.last_error.lock().unwrap_or_else(|p| p.into_inner()) = None;
                    if !r.interrupted {
                        last_head = head;
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "semantic indexing failed; retrying later");
                    *shared.last_error.lock().unwrap_or_else(|p| p.into_inner()) =
                        Some(e.to_string());
                }
            }
        }
        let mut w = shared.wake.lock().unwrap_or_else(|p| p.into_inner());
        if !*w && !shared.stop.load(Ordering::SeqCst) {
            w = shared
                .cv
                .wait_timeout(w, interval)
                .map(|(g, _)| g)
                .unwrap_or_else(|p| p.into_inner().0);
        }
        *w = false;
    }
}
