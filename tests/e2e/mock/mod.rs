//! A mock of the Anthropic Messages API, owned by the tests.
//!
//! It binds 127.0.0.1 on a free port, answers Claude Code's `HEAD /` probe, and answers
//! every `POST /v1/messages` with the next reply of a per-test script, streamed as
//! Server-Sent Events with their `event:` lines (without them the CLI falls back to a
//! second, non-streaming request). Every request body is recorded so a test can assert
//! what the model was told. When the script runs out it answers 500, which ends the run
//! at once instead of letting a broken test spin (a 400 would not: since 2.1.219 Claude Code
//! re-sends a 400 up to five times with request features stripped).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::{Value, json};

mod gate;
mod wire;

pub use gate::Gate;

use wire::{chat_sse, responses_sse, sse, usage_limit_response, usage_stop_response};

/// One scripted model turn.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A text answer that ends the turn.
    Text(String),
    /// Optional text, then one tool call; the turn continues after the tool result.
    Tool {
        text: Option<String>,
        name: String,
        input: Value,
    },
    /// An HTTP error with a Messages API error body.
    Error(u16),
    /// The reply, sent only once the test opens the gate: the screen before it stays
    /// still until the test has read it (the terminal UI may clear what scrolled away).
    After(Gate, Box<Reply>),
    /// A subscription's usage limit (HTTP 429 with the unified rate-limit headers Claude
    /// Code reads, `research/cc-facts.md` B6): the window `claim` (`five_hour`,
    /// `seven_day`) resets `reset_in` seconds after the request. Claude Code takes it for
    /// a usage limit only when logged in with a subscription (`E2e::subscribed`).
    UsageLimit { reset_in: u64, claim: String },
    /// A subscription's usage stopped for good: a 429 whose unified headers say the extra
    /// usage behind a spent window is off for `reason` (`out_of_credits`,
    /// `seat_tier_level_disabled`, `member_level_disabled`, ...), with no reset. Claude
    /// Code words it as one of its usage-limit texts ("You're out of usage credits",
    /// "Your seat type doesn't include usage credits", ...).
    UsageStop { reason: String },
}

impl Reply {
    pub fn text(text: &str) -> Reply {
        Reply::Text(text.to_owned())
    }

    pub fn write(path: &std::path::Path, content: &str) -> Reply {
        Reply::Tool {
            text: Some("Writing the file.".into()),
            name: "Write".into(),
            input: json!({"file_path": path, "content": content}),
        }
    }

    /// `self`, held back until `gate` opens.
    pub fn after(self, gate: &Gate) -> Reply {
        Reply::After(gate.clone(), Box::new(self))
    }

    pub fn bash(command: &str) -> Reply {
        Reply::Tool {
            text: None,
            name: "Bash".into(),
            input: json!({"command": command, "description": "run a command"}),
        }
    }
}

pub struct MockApi {
    pub port: u16,
    requests: Arc<Mutex<Vec<Value>>>,
    stop: Arc<AtomicBool>,
}

impl MockApi {
    pub fn start(script: Vec<Reply>) -> MockApi {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let script = Arc::new(script);
        let next = Arc::new(AtomicUsize::new(0));
        let (requests_bg, stop_bg) = (requests.clone(), stop.clone());
        thread::spawn(move || {
            while !stop_bg.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let (requests, script, next) =
                            (requests_bg.clone(), script.clone(), next.clone());
                        thread::spawn(move || {
                            let _ = serve(stream, &requests, &script, &next);
                        });
                    }
                    Err(_) => thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        MockApi {
            port,
            requests,
            stop,
        }
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The JSON bodies of every `POST /v1/messages`, in order.
    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }

    /// The texts of every message after the last assistant message of request `index`:
    /// what the model was just told. One message up to Claude Code 2.1.258; since 2.1.259 a
    /// Stop block also arrives as a `role:"system"` copy after the feedback, and since
    /// about 2.1.232 PostToolUse context as its own system message, so a test that read
    /// only the last message would see the copy, not the feedback.
    pub fn told(&self, index: usize) -> Vec<String> {
        let requests = self.requests();
        let request = requests
            .get(index)
            .unwrap_or_else(|| panic!("there is no request {index}; {} were made", requests.len()));
        told(request)
    }

    /// [`MockApi::told`], joined by newlines.
    pub fn told_text(&self, index: usize) -> String {
        self.told(index).join("\n")
    }

    /// The Stop hook's re-prompt among what request `index` told the model: pagent hands
    /// it over as `additionalContext`, which both clients send as
    /// `<system-reminder>\nStop hook additional context: TEXT\n</system-reminder>`; a block
    /// arrives as `Stop hook feedback:\nTEXT`. Fails when there is neither.
    pub fn stop_feedback(&self, index: usize) -> String {
        let told = self.told(index);
        told.iter()
            .find_map(|text| stop_feedback_in(text))
            .unwrap_or_else(|| panic!("request {index} carries no Stop hook feedback: {told:#?}"))
    }

    /// Every text the model was sent in request `index`, joined.
    pub fn all_text(&self, index: usize) -> String {
        let requests = self.requests();
        requests[index]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(message_text)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for MockApi {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The Stop hook's re-prompt in one message's text, in either form.
pub fn stop_feedback_in(text: &str) -> Option<String> {
    if let Some(reason) = text.strip_prefix("Stop hook feedback:\n") {
        return Some(reason.to_owned());
    }
    let (_, context) = text.split_once("Stop hook additional context: ")?;
    let context = context.trim_end();
    Some(
        context
            .strip_suffix("</system-reminder>")
            .unwrap_or(context)
            .trim_end()
            .to_owned(),
    )
}

/// The texts of the messages after the last assistant message of `request`.
pub fn told(request: &Value) -> Vec<String> {
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    let start = messages
        .iter()
        .rposition(|m| m["role"] == "assistant")
        .map_or(0, |i| i + 1);
    messages[start..].iter().map(message_text).collect()
}

/// A message's text: a string, or its text and tool_result blocks joined.
pub fn message_text(message: &Value) -> String {
    match &message["content"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| match b["type"].as_str() {
                Some("text") => b["text"].as_str().map(str::to_owned),
                Some("tool_result") => Some(match &b["content"] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                }),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn serve(
    stream: TcpStream,
    requests: &Mutex<Vec<Value>>,
    script: &[Reply],
    next: &AtomicUsize,
) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = stream;
    while let Some((method, path, body)) = read_request(&mut reader)? {
        if path.starts_with("/npm/") {
            // The package registry the agents are pointed at (OpenCode installs packages
            // into its config folder on start): a quick, definite "no".
            let error = json!({"error": "mock: no package registry here"}).to_string();
            not_found(&mut writer, &error)?;
            continue;
        }
        if method == "HEAD" || method == "GET" {
            writer.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n",
            )?;
            continue;
        }
        let api = match (method.as_str(), path.split('?').next().unwrap_or("")) {
            ("POST", "/v1/messages") => Api::Messages,
            ("POST", "/v1/responses") => Api::Responses,
            ("POST", "/v1/chat/completions") => Api::Chat,
            _ => {
                let error = json!({"type": "error", "error": {"type": "not_found_error", "message": format!("mock: no route {method} {path}")}}).to_string();
                not_found(&mut writer, &error)?;
                continue;
            }
        };
        let value: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        // Side requests without tools (OpenCode's session title, the interactive UI's
        // title) are answered, but neither recorded nor taken from the script, so the
        // script stays the model's turns.
        if api != Api::Responses && value["tools"].as_array().is_none_or(Vec::is_empty) {
            answer_side_request(&mut writer, api, &value)?;
            continue;
        }
        requests.lock().unwrap().push(value.clone());
        let index = next.fetch_add(1, Ordering::SeqCst);
        answer_turn(&mut writer, api, script, index)?;
    }
    Ok(())
}

/// The next request on the connection: its method, path and body (chunked or not);
/// none once the client closed it.
fn read_request(
    reader: &mut BufReader<TcpStream>,
) -> std::io::Result<Option<(String, String, Vec<u8>)>> {
    let mut request_line = String::new();
    if reader.read_line(&mut request_line)? == 0 {
        return Ok(None);
    }
    let mut content_length = 0usize;
    let mut chunked = false;
    loop {
        let mut header = String::new();
        reader.read_line(&mut header)?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let lower = header.to_ascii_lowercase();
        if let Some(value) = lower.strip_prefix("content-length:") {
            content_length = value.trim().parse().unwrap_or(0);
        }
        if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
            chunked = true;
        }
    }
    let body = if chunked {
        read_chunked(reader)?
    } else {
        read_exact(reader, content_length)?
    };
    let mut parts = request_line.split_whitespace();
    let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    Ok(Some((method.to_owned(), path.to_owned(), body)))
}

fn not_found(writer: &mut TcpStream, error: &str) -> std::io::Result<()> {
    write!(
        writer,
        "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{error}",
        error.len()
    )
}

/// A session title asked for on the side: a fixed answer in the API's own shape.
fn answer_side_request(writer: &mut TcpStream, api: Api, value: &Value) -> std::io::Result<()> {
    if api == Api::Chat && value["stream"] != true {
        let body = json!({"id": "chatcmpl-title", "object": "chat.completion", "created": 0, "model": "mock-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "Mock session"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).to_string();
        write!(
            writer,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )?;
    } else if api == Api::Chat {
        respond_sse(writer, &chat_sse(&Reply::text("Mock session"), usize::MAX))?;
    } else {
        respond_sse(writer, &sse(&Reply::text("Session"), 9999))?;
    }
    writer.flush()
}

/// The script's reply number `index` (once its gate opens), in the API's own shape.
fn answer_turn(
    writer: &mut TcpStream,
    api: Api,
    script: &[Reply],
    index: usize,
) -> std::io::Result<()> {
    let mut reply = script.get(index);
    while let Some(Reply::After(gate, held)) = reply {
        gate.wait();
        reply = Some(held);
    }
    match reply {
        Some(Reply::Error(status)) => error_response(writer, *status, "mock: scripted error")?,
        Some(Reply::UsageLimit { reset_in, claim }) => {
            usage_limit_response(writer, *reset_in, claim)?
        }
        Some(Reply::UsageStop { reason }) => usage_stop_response(writer, reason)?,
        Some(reply) => {
            respond_sse(
                writer,
                &match api {
                    Api::Messages => sse(reply, index),
                    Api::Responses => responses_sse(reply, index),
                    Api::Chat => chat_sse(reply, index),
                },
            )?;
        }
        None => error_response(
            writer,
            500,
            &format!("mock: the script has only {} replies", script.len()),
        )?,
    }
    writer.flush()
}

/// The three model APIs the mock speaks: Anthropic's Messages (Claude Code), OpenAI's
/// Responses (Codex) and chat completions (OpenCode, through its OpenAI-compatible
/// provider). One script serves whichever is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Api {
    Messages,
    Responses,
    Chat,
}

fn respond_sse(writer: &mut TcpStream, body: &str) -> std::io::Result<()> {
    write!(
        writer,
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// An error body both Anthropic's and OpenAI's clients read: `error.message` and
/// `error.type` in an object that also says `"type": "error"`.
fn error_response(writer: &mut TcpStream, status: u16, message: &str) -> std::io::Result<()> {
    let kind = if status >= 500 {
        "api_error"
    } else {
        "invalid_request_error"
    };
    let body = json!({"type": "error", "error": {"type": kind, "message": message, "code": "mock_error", "param": null}})
        .to_string();
    write!(
        writer,
        "HTTP/1.1 {status} Error\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

fn read_exact(reader: &mut impl Read, len: usize) -> std::io::Result<Vec<u8>> {
    let mut body = vec![0; len];
    reader.read_exact(&mut body)?;
    Ok(body)
}

fn read_chunked(reader: &mut BufReader<TcpStream>) -> std::io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut size = String::new();
        reader.read_line(&mut size)?;
        let size =
            usize::from_str_radix(size.trim().split(';').next().unwrap_or("0"), 16).unwrap_or(0);
        if size == 0 {
            let mut end = String::new();
            reader.read_line(&mut end)?;
            return Ok(body);
        }
        body.extend(read_exact(reader, size)?);
        let mut crlf = String::new();
        reader.read_line(&mut crlf)?;
    }
}
