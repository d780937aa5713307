#!/usr/bin/env python3
"""Write a synthetic Claude Code transcript of a given size, for scripts/bench.sh.

The lines have the shapes Claude Code 2.1.197 writes (see
tests/fixtures/claude-code-2.1.197/sample_transcript.jsonl): queue-operation lines, the
user's prompt, attachment lines, one assistant line per content block (text, tool_use)
sharing `message.id`, tool_result user lines, and Stop hook feedback user lines with
`isMeta: true`. Read results carry 20-200 KB of file contents (smaller only near the end,
to land close to the size asked for). Turns repeat until the file reaches the requested
size; the last line is an assistant text line that does not contain the promise, so a
Ralph loop waiting for <promise>DONE</promise> must block.

With --tail-line SIZE, the last message follows an Edit of a large file, whose result
line (holding the whole original file, as Claude Code writes it) is about SIZE long: a
reader going backwards must read that whole line to see that it ends the last message.

With --loop-turn TEXT, one more turn follows, stamped with the time of the run: the turn a
loop started before the run (a Ralph loop set up just before) is stopping on, whose last
message is TEXT (the hook input's `last_assistant_message`, which a Stop waits for). All
the lines before it are stamped in the past: the session's history before the loop.

Usage: gen-transcript.py OUT SIZE [--tail-line SIZE] [--loop-turn TEXT] [--session ID]
       [--cwd DIR] [--seed N]
Sizes are byte counts with an optional K, M or G suffix (powers of 1024).
The output is deterministic for a given seed.
"""

import argparse
import datetime
import json
import random
import sys
import uuid

VERSION = "2.1.197"
MODEL = "claude-opus-4-8"

WORDS = (
    "let mut self state path file line error result config value index buffer "
    "stage prompt iteration count hook session input output read write parse "
    "check digest secret lock project root event log message block budget"
).split()

RUST_SHAPES = [
    "use std::{a}::{{{B}, {C}}};",
    "fn {a}_{b}(&mut self, {c}: &{B}) -> Result<{C}, Error> {{",
    "    let {a} = self.{b}.{c}()?;",
    "    if {a}.{b}() {{",
    "        return Ok({B}::{C});",
    "    }}",
    "    // The {a} is {b} before the {c} is read, so a {d} never sees it.",
    "    for {a} in &self.{b} {{",
    "        {a}.push({b}.{c}());",
    "    match {a} {{",
    "        Some({b}) => {b}.{c}(),",
    "        None => {B}::default(),",
    "}}",
    "",
    "#[derive(Debug, Clone, PartialEq, Eq)]",
    "pub struct {B}{C} {{",
    "    pub {a}: Option<{B}>,",
    "    {a}: Vec<u8>,",
    "impl {B} {{",
    "    assert_eq!({a}.{b}(), {c});",
]


def words(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def code_line(rng):
    w = [rng.choice(WORDS) for _ in range(4)]
    return rng.choice(RUST_SHAPES).format(
        a=w[0], b=w[1], c=w[2], d=w[3], B=w[1].capitalize(), C=w[2].capitalize()
    )


class Transcript:
    def __init__(self, out, rng, session, cwd, size):
        self.out = out
        self.size = size
        self.rng = rng
        self.session = session
        self.cwd = cwd
        self.parent = None
        self.prompt_id = self.uuid()
        self.clock = 0
        self.now = False
        self.written = 0
        self.pool = [code_line(rng) for _ in range(4096)]

    def uuid(self):
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def stamp(self):
        if self.now:
            return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        self.clock += self.rng.randint(5, 4000)
        secs, ms = divmod(self.clock, 1000)
        mins, secs = divmod(secs, 60)
        hours, mins = divmod(mins, 60)
        return "2026-11-22T%02d:%02d:%02d.%03dZ" % (1 + hours % 22, mins, secs, ms)

    def emit(self, obj):
        data = json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n"
        data = data.encode("utf-8")
        self.out.write(data)
        self.written += len(data)

    def common(self, line):
        line.update(
            {
                "userType": "external",
                "entrypoint": "sdk-cli",
                "cwd": self.cwd,
                "sessionId": self.session,
                "version": VERSION,
                "gitBranch": "main",
            }
        )
        return line

    def chained(self, body):
        me = self.uuid()
        line = {"parentUuid": self.parent, "isSidechain": False}
        line.update(body)
        line["uuid"] = me
        line["timestamp"] = self.stamp()
        self.parent = me
        return self.common(line)

    # Line kinds -----------------------------------------------------------------

    def queue(self, text):
        ts = self.stamp()
        self.emit({"type": "queue-operation", "operation": "enqueue", "timestamp": ts,
                   "sessionId": self.session, "content": text})
        self.emit({"type": "queue-operation", "operation": "dequeue", "timestamp": ts,
                   "sessionId": self.session})

    def user_prompt(self, text, meta=False):
        body = {"promptId": self.prompt_id, "type": "user",
                "message": {"role": "user", "content": text}}
        if meta:
            body["isMeta"] = True
        else:
            body["permissionMode"] = "bypassPermissions"
            body["promptSource"] = "sdk"
        self.emit(self.chained(body))

    def attachment(self, attachment):
        self.emit(self.chained({"attachment": attachment, "type": "attachment"}))

    def assistant(self, message_id, request_id, block, stop_reason):
        message = {
            "id": message_id, "type": "message", "role": "assistant", "model": MODEL,
            "content": [block], "stop_reason": stop_reason, "stop_sequence": None,
            "usage": {
                "input_tokens": self.rng.randint(3, 40),
                "cache_creation_input_tokens": self.rng.randint(0, 20000),
                "cache_read_input_tokens": self.rng.randint(0, 200000),
                "output_tokens": self.rng.randint(5, 4000),
                "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
                "service_tier": "standard",
                "cache_creation": {"ephemeral_1h_input_tokens": 0,
                                   "ephemeral_5m_input_tokens": 0},
                "inference_geo": "", "iterations": [], "speed": "standard",
            },
            "stop_details": None,
        }
        self.emit(self.chained({"message": message, "requestId": request_id,
                                "type": "assistant"}))
        return self.parent

    def tool_result(self, tool_id, content, tool_use_result, source):
        body = {"promptId": self.prompt_id, "type": "user",
                "message": {"role": "user", "content": [
                    {"tool_use_id": tool_id, "type": "tool_result", "content": content}]},
                "toolUseResult": tool_use_result, "sourceToolAssistantUUID": source}
        self.emit(self.chained(body))

    # Turns ----------------------------------------------------------------------

    def ids(self):
        hexid = lambda: "%024x" % self.rng.getrandbits(96)
        return "msg_" + hexid(), "req_" + hexid()

    def tool_use(self, name, tool_input, text=None):
        """One assistant message: an optional text block, then a tool_use block."""
        message_id, request_id = self.ids()
        if text:
            self.assistant(message_id, request_id, {"type": "text", "text": text}, "tool_use")
        tool_id = "toolu_%024x" % self.rng.getrandbits(96)
        source = self.assistant(
            message_id, request_id,
            {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input},
            "tool_use")
        return tool_id, source

    def read_file(self):
        path = "%s/src/%s_%s.rs" % (self.cwd, self.rng.choice(WORDS), self.rng.choice(WORDS))
        target = self.rng.randint(20 * 1024, 200 * 1024)
        # Near the end (or for a tiny file), shrink the file so the size comes out close.
        # The contents appear twice on the line (tool_result and toolUseResult).
        target = min(target, max(1024, (self.size - self.written) // 3))
        lines, size = [], 0
        while size < target:
            line = self.rng.choice(self.pool)
            lines.append(line)
            size += len(line) + 8
        content = "\n".join(lines)
        numbered = "\n".join("%6d\t%s" % (i + 1, l) for i, l in enumerate(lines))
        tool_id, source = self.tool_use("Read", {"file_path": path},
                                        "Let me read %s to see how the %s is handled." %
                                        (path.rsplit("/", 1)[1], self.rng.choice(WORDS)))
        self.tool_result(tool_id, numbered,
                         {"type": "text", "file": {"filePath": path, "content": content,
                                                   "numLines": len(lines), "startLine": 1,
                                                   "totalLines": len(lines)}},
                         source)
        return path, lines

    def edit_file(self, path, lines):
        old = self.rng.choice(lines) or "}"
        new = old + "  // " + words(self.rng, 4)
        tool_id, source = self.tool_use(
            "Edit", {"file_path": path, "old_string": old, "new_string": new,
                     "replace_all": False},
            "The %s is not %s before the %s is read; fixing that." %
            tuple(self.rng.choice(WORDS) for _ in range(3)))
        self.tool_result(
            tool_id, "The file %s has been updated successfully." % path,
            {"filePath": path, "oldString": old, "newString": new, "originalFile": None,
             "structuredPatch": [{"oldStart": 10, "oldLines": 1, "newStart": 10,
                                  "newLines": 1, "lines": ["-" + old, "+" + new]}],
             "userModified": False, "replaceAll": False},
            source)
        self.attachment({"type": "hook_success", "hookName": "PostToolUse:Edit",
                         "toolUseID": tool_id, "hookEvent": "PostToolUse", "content": "",
                         "stdout": "", "stderr": "", "exitCode": 0,
                         "command": "pagent hook post-tool-use", "durationMs": 3})

    def edit_large_file(self, size):
        """An Edit of a large file: Claude Code keeps the whole original in the result line."""
        path = "%s/data/fixtures.json" % self.cwd
        lines, total = [], 0
        while total < size:
            line = '  {"%s": "%s"},' % (self.rng.choice(WORDS), words(self.rng, 12))
            lines.append(line)
            total += len(line) + 1
        original = "\n".join(lines)
        old = lines[len(lines) // 2]
        new = old.replace('"}', ' (fixed)"}')
        tool_id, source = self.tool_use(
            "Edit", {"file_path": path, "old_string": old, "new_string": new,
                     "replace_all": False},
            "One fixture has a wrong value; fixing it.")
        self.tool_result(
            tool_id, "The file %s has been updated successfully." % path,
            {"filePath": path, "oldString": old, "newString": new, "originalFile": original,
             "structuredPatch": [{"oldStart": len(lines) // 2, "oldLines": 1,
                                  "newStart": len(lines) // 2, "newLines": 1,
                                  "lines": ["-" + old, "+" + new]}],
             "userModified": False, "replaceAll": False},
            source)

    def run_tests(self):
        out_lines = ["running %d tests" % self.rng.randint(20, 400)]
        for _ in range(self.rng.randint(20, 300)):
            status = "ok" if self.rng.random() < 0.95 else "FAILED"
            out_lines.append("test %s::%s_%s ... %s" % (
                self.rng.choice(WORDS), self.rng.choice(WORDS), self.rng.choice(WORDS), status))
        out_lines.append("test result: FAILED. %d passed; %d failed" %
                         (self.rng.randint(20, 400), self.rng.randint(1, 5)))
        stdout = "\n".join(out_lines)
        tool_id, source = self.tool_use(
            "Bash", {"command": "cargo test --workspace 2>&1 | tail -400",
                     "description": "Run the test suite"})
        self.tool_result(tool_id, stdout,
                         {"stdout": stdout, "stderr": "", "interrupted": False,
                          "isImage": False, "noOutputExpected": False},
                         source)

    def final_text(self, text):
        message_id, request_id = self.ids()
        self.assistant(message_id, request_id, {"type": "text", "text": text}, "end_turn")

    def stop_feedback(self, iteration):
        reason = ("pagent · ralph loop · iteration %d of 1000\nYour last message did not "
                  "contain <promise>DONE</promise>. Keep working on the task below. When it "
                  "is truly complete, and only then, end your final message with "
                  "<promise>DONE</promise>.\n\nThe task:\n\nFix the bug" % iteration)
        self.user_prompt("Stop hook feedback:\n" + reason, meta=True)
        self.attachment({"type": "hook_blocking_error", "hookName": "Stop",
                         "toolUseID": self.uuid(), "hookEvent": "Stop",
                         "blockingError": {"blockingError": reason,
                                           "command": "pagent hook stop"}})

    def start(self, task):
        self.queue(task)
        self.user_prompt(task)
        self.attachment({"type": "skill_listing",
                         "content": "\n".join("- %s: %s" % (w, words(self.rng, 40))
                                              for w in WORDS[:12]),
                         "isInitial": True})

    def turn(self, iteration):
        path, lines = self.read_file()
        if self.rng.random() < 0.5:
            path, lines = self.read_file()
        self.edit_file(path, lines)
        self.run_tests()
        self.final_text("Iteration %d: %s. Some tests still fail; not done yet." %
                        (iteration, words(self.rng, 30)))
        self.stop_feedback(iteration + 1)


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper().rstrip("B")
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out")
    parser.add_argument("size")
    parser.add_argument("--session", default="00000000-0000-4000-8000-000000000001")
    parser.add_argument("--cwd", default="/home/user/project")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--tail-line", default="0")
    parser.add_argument("--loop-turn")
    args = parser.parse_args()
    size = parse_size(args.size)
    with open(args.out, "wb", buffering=1 << 20) as out:
        t = Transcript(out, random.Random(args.seed), args.session, args.cwd, size)
        t.start("Fix the bug")
        iteration = 1
        while t.written < size:
            t.turn(iteration)
            iteration += 1
        tail = parse_size(args.tail_line)
        if tail:
            t.edit_large_file(tail)
        t.final_text("Iteration %d: the %s is fixed but two tests still fail; I will look "
                     "at them next." % (iteration, t.rng.choice(WORDS)))
        if args.loop_turn is not None:
            t.now = True
            t.final_text(args.loop_turn)
    return 0


if __name__ == "__main__":
    sys.exit(main())
