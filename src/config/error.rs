//! What can go wrong loading a configuration or reading one of its secrets.

use std::path::PathBuf;

/// A configuration that cannot be used. Display is one line, and starts with
/// `FILE:LINE:COL:` whenever the offending YAML node is known. No variant ever
/// carries a secret's value.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{}: cannot read: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A problem at a known place in the file.
    #[error("{origin}:{line}:{column}: {message}")]
    At {
        origin: String,
        line: usize,
        column: usize,
        message: String,
    },
    /// A problem whose place in the file is unknown (should be rare).
    #[error("{origin}: {message}")]
    Invalid { origin: String, message: String },
    /// A secret (bearer token, header value) could not be read.
    #[error("secret from {source_desc}: {reason}")]
    Secret { source_desc: String, reason: String },
}

impl ConfigError {
    /// `(line, column)`, both 1-based, when the error points into the file.
    pub fn position(&self) -> Option<(usize, usize)> {
        match self {
            ConfigError::At { line, column, .. } => Some((*line, *column)),
            _ => None,
        }
    }

    /// The message without the `FILE:LINE:COL:` prefix.
    pub fn message(&self) -> String {
        match self {
            ConfigError::At { message, .. } | ConfigError::Invalid { message, .. } => {
                message.clone()
            }
            other => other.to_string(),
        }
    }
}
