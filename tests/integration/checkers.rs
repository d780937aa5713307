//! `pagent hook post-tool-use`, language by language: the checks each kind of file gets
//! (Python, shell, TypeScript, Rust, Go), found on PATH or in the project, and skipped,
//! never failed, when the tool is absent.

use crate::backpressure::{active, check_events, path_of};

#[test]
fn python_is_compiled_when_present_and_skipped_when_absent() {
    let env = active();
    env.write("app.py", "def f(:\n    pass\n");
    let context = env.post_tool_use("Write", "app.py", &[]).context().unwrap();
    assert!(
        context.contains("python3 -m py_compile failed"),
        "{context}"
    );
    assert!(context.contains("SyntaxError"), "{context}");
    env.write("app.py", "def f():\n    pass\n");
    assert_eq!(env.post_tool_use("Write", "app.py", &[]).context(), None);
    assert!(
        !env.exists("__pycache__"),
        "py_compile left byte code in the project"
    );

    let empty = env.home.join("empty-bin");
    std::fs::create_dir_all(&empty).unwrap();
    env.write("app.py", "def f(:\n");
    let path = path_of(&[&empty]);
    assert_eq!(
        env.post_tool_use("Write", "app.py", &[("PATH", &path)])
            .context(),
        None
    );
    assert!(
        check_events(&env)
            .last()
            .unwrap()
            .contains("skipped: python3 is not installed")
    );
}

#[test]
fn shell_scripts_get_bash_n_then_shellcheck_if_installed() {
    let env = active();
    env.write("run.sh", "if true; then\n  echo hi\n");
    let bash_only = env.fake_tool("bin-bash", "bash", "exec /bin/bash \"$@\"");
    let context = env
        .post_tool_use("Write", "run.sh", &[("PATH", &path_of(&[&bash_only]))])
        .context()
        .unwrap();
    assert!(context.contains("bash -n failed"), "{context}");
    assert!(context.contains("syntax error"), "{context}");
    assert!(!context.contains("shellcheck"), "{context}");

    env.write("run.sh", "echo $1\n");
    let with_shellcheck = env.fake_tool(
        "bin-bash",
        "shellcheck",
        "echo \"$3:1:6: note: Double quote to prevent globbing [SC2086]\"; exit 1",
    );
    let context = env
        .post_tool_use(
            "Write",
            "run.sh",
            &[("PATH", &path_of(&[&with_shellcheck]))],
        )
        .context()
        .unwrap();
    assert!(context.contains("shellcheck -f gcc failed"), "{context}");
    assert!(
        context.contains("run.sh:1:6: note: Double quote"),
        "{context}"
    );
}

#[test]
fn typescript_needs_a_tsconfig_and_a_local_compiler() {
    let env = active();
    env.write("web/src/app.ts", "let x: number = 'a';\n");
    assert_eq!(
        env.post_tool_use("Write", "web/src/app.ts", &[]).context(),
        None,
        "no tsconfig: skipped"
    );
    env.write("web/tsconfig.json", "{}");
    assert_eq!(
        env.post_tool_use("Write", "web/src/app.ts", &[]).context(),
        None,
        "no local tsc: skipped"
    );
    // npm's stub is never what runs: node runs the package's own bin/tsc.
    env.write("web/node_modules/.bin/tsc", "#!/bin/sh\ntouch stub-ran\n");
    env.write(
        "web/node_modules/typescript/package.json",
        r#"{"name": "typescript", "bin": {"tsc": "./bin/tsc"}}"#,
    );
    env.write(
        "web/node_modules/typescript/bin/tsc",
        "#!/usr/bin/env node\nrequire('../lib/tsc.js');\n",
    );
    env.write(
        "web/node_modules/typescript/lib/tsc.js",
        "const path = require('path');\n\
         console.log(`src/app.ts(1,5): error TS2322: Type 'string' is not assignable (cwd ${path.basename(process.cwd())}, args ${process.argv.slice(2).join(' ')})`);\n\
         process.exit(2);\n",
    );
    // The project's own TypeScript is its code: skipped, said once, until trusted.
    let untrusted = env.post_tool_use("Write", "web/src/app.ts", &[]);
    assert!(
        !untrusted.stdout.contains("additionalContext"),
        "{untrusted}"
    );
    assert!(
        untrusted
            .stdout
            .contains("Run `pagent trust web/node_modules/typescript` to allow it"),
        "{untrusted}"
    );
    let again = env.post_tool_use("Write", "web/src/app.ts", &[]);
    assert!(again.stdout.is_empty(), "said once: {again}");
    // Trusted by the name people know (the stub), it is the package that is trusted.
    let trusted = env.cmd(&["trust", "web/node_modules/.bin/tsc"]).success();
    assert!(
        trusted
            .stdout
            .contains("trusted web/node_modules/typescript"),
        "{trusted}"
    );
    let context = env
        .post_tool_use("Write", "web/src/app.ts", &[])
        .context()
        .unwrap();
    assert!(context.contains("error TS2322"), "{context}");
    assert!(
        context.contains("(cwd web, args --noEmit --pretty false)"),
        "{context}"
    );
    assert!(!env.exists("web/stub-ran") && !env.exists("stub-ran"));
}

#[test]
fn rust_files_get_cargo_check_in_their_crate() {
    let env = active();
    env.write("notes/scratch.rs", "fn main() { let x: u32 = \"a\"; }\n");
    assert_eq!(
        env.post_tool_use("Write", "notes/scratch.rs", &[])
            .context(),
        None,
        "no Cargo.toml: skipped"
    );
    let fake = env.fake_tool(
        "bin-cargo",
        "cargo",
        "echo \"src/main.rs:1:26: error[E0308]: mismatched types (in ${PWD##*/}: $*)\"; exit 101",
    );
    env.write(
        "crate/Cargo.toml",
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    env.write("crate/src/main.rs", "fn main() { let x: u32 = \"a\"; }\n");
    // cargo check runs the crate's build scripts: not before the user trusts it.
    let untrusted = env.post_tool_use(
        "Write",
        "crate/src/main.rs",
        &[("PATH", &path_of(&[&fake]))],
    );
    assert!(
        !untrusted.stdout.contains("additionalContext"),
        "{untrusted}"
    );
    assert!(
        untrusted
            .stdout
            .contains("Run `pagent trust crate/Cargo.toml` to allow it"),
        "{untrusted}"
    );
    env.cmd(&["trust", "crate/Cargo.toml"]).success();
    let context = env
        .post_tool_use(
            "Write",
            "crate/src/main.rs",
            &[("PATH", &path_of(&[&fake]))],
        )
        .context()
        .unwrap();
    assert!(
        context.contains(
            "error[E0308]: mismatched types (in crate: check --quiet --message-format short)"
        ),
        "{context}"
    );
}

#[test]
fn go_files_get_gofmt_and_go_vet_in_a_module() {
    let env = active();
    let bin = env.fake_tool("bin-go", "gofmt", "echo \"$2\"");
    env.fake_tool(
        "bin-go",
        "go",
        "echo \"./main.go:3:2: fmt.Printf format %d has arg of wrong type\"; exit 1",
    );
    env.write("svc/main.go", "package main\nfunc main(){}\n");
    let context = env
        .post_tool_use("Write", "svc/main.go", &[("PATH", &path_of(&[&bin]))])
        .context()
        .unwrap();
    assert!(
        context.contains("gofmt -l failed:\ngofmt -l reported:"),
        "{context}"
    );
    assert!(!context.contains("go vet"), "no go.mod, no vet: {context}");
    env.write("svc/go.mod", "module svc\n");
    let context = env
        .post_tool_use("Write", "svc/main.go", &[("PATH", &path_of(&[&bin]))])
        .context()
        .unwrap();
    assert!(
        context.contains("go vet . failed:\n./main.go:3:2: fmt.Printf format"),
        "{context}"
    );
}
