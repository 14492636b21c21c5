//! The untyped message: a name and either one value or ordered attributes.

/// What follows a message's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// `##teamcity[name 'value']`.
    Value(String),
    /// `##teamcity[name a='1' b='2']`, in this order (possibly empty).
    Attrs(Vec<(String, String)>),
}

/// One service message, with unescaped values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// The message name, e.g. `testStarted`.
    pub name: String,
    /// The value or the attributes.
    pub body: Body,
}

impl Message {
    /// A message with no attributes yet.
    pub fn new(name: impl Into<String>) -> Self {
        Message {
            name: name.into(),
            body: Body::Attrs(Vec::new()),
        }
    }

    /// A single-value message such as `##teamcity[progressMessage 'text']`.
    pub fn single(name: impl Into<String>, value: impl Into<String>) -> Self {
        Message {
            name: name.into(),
            body: Body::Value(value.into()),
        }
    }

    /// Appends an attribute (builder form).
    pub fn with(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.push(key, value);
        self
    }

    /// Appends an attribute. On a single-value message, the value is dropped
    /// and the message becomes an attribute message.
    pub fn push(&mut self, key: impl Into<String>, value: impl Into<String>) {
        match &mut self.body {
            Body::Attrs(attrs) => attrs.push((key.into(), value.into())),
            Body::Value(_) => self.body = Body::Attrs(vec![(key.into(), value.into())]),
        }
    }

    /// The attribute named `key`; of several, the last, as TeamCity's and
    /// IntelliJ's parsers read it (each attribute is put into a map in turn).
    ///
    /// ```
    /// let m = tcrunner_protocol::Message::new("testStarted").with("name", "a").with("name", "b");
    /// assert_eq!(m.get("name"), Some("b"));
    /// ```
    pub fn get(&self, key: &str) -> Option<&str> {
        match &self.body {
            Body::Attrs(attrs) => attrs
                .iter()
                .rev()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str()),
            Body::Value(_) => None,
        }
    }

    /// The attributes, in order (empty for a single-value message).
    pub fn attrs(&self) -> &[(String, String)] {
        match &self.body {
            Body::Attrs(attrs) => attrs,
            Body::Value(_) => &[],
        }
    }

    /// The value of a single-value message.
    pub fn value(&self) -> Option<&str> {
        match &self.body {
            Body::Value(v) => Some(v),
            Body::Attrs(_) => None,
        }
    }
}
