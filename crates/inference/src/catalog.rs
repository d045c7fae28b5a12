//! [`ModelCatalog`]: what a model costs and how much it reads and writes.
//!
//! The built-in list (`data/models.json`, compiled in) holds the prices the providers' pricing
//! pages showed on the date the file names, with the pages it took them from. Users extend or
//! correct it with [`ModelCatalog::with_model`], a file of the same format
//! ([`ModelCatalog::from_file`], [`ModelCatalog::merge`]) or the `AGENTS_MODEL_CATALOG`
//! environment variable ([`ModelCatalog::from_env`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The built-in catalog file.
const BUILTIN: &str = include_str!("../data/models.json");

/// The environment variable naming a catalog file merged over the built-in one by
/// [`ModelCatalog::from_env`].
pub const MODEL_CATALOG_ENV: &str = "AGENTS_MODEL_CATALOG";

/// One model: its limits and its prices in US dollars per million tokens.
///
/// In a catalog file the prices are `input`, `output`, `cache_read` and `cache_write`; a
/// missing cache price means the provider charges the input price for those tokens.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ModelEntry")]
pub struct ModelInfo {
    /// The model's name without a date suffix (`gpt-5.4`, `claude-sonnet-5-5`).
    pub name: String,
    /// The provider (`openai`, `anthropic`, ...).
    pub provider: String,
    /// Tokens the model reads at most (prompt and answer), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    /// Tokens the model writes at most in one answer, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u64>,
    /// Dollars per million uncached input tokens.
    #[serde(rename = "input")]
    pub input_per_million: f64,
    /// Dollars per million output tokens (reasoning tokens included).
    #[serde(rename = "output")]
    pub output_per_million: f64,
    /// Dollars per million input tokens read from the provider's prompt cache.
    #[serde(rename = "cache_read")]
    pub cache_read_per_million: f64,
    /// Dollars per million input tokens written to the provider's prompt cache.
    #[serde(rename = "cache_write")]
    pub cache_write_per_million: f64,
}

impl ModelInfo {
    /// A model with input and output prices; cache reads and writes cost the input price
    /// until set with [`with_cache_prices`](Self::with_cache_prices).
    pub fn new(
        name: impl Into<String>,
        provider: impl Into<String>,
        input_per_million: f64,
        output_per_million: f64,
    ) -> Self {
        Self {
            name: name.into(),
            provider: provider.into(),
            context_window: None,
            max_output_tokens: None,
            input_per_million,
            output_per_million,
            cache_read_per_million: input_per_million,
            cache_write_per_million: input_per_million,
        }
    }

    /// Sets the cache-read and cache-write prices (dollars per million tokens).
    pub fn with_cache_prices(mut self, read_per_million: f64, write_per_million: f64) -> Self {
        self.cache_read_per_million = read_per_million;
        self.cache_write_per_million = write_per_million;
        self
    }

    /// Sets the context window and the output limit.
    pub fn with_limits(mut self, context_window: u64, max_output_tokens: u64) -> Self {
        self.context_window = Some(context_window);
        self.max_output_tokens = Some(max_output_tokens);
        self
    }
}

/// A model as written in a catalog file (cache prices optional).
#[derive(Deserialize)]
struct ModelEntry {
    name: String,
    provider: String,
    #[serde(default)]
    context_window: Option<u64>,
    #[serde(default)]
    max_output_tokens: Option<u64>,
    input: f64,
    output: f64,
    #[serde(default)]
    cache_read: Option<f64>,
    #[serde(default)]
    cache_write: Option<f64>,
}

impl TryFrom<ModelEntry> for ModelInfo {
    type Error = String;

    fn try_from(entry: ModelEntry) -> Result<Self, String> {
        let name = entry.name.trim().to_owned();
        if name.is_empty() {
            return Err("a model has an empty `name`".into());
        }
        let prices = [
            ("input", Some(entry.input)),
            ("output", Some(entry.output)),
            ("cache_read", entry.cache_read),
            ("cache_write", entry.cache_write),
        ];
        for (field, price) in prices {
            if let Some(price) = price.filter(|p| !(p.is_finite() && *p >= 0.0)) {
                return Err(format!(
                    "model `{name}`: `{field}` is {price}; a price is a dollar amount of zero or more"
                ));
            }
        }
        Ok(ModelInfo {
            name,
            provider: entry.provider,
            context_window: entry.context_window,
            max_output_tokens: entry.max_output_tokens,
            input_per_million: entry.input,
            output_per_million: entry.output,
            cache_read_per_million: entry.cache_read.unwrap_or(entry.input),
            cache_write_per_million: entry.cache_write.unwrap_or(entry.input),
        })
    }
}

/// A catalog file: the models and where their prices came from.
#[derive(Deserialize)]
struct CatalogFile {
    #[serde(default)]
    prices_taken: Option<String>,
    models: Vec<ModelInfo>,
}

/// Models by name, with a lookup that understands dated and prefixed names.
///
/// ```
/// use inference::{ModelCatalog, ModelInfo, Usage};
///
/// let catalog = ModelCatalog::builtin()
///     .with_model(ModelInfo::new("my-local-model", "llama.cpp", 0.0, 0.0));
/// let sonnet = catalog.lookup("claude-sonnet-4-5-20250929").unwrap();
/// assert_eq!(sonnet.name, "claude-sonnet-4-5");
/// assert!(catalog.lookup("gpt-5.4-2026-03-05").is_some());
/// assert!(catalog.lookup("no-such-model").is_none());
///
/// let cost = Usage::new(1_000_000, 0).cost(&sonnet);
/// assert_eq!(cost.total_usd(), sonnet.input_per_million);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModelCatalog {
    models: BTreeMap<String, ModelInfo>,
    prices_taken: Option<String>,
}

impl ModelCatalog {
    /// An empty catalog.
    pub fn new() -> Self {
        Self::default()
    }

    /// The catalog compiled into this crate (`data/models.json`): current OpenAI and
    /// Anthropic models with the prices their pricing pages showed on
    /// [`prices_taken`](Self::prices_taken).
    pub fn builtin() -> Self {
        match Self::parse(BUILTIN) {
            Ok(catalog) => catalog,
            // A unit test parses the file; this branch is for a hand-edited build only.
            Err(error) => {
                tracing::error!(%error, "the built-in model catalog is invalid; it is left empty");
                Self::default()
            }
        }
    }

    /// The models of a catalog file (the format of `data/models.json`: an object with a
    /// `models` list).
    ///
    /// # Errors
    /// [`CatalogError::Read`] when the file cannot be read, [`CatalogError::Invalid`] when it
    /// is not a catalog (the message names the model or field).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, CatalogError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| CatalogError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&text).map_err(|source| CatalogError::Invalid {
            path: path.to_owned(),
            source,
        })
    }

    /// The built-in catalog with the file named by `AGENTS_MODEL_CATALOG` (if set) merged
    /// over it.
    ///
    /// # Errors
    /// As [`from_file`](Self::from_file) for the named file.
    pub fn from_env() -> Result<Self, CatalogError> {
        Self::from_env_with(|name| std::env::var(name).ok())
    }

    fn from_env_with(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, CatalogError> {
        let builtin = Self::builtin();
        match lookup(MODEL_CATALOG_ENV).filter(|p| !p.trim().is_empty()) {
            Some(path) => Ok(builtin.merge(Self::from_file(path.trim())?)),
            None => Ok(builtin),
        }
    }

    fn parse(text: &str) -> Result<Self, serde_json::Error> {
        let file: CatalogFile = serde_json::from_str(text)?;
        Ok(Self {
            models: file
                .models
                .into_iter()
                .map(|m| (m.name.to_ascii_lowercase(), m))
                .collect(),
            prices_taken: file.prices_taken,
        })
    }

    /// Adds a model, replacing one of the same name.
    pub fn with_model(mut self, model: ModelInfo) -> Self {
        self.models.insert(model.name.to_ascii_lowercase(), model);
        self
    }

    /// This catalog with every model of `other` added (`other` wins for a name in both).
    pub fn merge(mut self, other: ModelCatalog) -> Self {
        self.models.extend(other.models);
        self
    }

    /// The date the built-in prices were taken (`YYYY-MM-DD`), when the file says.
    pub fn prices_taken(&self) -> Option<&str> {
        self.prices_taken.as_deref()
    }

    /// Every model, by name.
    pub fn models(&self) -> impl Iterator<Item = &ModelInfo> {
        self.models.values()
    }

    /// The model called `model`, tolerant of what providers and users add to a name: a
    /// provider prefix (`anthropic/claude-sonnet-4-5`), a date suffix (`gpt-4o-2024-08-06`,
    /// `claude-sonnet-4-5-20250929`, `...@20250929`), `-latest`, and letter case.
    pub fn lookup(&self, model: &str) -> Option<ModelInfo> {
        let name = model.trim().to_ascii_lowercase();
        let name = name.rsplit_once('/').map_or(name.as_str(), |(_, n)| n);
        let name = name.split_once('@').map_or(name, |(n, _)| n);
        let mut candidate = name;
        loop {
            if let Some(info) = self.models.get(candidate) {
                return Some(info.clone());
            }
            candidate = strip_version_suffix(candidate)?;
        }
    }
}

/// `name` without its last `-YYYYMMDD`, `-YYYY-MM-DD` or `-latest`, if it has one.
fn strip_version_suffix(name: &str) -> Option<&str> {
    if let Some(rest) = name.strip_suffix("-latest") {
        return Some(rest);
    }
    let (rest, last) = name.rsplit_once('-')?;
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    if digits(last, 8) {
        return Some(rest);
    }
    // -YYYY-MM-DD: three numeric segments
    let (rest2, month) = rest.rsplit_once('-')?;
    let (rest3, year) = rest2.rsplit_once('-')?;
    (digits(last, 2) && digits(month, 2) && digits(year, 4)).then_some(rest3)
}

/// A catalog file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// The file cannot be read.
    #[error("cannot read the model catalog `{}`; check the path (AGENTS_MODEL_CATALOG names it when set)", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a catalog.
    #[error("the model catalog `{}` is not valid; it must be a JSON object with a `models` list in the format of the built-in catalog", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong, with its line and column.
        #[source]
        source: serde_json::Error,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_catalog_parses_and_prices_every_model() {
        let catalog = ModelCatalog::parse(BUILTIN).unwrap();
        assert!(catalog.models().count() >= 100);
        assert!(catalog.prices_taken().is_some());
        for model in catalog.models() {
            assert!(model.input_per_million > 0.0, "{}", model.name);
            assert!(model.output_per_million > 0.0, "{}", model.name);
            assert!(
                model.cache_read_per_million <= model.input_per_million,
                "{}",
                model.name
            );
            assert!(["openai", "anthropic"].contains(&model.provider.as_str()));
        }
        assert_eq!(ModelCatalog::builtin(), catalog);
        // where the data came from, and when
        let file: serde_json::Value = serde_json::from_str(BUILTIN).unwrap();
        let source = &file["sources"]["genai-prices"];
        assert!(source["version"].as_str().is_some_and(|v| !v.is_empty()));
        assert_eq!(source["prices_as_of"].as_str(), catalog.prices_taken());
    }

    #[test]
    fn the_models_people_run_have_prices_previous_generations_included() {
        let catalog = ModelCatalog::builtin();
        // (model as a request names it, input, output, cache read) per million tokens, as the
        // genai-prices data lists them
        let expected = [
            ("gpt-4o-mini", 0.15, 0.6, 0.075),
            ("gpt-4o-mini-2024-07-18", 0.15, 0.6, 0.075),
            ("gpt-4o", 2.5, 10.0, 1.25),
            ("gpt-4.1", 2.0, 8.0, 0.5),
            ("gpt-4.1-mini", 0.4, 1.6, 0.1),
            ("gpt-5", 1.25, 10.0, 0.125),
            ("gpt-5-mini", 0.25, 2.0, 0.025),
            ("o3", 2.0, 8.0, 0.5),
            ("o4-mini", 1.1, 4.4, 0.275),
            ("gpt-3.5-turbo", 0.5, 1.5, 0.5),
            ("claude-3-haiku-20240307", 0.25, 1.25, 0.03),
            ("claude-3-5-sonnet-20241022", 3.0, 15.0, 0.3),
            ("claude-3-5-haiku-latest", 0.8, 4.0, 0.08),
            ("claude-3-opus-latest", 15.0, 75.0, 1.5),
            ("claude-opus-4-1", 15.0, 75.0, 1.5),
            ("claude-sonnet-4-5-20250929", 3.0, 15.0, 0.3),
            ("claude-haiku-4-5", 1.0, 5.0, 0.1),
        ];
        for (name, input, output, cache_read) in expected {
            let model = catalog
                .lookup(name)
                .unwrap_or_else(|| panic!("{name} has no price"));
            assert_eq!(
                (
                    model.input_per_million,
                    model.output_per_million,
                    model.cache_read_per_million
                ),
                (input, output, cache_read),
                "{name}"
            );
        }
        // Anthropic bills cache writes (the 5-minute write), OpenAI does not.
        assert_eq!(
            catalog
                .lookup("claude-3-haiku")
                .unwrap()
                .cache_write_per_million,
            0.3
        );
        assert_eq!(
            catalog.lookup("gpt-4.1").unwrap().cache_write_per_million,
            2.0
        );
        // Embeddings and audio are not priced per input and output token: not listed.
        assert!(catalog.lookup("text-embedding-3-small").is_none());
        assert!(catalog.lookup("whisper-1").is_none());
    }

    #[test]
    fn lookup_tolerates_dates_prefixes_and_case() {
        let catalog = ModelCatalog::new()
            .with_model(ModelInfo::new("gpt-4o", "openai", 2.5, 10.0))
            .with_model(ModelInfo::new("claude-sonnet-4-5", "anthropic", 3.0, 15.0));
        for name in [
            "gpt-4o",
            "gpt-4o-2024-08-06",
            "GPT-4o",
            "openai/gpt-4o",
            "openai-compatible/gpt-4o-2024-08-06",
        ] {
            assert_eq!(catalog.lookup(name).unwrap().name, "gpt-4o", "{name}");
        }
        for name in [
            "claude-sonnet-4-5-20250929",
            "anthropic/claude-sonnet-4-5",
            "claude-sonnet-4-5@20250929",
            "claude-sonnet-4-5-latest",
        ] {
            assert_eq!(catalog.lookup(name).unwrap().name, "claude-sonnet-4-5");
        }
        // A different model is not a dated variant.
        assert!(catalog.lookup("gpt-4o-mini").is_none());
        assert!(catalog.lookup("claude-sonnet-4").is_none());
        assert!(catalog.lookup("").is_none());
        assert!(catalog.lookup("-").is_none());
    }

    #[test]
    fn a_user_file_overrides_and_extends_the_builtin_catalog() {
        let dir = std::env::temp_dir().join(format!("catalog-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("models.json");
        std::fs::write(
            &path,
            r#"{"models": [
                {"name": "gpt-5.4", "provider": "openai", "input": 1.0, "output": 2.0},
                {"name": "qwen2.5-coder", "provider": "local", "input": 0, "output": 0}
            ]}"#,
        )
        .unwrap();
        let env = |name: &str| (name == MODEL_CATALOG_ENV).then(|| path.display().to_string());
        let catalog = ModelCatalog::from_env_with(env).unwrap();
        let gpt = catalog.lookup("gpt-5.4").unwrap();
        assert_eq!(gpt.input_per_million, 1.0);
        assert_eq!(
            gpt.cache_read_per_million, 1.0,
            "missing cache prices are the input price"
        );
        assert!(catalog.lookup("qwen2.5-coder").is_some());
        assert!(
            catalog.lookup("claude-sonnet-5-5").is_some(),
            "built-in models stay"
        );

        std::fs::write(
            &path,
            r#"{"models": [{"name": "x", "provider": "p", "input": -1, "output": 0}]}"#,
        )
        .unwrap();
        let error = ModelCatalog::from_file(&path).unwrap_err();
        assert!(matches!(error, CatalogError::Invalid { .. }));
        let cause = std::error::Error::source(&error).unwrap().to_string();
        assert!(cause.contains("`input` is -1"), "{cause}");

        let missing = ModelCatalog::from_file(dir.join("missing.json")).unwrap_err();
        assert!(missing
            .to_string()
            .contains("cannot read the model catalog"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
