//! TeamCity service messages: a model, the escaping rules, a line-exact writer
//! and a streaming push parser.
//!
//! A service message is one line of the form `##teamcity[name 'value']` or
//! `##teamcity[name key='value' key2='value2']`. This crate knows nothing about
//! processes or files; it is usable by any producer or consumer of the stream.
//!
//! - [`escape`] / [`unescape`]: the value escaping table.
//! - [`Message`]: an untyped message (name plus a value or ordered attributes).
//! - [`ServiceMessage`]: the typed view of the test-reporting messages, with
//!   conversions both ways that keep unknown attributes.
//! - [`Writer`]: writes messages and pass-through text over any `io::Write`,
//!   each message on its own line.
//! - [`Parser`]: a push parser fed arbitrary byte chunks, yielding text,
//!   messages and errors.
//!
//! ```
//! use tcrunner_protocol::{Message, Parser, ParseEvent, Writer};
//!
//! let mut writer = Writer::new(Vec::new());
//! writer.text(b"progress...").unwrap();
//! writer
//!     .message(&Message::new("testStarted").with("name", "it [works] 'quoted'"))
//!     .unwrap();
//! let out = writer.into_inner();
//! assert_eq!(
//!     String::from_utf8(out.clone()).unwrap(),
//!     "progress...\n##teamcity[testStarted name='it |[works|] |'quoted|'']\n"
//! );
//!
//! let mut parser = Parser::new();
//! let mut events = Vec::new();
//! parser.feed(&out, |event| events.push(event));
//! parser.finish(|event| events.push(event));
//! assert!(matches!(&events[1], ParseEvent::Message { message, .. } if message.get("name") == Some("it [works] 'quoted'")));
//! ```
#![deny(missing_docs)]

mod decode;
mod encode;
mod escape;
mod message;
mod model;
mod parser;
mod writer;

pub use escape::{escape, escape_into, unescape, UnescapeError};
pub use message::{Body, Message};
pub use model::{
    BlockClosed, BlockOpened, BuildProblem, BuildStatisticValue, EnteredTheMatrix, Extra,
    FlowFinished, FlowStarted, LogMessage, Marker, ModelError, NodeMessage, ServiceMessage,
    TestCount, TestFailed, TestFinished, TestIgnored, TestMetadata, TestNode, TestOutput,
    TestRetrySupport, TestStarted,
};
pub use parser::{ParseError, ParseEvent, Parser, Position};
pub use writer::{Decimal, Timestamp, Value, Writer, WriterOptions};
