//! What pagent asks of the terminal it writes to: how large its window is, and (on
//! Windows) that it act on escape sequences. The command line's output edge
//! (`cli/terminal.rs`, `cli/screen.rs`) decides what to do with the answers; here are
//! only the calls, one safe function each.

/// A terminal window's size in character cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowSize {
    pub cols: u16,
    pub rows: u16,
}

/// The size of the terminal on stdout, else on stderr; `None` when neither is a terminal
/// that knows its size (a pipe, a file, a terminal that says 0 columns).
pub fn window_size() -> Option<WindowSize> {
    sys::STREAMS.into_iter().find_map(sys::window_size)
}

/// Whether the terminal acts on escape sequences, made so where it must be: always on
/// Unix; on Windows a console does only once asked (`ENABLE_VIRTUAL_TERMINAL_PROCESSING`,
/// asked here of stdout's and stderr's), and one that cannot (older than Windows 10)
/// answers `false`. A stdout that is not a console answers `true`: nothing to ask.
pub fn enable_controls() -> bool {
    sys::enable_controls()
}

#[cfg(unix)]
mod sys {
    use super::WindowSize;

    pub const STREAMS: [i32; 2] = [libc::STDOUT_FILENO, libc::STDERR_FILENO];

    pub fn window_size(fd: i32) -> Option<WindowSize> {
        let mut size = libc::winsize {
            ws_row: 0,
            ws_col: 0,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: TIOCGWINSZ writes one `winsize` into the one we own and pass by a valid
        // pointer; on a descriptor that is not a terminal (or not open) it fails with
        // ENOTTY or EBADF and writes nothing.
        let rc = unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &raw mut size) };
        (rc == 0 && size.ws_col > 0).then(|| WindowSize {
            cols: size.ws_col,
            rows: size.ws_row.max(1),
        })
    }

    pub fn enable_controls() -> bool {
        true
    }
}

#[cfg(windows)]
mod sys {
    use windows_sys::Win32::System::Console as con;

    use super::WindowSize;

    pub const STREAMS: [con::STD_HANDLE; 2] = [con::STD_OUTPUT_HANDLE, con::STD_ERROR_HANDLE];

    /// The visible window of the console on the standard stream `which`, if it is a
    /// console (`GetConsoleScreenBufferInfo` fails on a pipe or a file). The window, not
    /// the buffer: the buffer is as wide as the window but thousands of rows tall.
    pub fn window_size(which: con::STD_HANDLE) -> Option<WindowSize> {
        // SAFETY: GetStdHandle only reads the process's standard handle table.
        let handle = unsafe { con::GetStdHandle(which) };
        // SAFETY: all-zero is a valid CONSOLE_SCREEN_BUFFER_INFO (plain integers).
        let mut info: con::CONSOLE_SCREEN_BUFFER_INFO = unsafe { std::mem::zeroed() };
        // SAFETY: the call only writes into the struct we own, through a valid pointer,
        // and fails on a handle that is not a console's (or null, or invalid).
        if unsafe { con::GetConsoleScreenBufferInfo(handle, &raw mut info) } == 0 {
            return None;
        }
        let cols = i32::from(info.srWindow.Right) - i32::from(info.srWindow.Left) + 1;
        let rows = i32::from(info.srWindow.Bottom) - i32::from(info.srWindow.Top) + 1;
        (cols > 0).then(|| WindowSize {
            cols: u16::try_from(cols).unwrap_or(u16::MAX),
            rows: u16::try_from(rows.max(1)).unwrap_or(u16::MAX),
        })
    }

    pub fn enable_controls() -> bool {
        let stdout = ask(con::STD_OUTPUT_HANDLE);
        let _ = ask(con::STD_ERROR_HANDLE);
        stdout.unwrap_or(true)
    }

    /// Turns on escape processing for the console on `which`: `None` when it is not a
    /// console, else whether it now processes them.
    fn ask(which: con::STD_HANDLE) -> Option<bool> {
        // SAFETY: GetStdHandle only reads the process's standard handle table.
        let handle = unsafe { con::GetStdHandle(which) };
        let mut mode = 0;
        // SAFETY: GetConsoleMode writes only the mode we own, through a valid pointer,
        // and fails on a handle that is not a console's.
        if unsafe { con::GetConsoleMode(handle, &raw mut mode) } == 0 {
            return None; // not a console: nothing to ask
        }
        let wanted = mode | con::ENABLE_VIRTUAL_TERMINAL_PROCESSING;
        // SAFETY: SetConsoleMode takes the console handle just checked and a mode value;
        // it touches no memory of ours.
        Some(mode == wanted || unsafe { con::SetConsoleMode(handle, wanted) } != 0)
    }
}
