#!/usr/bin/env python3
"""One Ralph loop through the real Claude Code CLI, with pagent's plugin from this
repository, against a mock Messages API: Python's standard library only, so it runs on
every runner, and on Windows, where the Rust end-to-end suite (a Unix program) does not
build. The release workflow's Windows runner runs it with the real CLI; scripts/test.sh's
end-to-end suite covers the same loop (and much more) on Linux and macOS.

    scripts/ralph-e2e.py --claude PATH --pagent PATH

The loop: `pagent ralph --promise DONE "Fix it"` sets up the state; `claude -p` answers
"First pass done." (the Stop hook must block with iteration 2 of the task), then the
promise (the Stop hook must allow and complete the loop). Checked: what the model was
told on the second request, `pagent status --json`, and the CLI's exit code. Exits 0 when
all holds, 1 with what did not.
"""
import argparse
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading

REPLIES = ["First pass done.", "Finished.\n<promise>DONE</promise>"]


def sse(text, index):
    def event(name, data):
        return f"event: {name}\ndata: {json.dumps(data)}\n\n"

    message = {"id": f"msg_mock_{index:04}", "type": "message", "role": "assistant",
               "model": "claude-opus-4-8", "content": [], "stop_reason": None,
               "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}
    return "".join([
        event("message_start", {"type": "message_start", "message": message}),
        event("content_block_start", {"type": "content_block_start", "index": 0,
                                      "content_block": {"type": "text", "text": ""}}),
        event("content_block_delta", {"type": "content_block_delta", "index": 0,
                                      "delta": {"type": "text_delta", "text": text}}),
        event("content_block_stop", {"type": "content_block_stop", "index": 0}),
        event("message_delta", {"type": "message_delta", "usage": {"output_tokens": 5},
                                "delta": {"stop_reason": "end_turn", "stop_sequence": None}}),
        event("message_stop", {"type": "message_stop"}),
    ])


class Mock(http.server.BaseHTTPRequestHandler):
    requests = []

    def log_message(self, *args):
        pass

    def do_HEAD(self):
        self.send_response(200)
        self.end_headers()

    do_GET = do_HEAD

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        if not self.path.startswith("/v1/messages") or "count_tokens" in self.path:
            self.send_response(404)
            self.end_headers()
            return
        Mock.requests.append(json.loads(body))
        index = len(Mock.requests) - 1
        if index >= len(REPLIES):
            # Out of script: a 500 ends the run at once (the CLI retries a 400).
            self.send_response(500)
            self.send_header("content-type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"type":"error","error":{"type":"api_error","message":"end"}}')
            return
        data = sse(REPLIES[index], index).encode()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--claude", required=True)
    parser.add_argument("--pagent", required=True)
    args = parser.parse_args()
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        project, home, config = (os.path.join(tmp, d) for d in ("project", "home", "config"))
        for d in (project, home):
            os.makedirs(d)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Mock)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("CLAUDE", "PAGENT", "ANTHROPIC"))}
        env.update({
            "HOME": home, "USERPROFILE": home, "PAGENT_CONFIG_DIR": config,
            "PAGENT_BIN": args.pagent, "NO_COLOR": "1",
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{server.server_address[1]}",
            "ANTHROPIC_API_KEY": "sk-test", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_MAX_RETRIES": "0",
        })

        def pagent(*argv):
            return subprocess.run([args.pagent, "--project", project, *argv], env=env,
                                  capture_output=True, text=True, timeout=60)

        setup = pagent("ralph", "--promise", "DONE", "Fix it")
        if setup.returncode != 0:
            problems.append(f"pagent ralph failed: {setup.stdout}{setup.stderr}")
        run = subprocess.run(
            [args.claude, "-p", "Fix it", "--output-format", "stream-json", "--verbose",
             "--include-hook-events", "--permission-mode", "acceptEdits", "--max-turns", "10",
             "--plugin-dir", repo],
            cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
            timeout=300)
        server.shutdown()
        told = json.dumps(Mock.requests[1]) if len(Mock.requests) > 1 else ""
        status = pagent("status", "--json")
        try:
            state = json.loads(status.stdout)
        except ValueError:
            state = {}
        if len(Mock.requests) != 2:
            problems.append(f"{len(Mock.requests)} requests reached the mock, not 2")
        if "iteration 2 of 25" not in told or "Fix it" not in told:
            problems.append("the second request does not carry the Stop hook's re-prompt")
        if (state.get("status"), state.get("iterations")) != ("complete", 2):
            problems.append(f"pagent status: {status.stdout}{status.stderr}")
        if run.returncode != 0:
            problems.append(f"claude exited {run.returncode}")
        if problems:
            print("ralph-e2e: the CLI's output:\n" + run.stdout[-4000:] + run.stderr[-2000:],
                  file=sys.stderr)
    for problem in problems:
        print(f"ralph-e2e: FAILED: {problem}", file=sys.stderr)
    if not problems:
        print("ralph-e2e: a Ralph loop blocked once, then completed on its promise "
              f"(Claude Code: {args.claude})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
