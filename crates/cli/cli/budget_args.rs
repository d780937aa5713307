//! The budget flags shared by `run`, `ralph`, `loop` and `parallel`, parsed by the
//! engine's own parsers (the same ones workflow files use), so a budget means the same
//! wherever it is written.

use clap::Args;

/// Time, token and cost limits of one loop (any of them); reaching one ends the loop as
/// gave up.
#[derive(Debug, Args, Clone, Copy, Default)]
pub struct BudgetArgs {
    /// End the loop once it has worked this long (e.g. 45m, 2h, 1h30m); time spent
    /// waiting for the agent's usage limit to reset does not count
    #[arg(long, value_name = "DURATION", value_parser = pagent_engine::budget::parse_duration)]
    pub max_duration: Option<u64>,
    /// End the loop once the agent has used this many tokens, input, output and cache
    /// together (e.g. 500k, 2M)
    #[arg(long, value_name = "N", value_parser = pagent_engine::budget::parse_tokens)]
    pub max_tokens: Option<u64>,
    /// End the loop once it has cost this many US dollars (the agent's own figure, else
    /// estimated from model prices; e.g. 5, 0.50)
    #[arg(long, value_name = "USD", value_parser = pagent_engine::budget::parse_cost)]
    pub max_cost: Option<u64>,
}

impl BudgetArgs {
    pub fn budget(&self) -> pagent_engine::Budget {
        pagent_engine::Budget {
            max_duration_secs: self.max_duration,
            max_tokens: self.max_tokens,
            max_cost_microusd: self.max_cost,
        }
    }
}
