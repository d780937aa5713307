#!/usr/bin/env python3
"""Write the files of a large synthetic project, or modify some of them, for scripts/bench.sh.

    gen-repo.py create DIR FILES   a git repository in DIR (new or empty) with FILES files,
                                   all committed, on branch main, working tree clean
    gen-repo.py modify DIR COUNT   append a line to COUNT of the files under DIR/src
    gen-repo.py monorepo DIR FILES a git repository of FILES small files laid out as a
                                   monorepo of Java services (deep paths), all committed
    gen-repo.py touch DIR COUNT    modify COUNT of a monorepo's files and add as many new
                                   untracked ones beside them

`create` lays the files out as a Rust workspace would: about 96% under src/ (100 files a
folder, src/mod000/file000.rs ...), the rest under tests/ and docs/, plus Cargo.toml and
README.md. Each file holds 8-24 lines (0.5-1.7 KB, 1.1 KB on average). The commit is made
with `git fast-import` (one pack file, instead of `git add`'s 20,000 loose objects, which
costs seconds on a slow file system), then `git reset` writes the index from it. Every
file's modification time is set one hour back first, so that index is not "racily
clean": otherwise git and libgit2 would re-read every file whose mtime is not older than
the index, which is not how a real project looks.

`modify` picks COUNT files spread evenly over src/ (deterministic) and appends a line to
each, leaving their mtimes at now, as an editor would.

`monorepo` is the shape of the repositories whose index is large: 100 files a folder,
`services/team-NN/service-NNN/src/main/java/com/example/teamNN/serviceNNN/platform/
internal/handlers/moduleNN/RequestHandlerNNNN.java`, 132 characters a path, so git's index takes about 200 bytes an
entry (200 MB for a million files, 20 MB for 100,000). Each file holds one short line,
distinct per file: the disk holds an inode and a block per file, as small files cost
anyway, and the work a status does (a `stat` per file, a walk of every folder) is what a
real monorepo of that many files costs. Its files' times are set an hour back too.

The output is deterministic: the same arguments give the same bytes.
"""

import os
import subprocess
import sys
import time

WORDS = (
    "state path file line error result config value index buffer stage prompt "
    "iteration count hook session input output parse check digest lock root event"
).split()


def body(n):
    lines = []
    for i in range(8 + n % 17):
        a, b, c = WORDS[(n + i) % len(WORDS)], WORDS[(n * 7 + i) % len(WORDS)], WORDS[(n * 13 + i * 3) % len(WORDS)]
        lines.append("pub fn %s_%s_%d(%s: u32) -> u32 { %s.wrapping_mul(%d) }" % (a, b, i, c, c, n % 97 + i))
    return "\n".join(lines) + "\n"


def src_files(root):
    src = os.path.join(root, "src")
    return sorted(
        os.path.join(d, f) for d, _, files in os.walk(src) for f in files
    )


def create(root, total):
    old = time.time() - 3600
    n_src = max(1, total * 96 // 100)
    n_tests = max(0, (total - n_src - 2) * 3 // 5)
    n_docs = max(0, total - n_src - n_tests - 2)
    os.makedirs(root, exist_ok=True)
    git = ["git", "-C", root, "-c", "gc.auto=0"]
    subprocess.run(git + ["-c", "init.defaultBranch=main", "init", "-q"], check=True)
    importer = subprocess.Popen(git + ["fast-import", "--quiet"], stdin=subprocess.PIPE)
    stream = importer.stdin
    stream.write(b"commit refs/heads/main\n"
                 b"committer bench <bench@localhost> 1700000000 +0000\n"
                 b"data 27\nA synthetic large project.\n")
    written = []

    def write(rel, text):
        path = os.path.join(root, rel)
        data = text.encode()
        with open(path, "wb") as f:
            f.write(data)
        written.append(path)
        stream.write(b"M 100644 inline %s\ndata %d\n%s\n" % (rel.encode(), len(data), data))

    for sub in ("src", "tests", "docs"):
        os.makedirs(os.path.join(root, sub), exist_ok=True)
    for i in range(n_src):
        folder = os.path.join("src", "mod%03d" % (i // 100))
        if i % 100 == 0:
            os.makedirs(os.path.join(root, folder), exist_ok=True)
        write(os.path.join(folder, "file%03d.rs" % (i % 100)), body(i))
    for i in range(n_tests):
        write(os.path.join("tests", "test%04d.rs" % i), "#[test]\nfn t%d() {}\n" % i + body(i))
    for i in range(n_docs):
        write(os.path.join("docs", "page%04d.md" % i), "# Page %d\n\n" % i + body(i))
    write("Cargo.toml", '[package]\nname = "big"\nversion = "0.1.0"\nedition = "2021"\n')
    write("README.md", "# big\n\nA synthetic project of %d files.\n" % total)
    stream.close()
    if importer.wait() != 0:
        sys.exit("gen-repo.py: git fast-import failed")
    for path in written:
        os.utime(path, (old, old))
    for d, dirs, _ in os.walk(root):
        dirs[:] = [x for x in dirs if x != ".git"]
        os.utime(d, (old, old))
    subprocess.run(git + ["reset", "-q"], check=True)
    return len(written)


def modify(root, count):
    files = src_files(root)
    if count > len(files):
        sys.exit("gen-repo.py: only %d files under %s/src" % (len(files), root))
    step = len(files) / count
    for k in range(count):
        with open(files[int(k * step)], "a") as f:
            f.write("// edited by the agent (%d)\n" % k)
    return count


def monorepo_path(i):
    team, rest = divmod(i, 50_000)
    service, rest = divmod(rest, 2_000)
    module, file = divmod(rest, 100)
    return ("services/team-%02d/service-%03d/src/main/java/com/example/team%02d/service%03d/"
            "platform/internal/handlers/module%02d/RequestHandler%04d.java" % (team, service, team, service, module, i % 10_000))


def monorepo(root, total):
    old = time.time() - 3600
    os.makedirs(root, exist_ok=True)
    git = ["git", "-C", root, "-c", "gc.auto=0"]
    subprocess.run(git + ["-c", "init.defaultBranch=main", "init", "-q"], check=True)
    importer = subprocess.Popen(git + ["fast-import", "--quiet"], stdin=subprocess.PIPE)
    stream = importer.stdin
    stream.write(b"commit refs/heads/main\n"
                 b"committer bench <bench@localhost> 1700000000 +0000\n"
                 b"data 22\nA synthetic monorepo.\n")
    made = set()
    for i in range(total):
        rel = monorepo_path(i)
        folder = os.path.dirname(rel)
        if folder not in made:
            os.makedirs(os.path.join(root, folder), exist_ok=True)
            made.add(folder)
        data = b"class Handler%d {}\n" % i
        path = os.path.join(root, rel)
        with open(path, "wb") as f:
            f.write(data)
        os.utime(path, (old, old))
        stream.write(b"M 100644 inline %s\ndata %d\n%s\n" % (rel.encode(), len(data), data))
    stream.close()
    if importer.wait() != 0:
        sys.exit("gen-repo.py: git fast-import failed")
    for d, dirs, _ in os.walk(root):
        dirs[:] = [x for x in dirs if x != ".git"]
        os.utime(d, (old, old))
    subprocess.run(git + ["reset", "-q"], check=True)
    return total


def touch(root, count):
    """Modifies COUNT files of a monorepo spread evenly over it, and adds COUNT new ones."""
    total = int(subprocess.run(["git", "-C", root, "ls-files"], check=True,
                               capture_output=True).stdout.count(b"\n"))
    step = max(1, total // max(1, count))
    for k in range(count):
        rel = monorepo_path(min(total - 1, k * step))
        with open(os.path.join(root, rel), "a") as f:
            f.write("// edited by the agent (%d)\n" % k)
        with open(os.path.join(root, os.path.dirname(rel), "New%04d.java" % k), "w") as f:
            f.write("class New%d {}\n" % k)
    return count


def main():
    actions = {"create": create, "modify": modify, "monorepo": monorepo, "touch": touch}
    if len(sys.argv) != 4 or sys.argv[1] not in actions:
        sys.exit(__doc__)
    action, root, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    done = actions[action](root, n)
    print("%s: %d files" % (action, done), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
