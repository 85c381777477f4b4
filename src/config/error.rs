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
    /// Several problems found in one run, one per line, in file order as
    /// far as the parser found them.
    #[error("{}", lines(list))]
    Several { list: Vec<ConfigError> },
    /// A secret (bearer token, header value) could not be read.
    #[error("secret from {source_desc}: {reason}")]
    Secret { source_desc: String, reason: String },
}

fn lines(list: &[ConfigError]) -> String {
    let lines: Vec<String> = list.iter().map(ToString::to_string).collect();
    lines.join("\n")
}

impl ConfigError {
    /// One error as itself, several as [`ConfigError::Several`].
    pub fn from_list(mut list: Vec<ConfigError>) -> ConfigError {
        if list.len() == 1 {
            list.remove(0)
        } else {
            ConfigError::Several { list }
        }
    }

    /// `(line, column)`, both 1-based, when the error points into the file.
    pub fn position(&self) -> Option<(usize, usize)> {
        match self {
            ConfigError::At { line, column, .. } => Some((*line, *column)),
            ConfigError::Several { list } => list.first().and_then(ConfigError::position),
            _ => None,
        }
    }

    /// The message without the `FILE:LINE:COL:` prefix.
    pub fn message(&self) -> String {
        match self {
            ConfigError::At { message, .. } | ConfigError::Invalid { message, .. } => {
                message.clone()
            }
            ConfigError::Several { list } => {
                let messages: Vec<String> = list.iter().map(ConfigError::message).collect();
                messages.join("\n")
            }
            other => other.to_string(),
        }
    }
}
