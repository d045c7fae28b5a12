//! `RoundRobinProxy`: several service instances behind one URI, the way a load balancer
//! puts them in production (feature `testing`; tests, the benchmark and the example use it).
//!
//! Restate sends a service's invocations to the URI of its latest deployment, one HTTP/2
//! stream per invocation attempt. The proxy forwards each stream to the next instance in
//! turn, so two instances take sessions side by side, and Restate still runs at most one
//! invocation per session at a time.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use hyper::body::Incoming;
use hyper::server::conn::http2;
use hyper::service::service_fn;
use hyper::{Request, Uri};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// An HTTP/2 proxy on 127.0.0.1 sending each request to the next backend in turn. Stops
/// when dropped.
#[derive(Debug)]
pub struct RoundRobinProxy {
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl RoundRobinProxy {
    /// Listens on a free port of 127.0.0.1 in front of `backends` (HTTP/2 without TLS).
    ///
    /// # Errors
    /// The listener's, when no port can be bound; `InvalidInput` when `backends` is empty.
    pub async fn start(backends: Vec<SocketAddr>) -> std::io::Result<Self> {
        if backends.is_empty() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "a proxy needs at least one backend",
            ));
        }
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        let client: Client<HttpConnector, Incoming> = Client::builder(TokioExecutor::new())
            .http2_only(true)
            .build(connector);
        let backends: Arc<[SocketAddr]> = backends.into();
        let next = Arc::new(AtomicUsize::new(0));
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let _ = stream.set_nodelay(true);
                let client = client.clone();
                let backends = Arc::clone(&backends);
                let next = Arc::clone(&next);
                let service = service_fn(move |mut request: Request<Incoming>| {
                    let backend = backends[next.fetch_add(1, Ordering::Relaxed) % backends.len()];
                    let path = request
                        .uri()
                        .path_and_query()
                        .map_or("/", |path| path.as_str());
                    match format!("http://{backend}{path}").parse::<Uri>() {
                        Ok(uri) => *request.uri_mut() = uri,
                        Err(error) => tracing::warn!(%error, "unroutable request path"),
                    }
                    let client = client.clone();
                    async move { client.request(request).await }
                });
                tokio::spawn(async move {
                    if let Err(error) = http2::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(stream), service)
                        .await
                    {
                        tracing::debug!(%error, "proxied connection ended");
                    }
                });
            }
        });
        Ok(Self { addr, task })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Its URI, to register as the deployment.
    pub fn uri(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for RoundRobinProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}
