# The agent CLIs the end-to-end suite runs, pinned. Sourced by scripts/test.sh and
# scripts/install-client.sh; one place to change when a new release is to be proven.
#
# Claude Code: the suite runs against the oldest release pagent supports and the newest
# one proven. To prove the next release, set CLAUDE_CODE_NEWEST to it and run
# scripts/test.sh; both versions are installed side by side under target/clients/.
CLAUDE_CODE_OLDEST=2.1.197
CLAUDE_CODE_NEWEST=2.1.332
CODEX_VERSION=0.171.0
OPENCODE_VERSION=1.18.33
