//! A reviewer's answer: the verdict read from its final message, and what any ending of
//! the reviewer (an answer, a failure, a timeout) means for the loop. Strict on purpose:
//! only a well-formed "met" with nothing missing is "met".

use serde_json::{Map, Value};

use super::{ReviewOutcome, ReviewRecord};
use crate::Timestamp;
use crate::render::cap_message;

/// The longest a verdict's sentence may be (the re-prompt carries it).
pub(crate) const DETAIL_CAP: usize = 3_000;
/// How much of a final message is searched for the verdict (its end).
const ANSWER_SCAN: usize = 64 * 1024;

/// A reviewer's verdict, as parsed from its final message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub met: bool,
    pub missing: Vec<String>,
    pub files: Vec<String>,
}

/// What a reviewer's ending means for the loop.
pub fn record_of(
    outcome: &ReviewOutcome,
    stage: usize,
    iteration: u32,
    now: Timestamp,
) -> ReviewRecord {
    // What a reviewer wrote ends up in the state, a re-prompt and the log: cut it here.
    let not_met = |summary: String, detail: String| ReviewRecord {
        stage,
        iteration,
        met: false,
        summary,
        detail: cap_message(&detail, DETAIL_CAP),
        at: now,
    };
    let again = "it reviews again at your next stop";
    match outcome {
        ReviewOutcome::Answered(text) => match parse_verdict(text) {
            Ok(verdict) if verdict.met => ReviewRecord {
                stage,
                iteration,
                met: true,
                summary: "met".to_owned(),
                detail: "the reviewer agrees the work meets the criteria".to_owned(),
                at: now,
            },
            Ok(verdict) => {
                let mut items = verdict.missing.clone();
                if !verdict.files.is_empty() {
                    items.push(format!("files: {}", verdict.files.join(", ")));
                }
                let first = verdict.missing.first().cloned().unwrap_or_default();
                not_met(
                    cap_message(&format!("not met: {first}"), 200),
                    format!(
                        "the reviewer says the work does not meet the criteria yet: {}. Fix that; the reviewer looks again when everything else holds at your next stop",
                        items.join("; ")
                    ),
                )
            }
            Err(why) => not_met(
                "unreadable answer".to_owned(),
                format!(
                    "the reviewer's answer could not be read as a verdict ({why}), so the work is not counted as reviewed; {again}"
                ),
            ),
        },
        ReviewOutcome::Failed(why) => not_met(
            "failed".to_owned(),
            format!(
                "the reviewer could not finish ({why}), so the work is not counted as reviewed; {again}"
            ),
        ),
        ReviewOutcome::TimedOut { after_secs } => not_met(
            "timed out".to_owned(),
            format!(
                "the reviewer did not answer within {after_secs} s and was stopped, so the work is not counted as reviewed; {again}"
            ),
        ),
        ReviewOutcome::NotRun => {
            not_met("not run".to_owned(), "the reviewer was not run".to_owned())
        }
    }
}

/// Reads the verdict from a reviewer's final message: the last top-level JSON object in
/// it that has a boolean `met`. "met" needs `met: true` and nothing listed as missing;
/// anything else that is well formed is "not met", and a verdict that says "not met" must
/// say what.
///
/// Top-level means not inside another JSON value: the message is read from its start, and
/// a whole object or array found there is skipped as one, so what it holds never counts.
/// (Reading the innermost, rightmost object made `{"met": false, "missing": [...],
/// "note": {"met": true}}` a "met".)
pub fn parse_verdict(text: &str) -> Result<Verdict, String> {
    let start = text.len().saturating_sub(ANSWER_SCAN);
    let start = (start..=text.len())
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(text.len());
    let tail = &text[start..];
    let object = last_top_level_verdict(tail).ok_or_else(|| {
        if tail.trim().is_empty() {
            "the final message was empty".to_owned()
        } else {
            "no JSON object with a true or false \"met\" in the final message".to_owned()
        }
    })?;
    let strings = |key: &str| -> Result<Vec<String>, String> {
        match object.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::String(one)) => Ok(vec![one.clone()]),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| format!("\"{key}\" must list strings"))
                })
                .collect(),
            Some(_) => Err(format!("\"{key}\" must be a list of strings")),
        }
    };
    let clean = |items: Vec<String>| -> Vec<String> {
        items
            .into_iter()
            .map(|s| cap_message(s.trim(), 400))
            .filter(|s| !s.is_empty())
            .take(20)
            .collect()
    };
    let missing = clean(strings("missing")?);
    let files = clean(strings("files")?);
    let said_met = object.get("met") == Some(&Value::Bool(true));
    if said_met && !missing.is_empty() {
        return Err(format!(
            "it says met but lists what is missing ({})",
            missing.join("; ")
        ));
    }
    if !said_met && missing.is_empty() {
        return Err("it says not met without saying what is missing".to_owned());
    }
    Ok(Verdict {
        met: said_met,
        missing,
        files,
    })
}

/// The last object with a boolean `met` among the top-level JSON values of `text`.
fn last_top_level_verdict(text: &str) -> Option<Map<String, Value>> {
    let bytes = text.as_bytes();
    let mut found = None;
    let mut at = 0;
    while at < bytes.len() {
        // `{` and `[` are ASCII, so `at` is a character boundary whenever one is there.
        if matches!(bytes[at], b'{' | b'[') {
            let mut values = serde_json::Deserializer::from_str(&text[at..]).into_iter::<Value>();
            if let Some(Ok(value)) = values.next() {
                if let Value::Object(map) = value
                    && map.get("met").is_some_and(Value::is_boolean)
                {
                    found = Some(map);
                }
                at += values.byte_offset().max(1);
                continue;
            }
        }
        at += 1;
    }
    found
}
