//! Decode a recorded SSE response body offline (tests, debugging a server's output, benches).

use crate::config::ProviderType;
use crate::error::AiError;
use crate::types::ChatEvent;
use crate::{anthropic, openai};
use eventsource_stream::Eventsource;
use futures::StreamExt;

/// Decode `chunks` (the body of a streaming response, split as it arrived) into the events a
/// provider would yield, or the error it would end with.
pub fn decode_sse(
    provider_type: ProviderType,
    chunks: &[&[u8]],
) -> Result<Vec<ChatEvent>, AiError> {
    let owned: Vec<Result<Vec<u8>, std::convert::Infallible>> =
        chunks.iter().map(|c| Ok(c.to_vec())).collect();
    futures::executor::block_on(async move {
        let mut sse = futures::stream::iter(owned).eventsource();
        let mut out = Vec::new();
        let mut oa = openai::StreamDecoder::new();
        let mut an = anthropic::StreamDecoder::new();
        while let Some(ev) = sse.next().await {
            let ev = ev.map_err(|e| AiError::BadResponse(format!("not valid SSE: {e}")))?;
            let finished = match provider_type {
                ProviderType::OpenAiCompatible => oa.on_data(&ev.data, &mut out)?,
                ProviderType::Anthropic => an.on_event(&ev.event, &ev.data, &mut out)?,
            };
            if finished {
                break;
            }
        }
        match provider_type {
            ProviderType::OpenAiCompatible => oa.finish(&mut out)?,
            ProviderType::Anthropic => an.finish(&mut out)?,
        }
        Ok(out)
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::types::StopReason;

    const START: &str = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3}}}\n\n";
    const TOOL: &str = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\",\"input\":{}}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\":\"}}\n\n";
    const END: &str = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"1}\"}}\n\nevent: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":7}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

    #[test]
    fn anthropic_stream_split_anywhere_decodes_the_same() {
        let whole = format!("{START}{TOOL}{END}");
        let bytes = whole.as_bytes();
        for cut in [1, 17, bytes.len() / 2, bytes.len() - 3] {
            let events =
                decode_sse(ProviderType::Anthropic, &[&bytes[..cut], &bytes[cut..]]).unwrap();
            let ChatEvent::ToolCall(c) = &events[0] else {
                panic!("{events:?}")
            };
            assert_eq!(c.arguments, serde_json::json!({"a": 1}));
            assert_eq!(
                events[1],
                ChatEvent::Usage(crate::Usage {
                    input_tokens: 3,
                    output_tokens: 7
                })
            );
            assert_eq!(events[2], ChatEvent::Stop(StopReason::ToolUse));
        }
    }

    #[test]
    fn anthropic_stream_cut_mid_tool_is_an_error() {
        let cut = format!("{START}{TOOL}");
        let e = decode_sse(ProviderType::Anthropic, &[cut.as_bytes()]).unwrap_err();
        assert!(
            matches!(e, AiError::StreamCut(ref m) if m.contains("tool call")),
            "{e:?}"
        );
    }
}
