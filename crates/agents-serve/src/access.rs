//! `Access`: who may talk to a server, checked on every request before any route runs.
//!
//! In order, as layers of an onion (the first is the outermost):
//! 1. **Concurrency**: at most `max_concurrent` requests are handled at once; one more gets
//!    `503` with `Retry-After` instead of queueing without bound.
//! 2. **Host**: the `Host` header must name the address the server is bound to (for a
//!    loopback server: `127.0.0.1`, `localhost` or `[::1]` with its port). A page on another
//!    site that rebinds its DNS name to 127.0.0.1 sends its own name, and gets `403`.
//! 3. **Origin**: when a browser sends `Origin` it must be this server's `http://host:port`;
//!    a request made by another site's page gets `403`.
//! 4. **Token**: the request shows the access token as `Authorization: Bearer TOKEN`, as the
//!    `token` query parameter, or in the cookie the console sets. None: `401`; a wrong one:
//!    `403`. With [`Access::with_cookie_login`], a `GET` that carries a right `token`
//!    parameter is answered with a redirect to the same address without it and an
//!    `HttpOnly; SameSite=Strict` cookie, so the token leaves the address bar and history.
//! 5. **Body size**: a request body over `max_body_bytes` gets `413`.
//!
//! Every answer also carries `X-Content-Type-Options: nosniff`, `Referrer-Policy: same-origin`
//! (nothing of an address, token included, goes to another site; not `no-referrer`, under
//! which browsers send `Origin: null` on a page's own form posts, which the Origin check must
//! refuse) and `Cache-Control: no-store`.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use tokio::sync::Semaphore;
use tower_http::limit::RequestBodyLimitLayer;

use crate::error::ServeError;
use crate::token::AccessToken;

/// How many requests a server handles at once by default.
pub const DEFAULT_MAX_CONCURRENT: usize = 64;
/// The largest request body by default: 1 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 1 << 20;

/// Whether requests must show a token.
#[derive(Clone, Debug)]
pub enum Auth {
    /// Every request shows this token.
    Token(AccessToken),
    /// No token (`--no-auth`): allowed only on a loopback address.
    None,
}

/// The access rules of one server, bound to the address it listens on. Apply them to a router
/// with [`Access::protect`].
#[derive(Clone, Debug)]
pub struct Access {
    inner: Arc<Rules>,
}

#[derive(Clone, Debug)]
struct Rules {
    addr: SocketAddr,
    auth: Auth,
    hosts: Vec<String>,
    cookie: String,
    cookie_login: bool,
    max_concurrent: usize,
    max_body_bytes: usize,
    permits: Arc<Semaphore>,
}

impl Access {
    /// The rules for a server listening on `addr` (the address it is bound to, its real port
    /// when it asked for port 0).
    ///
    /// # Errors
    /// [`ServeError::NoAuthOffLoopback`] for [`Auth::None`] on an address that is not loopback.
    pub fn new(addr: SocketAddr, auth: Auth) -> Result<Self, ServeError> {
        if matches!(auth, Auth::None) && !addr.ip().is_loopback() {
            return Err(ServeError::NoAuthOffLoopback { addr });
        }
        Ok(Self {
            inner: Arc::new(Rules {
                addr,
                auth,
                hosts: default_hosts(addr),
                cookie: format!("agents_token_{}", addr.port()),
                cookie_login: false,
                max_concurrent: DEFAULT_MAX_CONCURRENT,
                max_body_bytes: DEFAULT_MAX_BODY_BYTES,
                permits: Arc::new(Semaphore::new(DEFAULT_MAX_CONCURRENT)),
            }),
        })
    }

    /// Also accept requests whose `Host` is `host` (`name:port`; `name` alone means port 80):
    /// the name other machines reach a server bound to `0.0.0.0` or a LAN address by.
    ///
    /// # Errors
    /// [`ServeError::InvalidHost`] when `host` holds characters a host name cannot.
    pub fn with_allowed_host(mut self, host: &str) -> Result<Self, ServeError> {
        let host = host.trim().to_ascii_lowercase();
        let valid = !host.is_empty()
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | ':' | '[' | ']'));
        if !valid {
            return Err(ServeError::InvalidHost { host });
        }
        self.rules().hosts.push(host);
        Ok(self)
    }

    /// Answer a `GET` with a right `token` parameter by a redirect that sets the token as an
    /// `HttpOnly; SameSite=Strict` cookie (for browsers: the console).
    pub fn with_cookie_login(mut self) -> Self {
        self.rules().cookie_login = true;
        self
    }

    /// At most `n` requests at once (at least 1); the next gets `503`.
    pub fn with_max_concurrent(mut self, n: usize) -> Self {
        let n = n.max(1);
        let rules = self.rules();
        rules.max_concurrent = n;
        rules.permits = Arc::new(Semaphore::new(n));
        self
    }

    /// Request bodies of at most `bytes`; a longer one gets `413`.
    pub fn with_max_body_bytes(mut self, bytes: usize) -> Self {
        self.rules().max_body_bytes = bytes;
        self
    }

    /// The address the rules are bound to.
    pub fn addr(&self) -> SocketAddr {
        self.inner.addr
    }

    /// The token, when requests need one.
    pub fn token(&self) -> Option<&AccessToken> {
        match &self.inner.auth {
            Auth::Token(token) => Some(token),
            Auth::None => None,
        }
    }

    /// The name of the cookie the console keeps the token in (one per port, since cookies
    /// are shared between the ports of a host).
    pub fn cookie_name(&self) -> &str {
        &self.inner.cookie
    }

    /// The address of `path` on this server with the token in it, as printed at start
    /// (`http://127.0.0.1:8080/?token=...`).
    pub fn url(&self, path: &str) -> String {
        let base = format!("http://{}{path}", self.inner.hosts[0]);
        match self.token() {
            Some(token) => {
                let separator = if path.contains('?') { '&' } else { '?' };
                format!("{base}{separator}token={}", token.expose())
            }
            None => base,
        }
    }

    /// `router` with these rules in front of every route (and its fallback).
    pub fn protect<S: Clone + Send + Sync + 'static>(&self, router: Router<S>) -> Router<S> {
        router
            .layer(RequestBodyLimitLayer::new(self.inner.max_body_bytes))
            .layer(axum::middleware::from_fn_with_state(self.clone(), check))
    }

    fn rules(&mut self) -> &mut Rules {
        Arc::make_mut(&mut self.inner)
    }
}

/// The `Host` values a server bound to `addr` answers to.
fn default_hosts(addr: SocketAddr) -> Vec<String> {
    let port = addr.port();
    let mut hosts = Vec::new();
    if addr.ip().is_loopback() {
        hosts.push(format!("127.0.0.1:{port}"));
        hosts.push(format!("localhost:{port}"));
        hosts.push(format!("[::1]:{port}"));
    } else if !addr.ip().is_unspecified() {
        hosts.push(addr.to_string());
    }
    if hosts.is_empty() {
        // 0.0.0.0 / [::]: no name is known; the URL printed uses the loopback name, which
        // also reaches it, and other names must be allowed with `with_allowed_host`.
        hosts.push(format!("127.0.0.1:{port}"));
        hosts.push(format!("localhost:{port}"));
    }
    if port == 80 {
        let bare: Vec<String> = hosts
            .iter()
            .filter_map(|host| host.strip_suffix(":80").map(str::to_owned))
            .collect();
        hosts.extend(bare);
    }
    hosts
}

/// The middleware: every check of the module documentation, in order.
async fn check(State(access): State<Access>, request: Request, next: Next) -> Response {
    let rules = &access.inner;
    let Ok(_permit) = rules.permits.clone().try_acquire_owned() else {
        let mut response = refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            "the server is handling as many requests as it may; retry in a moment",
        );
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        return response;
    };
    if let Some(refusal) =
        foreign_host(rules, request.headers()).or_else(|| foreign_origin(rules, request.headers()))
    {
        return refuse(StatusCode::FORBIDDEN, refusal);
    }
    let mut response = match authenticate(rules, &request) {
        Verdict::Pass => next.run(request).await,
        Verdict::Login { location, cookie } => login(&location, &cookie),
        Verdict::Refused(response) => response,
    };
    harden(response.headers_mut());
    response
}

/// Why the `Host` header is refused, if it is.
fn foreign_host(rules: &Rules, headers: &HeaderMap) -> Option<&'static str> {
    let host = headers
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .map(str::to_ascii_lowercase);
    match host {
        Some(host) if rules.hosts.contains(&host) => None,
        Some(_) => Some(
            "this server does not answer to that host name (DNS rebinding protection); \
             open it by the address it printed at start",
        ),
        None => Some("a request needs a Host header"),
    }
}

/// Why the `Origin` header is refused, if it is (no `Origin` is not a refusal).
fn foreign_origin(rules: &Rules, headers: &HeaderMap) -> Option<&'static str> {
    let origin = headers.get(header::ORIGIN)?;
    let allowed = origin.to_str().ok().is_some_and(|origin| {
        let origin = origin.to_ascii_lowercase();
        rules
            .hosts
            .iter()
            .any(|host| origin.strip_prefix("http://") == Some(host.as_str()))
    });
    (!allowed).then_some(
        "requests from other sites' pages are refused (Origin does not match this server)",
    )
}

enum Verdict {
    Pass,
    Login { location: String, cookie: String },
    Refused(Response),
}

fn authenticate(rules: &Rules, request: &Request) -> Verdict {
    let Auth::Token(token) = &rules.auth else {
        return Verdict::Pass;
    };
    let headers = request.headers();
    let mut shown = false;
    if let Some(value) = headers.get(header::AUTHORIZATION) {
        shown = true;
        let bearer = value
            .to_str()
            .ok()
            .and_then(|text| text.strip_prefix("Bearer "))
            .map(str::trim);
        if bearer.is_some_and(|candidate| token.matches(candidate.as_bytes())) {
            return Verdict::Pass;
        }
    }
    if let Some(candidate) = query_token(request.uri()) {
        shown = true;
        if token.matches(candidate.as_bytes()) {
            if rules.cookie_login && matches!(*request.method(), Method::GET | Method::HEAD) {
                return Verdict::Login {
                    location: without_token(request.uri()),
                    cookie: format!(
                        "{}={}; HttpOnly; SameSite=Strict; Path=/",
                        rules.cookie,
                        token.expose()
                    ),
                };
            }
            return Verdict::Pass;
        }
    }
    for candidate in cookie_values(headers, &rules.cookie) {
        shown = true;
        if token.matches(candidate.as_bytes()) {
            return Verdict::Pass;
        }
    }
    if shown {
        Verdict::Refused(refuse(
            StatusCode::FORBIDDEN,
            "the access token is wrong; use the address the server printed at start",
        ))
    } else {
        let mut response = refuse(
            StatusCode::UNAUTHORIZED,
            "this server needs its access token: open the address it printed at start \
             (with ?token=...), or send Authorization: Bearer TOKEN",
        );
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        Verdict::Refused(response)
    }
}

/// The value of the `token` query parameter, if any.
fn query_token(uri: &Uri) -> Option<&str> {
    uri.query()?
        .split('&')
        .find_map(|pair| pair.strip_prefix("token="))
}

/// `uri`'s path and query without the `token` parameter.
fn without_token(uri: &Uri) -> String {
    let path = uri.path();
    let rest: Vec<&str> = uri
        .query()
        .unwrap_or("")
        .split('&')
        .filter(|pair| !pair.is_empty() && !pair.starts_with("token="))
        .collect();
    if rest.is_empty() {
        path.to_owned()
    } else {
        format!("{path}?{}", rest.join("&"))
    }
}

/// The values of every cookie called `name`.
fn cookie_values<'a>(headers: &'a HeaderMap, name: &'a str) -> impl Iterator<Item = &'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|line| line.split(';'))
        .filter_map(move |pair| {
            let (key, value) = pair.trim().split_once('=')?;
            (key == name).then_some(value)
        })
}

fn login(location: &str, cookie: &str) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(location) {
        headers.insert(header::LOCATION, value);
    }
    if let Ok(value) = HeaderValue::from_str(cookie) {
        headers.insert(header::SET_COOKIE, value);
    }
    response
}

/// A plain-text refusal.
fn refuse(status: StatusCode, message: &'static str) -> Response {
    let mut response = (status, Body::from(format!("{message}\n"))).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    harden(response.headers_mut());
    response
}

fn harden(headers: &mut HeaderMap) {
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    headers
        .entry(header::CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
}
