//! A W3C WebDriver client for the few commands the browser tests use, over reqwest (which
//! the workspace builds anyway). Not fantoccini: it depends on Mozilla's `webdriver` crate,
//! MPL-2.0, which the project's permissive-only licence policy (deny.toml) refuses.

use std::time::Duration;

use serde_json::{json, Value};

/// The W3C name of an element reference.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// A WebDriver session.
pub struct Browser {
    http: reqwest::Client,
    base: String,
}

/// An element of the current page.
pub struct Element<'a> {
    browser: &'a Browser,
    id: String,
}

impl Browser {
    /// A new session on the driver at `driver` (`http://127.0.0.1:PORT`) with these
    /// capabilities.
    pub async fn start(driver: &str, capabilities: Value) -> Result<Self, Error> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()?;
        let answer: Value = http
            .post(format!("{driver}/session"))
            .json(&json!({ "capabilities": { "alwaysMatch": capabilities } }))
            .send()
            .await?
            .json()
            .await?;
        let id = answer["value"]["sessionId"]
            .as_str()
            .ok_or_else(|| format!("no session: {answer}"))?;
        Ok(Self {
            http,
            base: format!("{driver}/session/{id}"),
        })
    }

    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, Error> {
        let mut request = self.http.request(method, format!("{}{path}", self.base));
        if let Some(body) = body {
            request = request.json(&body);
        }
        let answer: Value = request.send().await?.json().await?;
        if let Some(error) = answer["value"]["error"].as_str() {
            return Err(format!("{path}: {error}: {}", answer["value"]["message"]).into());
        }
        Ok(answer["value"].clone())
    }

    pub async fn goto(&self, url: &str) -> Result<(), Error> {
        self.call(reqwest::Method::POST, "/url", Some(json!({ "url": url })))
            .await
            .map(drop)
    }

    pub async fn url(&self) -> Result<String, Error> {
        let value = self.call(reqwest::Method::GET, "/url", None).await?;
        Ok(value.as_str().unwrap_or_default().to_owned())
    }

    pub async fn find(&self, css: &str) -> Result<Element<'_>, Error> {
        let value = self
            .call(
                reqwest::Method::POST,
                "/element",
                Some(json!({ "using": "css selector", "value": css })),
            )
            .await?;
        let id = value[ELEMENT]
            .as_str()
            .ok_or_else(|| format!("no element {css}"))?;
        Ok(Element {
            browser: self,
            id: id.to_owned(),
        })
    }

    pub async fn count(&self, css: &str) -> Result<usize, Error> {
        let value = self
            .call(
                reqwest::Method::POST,
                "/elements",
                Some(json!({ "using": "css selector", "value": css })),
            )
            .await?;
        Ok(value.as_array().map_or(0, Vec::len))
    }

    /// Runs `script` (a function body) in the page and returns what it returns.
    pub async fn execute(&self, script: &str) -> Result<Value, Error> {
        self.call(
            reqwest::Method::POST,
            "/execute/sync",
            Some(json!({ "script": script, "args": [] })),
        )
        .await
    }

    /// The page as PNG bytes.
    pub async fn screenshot(&self) -> Result<Vec<u8>, Error> {
        let value = self.call(reqwest::Method::GET, "/screenshot", None).await?;
        decode_base64(value.as_str().unwrap_or_default())
    }

    pub async fn quit(self) -> Result<(), Error> {
        self.http.delete(&self.base).send().await?;
        Ok(())
    }
}

impl Element<'_> {
    fn path(&self, rest: &str) -> String {
        format!("/element/{}{rest}", self.id)
    }

    pub async fn click(&self) -> Result<(), Error> {
        self.browser
            .call(reqwest::Method::POST, &self.path("/click"), Some(json!({})))
            .await
            .map(drop)
    }

    pub async fn type_text(&self, text: &str) -> Result<(), Error> {
        self.browser
            .call(
                reqwest::Method::POST,
                &self.path("/value"),
                Some(json!({ "text": text })),
            )
            .await
            .map(drop)
    }

    pub async fn text(&self) -> Result<String, Error> {
        let value = self
            .browser
            .call(reqwest::Method::GET, &self.path("/text"), None)
            .await?;
        Ok(value.as_str().unwrap_or_default().to_owned())
    }

    pub async fn displayed(&self) -> Result<bool, Error> {
        let value = self
            .browser
            .call(reqwest::Method::GET, &self.path("/displayed"), None)
            .await?;
        Ok(value.as_bool().unwrap_or(false))
    }
}

fn decode_base64(text: &str) -> Result<Vec<u8>, Error> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut buffer = 0u32;
    let mut bits = 0;
    for byte in text
        .bytes()
        .filter(|b| !b.is_ascii_whitespace() && *b != b'=')
    {
        let value = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return Err(format!("not base64: {byte}").into()),
        };
        buffer = (buffer << 6) | u32::from(value);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buffer >> bits) as u8);
        }
    }
    Ok(out)
}
