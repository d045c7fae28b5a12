//! `ScriptedModel`: a model that answers from a script, for tests.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;

use crate::{InferenceError, InferenceRequest, InferenceResponse, LanguageModel};

#[derive(Default)]
struct Script {
    scripted: usize,
    responses: VecDeque<Result<InferenceResponse, InferenceError>>,
    requests: Vec<InferenceRequest>,
}

/// A model that returns scripted responses in order and records every request it gets.
///
/// Clones share the script and the record, so a test can keep one handle and give the other
/// to an agent. When the script runs out, requests fail with
/// [`InferenceError::ScriptExhausted`]. Errors can be scripted too, to test error handling.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use inference::{InferenceRequest, InferenceResponse, LanguageModel, ScriptedModel};
/// use messages::Message;
///
/// let model = ScriptedModel::new([InferenceResponse::text("hello")]);
/// let handle = model.clone();
/// let answer = model.complete(InferenceRequest::new(vec![Message::user("hi")])).await.unwrap();
/// assert_eq!(answer.content(), "hello");
/// assert_eq!(handle.requests().len(), 1);
/// assert!(model.complete(InferenceRequest::default()).await.is_err());
/// # });
/// ```
#[derive(Clone, Default)]
pub struct ScriptedModel {
    script: Arc<Mutex<Script>>,
}

impl ScriptedModel {
    /// A model answering with `responses`, in order.
    pub fn new(responses: impl IntoIterator<Item = InferenceResponse>) -> Self {
        Self::from_results(responses.into_iter().map(Ok))
    }

    /// A model answering with responses or errors, in order.
    pub fn from_results(
        results: impl IntoIterator<Item = Result<InferenceResponse, InferenceError>>,
    ) -> Self {
        let responses: VecDeque<_> = results.into_iter().collect();
        Self {
            script: Arc::new(Mutex::new(Script {
                scripted: responses.len(),
                responses,
                requests: Vec::new(),
            })),
        }
    }

    /// Adds a response to the end of the script.
    pub fn push(&self, response: InferenceResponse) {
        self.push_result(Ok(response));
    }

    /// Adds a response or an error to the end of the script.
    pub fn push_result(&self, result: Result<InferenceResponse, InferenceError>) {
        let mut script = self.lock();
        script.scripted += 1;
        script.responses.push_back(result);
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<InferenceRequest> {
        self.lock().requests.clone()
    }

    /// The last request received.
    pub fn last_request(&self) -> Option<InferenceRequest> {
        self.lock().requests.last().cloned()
    }

    /// Number of scripted responses not yet used.
    pub fn remaining(&self) -> usize {
        self.lock().responses.len()
    }

    fn lock(&self) -> MutexGuard<'_, Script> {
        // A panic while holding the lock cannot leave the script half-updated, so recover.
        self.script
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl std::fmt::Debug for ScriptedModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let script = self.lock();
        f.debug_struct("ScriptedModel")
            .field("scripted", &script.scripted)
            .field("remaining", &script.responses.len())
            .field("requests", &script.requests.len())
            .finish()
    }
}

#[async_trait]
impl LanguageModel for ScriptedModel {
    async fn complete(
        &self,
        request: InferenceRequest,
    ) -> Result<InferenceResponse, InferenceError> {
        let mut script = self.lock();
        script.requests.push(request);
        let request_number = script.requests.len();
        let scripted = script.scripted;
        script
            .responses
            .pop_front()
            .unwrap_or(Err(InferenceError::ScriptExhausted {
                scripted,
                request: request_number,
            }))
    }

    fn name(&self) -> String {
        "scripted".to_owned()
    }
}
