//! Codex inside pagent's walls (`pagent loop --agent codex --sandbox`): what it needs
//! there besides the walls every contained agent gets.
//!
//! - **Its own home, private.** Codex writes into its `CODEX_HOME` on every run (sessions,
//!   logs, history), and the user's next uncontained run would read what a contained one
//!   wrote there. So each contained loop gets a private folder of pagent's (0700, outside
//!   the project, removed when the loop ends) as its `CODEX_HOME`, seeded with copies of
//!   the user's `config.toml` and `auth.json` (from `$CODEX_HOME`, else `~/.codex`; read,
//!   never written back). Inside the walls it is seen as `~/.codex` (HOME is empty there):
//!   Codex makes no helper commands (`apply_patch` on its PATH) in a home under /tmp.
//! - **Its API hosts, and no other.** The hosts come from the user's configuration (never
//!   the project's, which a stranger writes): the chosen `model_provider`'s `base_url`
//!   (a loopback one allowed on its port only); for OpenAI's own provider without one,
//!   its API host, and with a ChatGPT login (`tokens` in `auth.json`) also ChatGPT's
//!   backend and OpenAI's login host, which refreshes the tokens. None found and none
//!   given with `--allow-host`: the loop refuses to start.
//! - **Its own sandbox off.** pagent's walls are the sandbox (Codex's own does not keep
//!   its commands from reading HOME, and inside bubblewrap it does not start when pagent
//!   runs as root: it cannot map its uid): Codex runs with `--sandbox danger-full-access`
//!   (see `agent/spec.rs`).

use std::path::PathBuf;

use anyhow::anyhow;
use pagent_door::files::{self, PrivateTemp};
use toml::Table;

use super::opencode_walls::host_of;
use crate::cli::env::Env;
use crate::cli::sandbox as texts;

/// The largest configuration or credentials file copied.
const FILE_CAP: u64 = 1024 * 1024;
/// The hosts OpenAI's own provider reaches (Codex 0.171.0's binary, checked 2026-11-27):
/// the API with an API key; with a ChatGPT login, ChatGPT's backend and the login host
/// that refreshes its tokens.
const OPENAI_API: &str = "api.openai.com";
const CHATGPT_HOSTS: &[&str] = &["chatgpt.com", "auth.openai.com"];

/// What a contained Codex needs: its private home and its API hosts.
pub(super) struct Private {
    pub dir: PrivateTemp,
    pub hosts: Vec<String>,
}

/// The user's Codex home (`$CODEX_HOME`, else `~/.codex`).
pub(super) fn user_home(env: &Env) -> Option<PathBuf> {
    let install = &env.install;
    install
        .codex_home
        .clone()
        .or_else(|| install.home.as_ref().map(|h| h.join(".codex")))
}

/// The user's Codex configuration copied into a private home, and its API hosts.
pub(super) fn prepare(env: &Env) -> anyhow::Result<Private> {
    let failed = |e: std::io::Error| anyhow!(texts::codex_private_failed(&e));
    let dir = files::private_temp_dir("pagent-codex-").map_err(failed)?;
    let user = user_home(env);
    let copied = |name: &str| -> anyhow::Result<Option<Vec<u8>>> {
        let Some(path) = user.as_ref().map(|u| u.join(name)) else {
            return Ok(None);
        };
        let bytes = match files::read_outside(&path, FILE_CAP) {
            Ok(bytes) => bytes,
            Err(files::DoorError::Missing(_)) => return Ok(None),
            Err(err) => return Err(anyhow!(texts::codex_config_unread(&path, &err.to_string()))),
        };
        files::create_new_private(&dir.path().join(name), &bytes)
            .map_err(|e| failed(std::io::Error::other(e.to_string())))?;
        Ok(Some(bytes))
    };
    // A configuration there but not read would leave Codex inside on OpenAI's default
    // provider, with the hosts allowed for it: not a guess pagent makes.
    let config = match copied("config.toml")? {
        Some(bytes) => parse_config(bytes).ok_or_else(|| {
            let path = user
                .as_ref()
                .map(|u| u.join("config.toml"))
                .unwrap_or_default();
            anyhow!(texts::codex_config_unread(&path, "it is not TOML"))
        })?,
        None => Table::default(),
    };
    let auth = copied("auth.json")?.and_then(|b| serde_json::from_slice(&b).ok());
    let hosts = api_hosts(&config, chatgpt_login(auth.as_ref()));
    Ok(Private { dir, hosts })
}

fn parse_config(bytes: Vec<u8>) -> Option<Table> {
    String::from_utf8(bytes).ok()?.parse::<Table>().ok()
}

/// Whether `auth.json` holds a ChatGPT login (its `tokens`) rather than an API key only.
fn chatgpt_login(auth: Option<&serde_json::Value>) -> bool {
    auth.and_then(|a| a.get("tokens"))
        .is_some_and(|t| t.is_object())
}

/// The API hosts a configuration's chosen provider reaches: its `base_url`, or for
/// OpenAI's own provider its API (`openai_base_url`, else the public one) and, with a
/// ChatGPT login, ChatGPT's hosts. A provider (chosen by `model_provider`, at the top or
/// in the chosen `profile`) Codex knows otherwise, without a `base_url`, gives none.
fn api_hosts(config: &Table, chatgpt: bool) -> Vec<String> {
    let text = |t: &Table, key: &str| t.get(key).and_then(|v| v.as_str()).map(str::to_owned);
    let profile = text(config, "profile").and_then(|name| {
        let profiles = config.get("profiles")?.as_table()?;
        profiles.get(&name)?.as_table().cloned()
    });
    let provider = profile
        .as_ref()
        .and_then(|p| text(p, "model_provider"))
        .or_else(|| text(config, "model_provider"))
        .unwrap_or_else(|| "openai".to_owned());
    let defined = config
        .get("model_providers")
        .and_then(|p| p.as_table())
        .and_then(|p| p.get(&provider))
        .and_then(|p| p.as_table());
    if let Some(url) = defined.and_then(|p| text(p, "base_url")) {
        return host_of(&url).into_iter().collect();
    }
    if provider != "openai" {
        return Vec::new();
    }
    let mut hosts: Vec<String> = match text(config, "openai_base_url") {
        Some(url) => host_of(&url).into_iter().collect(),
        None => vec![OPENAI_API.to_owned()],
    };
    if chatgpt {
        hosts.extend(CHATGPT_HOSTS.iter().map(|h| (*h).to_owned()));
    }
    hosts
}

/// The user's Codex home unless its real path lies in one of the `homes` the walls hide
/// anyway: a folder the walls hide too, since it holds the user's credentials and
/// history (a `~/.codex` linked to a folder outside HOME included). Compared by real
/// paths, so a home spelled otherwise is neither missed nor hidden twice (which would lay
/// a read-only folder over the contained Codex's own home).
pub(super) fn hidden(env: &Env, homes: &[Option<PathBuf>]) -> Option<PathBuf> {
    let named = user_home(env)?;
    let real = files::canonical(&named).ok()?;
    let inside_a_home = homes
        .iter()
        .flatten()
        .filter_map(|home| files::canonical(home).ok())
        .any(|home| real.starts_with(home));
    // As named: the walls hide a path at its real place (and say it as the user wrote it).
    (!inside_a_home).then_some(named)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(config: &str, chatgpt: bool) -> Vec<String> {
        api_hosts(&config.parse::<Table>().unwrap(), chatgpt)
    }

    #[test]
    fn codexs_api_hosts_come_from_its_chosen_provider_and_its_login() {
        let mock = "model_provider = \"mock\"\n\
             [model_providers.mock]\nbase_url = \"http://127.0.0.1:8123/v1\"\n\
             [model_providers.other]\nbase_url = \"https://other.example/v1\"\n";
        assert_eq!(hosts(mock, true), ["127.0.0.1:8123"]);
        assert_eq!(hosts("", false), ["api.openai.com"]);
        assert_eq!(
            hosts("", true),
            ["api.openai.com", "chatgpt.com", "auth.openai.com"]
        );
        assert_eq!(
            hosts(
                "openai_base_url = \"https://gw.corp.example:8443/v1\"",
                false
            ),
            ["gw.corp.example:8443"]
        );
        let profiled = "profile = \"work\"\nmodel_provider = \"openai\"\n\
             [profiles.work]\nmodel_provider = \"corp\"\n\
             [model_providers.corp]\nbase_url = \"https://llm.corp.example/v1\"\n";
        assert_eq!(hosts(profiled, false), ["llm.corp.example"]);
        // A provider Codex knows by itself (a local model server) names no host here.
        assert!(hosts("model_provider = \"ollama\"", false).is_empty());
        assert!(chatgpt_login(Some(
            &serde_json::json!({"tokens": {"a": 1}})
        )));
        assert!(!chatgpt_login(Some(
            &serde_json::json!({"OPENAI_API_KEY": "k", "tokens": null})
        )));
    }
}
