//! OpenCode inside pagent's walls (`pagent loop --agent opencode --sandbox`): what it
//! needs there besides the walls every contained agent gets.
//!
//! - **Its own configuration, private.** OpenCode writes under its XDG folders on every
//!   start (packages into its config folder, sessions and logs into its data folder), and
//!   the user's next uncontained run would read what a contained one wrote there. So each
//!   contained loop gets a private folder of pagent's (0700, outside the project, removed
//!   when the loop ends) holding `config`, `data`, `cache` and `state`, seeded with copies
//!   of the user's configuration files (`opencode.json`, `opencode.jsonc`, `config.json`)
//!   and `auth.json` (read, never written), and `XDG_*_HOME` point there inside the walls.
//! - **Its API host, and no other.** The hosts come from the user's configuration (never
//!   the project's, which a stranger writes): each provider's `options.baseURL`, and for
//!   a `model` of a provider without one, that provider's known host (Anthropic, OpenAI).
//!   They join `--allow-host` in the proxy; a loopback `baseURL` (a local model server)
//!   is allowed on its port only. None found and none given: the loop refuses to start.

use std::path::{Path, PathBuf};

use anyhow::anyhow;
use pagent_door::files::{self, PrivateTemp};
use pagent_door::process::proxy::AllowedHost;
use serde_json::Value;

use crate::cli::env::Env;
use crate::cli::sandbox as texts;

/// The configuration files OpenCode reads from its config folder.
const CONFIG_FILES: &[&str] = &["opencode.json", "opencode.jsonc", "config.json"];
/// The largest configuration or credentials file copied.
const FILE_CAP: u64 = 1024 * 1024;
/// The hosts of providers OpenCode knows without a `baseURL` (their public APIs).
const KNOWN_HOSTS: &[(&str, &str)] = &[
    ("anthropic", "api.anthropic.com"),
    ("openai", "api.openai.com"),
];

/// What a contained OpenCode needs: its private folder, the variables that point it
/// there, and its API hosts.
pub(super) struct Private {
    pub dir: PrivateTemp,
    pub vars: Vec<(&'static str, PathBuf)>,
    pub hosts: Vec<String>,
}

/// The user's OpenCode configuration copied into a private folder, and its API hosts.
pub(super) fn prepare(env: &Env) -> anyhow::Result<Private> {
    let install = &env.install;
    let home = install.home.as_deref();
    let base = |xdg: Option<&Path>, rel: &str| {
        xdg.map(Path::to_path_buf)
            .or_else(|| home.map(|h| h.join(rel)))
            .map(|d| d.join("opencode"))
    };
    let config = base(install.xdg_config_home.as_deref(), ".config");
    let data = base(install.xdg_data_home.as_deref(), ".local/share");
    let failed = |e: std::io::Error| anyhow!(texts::opencode_private_failed(&e));
    let dir = files::private_temp_dir("pagent-opencode-").map_err(failed)?;
    let mut vars = Vec::new();
    for (var, rel) in [
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_DATA_HOME", "data"),
        ("XDG_CACHE_HOME", "cache"),
        ("XDG_STATE_HOME", "state"),
    ] {
        dir.create_dirs(&Path::new(rel).join("opencode"))
            .map_err(failed)?;
        vars.push((var, dir.path().join(rel)));
    }
    let mut hosts = Vec::new();
    for name in CONFIG_FILES {
        let copied = config
            .as_ref()
            .and_then(|c| copy(&c.join(name), &dir, "config", name));
        if let Some(json) = copied.and_then(|bytes| serde_json::from_slice(&bytes).ok()) {
            api_hosts(&json, &mut hosts);
        }
    }
    if let Some(data) = &data {
        copy(&data.join("auth.json"), &dir, "data", "auth.json");
    }
    hosts.dedup();
    Ok(Private { dir, vars, hosts })
}

/// Copies the user's file `from` (if there) to `dir/<rel>/opencode/<name>`: its bytes.
fn copy(from: &Path, dir: &PrivateTemp, rel: &str, name: &str) -> Option<Vec<u8>> {
    let bytes = files::read_outside(from, FILE_CAP).ok()?;
    let to = dir.path().join(rel).join("opencode").join(name);
    files::create_new_private(&to, &bytes).ok()?;
    Some(bytes)
}

/// The API hosts a configuration names: each provider's `options.baseURL`, and the known
/// host of the `model`'s and `small_model`'s provider when it has none.
fn api_hosts(config: &Value, out: &mut Vec<String>) {
    let providers = config.get("provider").and_then(Value::as_object);
    let mut with_url = Vec::new();
    for (id, provider) in providers.into_iter().flatten() {
        let url = provider.pointer("/options/baseURL").and_then(Value::as_str);
        if let Some(host) = url.and_then(host_of) {
            out.push(host);
            with_url.push(id.as_str());
        }
    }
    for key in ["model", "small_model"] {
        let provider = config
            .get(key)
            .and_then(Value::as_str)
            .and_then(|m| m.split('/').next());
        let Some(provider) = provider.filter(|p| !with_url.contains(p)) else {
            continue;
        };
        if let Some((_, host)) = KNOWN_HOSTS.iter().find(|(id, _)| *id == provider) {
            out.push((*host).to_owned());
        }
    }
}

/// The `--allow-host` entry for an API's URL: `HOST` on the standard ports, `HOST:PORT`
/// otherwise and always for the machine itself (which the proxy reaches only so).
pub(super) fn host_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    if authority.contains('@') {
        return None;
    }
    let default = match scheme.to_ascii_lowercase().as_str() {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) => (host, port.parse::<u16>().ok()?),
        None => (authority, default),
    };
    let host = host.to_ascii_lowercase();
    let local = host == "localhost"
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback());
    let entry = if local || ![80, 443].contains(&port) {
        format!("{host}:{port}")
    } else {
        host
    };
    AllowedHost::parse(&entry).ok().map(|_| entry)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn opencodes_api_hosts_come_from_its_providers_and_its_model() {
        let mut hosts = Vec::new();
        api_hosts(
            &json!({
                "model": "anthropic/claude-sonnet-4-5",
                "small_model": "mock/mock-model",
                "provider": {
                    "mock": {"options": {"baseURL": "http://127.0.0.1:8123/v1"}},
                    "corp": {"options": {"baseURL": "https://llm.corp.example/v1"}},
                    "odd": {"options": {"baseURL": "https://user@evil.example/"}}
                }
            }),
            &mut hosts,
        );
        hosts.sort();
        assert_eq!(
            hosts,
            ["127.0.0.1:8123", "api.anthropic.com", "llm.corp.example"]
        );
        assert_eq!(
            host_of("http://localhost/v1").as_deref(),
            Some("localhost:80")
        );
        assert_eq!(
            host_of("https://h.example:8443").as_deref(),
            Some("h.example:8443")
        );
        assert_eq!(host_of("file:///etc/passwd"), None);
    }
}
