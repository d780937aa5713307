//! `pagent trust [PATH...]`: consent to the commands a project's files would make pagent
//! run (see `consent`). With no path, every such file of the project. `--list` shows what
//! is trusted and what is not (or changed since); `--revoke` forgets.

use std::path::PathBuf;

use anyhow::bail;

use crate::cli::args::{Global, TrustArgs};
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::cli::ui;
use crate::io::{Io, now};
use crate::store::consent::{self, Source};
use crate::store::project::Project;
use crate::store::trust::{self, Verdict};
use crate::store::user::UserDir;

pub fn run(
    global: &Global,
    env: &Env,
    args: &TrustArgs,
    io: &mut Io,
) -> anyhow::Result<ExitStatus> {
    let project = Project::resolve(global.project.as_deref(), env, None)?;
    let user_dir = &UserDir::of(env);
    let cwd = env
        .current_dir
        .clone()
        .unwrap_or_else(|| project.root.clone());
    let named: Vec<PathBuf> = args
        .paths
        .iter()
        .map(|p| consent::rel_in_project(&project, &cwd, p))
        .collect::<anyhow::Result<_>>()?;
    if args.revoke {
        revoke(&project, user_dir, &named, io)?;
    } else {
        let sources = sources(&project, &named)?;
        if args.list {
            list(&project, user_dir, &sources, io)?;
        } else {
            trust_all(&project, user_dir, &sources, io)?;
        }
    }
    Ok(ExitStatus::Success)
}

/// `--revoke`: forget the named files, or every file of the project that was trusted.
fn revoke(
    project: &Project,
    user_dir: &UserDir,
    named: &[PathBuf],
    io: &mut Io,
) -> anyhow::Result<()> {
    let targets: Vec<PathBuf> = if named.is_empty() {
        trust::list(user_dir, Some(&project.root))
            .into_iter()
            .map(|(p, _)| p)
            .collect()
    } else {
        named.iter().map(|r| project.root.join(r)).collect()
    };
    let mut any = false;
    for path in targets {
        if trust::revoke(user_dir, &path)? {
            writeln!(
                io.stdout,
                "pagent: no longer trusted: {}",
                project.display_path(&path)
            )?;
            any = true;
        }
    }
    if !any {
        writeln!(io.stdout, "pagent: nothing was trusted here.")?;
    }
    Ok(())
}

/// The files that would make pagent run commands: the named ones (each must), or every
/// such file of the project.
fn sources(project: &Project, named: &[PathBuf]) -> anyhow::Result<Vec<Source>> {
    if named.is_empty() {
        return consent::project_sources(project);
    }
    let mut sources = Vec::new();
    for rel in named {
        match consent::file_source(project, rel)? {
            Some(source) => sources.push(source),
            None => bail!(
                "{} does not make pagent run any command (or does not exist): nothing to trust",
                rel.display()
            ),
        }
    }
    Ok(sources)
}

/// `--list`: each file with its verdict and the commands it would run.
fn list(
    project: &Project,
    user_dir: &UserDir,
    sources: &[Source],
    io: &mut Io,
) -> anyhow::Result<()> {
    let recorded = trust::list(user_dir, Some(&project.root));
    if sources.is_empty() && recorded.is_empty() {
        writeln!(
            io.stdout,
            "pagent: no file in this project makes pagent run commands."
        )?;
    }
    for source in sources {
        let verdict = match consent::verdict(project, user_dir, source) {
            Verdict::Trusted => "trusted",
            Verdict::Changed => "CHANGED since trusted",
            Verdict::Untrusted => "not trusted",
        };
        writeln!(
            io.stdout,
            "{} ({verdict}):",
            ui::printable(&source.rel.display().to_string(), false)
        )?;
        write_commands(source, io)?;
    }
    Ok(())
}

/// Records consent to each file as it is now, naming what it may run.
fn trust_all(
    project: &Project,
    user_dir: &UserDir,
    sources: &[Source],
    io: &mut Io,
) -> anyhow::Result<()> {
    if sources.is_empty() {
        writeln!(
            io.stdout,
            "pagent: no file in this project makes pagent run commands; nothing to trust."
        )?;
        return Ok(());
    }
    let when = now().to_string();
    for source in sources {
        trust::trust(
            user_dir,
            &project.root.join(&source.rel),
            &source.bytes,
            source.commands.clone(),
            &when,
        )?;
        writeln!(
            io.stdout,
            "pagent: trusted {}; it may run:",
            ui::printable(&source.rel.display().to_string(), false)
        )?;
        write_commands(source, io)?;
    }
    writeln!(
        io.stdout,
        "A change to any of these files needs `pagent trust` again."
    )?;
    Ok(())
}

fn write_commands(source: &Source, io: &mut Io) -> anyhow::Result<()> {
    for command in &source.commands {
        writeln!(io.stdout, "    {}", ui::printable(command, false))?;
    }
    Ok(())
}
