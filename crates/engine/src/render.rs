//! Text the model and the user read: prompt templates, block reasons, capped output.
//!
//! Claude Code cuts hook output strings at 10,000 characters, silently. Everything pagent
//! sends is capped well below that ([`REASON_CAP`]), keeping the parts that matter: the
//! header that says where the loop is, what is missing, the *tail* of a failed check's
//! output (where compilers and test runners put their verdict), then the prompt.

/// Longest block reason pagent sends, in characters.
pub const REASON_CAP: usize = 9_000;
/// Longest tail of a check command's output fed back to the model, in characters.
pub const TAIL_CAP: usize = 2_000;
/// Longest text pagent shows the user in one go (a hook's `systemMessage`) or keeps as a
/// one-line summary in the state (`last_feedback`, `end_reason`) and the event log, in
/// characters. They are made of names a workflow or a hook input chose (stage names,
/// promise text, commands, session ids), so they are bounded here, not by their sources.
pub const MESSAGE_CAP: usize = 2_000;

/// `n` and the noun, in the plural unless `n` is one: "1 iteration", "3 iterations".
pub fn count(n: impl Into<u64>, noun: &str) -> String {
    match n.into() {
        1 => format!("1 {noun}"),
        n => format!("{n} {noun}s"),
    }
}

/// Substitutes `{{prd_path}}` and the seed's bare `PRD_PATH` placeholder.
pub fn render_template(template: &str, prd_path: Option<&str>) -> String {
    match prd_path {
        Some(path) => template
            .replace("{{prd_path}}", path)
            .replace("PRD_PATH", path),
        None => template.to_owned(),
    }
}

/// The last `max` characters of `text`, starting at a line boundary when one is near, with
/// a marker when something was cut.
pub fn cap_tail(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_owned();
    }
    let skip = count - max;
    let start = text.char_indices().nth(skip).map_or(text.len(), |(i, _)| i);
    let mut tail = &text[start..];
    if let Some(newline) = tail.find('\n').filter(|n| *n < 200) {
        tail = &tail[newline + 1..];
    }
    // Characters, as the marker says (it used to count bytes: 2x too many for "é").
    let cut = text[..text.len() - tail.len()].chars().count();
    format!("[... {cut} earlier characters cut ...]\n{tail}")
}

/// `text` in at most `max` characters, the marker included: its start and a marker that
/// says how many characters were cut.
pub fn cap_message(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_owned();
    }
    // Room for the marker as if all were cut: the true count has no more digits.
    let widest = format!(" [... {count} characters cut ...]").chars().count();
    let keep = max.saturating_sub(widest);
    let end = text.char_indices().nth(keep).map_or(text.len(), |(i, _)| i);
    let marker = format!(" [... {} characters cut ...]", count - keep);
    let mut capped = format!("{}{marker}", &text[..end]);
    if capped.chars().count() > max {
        // Only when `max` is smaller than the marker itself.
        capped = capped.chars().take(max).collect();
    }
    capped
}

/// The first `max` characters of `text`, with a marker when something was cut.
pub fn cap_head(text: &str, max: usize, note: &str) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let end = text.char_indices().nth(max).map_or(text.len(), |(i, _)| i);
    format!("{}\n[... {note} ...]", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substitutes_both_placeholders() {
        assert_eq!(
            render_template("Read {{prd_path}} and PRD_PATH.", Some("docs/prd.md")),
            "Read docs/prd.md and docs/prd.md."
        );
        assert_eq!(
            render_template("Read {{prd_path}}.", None),
            "Read {{prd_path}}."
        );
    }

    #[test]
    fn tails_keep_the_end_on_a_line_boundary() {
        let text: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        let tail = cap_tail(&text, 100);
        assert!(tail.starts_with("[... "), "{tail}");
        assert!(tail.ends_with("line 999\n"));
        assert!(tail.lines().nth(1).unwrap().starts_with("line "));
        assert!(tail.chars().count() < 140);
        assert_eq!(cap_tail("short", 100), "short");
    }

    /// The marker counts what was cut (bytes of the text before the kept tail); a line
    /// boundary is used only when it is within 200 characters of the cut.
    #[test]
    fn tails_say_how_much_was_cut_and_seek_a_line_only_nearby() {
        assert_eq!(
            cap_tail("abcdef\nghij", 4),
            "[... 7 earlier characters cut ...]\nghij"
        );
        assert_eq!(
            cap_tail("abc\ndefghij", 9),
            "[... 4 earlier characters cut ...]\ndefghij"
        );
        assert_eq!(cap_tail("abcd", 4), "abcd");
        let near = format!("{}{}\n{}", "z".repeat(50), "a".repeat(199), "b".repeat(10));
        assert!(cap_tail(&near, 210).ends_with("]\nbbbbbbbbbb"));
        let far = format!("{}{}\n{}", "z".repeat(50), "a".repeat(200), "b".repeat(10));
        assert!(cap_tail(&far, 211).ends_with(&format!("]\n{}\nbbbbbbbbbb", "a".repeat(200))));
    }

    #[test]
    fn heads_keep_the_start_and_say_what_was_cut() {
        assert_eq!(
            cap_head("abcdef", 4, "output cut"),
            "abcd\n[... output cut ...]"
        );
        assert_eq!(cap_head("abcd", 4, "output cut"), "abcd");
        assert_eq!(cap_message("abcd", 4), "abcd");
        assert_eq!(cap_message(&"x".repeat(50), 5), " [...");
    }

    #[test]
    fn messages_fit_their_cap_marker_included() {
        for (text, max) in [
            ("short".to_owned(), 10),
            ("x".repeat(130_000), MESSAGE_CAP),
            ("é".repeat(3_000), MESSAGE_CAP),
            ("x".repeat(50), 5),
        ] {
            let capped = cap_message(&text, max);
            assert!(capped.chars().count() <= max, "{max}: {capped}");
            if text.chars().count() <= max {
                assert_eq!(capped, text);
            } else {
                assert!(text.starts_with(capped.split(" [...").next().unwrap()));
            }
        }
        assert!(
            cap_message(&"x".repeat(130_000), 100).ends_with(" [... 129932 characters cut ...]")
        );
    }

    /// Issue 12: the markers said "characters" but one counted bytes and the other the
    /// whole text; what is kept plus what the marker says is cut is the whole text.
    #[test]
    fn markers_count_the_characters_cut() {
        let cut_count = |capped: &str| -> usize {
            let start = capped.find("[... ").unwrap() + 5;
            let digits: String = capped[start..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().unwrap()
        };
        let text = "é".repeat(3_000);
        let capped = cap_message(&text, 500);
        let kept = capped.split(" [...").next().unwrap().chars().count();
        assert_eq!(kept + cut_count(&capped), 3_000, "{capped}");
        let lines: String = (0..500).map(|i| format!("é line {i}\n")).collect();
        let tail = cap_tail(&lines, 300);
        let kept = tail.split_once('\n').unwrap().1.chars().count();
        assert_eq!(kept + cut_count(&tail), lines.chars().count(), "{tail}");
    }

    #[test]
    fn caps_respect_multibyte_characters() {
        let text = "é".repeat(50);
        assert!(cap_tail(&text, 10).ends_with(&"é".repeat(10)));
        assert!(cap_head(&text, 10, "cut").starts_with(&"é".repeat(10)));
    }
}
