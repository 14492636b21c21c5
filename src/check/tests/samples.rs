//! The captured third-party streams and the hand-written id-mode streams.
