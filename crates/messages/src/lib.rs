//! Messages, message lists and the sectioned [`MessageStore`] that agents keep their
//! conversation in.
//!
//! This is the bottom layer of the workspace. It knows nothing about models or agents: it
//! defines what a conversation *is*.
//!
//! - [`Message`]: a role, [`Content`] (text, images, files, audio), typed [`ToolCall`]s on
//!   assistant messages, a `tool_call_id` on tool results, and free [`Metadata`].
//! - [`Messages`]: an immutable ordered list with structural sharing; cloning is O(1) and
//!   appending to a clone is O(log n).
//! - [`MessageStore`]: named sections (`messages`, `execution_buffer`, `summary`, ...) plus
//!   parameters, changed through [`SectionOperator`]s that return new stores (or in place on a
//!   store you own, through [`SectionMut`]).
//! - [`SelectedSections`] and [`AllSections`] compile a store into the list a model sees.
//!
//! ```
//! use messages::{CompileMessages, Message, MessageStore, SelectedSections, ToolCall};
//! use serde_json::json;
//!
//! let store = MessageStore::new()
//!     .section("messages")
//!     .append(Message::user("What's the weather in Paris?"))
//!     .section("execution_buffer")
//!     .append(vec![
//!         Message::assistant_tool_calls([ToolCall::new("call_1", "get_weather", json!({"city": "Paris"}))]),
//!         Message::tool_result("call_1", "get_weather", "22°C and sunny"),
//!     ]);
//!
//! let context = SelectedSections::new(["summary", "messages", "execution_buffer"]).compile(&store);
//! assert_eq!(context.len(), 3);
//! assert_eq!(
//!     context.to_transcript(),
//!     "user: What's the weather in Paris?\n\
//!      assistant -> get_weather {\"city\":\"Paris\"} [call_1]\n\
//!      tool get_weather [call_1]: 22°C and sunny\n"
//! );
//!
//! // Clearing one section never touches the others.
//! let after = store.section("execution_buffer").clear();
//! assert!(after.section("execution_buffer").is_empty());
//! assert_eq!(after.section("messages").len(), 1);
//! ```

mod compile;
mod content;
mod error;
mod excerpt;
mod message;
mod messages;
mod metadata;
mod persistent;
mod role;
mod shared_slice;
mod store;
mod tool_call;

#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use compile::{AllSections, CompileMessages, SelectedSections};
pub use content::{Content, ContentPart};
pub use error::MessagesError;
pub use excerpt::excerpt;
pub use message::Message;
pub use messages::Messages;
pub use metadata::Metadata;
pub use role::Role;
pub use shared_slice::SharedSlice;
pub use store::{MessageStore, Section, SectionMut, SectionOperator};
pub use tool_call::ToolCall;
