//! RenderSpec: the closed, versioned JSON vocabulary a plugin's `render(input, output)` returns
//! for the human (the model always sees the plain JSON output).
//!
//! Version 1. The root node carries `"version": 1`; every node has a `type`:
//!
//! | type | fields (`?` optional) |
//! |---|---|
//! | `text` | `text` (Markdown subset: no HTML, no images, links only http/https/mailto/`:/id`) |
//! | `list` | `title?`, `items: [{label, description?, badge?, thumbnail?, checkbox?: bool}]` |
//! | `table` | `columns: [string]`, `rows: [[string\|number\|bool\|null]]` (each row as long as `columns`) |
//! | `keyValue` | `title?`, `entries: [{key, value: string\|number\|bool\|null}]` |
//! | `image` | `src`, `alt`, `caption?`, `width?`, `height?` |
//! | `card` | `title`, `subtitle?`, `image?`, `text?`, `children?: [node]` |
//! | `stack` | `direction?: "vertical"\|"horizontal"`, `children: [node]` |
//!
//! Unknown types or fields are refused. Image sources (`thumbnail`, `src`, `image`) may be a
//! `data:image/...` URL (png, jpeg, gif, webp, or svg+xml without scripts), a workspace
//! resource (`:/<id>`), or an http(s) URL on a host the plugin's manifest permits. The host
//! replaces every non-data source with a `data:` URL it fetched itself (resources read from
//! the store, URLs fetched with the plugin's net policy), so the page never loads anything:
//! **a validated RenderSpec contains only `data:` image URLs.** An image the host cannot
//! fetch is dropped (the node stays); a source that is not allowed fails the render.

use base64::Engine;
use serde_json::{Map, Value};

pub const RENDER_SPEC_VERSION: u64 = 1;

const MAX_DEPTH: usize = 8;
const MAX_NODES: usize = 2000;
const MAX_STRING: usize = 20_000;
/// Largest image (decoded bytes) a RenderSpec may carry.
pub const MAX_IMAGE_BYTES: usize = 1024 * 1024;
const MAX_IMAGES: usize = 200;

/// Where an image source points, once checked.
#[derive(Debug, Clone, PartialEq)]
pub enum ImageSource {
    /// Already a usable `data:` URL.
    Data,
    /// A workspace resource id.
    Resource(String),
    /// An http(s) URL the host must fetch (policy checked when fetching).
    Remote(String),
}

/// A JSON pointer to an image field that needs the host to fetch it.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingImage {
    pub pointer: String,
    pub source: ImageSource,
}

struct Checker {
    nodes: usize,
    images: Vec<PendingImage>,
}

fn err<T>(path: &str, msg: impl std::fmt::Display) -> Result<T, String> {
    Err(format!("RenderSpec {path}: {msg}"))
}

/// Check `spec` against the vocabulary. Returns the image fields that need fetching
/// (`Resource` / `Remote`); data URLs are checked in place.
pub fn validate(spec: &Value) -> Result<Vec<PendingImage>, String> {
    let obj = spec
        .as_object()
        .ok_or_else(|| "RenderSpec must be an object".to_string())?;
    match obj.get("version") {
        Some(v) if v.as_u64() == Some(RENDER_SPEC_VERSION) => {}
        Some(v) => return err("", format!("unsupported version {v} (this host speaks 1)")),
        None => return err("", "missing \"version\": 1"),
    }
    let mut c = Checker {
        nodes: 0,
        images: Vec::new(),
    };
    c.node(spec, "", 0, true)?;
    Ok(c.images)
}

impl Checker {
    fn node(&mut self, v: &Value, path: &str, depth: usize, root: bool) -> Result<(), String> {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return err(path, format!("more than {MAX_NODES} nodes"));
        }
        if depth > MAX_DEPTH {
            return err(path, format!("nested deeper than {MAX_DEPTH}"));
        }
        let Some(o) = v.as_object() else {
            return err(path, "a node must be an object");
        };
        let ty = o
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("RenderSpec {path}: missing \"type\""))?;
        let mut allowed: Vec<&str> = vec!["type"];
        if root {
            allowed.push("version");
        }
        match ty {
            "text" => {
                allowed.push("text");
                self.markdown(o, "text", path, true)?;
            }
            "list" => {
                allowed.extend(["title", "items"]);
                self.opt_string(o, "title", path)?;
                let items = req_array(o, "items", path)?;
                for (i, item) in items.iter().enumerate() {
                    let ip = format!("{path}/items/{i}");
                    let Some(io) = item.as_object() else {
                        return err(&ip, "a list item must be an object");
                    };
                    only(
                        io,
                        &["label", "description", "badge", "thumbnail", "checkbox"],
                        &ip,
                    )?;
                    self.string(io, "label", &ip, true)?;
                    self.opt_string(io, "description", &ip)?;
                    self.opt_string(io, "badge", &ip)?;
                    if let Some(cb) = io.get("checkbox")
                        && !cb.is_boolean()
                    {
                        return err(&ip, "\"checkbox\" must be true or false (checked state)");
                    }
                    self.image(io, "thumbnail", &ip, false)?;
                }
            }
            "table" => {
                allowed.extend(["columns", "rows"]);
                let cols = req_array(o, "columns", path)?;
                if cols.is_empty() || !cols.iter().all(|c| c.as_str().is_some_and(short)) {
                    return err(path, "\"columns\" must be a non-empty array of strings");
                }
                for (i, row) in req_array(o, "rows", path)?.iter().enumerate() {
                    let rp = format!("{path}/rows/{i}");
                    let cells = row
                        .as_array()
                        .ok_or_else(|| format!("RenderSpec {rp}: a row must be an array"))?;
                    if cells.len() != cols.len() {
                        return err(
                            &rp,
                            format!("has {} cells, expected {}", cells.len(), cols.len()),
                        );
                    }
                    if !cells.iter().all(scalar) {
                        return err(&rp, "cells must be strings, numbers, booleans or null");
                    }
                }
            }
            "keyValue" => {
                allowed.extend(["title", "entries"]);
                self.opt_string(o, "title", path)?;
                for (i, e) in req_array(o, "entries", path)?.iter().enumerate() {
                    let ep = format!("{path}/entries/{i}");
                    let Some(eo) = e.as_object() else {
                        return err(&ep, "an entry must be an object {key, value}");
                    };
                    only(eo, &["key", "value"], &ep)?;
                    self.string(eo, "key", &ep, true)?;
                    if !eo.get("value").is_some_and(scalar) {
                        return err(&ep, "\"value\" must be a string, number, boolean or null");
                    }
                }
            }
            "image" => {
                allowed.extend(["src", "alt", "caption", "width", "height"]);
                self.image(o, "src", path, true)?;
                self.string(o, "alt", path, true)?;
                self.opt_string(o, "caption", path)?;
                for k in ["width", "height"] {
                    if let Some(n) = o.get(k)
                        && !n.as_u64().is_some_and(|n| (1..=4096).contains(&n))
                    {
                        return err(path, format!("\"{k}\" must be an integer 1-4096"));
                    }
                }
            }
            "card" => {
                allowed.extend(["title", "subtitle", "image", "text", "children"]);
                self.string(o, "title", path, true)?;
                self.opt_string(o, "subtitle", path)?;
                self.image(o, "image", path, false)?;
                if o.contains_key("text") {
                    self.markdown(o, "text", path, true)?;
                }
                if o.contains_key("children") {
                    self.children(o, path, depth)?;
                }
            }
            "stack" => {
                allowed.extend(["direction", "children"]);
                if let Some(d) = o.get("direction")
                    && !matches!(d.as_str(), Some("vertical" | "horizontal"))
                {
                    return err(path, "\"direction\" must be \"vertical\" or \"horizontal\"");
                }
                self.children(o, path, depth)?;
            }
            other => {
                return err(
                    path,
                    format!(
                        "unknown type '{other}' (known: text, list, table, keyValue, image, card, stack)"
                    ),
                );
            }
        }
        only(o, &allowed, path)
    }

    fn children(&mut self, o: &Map<String, Value>, path: &str, depth: usize) -> Result<(), String> {
        for (i, ch) in req_array(o, "children", path)?.iter().enumerate() {
            self.node(ch, &format!("{path}/children/{i}"), depth + 1, false)?;
        }
        Ok(())
    }

    fn string(
        &self,
        o: &Map<String, Value>,
        k: &str,
        path: &str,
        required: bool,
    ) -> Result<(), String> {
        match o.get(k) {
            None if !required => Ok(()),
            None => err(path, format!("missing \"{k}\"")),
            Some(Value::String(s)) if s.len() <= MAX_STRING => {
                if has_html(s) {
                    err(path, format!("\"{k}\" must not contain HTML"))
                } else {
                    Ok(())
                }
            }
            Some(Value::String(_)) => {
                err(path, format!("\"{k}\" is longer than {MAX_STRING} bytes"))
            }
            Some(_) => err(path, format!("\"{k}\" must be a string")),
        }
    }

    fn opt_string(&self, o: &Map<String, Value>, k: &str, path: &str) -> Result<(), String> {
        self.string(o, k, path, false)
    }

    fn markdown(
        &self,
        o: &Map<String, Value>,
        k: &str,
        path: &str,
        required: bool,
    ) -> Result<(), String> {
        self.string(o, k, path, required)?;
        if let Some(s) = o.get(k).and_then(Value::as_str) {
            check_markdown(s).map_err(|m| format!("RenderSpec {path}: \"{k}\": {m}"))?;
        }
        Ok(())
    }

    fn image(
        &mut self,
        o: &Map<String, Value>,
        k: &str,
        path: &str,
        required: bool,
    ) -> Result<(), String> {
        let Some(v) = o.get(k) else {
            return if required {
                err(path, format!("missing \"{k}\""))
            } else {
                Ok(())
            };
        };
        let Some(src) = v.as_str() else {
            return err(path, format!("\"{k}\" must be a string (an image source)"));
        };
        let source = classify_image(src).map_err(|m| format!("RenderSpec {path}: \"{k}\": {m}"))?;
        if source != ImageSource::Data {
            if self.images.len() >= MAX_IMAGES {
                return err(path, format!("more than {MAX_IMAGES} images to fetch"));
            }
            self.images.push(PendingImage {
                pointer: format!("{path}/{k}"),
                source,
            });
        }
        Ok(())
    }
}

fn short(s: &str) -> bool {
    s.len() <= MAX_STRING && !has_html(s)
}

fn scalar(v: &Value) -> bool {
    match v {
        Value::String(s) => short(s),
        Value::Number(_) | Value::Bool(_) | Value::Null => true,
        _ => false,
    }
}

fn req_array<'a>(o: &'a Map<String, Value>, k: &str, path: &str) -> Result<&'a Vec<Value>, String> {
    o.get(k)
        .and_then(Value::as_array)
        .ok_or_else(|| format!("RenderSpec {path}: \"{k}\" must be an array"))
}

fn only(o: &Map<String, Value>, allowed: &[&str], path: &str) -> Result<(), String> {
    match o.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => err(
            path,
            format!("unknown field \"{k}\" (allowed: {})", allowed.join(", ")),
        ),
        None => Ok(()),
    }
}

/// `<` followed by a letter, `/`, `!` or `?` looks like an HTML tag or comment.
fn has_html(s: &str) -> bool {
    s.as_bytes()
        .windows(2)
        .any(|w| w[0] == b'<' && (w[1].is_ascii_alphabetic() || matches!(w[1], b'/' | b'!' | b'?')))
}

/// The Markdown subset: no images (`![`), links only to http(s), mailto or `:/id`.
fn check_markdown(s: &str) -> Result<(), String> {
    if s.contains("![") {
        return Err("images are not allowed in text (use an image node)".into());
    }
    let mut rest = s;
    while let Some(i) = rest.find("](") {
        let after = &rest[i + 2..];
        let target = after
            .split([')', ' '])
            .next()
            .unwrap_or("")
            .trim_start_matches('<');
        let lower = target.to_ascii_lowercase();
        let ok = lower.starts_with("http://")
            || lower.starts_with("https://")
            || lower.starts_with("mailto:")
            || lower.starts_with(":/")
            || lower.starts_with('#');
        if !ok {
            return Err(format!(
                "link target '{target}' is not allowed (http, https, mailto or :/note-id)"
            ));
        }
        rest = after;
    }
    Ok(())
}

const DATA_IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// Check one image source.
pub fn classify_image(src: &str) -> Result<ImageSource, String> {
    if let Some(rest) = src.strip_prefix("data:") {
        check_data_url(rest)?;
        return Ok(ImageSource::Data);
    }
    let resource = src
        .strip_prefix(":/")
        .or_else(|| src.strip_prefix("resource:"));
    if let Some(id) = resource {
        return if sidenote_store::is_id(id) {
            Ok(ImageSource::Resource(id.to_string()))
        } else {
            Err(format!(
                "'{src}' is not a resource id (:/ followed by 32 hex characters)"
            ))
        };
    }
    let lower = src.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        return Ok(ImageSource::Remote(src.to_string()));
    }
    Err(format!(
        "image source '{}' is not allowed (data:image/…, :/resource-id, or an http(s) URL on a \
         permitted host)",
        src.chars().take(60).collect::<String>()
    ))
}

fn check_data_url(rest: &str) -> Result<(), String> {
    let (meta, data) = rest
        .split_once(',')
        .ok_or_else(|| "malformed data URL".to_string())?;
    let mut parts = meta.split(';');
    let mime = parts.next().unwrap_or("").to_ascii_lowercase();
    let base64 = meta.to_ascii_lowercase().ends_with(";base64");
    let bytes: Vec<u8> = if base64 {
        base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .map_err(|e| format!("data URL is not valid base64: {e}"))?
    } else {
        percent_decode(data)
    };
    if bytes.len() > MAX_IMAGE_BYTES {
        return Err(format!("image is larger than {MAX_IMAGE_BYTES} bytes"));
    }
    if mime == "image/svg+xml" {
        let text = String::from_utf8_lossy(&bytes).to_ascii_lowercase();
        if text.contains("<script")
            || text.contains("javascript:")
            || text.contains("<foreignobject")
            || has_event_attr(&text)
        {
            return Err("SVG images must not contain scripts or event handlers".into());
        }
        return Ok(());
    }
    if !DATA_IMAGE_TYPES.contains(&mime.as_str()) {
        return Err(format!(
            "data URL type '{mime}' is not allowed (png, jpeg, gif, webp, svg+xml)"
        ));
    }
    if !base64 {
        return Err("binary data URLs must be base64".into());
    }
    Ok(())
}

fn has_event_attr(lower_svg: &str) -> bool {
    let b = lower_svg.as_bytes();
    b.windows(3).enumerate().any(|(i, w)| {
        (w[0] == b' ' || w[0] == b'\t' || w[0] == b'\n' || w[0] == b'/')
            && w[1] == b'o'
            && w[2] == b'n'
            && {
                let rest = &b[i + 3..];
                let name_len = rest.iter().take_while(|c| c.is_ascii_alphabetic()).count();
                name_len > 0
                    && rest[name_len..].iter().find(|c| !c.is_ascii_whitespace()) == Some(&b'=')
            }
    })
}

fn percent_decode(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2]))
        {
            out.push(h * 16 + l);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).and_then(|d| u8::try_from(d).ok())
}

/// A `data:` URL for fetched image bytes; refuses non-image or oversized content.
pub fn image_data_url(content_type: &str, bytes: &[u8]) -> Result<String, String> {
    let mime = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if !(DATA_IMAGE_TYPES.contains(&mime.as_str()) || mime == "image/svg+xml") {
        return Err(format!(
            "content type '{mime}' is not an allowed image type"
        ));
    }
    if bytes.len() > MAX_IMAGE_BYTES {
        return Err(format!("image is larger than {MAX_IMAGE_BYTES} bytes"));
    }
    let url = format!(
        "data:{mime};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    );
    // an SVG is checked like a plugin-made one
    check_data_url(&url["data:".len()..])?;
    Ok(url)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn accepts_the_vocabulary() {
        let spec = json!({"version":1,"type":"stack","children":[
            {"type":"text","text":"**Packing** for [the Lakes](https://example.org)"},
            {"type":"list","title":"Clothing","items":[
                {"label":"Socks","badge":"×6","checkbox":false,
                 "thumbnail":"data:image/svg+xml;utf8,%3Csvg%20xmlns%3D%22http%3A%2F%2Fwww.w3.org%2F2000%2Fsvg%22%2F%3E"},
                {"label":"Boots","thumbnail":"http://127.0.0.1:1/boots.png"}]},
            {"type":"table","columns":["a","b"],"rows":[["x",1],[null,true]]},
            {"type":"keyValue","entries":[{"key":"Days","value":5}]},
            {"type":"image","src":":/0123456789abcdef0123456789abcdef","alt":"map"},
            {"type":"card","title":"T","children":[{"type":"text","text":"hi"}]}
        ]});
        let pending = validate(&spec).unwrap();
        assert_eq!(
            pending,
            vec![
                PendingImage {
                    pointer: "/children/1/items/1/thumbnail".into(),
                    source: ImageSource::Remote("http://127.0.0.1:1/boots.png".into())
                },
                PendingImage {
                    pointer: "/children/4/src".into(),
                    source: ImageSource::Resource("0123456789abcdef0123456789abcdef".into())
                },
            ]
        );
    }

    #[test]
    fn refuses_what_is_outside_it() {
        for (spec, needle) in [
            (json!({"type":"text","text":"x"}), "version"),
            (
                json!({"version":2,"type":"text","text":"x"}),
                "unsupported version",
            ),
            (
                json!({"version":1,"type":"html","html":"<b>"}),
                "unknown type",
            ),
            (
                json!({"version":1,"type":"text","text":"<script>x</script>"}),
                "HTML",
            ),
            (
                json!({"version":1,"type":"text","text":"[x](javascript:alert(1))"}),
                "link target",
            ),
            (
                json!({"version":1,"type":"text","text":"x","onclick":"y"}),
                "unknown field",
            ),
            (
                json!({"version":1,"type":"list","items":[{"label":"a","thumbnail":"file:///etc/passwd"}]}),
                "not allowed",
            ),
            (
                json!({"version":1,"type":"list","items":[{"label":"a","thumbnail":"data:text/html;base64,PGI+"}]}),
                "not allowed",
            ),
            (
                json!({"version":1,"type":"image","alt":"a","src":"data:image/svg+xml,%3Csvg%20onload%3D%22x%22%3E"}),
                "scripts",
            ),
            (
                json!({"version":1,"type":"table","columns":["a"],"rows":[["x","y"]]}),
                "cells",
            ),
        ] {
            let e = validate(&spec).unwrap_err();
            assert!(e.contains(needle), "{spec}: {e}");
        }
        let mut deep = json!({"type":"text","text":"x"});
        for _ in 0..12 {
            deep = json!({"type":"stack","children":[deep]});
        }
        deep["version"] = json!(1);
        assert!(validate(&deep).unwrap_err().contains("deeper"));
    }
}
