//! A typed view of the service messages a test run uses.

/// Placeholder until the typed model lands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServiceMessage {}
