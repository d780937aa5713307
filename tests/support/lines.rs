//! A child's output, read line by line on a thread of its own, so that a test waits for
//! the line it expects under a deadline (a child that never prints it fails the test
//! with everything it did print) instead of blocking on a read that never returns, or
//! sleeping and hoping the line is there by then.

use std::io::{BufRead, BufReader, Read};
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::time::Duration;

use crate::wait::wait_showing;

/// The lines of one stream, as they come.
#[derive(Debug)]
pub struct Lines {
    rx: Receiver<String>,
    seen: Vec<String>,
    /// How many of `seen` a wait has looked at already.
    taken: usize,
    closed: bool,
}

impl Lines {
    /// Starts reading `stream` (a child's stdout or stderr) on a thread.
    pub fn of(stream: impl Read + Send + 'static) -> Lines {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines() {
                if tx.send(line.unwrap_or_default()).is_err() {
                    return;
                }
            }
        });
        Lines {
            rx,
            seen: Vec::new(),
            taken: 0,
            closed: false,
        }
    }

    /// Waits for the next line (after those earlier waits returned) for which `wanted`
    /// holds and returns it; fails with `what` and every line read if none comes by
    /// `deadline`, or the stream ends first.
    pub fn wait_for(
        &mut self,
        deadline: Duration,
        what: &str,
        mut wanted: impl FnMut(&str) -> bool,
    ) -> String {
        wait_showing(deadline, what, || {
            self.drain();
            while self.taken < self.seen.len() {
                self.taken += 1;
                if wanted(&self.seen[self.taken - 1]) {
                    return Ok(self.seen[self.taken - 1].clone());
                }
            }
            if self.closed {
                panic!("the stream ended without {what}:\n{}", self.seen.join("\n"));
            }
            Err(self.seen.join("\n"))
        })
    }

    /// Every line up to the end of the stream (waited for under `deadline`).
    pub fn to_end(&mut self, deadline: Duration) -> &[String] {
        wait_showing(deadline, "the end of the stream", || {
            self.drain();
            if self.closed {
                Ok(())
            } else {
                Err(self.seen.join("\n"))
            }
        });
        &self.seen
    }

    /// Every line read so far.
    pub fn seen(&self) -> &[String] {
        &self.seen
    }

    fn drain(&mut self) {
        loop {
            match self.rx.try_recv() {
                Ok(line) => self.seen.push(line),
                Err(TryRecvError::Empty) => return,
                Err(TryRecvError::Disconnected) => {
                    self.closed = true;
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wanted_line_is_returned_once_and_the_rest_read_to_the_end() {
        let mut lines = Lines::of(&b"one\ntwo\nthree\ntwo\n"[..]);
        let deadline = Duration::from_secs(20);
        assert_eq!(lines.wait_for(deadline, "two", |l| l == "two"), "two");
        assert_eq!(lines.wait_for(deadline, "two again", |l| l == "two"), "two");
        assert_eq!(lines.to_end(deadline), ["one", "two", "three", "two"]);
    }

    #[test]
    fn a_stream_that_ends_without_the_line_fails_with_what_it_said() {
        let mut lines = Lines::of(&b"one\n"[..]);
        let failed = std::panic::catch_unwind(move || {
            lines.wait_for(Duration::from_secs(20), "the marker", |l| l == "marker")
        })
        .unwrap_err();
        let message = failed.downcast_ref::<String>().unwrap();
        assert!(
            message.contains("the marker") && message.contains("one"),
            "{message}"
        );
    }
}
