#!/usr/bin/env python3
"""One Ralph loop through the real Claude Code CLI, with pagent installed from this
repository by `pagent install`, against a mock Messages API: Python's standard library
only, so it runs on every runner, and on Windows, where the Rust end-to-end suite (a Unix
program) does not build. The release workflow's Windows runner runs it natively with each
pinned Claude Code version; scripts/test.sh runs it under Wine with Claude Code's Windows
builds and the cross-built pagent.exe; the Rust end-to-end suite covers the same loop (and
much more) on Linux and macOS.

    scripts/ralph-e2e.py --claude PATH --pagent PATH [--wine] [--plugin DIR]

`pagent install --from DIR` (default: this repository) stages the plugin, registers it with
the CLI and copies the binary; on Windows it also stages the binary as scripts/pagent.exe,
which the exec-form hooks start. Then `pagent ralph --promise DONE "Fix it"` sets up the
loop; `claude -p` (the installed plugin, no --plugin-dir, no PAGENT_BIN) answers "First pass
done." (the Stop hook must block with iteration 2 of the task), then the promise (the Stop
hook must allow and complete the loop). Then `claude -p /pagent:status` must show the
completed loop, and `claude -p /pagent:cancel` cancel a second one, both answered by pagent's
UserPromptExpansion hook (no shell, no model turn). Last, `pagent loop --agent claude`
drives two fresh Claude Code processes to the promise, started by pagent through its process
door. Checked: what the model was told on the second request, `pagent status --json`, the
CLI's exit code, the two commands' answers, that the short command names run the staged
launcher by a path with no backslash (Git Bash runs them on Windows), and that `pagent
loop`'s two iterations were fresh conversations told the task with no Stop hook feedback.
Exits 0 when all holds, 1 with what did not.

--wine runs both programs (Windows builds) under Wine from Linux, with the WINEPREFIX the
caller set up (scripts/cross.sh's cross_windows --wine) and paths given as Wine names them
(Z:\...). Wine 8 runs Claude Code 2.1.330's and 2.1.332's Windows builds; 2.1.197's calls
DiscardVirtualMemory, which Wine 8 lacks, and dies at a moment that depends on the load, so
that version is proven on the Windows runner only.
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
        request = json.loads(body)
        if not request.get("tools"):
            # A side request (a title, a summary): answered, never counted as a turn.
            data = sse("Mock title", 0).encode()
        else:
            Mock.requests.append(request)
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
    parser.add_argument("--wine", action="store_true")
    parser.add_argument("--plugin", help="the plugin folder to install (default: this repository)")
    args = parser.parse_args()
    plugin = args.plugin or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

    def native(path):  # a path as the programs under test name it
        return "Z:" + os.path.abspath(path).replace("/", "\\") if args.wine else path

    def program(path):
        return ["wine", path] if args.wine else [path]

    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        project, home, config, claude_config, market = (
            os.path.join(tmp, d) for d in ("project", "home", "config", "claude", "market"))
        for d in (project, home):
            os.makedirs(d)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Mock)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("CLAUDE", "PAGENT", "ANTHROPIC"))}
        env.update({
            "HOME": native(home), "USERPROFILE": native(home),
            "PAGENT_CONFIG_DIR": native(config), "CLAUDE_CONFIG_DIR": native(claude_config),
            "PAGENT_MARKETPLACE_DIR": native(market), "NO_COLOR": "1",
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{server.server_address[1]}",
            "ANTHROPIC_API_KEY": "sk-test", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_MAX_RETRIES": "0",
        })

        def run(argv, **kw):
            return subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                                  text=True, **kw)

        def pagent(*argv, timeout=60):
            return run(program(args.pagent) + ["--project", native(project), *argv],
                       timeout=timeout)

        install = run(program(args.pagent) + [
            "install", "--claude", native(args.claude), "--from", native(plugin)], timeout=300)
        if install.returncode != 0:
            problems.append(f"pagent install failed: {install.stdout}{install.stderr}")
        setup = pagent("ralph", "--promise", "DONE", "Fix it")
        if setup.returncode != 0:
            problems.append(f"pagent ralph failed: {setup.stdout}{setup.stderr}")
        claude = run(program(args.claude) + [
            "-p", "Fix it", "--output-format", "stream-json", "--verbose",
            "--include-hook-events", "--permission-mode", "acceptEdits", "--max-turns", "10"],
            cwd=project, timeout=300)
        told = json.dumps(Mock.requests[1]) if len(Mock.requests) > 1 else ""

        def state():
            status = pagent("status", "--json")
            try:
                return json.loads(status.stdout), status.stdout + status.stderr
            except ValueError:
                return {}, status.stdout + status.stderr

        def slash(command, expected):
            # pagent answers its own commands in the UserPromptExpansion hook, which
            # blocks the expansion: no shell runs and the model is never asked.
            out = run(program(args.claude) + ["-p", command, "--output-format", "json"],
                      cwd=project, timeout=300)
            try:
                result = json.loads(out.stdout).get("result") or ""
            except ValueError:
                result = ""
            if expected not in result:
                problems.append(f"{command} answered {result!r} ({out.stdout[-2000:]}"
                                f"{out.stderr[-2000:]}), not {expected!r}")

        got, text = state()
        if (got.get("status"), got.get("iterations")) != ("complete", 2):
            problems.append(f"pagent status: {text}")
        if "iteration 2 of 25" not in told or "Fix it" not in told:
            problems.append("the second request does not carry the Stop hook's re-prompt")
        if claude.returncode != 0:
            problems.append(f"claude exited {claude.returncode}")
        slash("/pagent:status", "pagent ralph loop · complete")
        again = pagent("ralph", "Again")
        if again.returncode != 0:
            problems.append(f"pagent ralph failed: {again.stdout}{again.stderr}")
        slash("/pagent:cancel", "pagent: cancelled the Ralph loop")
        got, text = state()
        if got.get("status") != "cancelled":
            problems.append(f"after /pagent:cancel, pagent status: {text}")
        if len(Mock.requests) != 2:
            problems.append(f"{len(Mock.requests)} turns reached the mock, not 2")
        # `pagent loop`: pagent.exe starts a fresh Claude Code per iteration through its
        # process door (an absolute program, a clean PATH, a job object), reads its stream
        # and decides; the installed plugin's Stop hook runs in each and stays silent.
        Mock.requests = []
        fresh = pagent("loop", "--agent", "claude", "--agent-bin", native(args.claude),
                       "--retries", "0", "ralph", "--promise", "DONE", "Fix it", timeout=300)
        got, text = state()
        if fresh.returncode != 0 or (got.get("status"), got.get("iterations")) != ("complete", 2):
            problems.append(f"pagent loop exited {fresh.returncode}: {fresh.stdout[-3000:]}"
                            f"{fresh.stderr[-3000:]}; pagent status: {text}")
        # Two fresh conversations (one user turn each), the task in both, and nothing of a
        # Stop hook's feedback: the plugin's hooks leave `pagent loop`'s agent alone.
        users = [sum(m["role"] == "user" for m in request["messages"])
                 for request in Mock.requests]
        told = [json.dumps(request["messages"]) for request in Mock.requests]
        if users != [1, 1]:
            problems.append(f"pagent loop's iterations are not two fresh conversations: {users}")
        elif any("Fix it" not in t or "Stop hook" in t for t in told):
            problems.append(f"pagent loop's agent was not told the task alone: {told}")
        server.shutdown()
        # The short names run the staged launcher in the Bash tool (Git Bash on Windows):
        # its path must hold no backslash, which bash would read as an escape.
        short = os.path.join(claude_config, "commands", "pagent-status.md")
        lines = open(short, encoding="utf-8").read().splitlines() if os.path.exists(short) else []
        launcher = [line for line in lines if line.startswith('"') and "/scripts/pagent\" " in line]
        if len(launcher) != 1 or "\\" in launcher[0]:
            problems.append(f"the short name /pagent-status runs no plain launcher path: {launcher}")
        if problems:
            print("ralph-e2e: pagent install said:\n" + install.stdout + install.stderr,
                  file=sys.stderr)
            print("ralph-e2e: the CLI's output:\n" + claude.stdout[-4000:] + claude.stderr[-2000:],
                  file=sys.stderr)
    for problem in problems:
        print(f"ralph-e2e: FAILED: {problem}", file=sys.stderr)
    if not problems:
        print("ralph-e2e: pagent installed, a Ralph loop blocked once, then completed on its "
              "promise; /pagent:status and /pagent:cancel answered by pagent; pagent loop ran "
              "two fresh Claude Code processes to the promise "
              f"(Claude Code: {args.claude}{', under Wine' if args.wine else ''})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
