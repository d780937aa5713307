/* Wine has no Git Bash, and Claude Code 2.1.197's Windows build refuses its `plugin`
 * subcommands without one (2.1.330 falls back to PowerShell, which Wine lacks too).
 * pagent's hooks need no shell (exec form: the CLI starts scripts/pagent.exe itself), so
 * the Wine tests point CLAUDE_CODE_GIT_BASH_PATH at this stand-in, built as bash.exe into
 * the test prefix only (scripts/cross.sh): the CLI finds a file by that name and goes on.
 * Should anything run it, it says so on stderr and fails, so the test cannot pass on a
 * shell it does not have. Nothing here is shipped. */
#include <stdio.h>

int main(void)
{
    fputs("pagent tests: this is not bash, only Wine's stand-in for Git Bash; "
          "something ran a shell that pagent's hooks must not need\n", stderr);
    return 127;
}
