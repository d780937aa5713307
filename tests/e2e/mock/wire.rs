//! The replies on the wire: one scripted reply as the Server-Sent Events stream of each
//! API the mock serves (Anthropic Messages for Claude Code, OpenAI Responses for Codex,
//! Chat Completions for OpenCode), and the 429 of a subscription's spent usage window.

use super::*;

fn event(out: &mut String, name: &str, data: Value) {
    out.push_str(&format!("event: {name}\ndata: {data}\n\n"));
}

/// The SSE stream of one reply.
pub(super) fn sse(reply: &Reply, index: usize) -> String {
    let id = format!("msg_mock_{index:04}");
    let mut out = String::new();
    event(
        &mut out,
        "message_start",
        json!({"type": "message_start", "message": {"id": id, "type": "message", "role": "assistant", "model": "claude-opus-4-8",
            "content": [], "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
    );
    let mut block = 0;
    let text_block = |out: &mut String, text: &str, block: &mut usize| {
        event(
            out,
            "content_block_start",
            json!({"type": "content_block_start", "index": *block, "content_block": {"type": "text", "text": ""}}),
        );
        event(
            out,
            "content_block_delta",
            json!({"type": "content_block_delta", "index": *block, "delta": {"type": "text_delta", "text": text}}),
        );
        event(
            out,
            "content_block_stop",
            json!({"type": "content_block_stop", "index": *block}),
        );
        *block += 1;
    };
    let stop_reason = match reply {
        Reply::Text(text) => {
            text_block(&mut out, text, &mut block);
            "end_turn"
        }
        Reply::Tool { text, name, input } => {
            if let Some(text) = text {
                text_block(&mut out, text, &mut block);
            }
            let tool_id = format!("toolu_mock_{index:04}");
            event(
                &mut out,
                "content_block_start",
                json!({"type": "content_block_start", "index": block, "content_block": {"type": "tool_use", "id": tool_id, "name": name, "input": {}}}),
            );
            event(
                &mut out,
                "content_block_delta",
                json!({"type": "content_block_delta", "index": block, "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}),
            );
            event(
                &mut out,
                "content_block_stop",
                json!({"type": "content_block_stop", "index": block}),
            );
            "tool_use"
        }
        Reply::Error(_) | Reply::UsageLimit { .. } | Reply::UsageStop { .. } | Reply::After(..) => {
            unreachable!()
        }
    };
    event(
        &mut out,
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": {"output_tokens": 5}}),
    );
    event(&mut out, "message_stop", json!({"type": "message_stop"}));
    out
}

/// The SSE stream of one reply in the Responses API, as Codex reads it: `response.created`,
/// then per output item `response.output_item.added`, text deltas and
/// `response.output_item.done`, then `response.completed` with usage. A tool call is a
/// `function_call` item (Codex offers `exec_command`, whose argument is `{"cmd": ...}`).
pub(super) fn responses_sse(reply: &Reply, index: usize) -> String {
    let id = format!("resp_mock_{index:04}");
    let mut out = String::new();
    let mut items = Vec::new();
    let (text, tool) = match reply {
        Reply::Text(text) => (Some(text.as_str()), None),
        Reply::Tool { text, name, input } => (text.as_deref(), Some((name, input))),
        Reply::Error(_) | Reply::UsageLimit { .. } | Reply::UsageStop { .. } | Reply::After(..) => {
            unreachable!()
        }
    };
    event(
        &mut out,
        "response.created",
        json!({"type": "response.created", "response": {"id": id, "object": "response", "status": "in_progress", "output": []}}),
    );
    if let Some(text) = text {
        let item_id = format!("msg_mock_{index:04}");
        let output_index = items.len();
        event(
            &mut out,
            "response.output_item.added",
            json!({"type": "response.output_item.added", "output_index": output_index,
                "item": {"id": item_id, "type": "message", "role": "assistant", "status": "in_progress", "content": []}}),
        );
        event(
            &mut out,
            "response.output_text.delta",
            json!({"type": "response.output_text.delta", "item_id": item_id, "output_index": output_index, "content_index": 0, "delta": text}),
        );
        let item = json!({"id": item_id, "type": "message", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]});
        event(
            &mut out,
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": output_index, "item": item}),
        );
        items.push(item);
    }
    if let Some((name, input)) = tool {
        let item = json!({"id": format!("fc_mock_{index:04}"), "type": "function_call", "status": "completed",
            "name": name, "arguments": input.to_string(), "call_id": format!("call_mock_{index:04}")});
        let output_index = items.len();
        event(
            &mut out,
            "response.output_item.added",
            json!({"type": "response.output_item.added", "output_index": output_index, "item": item}),
        );
        event(
            &mut out,
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": output_index, "item": item}),
        );
        items.push(item);
    }
    event(
        &mut out,
        "response.completed",
        json!({"type": "response.completed", "response": {"id": id, "object": "response", "status": "completed", "output": items,
            "usage": {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 20,
                "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 120}}}),
    );
    out
}

/// The SSE stream of one reply in chat completions: `chat.completion.chunk` lines (the
/// text, or a `tool_calls` delta with the whole arguments), a last chunk with the finish
/// reason and usage, then `data: [DONE]`. No `event:` lines: that API has none.
pub(super) fn chat_sse(reply: &Reply, index: usize) -> String {
    let id = format!("chatcmpl-mock-{index}");
    let chunk = |delta: Value, finish: Value| {
        let mut chunk = json!({"id": id, "object": "chat.completion.chunk", "created": 0, "model": "mock-model",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        if !finish.is_null() {
            chunk["usage"] =
                json!({"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120});
        }
        format!("data: {chunk}\n\n")
    };
    let mut out = String::new();
    let (text, tool) = match reply {
        Reply::Text(text) => (Some(text.as_str()), None),
        Reply::Tool { text, name, input } => (text.as_deref(), Some((name, input))),
        Reply::Error(_) | Reply::UsageLimit { .. } | Reply::UsageStop { .. } | Reply::After(..) => {
            unreachable!()
        }
    };
    if let Some(text) = text {
        out.push_str(&chunk(
            json!({"role": "assistant", "content": text}),
            Value::Null,
        ));
    }
    let finish = match tool {
        Some((name, input)) => {
            out.push_str(&chunk(
                json!({"role": "assistant", "tool_calls": [{"index": 0, "id": format!("call_mock{index:04}"), "type": "function",
                    "function": {"name": name, "arguments": input.to_string()}}]}),
                Value::Null,
            ));
            "tool_calls"
        }
        None => "stop",
    };
    out.push_str(&chunk(json!({}), json!(finish)));
    out.push_str("data: [DONE]\n\n");
    out
}

/// A 429 that says the subscription's `claim` window is spent until `reset_in` seconds
/// from now.
pub fn usage_limit_response(
    writer: &mut TcpStream,
    reset_in: u64,
    claim: &str,
) -> std::io::Result<()> {
    let reset = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + reset_in;
    let body = json!({"type": "error", "error": {"type": "rate_limit_error",
        "message": "This request would exceed your account's rate limit. Please try again later."}})
    .to_string();
    write!(
        writer,
        "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\n\
         anthropic-ratelimit-unified-status: rejected\r\n\
         anthropic-ratelimit-unified-reset: {reset}\r\n\
         anthropic-ratelimit-unified-representative-claim: {claim}\r\n\
         request-id: req_mock_429\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// A 429 that says the subscription's extra usage is off for `reason`, with no reset: the
/// headers Claude Code 2.1.197 and 2.1.332 turn into a usage-limit text that no wait ends
/// (observed 2026-11-27 against this mock).
pub fn usage_stop_response(writer: &mut TcpStream, reason: &str) -> std::io::Result<()> {
    let body = json!({"type": "error", "error": {"type": "rate_limit_error",
        "message": "This request would exceed your account's rate limit. Please try again later."}})
    .to_string();
    write!(
        writer,
        "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\n\
         anthropic-ratelimit-unified-status: rejected\r\n\
         anthropic-ratelimit-unified-representative-claim: overage\r\n\
         anthropic-ratelimit-unified-overage-status: rejected\r\n\
         anthropic-ratelimit-unified-overage-disabled-reason: {reason}\r\n\
         request-id: req_mock_429\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}
