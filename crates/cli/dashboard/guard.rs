//! Who may talk to the dashboard: only the page pagent printed, in the user's browser.
//!
//! Listening on 127.0.0.1 keeps other machines out, not other web pages: any site the
//! user visits can make their browser send requests to 127.0.0.1, and a site whose name
//! it re-points at 127.0.0.1 (DNS rebinding) even reads the answers as its own. So every
//! request must pass, in this order:
//!
//! 1. **Host** is the address pagent listens on (`127.0.0.1:PORT`, `localhost:PORT`, or
//!    the literal address it was told to bind): a rebound name is refused.
//! 2. **Sec-Fetch-Site**, when the browser sends it, is `same-origin` or `none` (the user
//!    opened the address): a request another site (or another port) caused is refused.
//!    One exception: a top-level navigation to the page itself (`Sec-Fetch-Mode:
//!    navigate`, `Sec-Fetch-Dest: document`), which is how the redirect file pagent opens
//!    the browser with (`open.rs`) arrives. It still needs the token, its answer is
//!    never readable by the page that navigated, and the page cannot be framed.
//! 3. **Origin**, when sent, is the dashboard's own.
//! 4. **The token**: a random 256-bit secret that only the printed address carries. Pages
//!    and their assets take it in the query (`?token=`); the API only in the
//!    `X-Pagent-Token` header, which another site cannot set without a preflight pagent
//!    never grants. It is compared in constant time.
//!
//! Each refusal is a 403 that says which rule refused, and nothing more.

use std::net::{IpAddr, SocketAddr};

use super::http::Request;

/// The header the page's script sends the token in.
pub const TOKEN_HEADER: &str = "x-pagent-token";

/// What a request must match.
#[derive(Debug, Clone)]
pub struct Guard {
    token: String,
    /// `Host` values accepted, lowercase.
    hosts: Vec<String>,
}

/// What kind of request is asked about: where it may carry the token, and whether a
/// navigation from elsewhere may reach it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenIn {
    /// The page: `?token=` (a header cannot be set on a navigation); a top-level
    /// navigation from another site is let in.
    Page,
    /// The page's script and style: `?token=`, same origin only.
    Query,
    /// The API: the `X-Pagent-Token` header only, same origin only.
    Header,
}

impl Guard {
    pub fn new(token: String, listening: SocketAddr) -> Guard {
        let port = listening.port();
        let mut hosts = vec![match listening.ip() {
            IpAddr::V4(ip) => format!("{ip}:{port}"),
            IpAddr::V6(ip) => format!("[{ip}]:{port}"),
        }];
        if listening.ip().is_loopback() {
            hosts.push(format!("localhost:{port}"));
        }
        Guard { token, hosts }
    }

    /// The dashboard's own origin, as a browser writes it in `Origin`.
    fn is_own_origin(&self, origin: &str) -> bool {
        origin
            .strip_prefix("http://")
            .is_some_and(|host| self.is_own_host(host))
    }

    fn is_own_host(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        self.hosts.contains(&host)
    }

    /// `Ok` when `request` may be answered, else the rule that refused it.
    pub fn admit(&self, request: &Request, token_in: TokenIn) -> Result<(), &'static str> {
        match request.header("host") {
            Ok(Some(host)) if self.is_own_host(host) => {}
            _ => return Err("the Host header is not this dashboard's address"),
        }
        let navigation = token_in == TokenIn::Page
            && request.header("sec-fetch-mode") == Ok(Some("navigate"))
            && request.header("sec-fetch-dest") == Ok(Some("document"));
        match request.header("sec-fetch-site") {
            Ok(None | Some("same-origin" | "none")) => {}
            Ok(Some("cross-site" | "same-site")) if navigation => {}
            _ => return Err("a request from another site"),
        }
        match request.header("origin") {
            Ok(None) => {}
            Ok(Some(origin)) if self.is_own_origin(origin) => {}
            _ => return Err("a request from another origin"),
        }
        let given = match token_in {
            TokenIn::Page | TokenIn::Query => request.query_param("token"),
            TokenIn::Header => request.header(TOKEN_HEADER).ok().flatten(),
        };
        if !given.is_some_and(|given| same_secret(given.as_bytes(), self.token.as_bytes())) {
            return Err("no token, or the wrong one");
        }
        Ok(())
    }
}

/// Compares in time that depends only on the lengths.
fn same_secret(given: &[u8], token: &[u8]) -> bool {
    given.len() == token.len()
        && given
            .iter()
            .zip(token)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// A token of the user's own (`PAGENT_DASHBOARD_TOKEN`) is usable when it is long enough
/// and safe in an address as it is.
pub fn valid_token(token: &str) -> bool {
    token.len() >= 32
        && token.len() <= 256
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(method: &str, target: &str, headers: &[(&str, &str)]) -> Request {
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        Request {
            method: method.into(),
            path: path.into(),
            query: query.into(),
            headers: headers
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
        }
    }

    #[test]
    fn each_rule_refuses_on_its_own() {
        let token = "t".repeat(64);
        let guard = Guard::new(token.clone(), "127.0.0.1:4000".parse().unwrap());
        let page = format!("/?token={token}");
        let ok = [("host", "127.0.0.1:4000")];
        assert_eq!(
            guard.admit(&request("GET", &page, &ok), TokenIn::Query),
            Ok(())
        );
        type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, TokenIn, bool);
        let cases: [Case; 10] = [
            ("/", vec![("host", "127.0.0.1:4000")], TokenIn::Query, false),
            (
                &page,
                vec![("host", "LOCALHOST:4000")],
                TokenIn::Query,
                true,
            ),
            (
                &page,
                vec![("host", "evil.example:4000")],
                TokenIn::Query,
                false,
            ),
            (
                &page,
                vec![("host", "127.0.0.1:4001")],
                TokenIn::Query,
                false,
            ),
            (&page, vec![], TokenIn::Query, false),
            (
                &page,
                vec![("host", "127.0.0.1:4000"), ("host", "127.0.0.1:4000")],
                TokenIn::Query,
                false,
            ),
            (
                &page,
                vec![("host", "127.0.0.1:4000"), ("sec-fetch-site", "cross-site")],
                TokenIn::Query,
                false,
            ),
            (
                &page,
                vec![("host", "127.0.0.1:4000"), ("sec-fetch-site", "same-site")],
                TokenIn::Query,
                false,
            ),
            (
                &page,
                vec![
                    ("host", "127.0.0.1:4000"),
                    ("origin", "http://evil.example"),
                ],
                TokenIn::Query,
                false,
            ),
            (
                &page,
                vec![("host", "127.0.0.1:4000"), ("origin", "null")],
                TokenIn::Query,
                false,
            ),
        ];
        for (target, headers, token_in, admitted) in cases {
            let result = guard.admit(&request("GET", target, &headers), token_in);
            assert_eq!(result.is_ok(), admitted, "{target} {headers:?}: {result:?}");
        }
    }

    /// The API takes the token from its header only.
    #[test]
    fn the_api_takes_its_token_from_the_header_only() {
        let token = "t".repeat(64);
        let guard = Guard::new(token.clone(), "127.0.0.1:4000".parse().unwrap());
        let page = format!("/?token={token}");
        let in_query = [("host", "127.0.0.1:4000")];
        assert!(
            guard
                .admit(&request("GET", &page, &in_query), TokenIn::Header)
                .is_err()
        );
        let in_header = [
            ("host", "127.0.0.1:4000"),
            ("origin", "http://127.0.0.1:4000"),
            ("sec-fetch-site", "same-origin"),
            ("x-pagent-token", token.as_str()),
        ];
        assert_eq!(
            guard.admit(&request("GET", "/api/loops", &in_header), TokenIn::Header),
            Ok(())
        );
    }

    /// The redirect file's navigation reaches the page, and only the page.
    #[test]
    fn the_redirect_navigation_reaches_the_page_and_only_the_page() {
        let token = "t".repeat(64);
        let guard = Guard::new(token.clone(), "127.0.0.1:4000".parse().unwrap());
        let page = format!("/?token={token}");
        let navigation = [
            ("host", "127.0.0.1:4000"),
            ("sec-fetch-site", "cross-site"),
            ("sec-fetch-mode", "navigate"),
            ("sec-fetch-dest", "document"),
        ];
        assert_eq!(
            guard.admit(&request("GET", &page, &navigation), TokenIn::Page),
            Ok(())
        );
        let framed = [
            navigation[0],
            navigation[1],
            navigation[2],
            ("sec-fetch-dest", "iframe"),
        ];
        assert!(
            guard
                .admit(&request("GET", &page, &framed), TokenIn::Page)
                .is_err()
        );
        assert!(
            guard
                .admit(&request("GET", &page, &navigation), TokenIn::Query)
                .is_err()
        );
        assert!(
            guard
                .admit(&request("GET", "/", &navigation), TokenIn::Page)
                .is_err()
        );
    }

    #[test]
    fn a_wrong_or_short_token_is_refused() {
        let token = "t".repeat(64);
        let guard = Guard::new(token.clone(), "127.0.0.1:4000".parse().unwrap());
        let ok = [("host", "127.0.0.1:4000")];
        let wrong = format!("/?token={}", "u".repeat(64));
        assert!(
            guard
                .admit(&request("GET", &wrong, &ok), TokenIn::Query)
                .is_err()
        );
        let short = format!("/?token={}", &token[..63]);
        assert!(
            guard
                .admit(&request("GET", &short, &ok), TokenIn::Query)
                .is_err()
        );
    }

    #[test]
    fn only_a_loopback_address_is_also_localhost() {
        let guard = Guard::new("t".into(), "192.0.2.7:80".parse().unwrap());
        assert!(guard.is_own_host("192.0.2.7:80"));
        assert!(!guard.is_own_host("localhost:80"));
        let v6 = Guard::new("t".into(), "[::1]:80".parse().unwrap());
        assert!(v6.is_own_host("[::1]:80") && v6.is_own_host("localhost:80"));
    }

    #[test]
    fn tokens_of_the_users_own_must_be_long_and_plain() {
        assert!(valid_token(&"a".repeat(32)));
        assert!(valid_token("0123456789abcdef-0123456789ABCDEF_"));
        assert!(!valid_token(&"a".repeat(31)));
        assert!(!valid_token(&format!("{}&x=1", "a".repeat(32))));
        assert!(!valid_token(&format!("{} ", "a".repeat(32))));
    }
}
