//! Holding a scripted reply back until the test says so ([`super::Reply::After`]): Claude
//! Code 2.1.330 clears what scrolls off the terminal, so a test that must read a screen
//! keeps the next reply waiting until it has, instead of racing it or sleeping.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// What holds a [`super::Reply::After`] back.
#[derive(Debug, Clone, Default)]
pub struct Gate(Arc<(Mutex<bool>, Condvar)>);

/// Longest a gate holds a reply when the test never opens it (the test has failed).
const GATE_LIMIT: Duration = Duration::from_secs(90);

impl Gate {
    pub fn new() -> Gate {
        Gate::default()
    }

    /// Lets the held reply go.
    pub fn open(&self) {
        let (open, changed) = &*self.0;
        *open.lock().unwrap() = true;
        changed.notify_all();
    }

    pub(super) fn wait(&self) {
        let (open, changed) = &*self.0;
        let guard = open.lock().unwrap();
        let _ = changed
            .wait_timeout_while(guard, GATE_LIMIT, |open| !*open)
            .unwrap();
    }
}
