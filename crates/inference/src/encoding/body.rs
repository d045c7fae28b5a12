//! `RequestBody`: a request body as a chain of shared chunks, sent with a `Content-Length`.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Frame, SizeHint};

/// A JSON request body as the chunks it is sent in, in order: the bytes of messages written
/// for an earlier request are shared, not copied. Cloning is cheap (one reference count), and
/// every attempt of a retried request sends the same bytes.
///
/// ```
/// use inference::{InferenceRequest, Message, OpenAiCompatible};
///
/// let model = OpenAiCompatible::new("http://127.0.0.1:8080/v1", None, "qwen").unwrap();
/// let request = InferenceRequest::new(vec![Message::user("hi")]);
/// let body = model.encode_request(&request, false).unwrap();
/// assert_eq!(body.len(), body.to_vec().len());
/// assert!(String::from_utf8(body.to_vec()).unwrap().starts_with(r#"{"model":"qwen","messages":["#));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestBody {
    chunks: Arc<[Bytes]>,
    len: usize,
}

impl RequestBody {
    /// A body of these chunks (empty ones are dropped).
    pub(crate) fn from_chunks(chunks: Vec<Bytes>) -> Self {
        let chunks: Arc<[Bytes]> = chunks.into_iter().filter(|c| !c.is_empty()).collect();
        let len = chunks.iter().map(Bytes::len).sum();
        Self { chunks, len }
    }

    /// Its length in bytes (the `Content-Length` sent).
    pub fn len(&self) -> usize {
        self.len
    }

    /// True for an empty body.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The chunks, in order.
    pub fn chunks(&self) -> &[Bytes] {
        &self.chunks
    }

    /// The body in one buffer (a copy; for tests and logs).
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len);
        for chunk in self.chunks.iter() {
            out.extend_from_slice(chunk);
        }
        out
    }

    /// The body for one attempt, as the providers send it: its chunks, with an exact size, so
    /// the request carries a `Content-Length` and is never sent chunked. For sending an
    /// encoded request with a `reqwest` client of your own (the benchmarks time the transfer
    /// this way).
    pub fn for_attempt(&self) -> reqwest::Body {
        reqwest::Body::wrap(Chunks {
            chunks: Arc::clone(&self.chunks),
            next: 0,
            remaining: self.len as u64,
        })
    }
}

impl From<Vec<u8>> for RequestBody {
    fn from(bytes: Vec<u8>) -> Self {
        Self::from_chunks(vec![Bytes::from(bytes)])
    }
}

/// One attempt's reading of a [`RequestBody`].
struct Chunks {
    chunks: Arc<[Bytes]>,
    next: usize,
    remaining: u64,
}

impl http_body::Body for Chunks {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let Some(chunk) = self.chunks.get(self.next).cloned() else {
            return Poll::Ready(None);
        };
        self.next += 1;
        self.remaining = self.remaining.saturating_sub(chunk.len() as u64);
        Poll::Ready(Some(Ok(Frame::data(chunk))))
    }

    fn is_end_stream(&self) -> bool {
        self.next >= self.chunks.len()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_keep_their_order_and_length() {
        let body = RequestBody::from_chunks(vec![
            Bytes::from_static(b"{\"a\":"),
            Bytes::new(),
            Bytes::from_static(b"[1,2]}"),
        ]);
        assert_eq!(body.chunks().len(), 2, "empty chunks are dropped");
        assert_eq!(body.len(), 11);
        assert_eq!(body.to_vec(), b"{\"a\":[1,2]}");
        assert_eq!(
            body.for_attempt().as_bytes(),
            None,
            "sent as chunks, not copied"
        );
    }
}
