//! Cost of decoding streamed responses, per SSE chunk (text deltas and tool-argument fragments).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sidenote_ai::ProviderType;
use sidenote_ai::replay::decode_sse;
use std::hint::black_box;

const CHUNKS: usize = 1000;

fn openai_body() -> Vec<String> {
    let mut frames = Vec::new();
    for i in 0..CHUNKS / 2 {
        frames.push(format!(
            "data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"word{i} \"}},\"finish_reason\":null}}]}}\n\n"
        ));
    }
    frames.push("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"edit\",\"arguments\":\"\"}}]}}]}\n\n".into());
    frames.push("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"text\\\":\\\"\"}}]}}]}\n\n".into());
    for i in 0..CHUNKS / 2 - 3 {
        frames.push(format!(
            "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"function\":{{\"arguments\":\"part{i} \"}}}}]}}}}]}}\n\n"
        ));
    }
    frames.push("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n".into());
    frames.push("data: [DONE]\n\n".into());
    frames
}

fn anthropic_body() -> Vec<String> {
    let mut frames = vec![
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n".to_string(),
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n".into(),
    ];
    for i in 0..CHUNKS / 2 {
        frames.push(format!("event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\"word{i} \"}}}}\n\n"));
    }
    frames.push(
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n".into(),
    );
    frames.push("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"edit\",\"input\":{}}}\n\n".into());
    frames.push("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"text\\\":\\\"\"}}\n\n".into());
    for i in 0..CHUNKS / 2 - 7 {
        frames.push(format!("event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":\"part{i} \"}}}}\n\n"));
    }
    frames.push("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"}\"}}\n\n".into());
    frames.push(
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n".into(),
    );
    frames.push("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":900}}\n\n".into());
    frames.push("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n".into());
    frames
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("sse_decode");
    for (name, ty, frames) in [
        (
            "openai_1000_chunks",
            ProviderType::OpenAiCompatible,
            openai_body(),
        ),
        (
            "anthropic_1000_chunks",
            ProviderType::Anthropic,
            anthropic_body(),
        ),
    ] {
        let chunks: Vec<&[u8]> = frames.iter().map(|f| f.as_bytes()).collect();
        let events = decode_sse(ty, &chunks).unwrap_or_default();
        assert!(events.len() > CHUNKS / 2, "{name}: the body must decode");
        g.throughput(Throughput::Elements(chunks.len() as u64));
        g.bench_function(name, |b| b.iter(|| decode_sse(ty, black_box(&chunks))));
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
