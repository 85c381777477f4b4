//! Every parse error of a file in one run, as far as parsing allows: after
//! an error the offending entry is blanked in the text (`yaml_span.rs`)
//! and the rest parsed again, so a person fixes three typos in one edit
//! rather than in three runs. The document is never built and written
//! back: that would expand its aliases, and the text stays the file's size.

use super::error::ConfigError;
use super::locate::{self, At, Seg};
use super::parser_message;
use super::raw::RawFile;
use super::yaml_span::blank_entry;

/// At most this many problems are reported for one file.
const MAX_ERRORS: usize = 20;

/// The file as written, or every problem the parser finds in it.
pub(super) fn parse(text: &str, origin: &str) -> Result<RawFile, ConfigError> {
    let first = match yaml_serde::from_str::<RawFile>(text) {
        Ok(raw) => return Ok(raw),
        Err(e) => e,
    };
    let mut errors = vec![parse_error(text, origin, &first)];
    let mut rest = text.to_string();
    let mut dropped: Vec<Vec<Seg>> = Vec::new();
    let mut last = without_location(&first);
    while errors.len() < MAX_ERRORS {
        let Some(node) = offending_node(&last) else {
            break;
        };
        if !blank_entry(&mut rest, &node) {
            break;
        }
        dropped.push(node);
        let next = match yaml_serde::from_str::<RawFile>(&rest) {
            Ok(_) => break,
            Err(e) => without_location(&e),
        };
        if next == last || follows_from_dropping(&next, &dropped) {
            break;
        }
        errors.push(error_at_path(text, origin, &next));
        last = next;
    }
    Err(ConfigError::from_list(errors))
}

/// The parser's message without its " at line L column C".
fn without_location(err: &yaml_serde::Error) -> String {
    let message = err.to_string();
    match err.location() {
        Some(loc) => {
            let suffix = format!(" at line {} column {}", loc.line(), loc.column());
            message.replacen(&suffix, "", 1)
        }
        None => message,
    }
}

/// The parser's own error, at the position it gives (a duplicate key at
/// its second occurrence rather than at its mapping).
pub(super) fn parse_error(text: &str, origin: &str, err: &yaml_serde::Error) -> ConfigError {
    let message = without_location(err);
    match err.location() {
        Some(loc) => {
            let (line, column) =
                duplicate_key_position(text, &message).unwrap_or((loc.line(), loc.column()));
            ConfigError::At {
                origin: origin.to_string(),
                line,
                column,
                // Never the value written (it may be a secret), never megabytes.
                message: parser_message::sanitize(&message),
            }
        }
        None => ConfigError::Invalid {
            origin: origin.to_string(),
            message: parser_message::sanitize(&message),
        },
    }
}

/// A later error (found in the file with keys dropped), placed in the
/// original text by its path.
fn error_at_path(text: &str, origin: &str, message: &str) -> ConfigError {
    let place = offending_node(message).and_then(|node| {
        let at = if message.contains("unknown field `") {
            At::Key
        } else {
            At::Value
        };
        locate::locate(text, &node, at)
    });
    let message = parser_message::sanitize(message);
    match place {
        Some((line, column)) => ConfigError::At {
            origin: origin.to_string(),
            line,
            column,
            message,
        },
        None => ConfigError::Invalid {
            origin: origin.to_string(),
            message,
        },
    }
}

/// `PATH: problem` split into the path's segments and the problem (the
/// root's problems have no path).
fn split_path(message: &str) -> (Vec<Seg>, &str) {
    if let Some((path, problem)) = message.split_once(": ") {
        if let Some(segs) = locate::parse_parser_path(path) {
            return (segs, problem);
        }
    }
    (Vec::new(), message)
}

/// The mapping entry to drop so parsing can go on past `message`: the
/// unknown key itself, or the key whose value is wrong. None when the
/// problem is not one entry (a missing or repeated key, a bad list item).
fn offending_node(message: &str) -> Option<Vec<Seg>> {
    let (mut path, problem) = split_path(message);
    if let Some(rest) = problem.strip_prefix("unknown field `") {
        let key = rest.split('`').next()?;
        path.push(Seg::Key(key.to_string()));
        return Some(path);
    }
    if problem.starts_with("missing field") || problem.starts_with("duplicate") {
        return None;
    }
    matches!(path.last(), Some(Seg::Key(_))).then_some(path)
}

/// A required key reported missing because we dropped it, or an anchor
/// unknown because we blanked where it was defined (the file as written
/// got past it): not the person's problem.
fn follows_from_dropping(message: &str, dropped: &[Vec<Seg>]) -> bool {
    if message == "unknown anchor" {
        return true;
    }
    let (mut path, problem) = split_path(message);
    let Some(key) = problem
        .strip_prefix("missing field `")
        .and_then(|r| r.split('`').next())
    else {
        return false;
    };
    path.push(Seg::Key(key.to_string()));
    dropped.contains(&path)
}

/// Position of the second `key` in "PATH: duplicate field `key`" or
/// "PATH: duplicate entry with key \"key\"" messages.
fn duplicate_key_position(text: &str, message: &str) -> Option<(usize, usize)> {
    let (path, rest) = match message.strip_prefix("duplicate ") {
        Some(rest) => (".", rest),
        None => message.split_once(": duplicate ")?,
    };
    let key = rest
        .strip_prefix("field `")
        .and_then(|r| r.split_once('`'))
        .or_else(|| {
            rest.strip_prefix("entry with key \"")
                .and_then(|r| r.split_once('"'))
        })?
        .0;
    let mut segs = locate::parse_parser_path(path)?;
    segs.push(Seg::Key(key.to_string()));
    locate::locate_nth(text, &segs, At::Key, 1)
}
