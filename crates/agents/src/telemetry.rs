//! Telemetry: the OpenTelemetry gen_ai attribute names every layer uses and, with the `otel`
//! feature, export of the spans to an OTLP/HTTP collector (Jaeger, Langfuse, Datadog,
//! Honeycomb, an OpenTelemetry Collector, ...).
//!
//! Every inference of the HTTP providers is a `chat {model}` span (see
//! [`inference::telemetry`]). Message contents are not recorded. Exported spans are grouped
//! one trace per execution (`ExecutionTraces`): the trace id is the execution id.
//!
//! ```no_run
//! # #[cfg(feature = "otel")]
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // Export to a collector on this machine until `_telemetry` is dropped (which flushes).
//! let _telemetry = agents::telemetry::init_otlp("http://127.0.0.1:4318")?;
//! // ... build and run agents ...
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "otel"))]
//! # fn main() {}
//! ```

pub use inference::telemetry::*;

#[cfg(feature = "otel")]
pub use crate::execution_traces::{trace_id_of, ExecutionTraces, MAX_HELD_SPANS};
#[cfg(feature = "otel")]
pub use otlp::{
    init_otlp, init_otlp_with_content, otlp_layer, otlp_tracer_provider, OtelGuard, TelemetryError,
};

#[cfg(feature = "otel")]
mod otlp {
    use std::time::Duration;

    use opentelemetry::trace::TracerProvider as _;
    use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
    use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
    use opentelemetry_sdk::trace::SdkTracerProvider;
    use opentelemetry_sdk::Resource;
    use tracing_subscriber::layer::SubscriberExt;

    /// How long one export may take before it is given up.
    const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);
    /// The OTLP/HTTP path of the trace signal.
    const TRACES_PATH: &str = "/v1/traces";

    /// Telemetry that cannot be set up.
    #[derive(Debug, thiserror::Error)]
    pub enum TelemetryError {
        /// The endpoint is not an `http://` or `https://` URL.
        #[error("the OTLP endpoint `{endpoint}` is not an http:// or https:// URL; pass the collector's OTLP/HTTP address, e.g. http://127.0.0.1:4318")]
        InvalidEndpoint {
            /// The endpoint given.
            endpoint: String,
        },
        /// The exporter or its HTTP client cannot be built.
        #[error("the OTLP exporter cannot be built: {message}")]
        Exporter {
            /// What failed.
            message: String,
        },
        /// Another `tracing` subscriber is already installed for the process.
        #[error("a tracing subscriber is already installed; add the OpenTelemetry layer to it instead (see `otlp_tracer_provider`)")]
        SubscriberAlreadySet {
            /// The refusal.
            #[source]
            source: tracing::subscriber::SetGlobalDefaultError,
        },
    }

    /// Keeps the export running; dropping it sends the spans still buffered and stops the
    /// exporter.
    #[must_use = "dropping the guard stops the export"]
    #[derive(Debug)]
    pub struct OtelGuard {
        provider: SdkTracerProvider,
    }

    impl OtelGuard {
        /// Sends the spans buffered so far now.
        pub fn flush(&self) {
            if let Err(error) = self.provider.force_flush() {
                tracing::warn!(%error, "OpenTelemetry spans could not be flushed");
            }
        }
    }

    impl Drop for OtelGuard {
        fn drop(&mut self) {
            if let Err(error) = self.provider.shutdown() {
                tracing::warn!(%error, "the OpenTelemetry exporter did not shut down cleanly");
            }
        }
    }

    /// Exports every `tracing` span (agent runs, `chat` inferences, tool calls) to the
    /// OTLP/HTTP collector at `endpoint`, with service name `agents`, by installing a
    /// process-wide `tracing` subscriber. `endpoint` is the collector's address
    /// (`http://127.0.0.1:4318`); `/v1/traces` is added unless it is there.
    ///
    /// This is the one process-wide setting of the library, made on purpose by the
    /// application; a program with its own subscriber adds [`otlp_layer`] with a provider
    /// from [`otlp_tracer_provider`] instead.
    ///
    /// Contents are not exported: `tracing` events inside the spans (a bash command line, an
    /// MCP server's JSON-RPC messages) are left out, as with [`init_otlp_with_content`]
    /// `(endpoint, false)`.
    ///
    /// # Errors
    /// [`TelemetryError::InvalidEndpoint`], [`TelemetryError::Exporter`], and
    /// [`TelemetryError::SubscriberAlreadySet`] when a subscriber is already installed.
    pub fn init_otlp(endpoint: &str) -> Result<OtelGuard, TelemetryError> {
        init_otlp_with_content(endpoint, false)
    }

    /// [`init_otlp`], exporting the `tracing` events inside spans too when `capture_content`
    /// is true (pair it with `Agent::with_content_capture(true)`; events may hold tool
    /// arguments, commands and messages).
    ///
    /// # Errors
    /// As [`init_otlp`].
    pub fn init_otlp_with_content(
        endpoint: &str,
        capture_content: bool,
    ) -> Result<OtelGuard, TelemetryError> {
        let provider = otlp_tracer_provider(endpoint, "agents")?;
        let subscriber =
            tracing_subscriber::registry().with(otlp_layer(&provider, capture_content));
        tracing::subscriber::set_global_default(subscriber)
            .map_err(|source| TelemetryError::SubscriberAlreadySet { source })?;
        Ok(OtelGuard { provider })
    }

    /// The `tracing` layer that turns spans into OpenTelemetry spans for `provider`. Without
    /// `capture_content` it passes spans only: the `tracing` events recorded inside them (log
    /// lines of tools and MCP servers, which may hold arguments, commands and JSON-RPC
    /// messages) never become span events, so no exported span carries contents unless the
    /// application asked for them.
    pub fn otlp_layer<S>(
        provider: &SdkTracerProvider,
        capture_content: bool,
    ) -> impl tracing_subscriber::Layer<S>
    where
        S: tracing::Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span>,
    {
        use tracing_subscriber::Layer as _;
        tracing_opentelemetry::layer()
            .with_tracer(provider.tracer("agents"))
            .with_filter(tracing_subscriber::filter::filter_fn(move |metadata| {
                capture_content || metadata.is_span()
            }))
    }

    /// A tracer provider exporting in batches to the OTLP/HTTP collector at `endpoint`
    /// (protobuf), with `service_name` as the resource's `service.name`.
    ///
    /// # Errors
    /// [`TelemetryError::InvalidEndpoint`] or [`TelemetryError::Exporter`].
    pub fn otlp_tracer_provider(
        endpoint: &str,
        service_name: &str,
    ) -> Result<SdkTracerProvider, TelemetryError> {
        let url = traces_url(endpoint)?;
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(BlockingHttp::new()?)
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(url)
            .with_timeout(EXPORT_TIMEOUT)
            .build()
            .map_err(|e| TelemetryError::Exporter {
                message: e.to_string(),
            })?;
        // One trace per execution: each step's spans get its execution's trace id on their
        // way to the batch exporter.
        let batch = opentelemetry_sdk::trace::BatchSpanProcessor::builder(exporter).build();
        Ok(SdkTracerProvider::builder()
            .with_span_processor(crate::execution_traces::ExecutionTraces::new(batch))
            .with_resource(
                Resource::builder()
                    .with_service_name(service_name.to_owned())
                    .build(),
            )
            .build())
    }

    /// `endpoint` with the traces path, after checking it is an HTTP URL.
    fn traces_url(endpoint: &str) -> Result<String, TelemetryError> {
        let trimmed = endpoint.trim().trim_end_matches('/');
        let invalid = || TelemetryError::InvalidEndpoint {
            endpoint: endpoint.to_owned(),
        };
        let rest = trimmed
            .strip_prefix("http://")
            .or_else(|| trimmed.strip_prefix("https://"))
            .ok_or_else(invalid)?;
        if rest.is_empty() || rest.starts_with('/') {
            return Err(invalid());
        }
        if trimmed.ends_with(TRACES_PATH) {
            Ok(trimmed.to_owned())
        } else {
            Ok(format!("{trimmed}{TRACES_PATH}"))
        }
    }

    /// The exporter's HTTP client: our reqwest (blocking), so that the export needs no async
    /// runtime of its own. The batch processor calls it from its own thread.
    #[derive(Debug)]
    struct BlockingHttp {
        client: reqwest::blocking::Client,
    }

    impl BlockingHttp {
        fn new() -> Result<Self, TelemetryError> {
            let failed = |message: String| TelemetryError::Exporter { message };
            // A blocking client must not be built on an async runtime's thread.
            std::thread::spawn(|| {
                reqwest::blocking::Client::builder()
                    .timeout(EXPORT_TIMEOUT)
                    .build()
            })
            .join()
            .map_err(|_| failed("the HTTP client's set-up thread panicked".into()))?
            .map(|client| Self { client })
            .map_err(|e| failed(e.to_string()))
        }
    }

    #[async_trait::async_trait]
    impl HttpClient for BlockingHttp {
        async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
            let (parts, body) = request.into_parts();
            let response = self
                .client
                .request(parts.method, parts.uri.to_string())
                .headers(parts.headers)
                .body(body.to_vec())
                .send()?;
            let mut out = Response::builder().status(response.status().as_u16());
            for (name, value) in response.headers() {
                out = out.header(name, value);
            }
            let body = response.bytes()?;
            Ok(out.body(body)?)
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn endpoints_get_the_traces_path_once() {
            assert_eq!(
                traces_url("http://127.0.0.1:4318").unwrap(),
                "http://127.0.0.1:4318/v1/traces"
            );
            assert_eq!(
                traces_url("https://collector.example/v1/traces/").unwrap(),
                "https://collector.example/v1/traces"
            );
            for bad in ["127.0.0.1:4318", "grpc://x", "http://", ""] {
                let error = traces_url(bad).unwrap_err();
                assert!(
                    error.to_string().contains("is not an http"),
                    "{bad}: {error}"
                );
            }
        }
    }
}
