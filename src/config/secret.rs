//! Secrets: values that must never reach a log, label, span, page or error.

use super::error::ConfigError;
use std::fmt;
use std::path::PathBuf;

/// A secret value. `Debug` and `Display` print `<redacted>`; only
/// [`Secret::expose`] hands out the value, so every use is greppable.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// Where a secret lives. Read at poll time (see [`SecretSource::read`]), so a
/// rotated token file is picked up without a reload. The variable name and
/// path are not secret and may be shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretSource {
    Env(String),
    File(PathBuf),
}

impl SecretSource {
    /// The secret's current value. A file's trailing newlines are trimmed
    /// (editors and `echo` add one). An empty value is an error: sending an
    /// empty token only yields a confusing 401.
    pub fn read(&self) -> Result<Secret, ConfigError> {
        let value = match self {
            SecretSource::Env(var) => std::env::var(var).map_err(|e| ConfigError::Secret {
                source_desc: self.describe(),
                reason: match e {
                    std::env::VarError::NotPresent => "is not set".to_string(),
                    std::env::VarError::NotUnicode(_) => "is not valid UTF-8".to_string(),
                },
            })?,
            SecretSource::File(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Secret {
                    source_desc: self.describe(),
                    reason: e.to_string(),
                })?;
                trim_trailing_newlines(&text).to_string()
            }
        };
        if value.is_empty() {
            return Err(ConfigError::Secret {
                source_desc: self.describe(),
                reason: "is empty".to_string(),
            });
        }
        Ok(Secret(value))
    }

    /// "environment variable GH_TOKEN" or "file /run/secrets/gh".
    pub fn describe(&self) -> String {
        match self {
            SecretSource::Env(var) => format!("environment variable {var}"),
            SecretSource::File(path) => format!("file {}", path.display()),
        }
    }
}

pub(super) fn trim_trailing_newlines(text: &str) -> &str {
    text.trim_end_matches(['\n', '\r'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_and_display_redact() {
        let s = Secret::new("hunter2");
        assert_eq!(format!("{s:?}"), "<redacted>");
        assert_eq!(format!("{s}"), "<redacted>");
        assert_eq!(s.expose(), "hunter2");
        let nested = vec![("Authorization".to_string(), s)];
        assert!(!format!("{nested:?}").contains("hunter2"));
    }

    #[test]
    fn file_secret_trims_trailing_newline_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, " tok en \r\n\n").unwrap();
        let secret = SecretSource::File(path).read().unwrap();
        assert_eq!(secret.expose(), " tok en ");
    }

    #[test]
    fn missing_or_empty_secret_is_an_error_without_value() {
        let dir = tempfile::tempdir().unwrap();
        let missing = SecretSource::File(dir.path().join("nope"));
        let err = missing.read().unwrap_err().to_string();
        assert!(err.contains("nope"), "{err}");
        let empty = dir.path().join("empty");
        std::fs::write(&empty, "\n").unwrap();
        let err = SecretSource::File(empty).read().unwrap_err().to_string();
        assert!(err.contains("is empty"), "{err}");
        let err = SecretSource::Env("MCP_EXPORTER_TEST_SURELY_UNSET_VAR".into())
            .read()
            .unwrap_err()
            .to_string();
        assert!(err.contains("is not set"), "{err}");
    }
}
