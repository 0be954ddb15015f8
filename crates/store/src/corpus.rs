//! Deterministic synthetic notes for benchmarks and manual import checks (not for app use).
//!
//! Text is drawn from a fixed vocabulary with a Zipf-like skew, so common words are common and
//! rare words rare, like real notes. Same `seed` and `n` → the same corpus.

use crate::store::{add_tag_tx, create_note_tx};
use crate::*;
use std::path::Path;

const COMMON: &[&str] = &[
    "the", "a", "to", "and", "of", "in", "is", "for", "on", "with", "that", "this", "it", "as",
    "we", "be", "at", "by", "from", "or", "an", "are", "was", "will", "can", "not", "have", "has",
    "but", "all", "new", "more", "about", "next", "week", "today", "need", "should", "make",
    "check", "after", "before", "also", "still", "into", "over", "then", "when",
];
const TOPICAL: &[&str] = &[
    "meeting",
    "project",
    "budget",
    "roadmap",
    "release",
    "customer",
    "design",
    "review",
    "deadline",
    "invoice",
    "travel",
    "recipe",
    "garden",
    "kitchen",
    "doctor",
    "school",
    "birthday",
    "holiday",
    "flight",
    "hotel",
    "report",
    "draft",
    "feedback",
    "server",
    "database",
    "deploy",
    "backup",
    "migration",
    "search",
    "index",
    "sidebar",
    "editor",
    "plugin",
    "keyboard",
    "monitor",
    "laptop",
    "phone",
    "battery",
    "network",
    "router",
    "coffee",
    "lunch",
    "dinner",
    "breakfast",
    "groceries",
    "bread",
    "cheese",
    "tomato",
    "running",
    "cycling",
    "swimming",
    "training",
    "marathon",
    "book",
    "chapter",
    "author",
    "library",
    "museum",
    "concert",
    "movie",
    "podcast",
    "episode",
    "interview",
    "hiring",
    "salary",
    "contract",
    "lawyer",
    "insurance",
    "mortgage",
    "tax",
    "receipt",
    "warranty",
    "quarter",
    "planning",
    "strategy",
    "metrics",
    "dashboard",
    "incident",
    "outage",
    "postmortem",
    "architecture",
    "prototype",
    "experiment",
    "hypothesis",
    "analysis",
    "summary",
    "agenda",
    "minutes",
    "decision",
    "action",
    "followup",
    "reminder",
    "idea",
    "question",
    "answer",
    "problem",
    "solution",
    "bug",
    "feature",
    "ticket",
    "sprint",
];
const RARE: &[&str] = &[
    "zanzibar",
    "quokka",
    "fjord",
    "kumquat",
    "nebula",
    "obsidian",
    "paprika",
    "quasar",
    "rhubarb",
    "saffron",
    "tundra",
    "umami",
    "vermilion",
    "wombat",
    "xylophone",
    "yodel",
    "zephyr",
    "axolotl",
    "bergamot",
    "cardamom",
    "dulcimer",
    "espresso",
    "falafel",
    "gazpacho",
    "hibiscus",
    "iguana",
    "jacaranda",
    "kombucha",
    "lavender",
    "mandolin",
];
pub const TAGS: &[&str] = &[
    "work",
    "personal",
    "idea",
    "todo",
    "important",
    "archived",
    "reading",
    "health",
    "finance",
    "travel",
    "project-x",
    "project-y",
    "family",
    "recipes",
    "meetings",
];
pub const NOTEBOOKS: &[(&str, Option<usize>)] = &[
    ("Work", None),
    ("Projects", Some(0)),
    ("Meetings", Some(0)),
    ("Personal", None),
    ("Health", Some(3)),
    ("Finance", Some(3)),
    ("Travel", None),
    ("Recipes", None),
    ("Reading", None),
    ("Archive", None),
];

/// xorshift64*: small, fast, deterministic.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }
    /// Skewed towards 0 (roughly Zipf).
    pub fn skewed(&mut self, n: usize) -> usize {
        let a = self.below(n);
        let b = self.below(n);
        a.min(b).min(self.below(n).max(a.min(b) / 2))
    }
}

/// The vocabulary in frequency-rank order: stop words first, then topical words spread over
/// ranks 50–1 000 among ~4 000 pseudo-words, rare words deep in the tail. Words are drawn
/// with Zipf's law (p ∝ 1/rank), as in natural text.
pub struct Vocab {
    words: Vec<String>,
    cumulative: Vec<f64>,
}

impl Vocab {
    pub fn new() -> Vocab {
        const SYL: &[&str] = &[
            "ka", "lo", "mi", "ne", "ru", "sa", "te", "vo", "zi", "pa", "dor", "lin", "mar", "tis",
            "ber", "gan", "hul", "pre", "sto", "quel",
        ];
        let mut filler = Vec::new();
        for a in SYL {
            for b in SYL {
                for c in ["", "n", "s", "ta", "ro", "li", "x", "de", "mo", "ve"] {
                    filler.push(format!("{a}{b}{c}"));
                }
            }
        }
        let mut words: Vec<String> = COMMON.iter().map(|w| w.to_string()).collect();
        let mut fi = filler.into_iter();
        // topical words at ranks ~50..1000, one every ~9 ranks
        for t in TOPICAL {
            words.push((*t).to_string());
            words.extend(fi.by_ref().take(8));
        }
        words.extend(fi.by_ref().take(1_000));
        // rare words in the tail
        for r in RARE {
            words.push((*r).to_string());
            words.extend(fi.by_ref().take(60));
        }
        words.extend(fi);
        let mut acc = 0.0;
        let cumulative = (1..=words.len())
            .map(|rank| {
                acc += 1.0 / rank as f64;
                acc
            })
            .collect();
        Vocab { words, cumulative }
    }

    pub fn word(&self, rng: &mut Rng) -> &str {
        let total = self.cumulative.last().copied().unwrap_or(1.0);
        let x = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * total;
        let i = self.cumulative.partition_point(|c| *c < x);
        self.words
            .get(i)
            .or(self.words.last())
            .map(String::as_str)
            .unwrap_or("")
    }
}

impl Default for Vocab {
    fn default() -> Self {
        Vocab::new()
    }
}

fn word<'a>(v: &'a Vocab, rng: &mut Rng) -> &'a str {
    v.word(rng)
}

/// One synthetic note: title, body, tags, notebook index (into [`NOTEBOOKS`]), times, to-do.
#[derive(Debug, Clone)]
pub struct Synthetic {
    pub title: String,
    pub body: String,
    pub tags: Vec<&'static str>,
    pub notebook: usize,
    pub created_time: i64,
    pub updated_time: i64,
    pub is_todo: bool,
    pub todo_completed: i64,
}

/// Notes span the two years before 2026-01-01.
const END: i64 = 1_767_225_600_000;
const SPAN: i64 = 2 * 365 * 86_400_000;

pub fn synthetic(v: &Vocab, rng: &mut Rng) -> Synthetic {
    let title_words = 2 + rng.below(5);
    let mut title: Vec<String> = (0..title_words).map(|_| word(v, rng).to_string()).collect();
    if let Some(first) = title.first_mut() {
        let mut c = first.chars();
        if let Some(f) = c.next() {
            *first = f.to_uppercase().chain(c).collect();
        }
    }
    let paragraphs = 1 + rng.below(4);
    let mut body = String::new();
    for p in 0..paragraphs {
        if p > 0 {
            body.push_str("\n\n");
        }
        if rng.below(4) == 0 {
            body.push_str("## ");
            body.push_str(TOPICAL[rng.below(TOPICAL.len())]);
            body.push_str("\n\n");
        }
        let words = 15 + rng.below(80);
        for i in 0..words {
            if i > 0 {
                body.push(' ');
            }
            body.push_str(word(v, rng));
            if rng.below(12) == 0 {
                body.push('.');
            }
        }
    }
    let ntags = rng.below(4);
    let mut tags: Vec<&'static str> = (0..ntags).map(|_| TAGS[rng.skewed(TAGS.len())]).collect();
    tags.sort_unstable();
    tags.dedup();
    let created = END - SPAN + (rng.next_u64() % SPAN as u64) as i64;
    let updated = created + (rng.next_u64() % ((END - created).max(1) as u64)) as i64;
    let is_todo = rng.below(8) == 0;
    let todo_completed = if is_todo && rng.below(2) == 0 {
        updated
    } else {
        0
    };
    Synthetic {
        title: title.join(" "),
        body,
        tags,
        notebook: rng.skewed(NOTEBOOKS.len()),
        created_time: created,
        updated_time: updated,
        is_todo,
        todo_completed,
    }
}

/// Fill `store` with `n` synthetic notes (plus the [`NOTEBOOKS`] and tags), in batches of
/// 5 000 notes per transaction. Journaled as `import`.
pub fn load(store: &Store, n: usize, seed: u64) -> Result<()> {
    let mut ids: Vec<String> = Vec::new();
    for (title, parent) in NOTEBOOKS {
        let parent_id = parent.and_then(|p| ids.get(p)).map(String::as_str);
        ids.push(store.create_notebook(&Actor::Import, title, parent_id)?.id);
    }
    let mut rng = Rng::new(seed);
    let vocab = Vocab::new();
    let mut left = n;
    while left > 0 {
        let batch = left.min(5_000);
        left -= batch;
        let notes: Vec<Synthetic> = (0..batch).map(|_| synthetic(&vocab, &mut rng)).collect();
        store.write(|tx| {
            for s in notes {
                let note = create_note_tx(
                    tx,
                    "import",
                    NewNote {
                        parent_id: ids.get(s.notebook).cloned(),
                        title: s.title,
                        body: s.body,
                        is_todo: s.is_todo,
                        todo_completed: s.todo_completed,
                        created_time: Some(s.created_time),
                        updated_time: Some(s.updated_time),
                        ..Default::default()
                    },
                )?;
                for t in s.tags {
                    add_tag_tx(tx, "import", &note.id, t, None)?;
                }
            }
            Ok(())
        })?;
    }
    Ok(())
}

/// Write `n` synthetic notes as a Markdown folder (one sub-folder per notebook, front matter
/// with title, times and tags) for `sidenote import`.
pub fn write_markdown(dir: &Path, n: usize, seed: u64) -> std::io::Result<()> {
    let mut rng = Rng::new(seed);
    let vocab = Vocab::new();
    let folder = |i: usize| -> std::path::PathBuf {
        let mut parts = vec![NOTEBOOKS[i].0];
        let mut cur = NOTEBOOKS[i].1;
        while let Some(p) = cur {
            parts.push(NOTEBOOKS[p].0);
            cur = NOTEBOOKS[p].1;
        }
        parts.reverse();
        parts.iter().fold(dir.to_path_buf(), |acc, p| acc.join(p))
    };
    for i in 0..NOTEBOOKS.len() {
        std::fs::create_dir_all(folder(i))?;
    }
    for i in 0..n {
        let s = synthetic(&vocab, &mut rng);
        let tags = s.tags.join(", ");
        let mut fm = format!(
            "---\ntitle: \"{}\"\ncreated: {}\nupdated: {}\ntags: [{tags}]\n",
            s.title,
            crate::format_time(s.created_time),
            crate::format_time(s.updated_time)
        );
        if s.is_todo {
            fm.push_str(if s.todo_completed > 0 {
                "completed?: yes\n"
            } else {
                "completed?: no\n"
            });
        }
        fm.push_str("---\n\n");
        let path = folder(s.notebook).join(format!("note-{i:06}.md"));
        std::fs::write(path, format!("{fm}{}\n", s.body))?;
    }
    Ok(())
}
