//! `read_image`: an image attachment as image content, scaled down to fit the requested
//! resolution (longest side: low 256 px, medium 768 px, high 1536 px).
//!
//! An image that already fits is sent as stored (no re-encoding). A larger one is decoded,
//! resized (aspect ratio kept) and re-encoded: JPEG stays JPEG, everything else becomes PNG.
//! An image that cannot be decoded (e.g. SVG, or a format this build does not read) is sent
//! as stored when it is at most [`RAW_FALLBACK_MAX_BYTES`], else the call fails (recoverable).

use super::common::{blocking, required_str, strip_link_prefix};
use crate::{Access, Tool, ToolCtx, ToolError, ToolOutput};
use base64::Engine as _;
use image::{DynamicImage, ImageFormat, ImageReader, Limits, imageops::FilterType};
use serde_json::{Value, json};
use sidenote_store::{Store, is_id};
use std::io::Cursor;

/// Largest undecodable image sent as is.
pub const RAW_FALLBACK_MAX_BYTES: usize = 4 * 1024 * 1024;
/// Memory the decoder may allocate for one image.
const DECODE_MAX_ALLOC: u64 = 256 * 1024 * 1024;

/// Longest side in pixels for a `resolution` value.
pub fn max_side(resolution: &str) -> Option<u32> {
    match resolution {
        "low" => Some(256),
        "medium" => Some(768),
        "high" => Some(1536),
        _ => None,
    }
}

pub struct ReadImage {
    store: Store,
    schema: Value,
}

impl ReadImage {
    pub fn new(store: Store) -> Self {
        let schema = json!({
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": "The attachment id (32-character hex; :/id also accepted)."},
                "resolution": {
                    "type": "string",
                    "enum": ["low", "medium", "high"],
                    "default": "medium",
                    "description": "high is better for reading text but costs more tokens."
                }
            },
            "required": ["id"]
        });
        ReadImage { store, schema }
    }
}

/// The image to send: `(bytes, mime type)`.
pub(crate) fn scale(
    bytes: Vec<u8>,
    stored_mime: &str,
    max: u32,
    id: &str,
) -> Result<(Vec<u8>, String), ToolError> {
    let undecodable = |bytes: Vec<u8>, why: String| {
        if bytes.len() <= RAW_FALLBACK_MAX_BYTES {
            Ok((bytes, stored_mime.to_string()))
        } else {
            Err(ToolError::recoverable(format!(
                "Cannot read image {id}: {why}; it is too large ({} bytes) to send undecoded",
                bytes.len()
            )))
        }
    };
    let reader = || {
        let mut limits = Limits::default();
        limits.max_alloc = Some(DECODE_MAX_ALLOC);
        let mut r = ImageReader::new(Cursor::new(bytes.as_slice())).with_guessed_format()?;
        r.limits(limits);
        Ok::<_, std::io::Error>(r)
    };
    let Ok(probe) = reader() else {
        return undecodable(bytes, "unreadable data".into());
    };
    let Some(format) = probe.format() else {
        return undecodable(bytes, "unknown image format".into());
    };
    let (w, h) = match probe.into_dimensions() {
        Ok(d) => d,
        Err(e) => return undecodable(bytes, e.to_string()),
    };
    if w <= max && h <= max {
        return Ok((bytes, format.to_mime_type().to_string()));
    }
    let decoded = match reader().map(|r| r.decode()) {
        Ok(Ok(img)) => img,
        Ok(Err(e)) => return undecodable(bytes, e.to_string()),
        Err(e) => return undecodable(bytes, e.to_string()),
    };
    let small = decoded.resize(max, max, FilterType::Triangle);
    let mut out = Cursor::new(Vec::new());
    let written = if format == ImageFormat::Jpeg {
        DynamicImage::ImageRgb8(small.to_rgb8())
            .write_with_encoder(image::codecs::jpeg::JpegEncoder::new_with_quality(
                &mut out, 85,
            ))
            .map(|()| ImageFormat::Jpeg)
    } else {
        small
            .write_to(&mut out, ImageFormat::Png)
            .map(|()| ImageFormat::Png)
    };
    match written {
        Ok(f) => Ok((out.into_inner(), f.to_mime_type().to_string())),
        Err(e) => Err(ToolError::internal(format!(
            "cannot encode scaled image {id}: {e}"
        ))),
    }
}

#[async_trait::async_trait]
impl Tool for ReadImage {
    fn id(&self) -> &str {
        "read_image"
    }
    fn description(&self) -> &str {
        "View an image attachment (e.g. ![](:/id) in a note body) to describe it or read its text."
    }
    fn input_schema(&self) -> &Value {
        &self.schema
    }
    fn access(&self) -> Access {
        Access::Read
    }

    async fn call(&self, input: Value, _ctx: &ToolCtx) -> Result<ToolOutput, ToolError> {
        let id = strip_link_prefix(required_str(&input, "id")?).to_string();
        if !is_id(&id) {
            return Err(ToolError::recoverable(format!("Invalid ID: {id}")));
        }
        let resolution = input
            .get("resolution")
            .and_then(Value::as_str)
            .unwrap_or("medium");
        let max = max_side(resolution).ok_or_else(|| {
            ToolError::recoverable(format!("Invalid resolution: {}", json!(resolution)))
        })?;
        let store = self.store.clone();
        blocking(move || {
            let res = store
                .resource(&id)?
                .ok_or_else(|| ToolError::recoverable(format!("Resource not found: {id}")))?;
            if !res.mime.to_ascii_lowercase().starts_with("image/") {
                return Err(ToolError::recoverable(format!(
                    "Unsupported image MIME type: {}",
                    res.mime
                )));
            }
            let bytes = match std::fs::read(store.resource_path(&res)) {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Err(ToolError::recoverable(format!(
                        "The file of resource {id} is missing from the workspace"
                    )));
                }
                Err(e) => {
                    return Err(ToolError::internal(format!(
                        "cannot read resource {id}: {e}"
                    )));
                }
            };
            let (bytes, mime_type) = scale(bytes, &res.mime, max, &id)?;
            Ok(ToolOutput::Image {
                id,
                mime_type,
                base64: base64::engine::general_purpose::STANDARD.encode(bytes),
            })
        })
        .await
    }

    fn activity(&self, input: &Value, output: Option<&ToolOutput>) -> String {
        let id = strip_link_prefix(input.get("id").and_then(Value::as_str).unwrap_or(""));
        let title = self
            .store
            .resource(id)
            .ok()
            .flatten()
            .map(|r| {
                if r.title.is_empty() {
                    r.filename
                } else {
                    r.title
                }
            })
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| id.to_string());
        match output {
            Some(_) => format!("Read image: {title}"),
            None => format!("Reading image: {title}"),
        }
    }
}
