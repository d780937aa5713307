//! Paths taken apart and resolved under a root: relative, no `..`, symlinks followed
//! only while they stay inside, resolved here component by component, never by the kernel.

use super::*;

/// Most symlinks followed while resolving one path for reading (Linux allows 40).
pub(super) const MAX_HOPS: usize = 40;

impl Dir {
    pub(super) fn dup(&self) -> Result<Fd, DoorError> {
        self.fd
            .try_clone()
            .map(Fd)
            .map_err(|e| DoorError::Io(self.root.display().to_string(), e))
    }

    /// Resolves `rel` for reading: every folder opened without following links, symlinks
    /// resolved here and only while they stay under the root. Returns the folder that
    /// holds the last component and that component (`None`: `rel` is the root itself, or
    /// resolves to a folder when `last_is_name` is false).
    pub(super) fn resolve(
        &self,
        rel: &Path,
        shown: &str,
        last_is_name: bool,
    ) -> Result<Resolved, DoorError> {
        let walked = self.walk_components(rel, shown)?;
        let mut resolved = walked.parts;
        let last = if last_is_name { resolved.pop() } else { None };
        let dir = self.open_from(&resolved, walked.opened, shown)?;
        match last {
            Some(name) => Ok(Resolved {
                dir,
                name: Some(cstring(&name, shown)?),
                seen: walked.last,
            }),
            None => Ok(Resolved {
                dir,
                name: None,
                seen: None,
            }),
        }
    }

    /// The real components of `rel` under the root: symlinks expanded (inside only); the
    /// last folder opened on the way (see [`Opened`]), which holds the last component when
    /// that is no symlink; and what that last component was when it was looked at.
    pub(super) fn walk_components(&self, rel: &Path, shown: &str) -> Result<Walked, DoorError> {
        let mut pending: VecDeque<OsString> = normal_components(rel, shown)?.into();
        let mut done: Vec<OsString> = Vec::new();
        let mut opened: Opened = None;
        let mut last = None;
        let mut hops = 0;
        while let Some(part) = pending.pop_front() {
            if part == ".." {
                if done.pop().is_none() {
                    return Err(DoorError::Outside(shown.to_owned()));
                }
                opened = None;
                last = None;
                continue;
            }
            if part == "." || part.is_empty() {
                continue;
            }
            let fd = self.open_from(&done, opened.take(), shown)?;
            let parent = &opened.insert((done.len(), fd)).1;
            let name = cstring(&part, shown)?;
            let st = match fstatat(parent.fd(), &name, libc::AT_SYMLINK_NOFOLLOW) {
                Ok(st) => st,
                Err(err) => return Err(read_error(err, shown)),
            };
            if Kind::of(st.st_mode) != Kind::Symlink {
                done.push(part);
                last = Some(st);
                continue;
            }
            hops += 1;
            if hops > MAX_HOPS {
                return Err(DoorError::Io(
                    shown.to_owned(),
                    io::Error::other("too many levels of symlinks"),
                ));
            }
            let target = readlinkat(parent.fd(), &name).map_err(|e| read_error(e, shown))?;
            // What follows changes `done` in any way: the folder opened for it is dropped.
            opened = None;
            let target = PathBuf::from(target);
            let mut spliced: VecDeque<OsString> = VecDeque::new();
            if target.is_absolute() {
                // Absolute targets count only when they point under the root.
                let Ok(inside) = target.strip_prefix(&self.root) else {
                    return Err(DoorError::Outside(shown.to_owned()));
                };
                done.clear();
                spliced.extend(inside.components().map(|c| c.as_os_str().to_owned()));
            } else {
                spliced.extend(target.components().map(|c| match c {
                    Component::ParentDir => OsString::from(".."),
                    other => other.as_os_str().to_owned(),
                }));
            }
            while let Some(item) = spliced.pop_back() {
                pending.push_front(item);
            }
        }
        Ok(Walked {
            parts: done,
            opened,
            last,
        })
    }

    /// The folder `parts` names, as [`Dir::open_components`] opens it: from `opened` when
    /// that is the folder or the one just above it (one `openat`, never through a link),
    /// else from the root.
    pub(super) fn open_from(
        &self,
        parts: &[OsString],
        opened: Opened,
        shown: &str,
    ) -> Result<Fd, DoorError> {
        match opened {
            Some((n, fd)) if n == parts.len() => Ok(fd),
            Some((n, fd)) if n + 1 == parts.len() => {
                let name = cstring(&parts[n], shown)?;
                let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
                openat(fd.fd(), &name, flags, 0)
                    .map(Fd)
                    .map_err(|e| read_error(e, shown))
            }
            _ => self.open_components(parts, shown),
        }
    }

    pub(super) fn open_components(&self, parts: &[OsString], shown: &str) -> Result<Fd, DoorError> {
        let mut dir = self.dup()?;
        for part in parts {
            let name = cstring(part, shown)?;
            dir = Fd(openat(
                dir.fd(),
                &name,
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                0,
            )
            .map_err(|e| read_error(e, shown))?);
        }
        Ok(dir)
    }
}

/// A path walked under the root ([`Dir::walk_components`]).
pub(super) struct Walked {
    /// Its real components.
    pub parts: Vec<OsString>,
    pub opened: Opened,
    /// `lstat` of the last component, when the walk looked at it last (not after a `..`).
    pub last: Option<libc::stat>,
}

/// A path resolved for reading ([`Dir::resolve`]): the folder that holds its last
/// component, that component's name, and what it was when the walk looked at it (so the
/// reader need not look again before opening it).
pub(super) struct Resolved {
    pub dir: Fd,
    pub name: Option<CString>,
    pub seen: Option<libc::stat>,
}

/// The folder a walk under the root opened last: the first so many of its components
/// (`done`), kept so the next component is opened from it rather than from the root again.
/// Dropped whenever `done` changes other than by growing.
pub(super) type Opened = Option<(usize, Fd)>;

pub(super) fn cstring(part: &OsStr, shown: &str) -> Result<CString, DoorError> {
    CString::new(part.as_bytes()).map_err(|_| DoorError::BadPath(shown.to_owned()))
}
