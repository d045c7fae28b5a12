//! `FunctionTool`: a tool made from an async closure with typed arguments.

use std::future::Future;
use std::sync::Arc;

use async_trait::async_trait;
use futures::future::BoxFuture;
use futures::FutureExt;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::records::tool_effects::ToolEffects;
use crate::schema::arguments_schema;
use crate::tools::tool::{Tool, ToolContext, ToolError, ToolOutput};

type Handler =
    dyn Fn(Value, ToolContext) -> BoxFuture<'static, Result<ToolOutput, ToolError>> + Send + Sync;

/// A tool backed by an async closure. The arguments type derives `Deserialize` and
/// `JsonSchema`; its schema is what the model sees, and the model's arguments are deserialized
/// into it before the closure runs (a mismatch is an invalid-arguments error the model can fix).
///
/// Use a struct (or a map-like type) for the arguments: tool arguments are always a JSON object.
///
/// ```
/// use agents_core::tools::{FunctionTool, Tool, ToolContext, ToolError};
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct WeatherArgs {
///     city: String,
/// }
///
/// let weather = FunctionTool::new("get_weather", "Current weather for a city",
///     |args: WeatherArgs| async move { Ok::<_, ToolError>(format!("22°C and sunny in {}", args.city)) });
///
/// # let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// # runtime.block_on(async {
/// let output = weather
///     .call(serde_json::json!({"city": "Paris"}), &ToolContext::default())
///     .await?;
/// assert_eq!(output.content(), "22°C and sunny in Paris");
/// # Ok::<_, ToolError>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct FunctionTool {
    name: String,
    description: String,
    parameters: Value,
    effects: ToolEffects,
    other_names: &'static [&'static str],
    handler: Arc<Handler>,
}

impl FunctionTool {
    /// A tool calling `function` with the deserialized arguments.
    pub fn new<Args, F, Fut, R, E>(
        name: impl Into<String>,
        description: impl Into<String>,
        function: F,
    ) -> Self
    where
        Args: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(Args) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, E>> + Send + 'static,
        R: Into<ToolOutput>,
        E: Into<ToolError>,
    {
        Self::with_context(name, description, move |args: Args, _context| {
            function(args)
        })
    }

    /// A tool calling `function` with the deserialized arguments and the calling agent's
    /// [`ToolContext`] (agent id, step number, metadata, cancellation token).
    pub fn with_context<Args, F, Fut, R, E>(
        name: impl Into<String>,
        description: impl Into<String>,
        function: F,
    ) -> Self
    where
        Args: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(Args, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, E>> + Send + 'static,
        R: Into<ToolOutput>,
        E: Into<ToolError>,
    {
        let handler = move |arguments: Value, context: ToolContext| match serde_json::from_value::<
            Args,
        >(arguments)
        {
            Ok(args) => function(args, context)
                .map(|result| result.map(Into::into).map_err(Into::into))
                .boxed(),
            Err(error) => {
                futures::future::ready(Err(ToolError::invalid_arguments(error.to_string()))).boxed()
            }
        };
        Self {
            name: name.into(),
            description: description.into(),
            parameters: arguments_schema::<Args>(),
            effects: ToolEffects::default(),
            other_names: &[],
            handler: Arc::new(handler),
        }
    }

    /// A tool with a hand-written JSON Schema whose closure receives the raw JSON arguments
    /// (after the executor checked them against `parameters`).
    pub fn untyped<F, Fut, R, E>(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: Value,
        function: F,
    ) -> Self
    where
        F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, E>> + Send + 'static,
        R: Into<ToolOutput>,
        E: Into<ToolError>,
    {
        let handler = move |arguments: Value, context: ToolContext| {
            function(arguments, context)
                .map(|result| result.map(Into::into).map_err(Into::into))
                .boxed()
        };
        Self {
            name: name.into(),
            description: description.into(),
            parameters,
            effects: ToolEffects::default(),
            other_names: &[],
            handler: Arc::new(handler),
        }
    }

    /// A copy whose schema is `parameters` instead of the generated one (for hand-tuned
    /// descriptions; arguments are still deserialized into the closure's type).
    pub fn with_parameters(mut self, parameters: Value) -> Self {
        self.parameters = parameters;
        self
    }

    /// A copy that declares these effects (default [`ToolEffects::SideEffecting`]): say
    /// [`ToolEffects::ReadOnly`] for a tool that only reads, so that the loop may run it where
    /// running an unintended or repeated call must be harmless.
    pub fn with_effects(mut self, effects: ToolEffects) -> Self {
        self.effects = effects;
        self
    }

    /// A copy with these [other names](Tool::other_names): names other toolsets give a tool
    /// doing this one's job, so that a model calling one of them is pointed to this tool.
    pub fn with_other_names(mut self, names: &'static [&'static str]) -> Self {
        self.other_names = names;
        self
    }
}

#[async_trait]
impl Tool for FunctionTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Value {
        self.parameters.clone()
    }

    fn effects(&self) -> ToolEffects {
        self.effects
    }

    fn other_names(&self) -> &[&str] {
        self.other_names
    }

    // Written out rather than `async fn`: the handler's boxed future is the call's future, so a
    // call is not boxed a second time.
    fn call<'life0, 'life1, 'async_trait>(
        &'life0 self,
        arguments: Value,
        context: &'life1 ToolContext,
    ) -> BoxFuture<'async_trait, Result<ToolOutput, ToolError>>
    where
        'life0: 'async_trait,
        'life1: 'async_trait,
        Self: 'async_trait,
    {
        (self.handler)(arguments, context.clone())
    }
}

impl std::fmt::Debug for FunctionTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FunctionTool")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("parameters", &self.parameters)
            .field("effects", &self.effects)
            .field("other_names", &self.other_names)
            .finish_non_exhaustive()
    }
}
