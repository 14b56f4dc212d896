//! Fault scripts for the loopback server: which request gets which injected failure, and
//! their one-rule-per-line text form.
//!
//! A line is `<METHOD> <template> #<n> <fault>` or `* #<n> <fault>`, where `<template>` is a
//! route template such as `/repos/{o}/{r}/pulls/{n}/comments`, `#<n>` picks the nth
//! matching request (1-based) and `#*` every matching request. Faults: `status <code>`,
//! `secondary-403 [retry-after <s>]`, `429 [retry-after <s>]`, `delay <ms>`, `truncate`,
//! `malformed`, `drop`, `exhaust`, and for `POST /graphql` `graphql-rate-limited` and
//! `graphql-error`. Blank lines and lines starting with `#` are ignored.

use std::fmt;
use std::str::FromStr;

/// One injected failure.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fault {
    /// Answer this HTTP status (400 to 599) before the handler runs.
    Status(u16),
    /// A secondary rate limit as 403, before the handler runs.
    Secondary403 {
        /// The `Retry-After` header, in seconds, when set.
        retry_after: Option<u64>,
    },
    /// A secondary rate limit as 429, before the handler runs.
    TooManyRequests {
        /// The `Retry-After` header, in seconds, when set.
        retry_after: Option<u64>,
    },
    /// Run the handler, then wait this long before answering.
    Delay {
        /// The wait in milliseconds.
        millis: u64,
    },
    /// Run the handler, then send a `Content-Length` larger than the body sent.
    Truncate,
    /// Run the handler, then replace the body with text that is not JSON.
    Malformed,
    /// Run the handler, then close the connection without answering.
    Drop,
    /// Spend the whole primary rate limit and answer as primary exhaustion (403).
    Exhaust,
    /// GraphQL's own limit: `200` with `errors: [{type: RATE_LIMITED}]` and no data,
    /// before the handler runs.
    GraphqlRateLimited,
    /// Run the handler, then answer GitHub's GraphQL failure: `200` with `data: null` and
    /// an error ("Something went wrong while executing your query").
    GraphqlError,
}

impl Fault {
    /// Whether the fault answers before the handler runs (so nothing is applied).
    pub fn answers_before_handler(&self) -> bool {
        matches!(
            self,
            Self::Status(_)
                | Self::Secondary403 { .. }
                | Self::TooManyRequests { .. }
                | Self::Exhaust
                | Self::GraphqlRateLimited
        )
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let retry = |f: &mut fmt::Formatter<'_>, after: &Option<u64>| match after {
            Some(secs) => write!(f, " retry-after {secs}"),
            None => Ok(()),
        };
        match self {
            Self::Status(code) => write!(f, "status {code}"),
            Self::Secondary403 { retry_after } => {
                f.write_str("secondary-403")?;
                retry(f, retry_after)
            }
            Self::TooManyRequests { retry_after } => {
                f.write_str("429")?;
                retry(f, retry_after)
            }
            Self::Delay { millis } => write!(f, "delay {millis}"),
            Self::Truncate => f.write_str("truncate"),
            Self::Malformed => f.write_str("malformed"),
            Self::Drop => f.write_str("drop"),
            Self::Exhaust => f.write_str("exhaust"),
            Self::GraphqlRateLimited => f.write_str("graphql-rate-limited"),
            Self::GraphqlError => f.write_str("graphql-error"),
        }
    }
}

/// One rule: the requests it matches and the fault it injects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultRule {
    /// A method and route template (`GET /repos/{o}/{r}/pulls/{n}/commits`), or `*` for
    /// every request.
    pub route: String,
    /// The nth matching request, 1-based; 0 means every matching request.
    pub call: u64,
    /// What happens to that request.
    pub fault: Fault,
}

impl FaultRule {
    /// Whether the rule applies to requests of this route template.
    pub fn matches(&self, template: &str) -> bool {
        self.route == "*" || self.route == template
    }
}

impl fmt::Display for FaultRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.call == 0 {
            write!(f, "{} #* {}", self.route, self.fault)
        } else {
            write!(f, "{} #{} {}", self.route, self.call, self.fault)
        }
    }
}

/// An ordered list of fault rules; the first rule that fires on a request applies.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultScript {
    /// The rules, in script order.
    pub rules: Vec<FaultRule>,
}

impl FaultScript {
    /// A script without rules: no fault is injected.
    pub fn none() -> Self {
        Self::default()
    }

    /// A script of these rules.
    pub fn new(rules: Vec<FaultRule>) -> Self {
        Self { rules }
    }
}

impl fmt::Display for FaultScript {
    /// One rule per line, in the form [`FaultScript::from_str`] reads.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, rule) in self.rules.iter().enumerate() {
            if index > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{rule}")?;
        }
        Ok(())
    }
}

/// A fault-script line that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("fault script line {line}: {message}: `{text}`")]
pub struct ParseFaultError {
    /// The line number, 1-based.
    pub line: usize,
    /// The line as written.
    pub text: String,
    /// What was wrong.
    pub message: String,
}

impl FromStr for FaultScript {
    type Err = ParseFaultError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let mut rules = Vec::new();
        for (index, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let rule = parse_rule(line).map_err(|message| ParseFaultError {
                line: index + 1,
                text: line.to_owned(),
                message,
            })?;
            rules.push(rule);
        }
        Ok(Self { rules })
    }
}

impl FromStr for FaultRule {
    type Err = ParseFaultError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        parse_rule(text.trim()).map_err(|message| ParseFaultError {
            line: 1,
            text: text.trim().to_owned(),
            message,
        })
    }
}

/// One rule line, or what is wrong with it.
fn parse_rule(line: &str) -> Result<FaultRule, String> {
    let mut words = line.split_whitespace();
    let first = words.next().ok_or("empty rule")?;
    let route = if first == "*" {
        first.to_owned()
    } else {
        let method_ok = first.chars().all(|c| c.is_ascii_uppercase());
        if !method_ok {
            return Err(format!(
                "expected an HTTP method in capitals or `*`, found `{first}`"
            ));
        }
        let template = words
            .next()
            .ok_or_else(|| format!("expected a route template after `{first}`"))?;
        if !template.starts_with('/') {
            return Err(format!(
                "expected a route template starting with `/`, found `{template}`"
            ));
        }
        format!("{first} {template}")
    };
    let call_word = words
        .next()
        .ok_or("expected `#<n>` or `#*` after the route")?;
    let call = match call_word.strip_prefix('#') {
        Some("*") => 0,
        Some(number) => match number.parse::<u64>() {
            Ok(0) | Err(_) => {
                return Err(format!(
                    "expected `#<n>` with n >= 1 or `#*`, found `{call_word}`"
                ));
            }
            Ok(n) => n,
        },
        None => {
            return Err(format!(
                "expected `#<n>` or `#*` after the route, found `{call_word}`"
            ));
        }
    };
    let rest: Vec<&str> = words.collect();
    let fault = parse_fault(&rest)?;
    Ok(FaultRule { route, call, fault })
}

fn parse_fault(words: &[&str]) -> Result<Fault, String> {
    let number = |word: Option<&&str>, what: &str| -> Result<u64, String> {
        let word = word.ok_or_else(|| format!("expected {what}"))?;
        word.parse::<u64>()
            .map_err(|_| format!("expected {what}, found `{word}`"))
    };
    let retry_after = |rest: &[&str]| -> Result<Option<u64>, String> {
        match rest {
            [] => Ok(None),
            ["retry-after", secs] => number(Some(secs), "seconds after `retry-after`").map(Some),
            _ => Err(format!(
                "expected nothing or `retry-after <s>`, found `{}`",
                rest.join(" ")
            )),
        }
    };
    let no_argument = |fault: Fault, rest: &[&str]| {
        if rest.is_empty() {
            Ok(fault)
        } else {
            Err(format!(
                "`{fault}` takes no argument, found `{}`",
                rest.join(" ")
            ))
        }
    };
    let Some((name, rest)) = words.split_first() else {
        return Err("expected a fault after the call".to_owned());
    };
    match *name {
        "status" => {
            let code = number(rest.first(), "an HTTP status after `status`")?;
            if rest.len() > 1 {
                return Err(format!(
                    "`status` takes one code, found `{}`",
                    rest.join(" ")
                ));
            }
            match u16::try_from(code) {
                Ok(code) if (400..=599).contains(&code) => Ok(Fault::Status(code)),
                _ => Err(format!("status {code} is not an error status (400-599)")),
            }
        }
        "secondary-403" => Ok(Fault::Secondary403 {
            retry_after: retry_after(rest)?,
        }),
        "429" => Ok(Fault::TooManyRequests {
            retry_after: retry_after(rest)?,
        }),
        "delay" => {
            let millis = number(rest.first(), "milliseconds after `delay`")?;
            if rest.len() > 1 {
                return Err(format!(
                    "`delay` takes one value, found `{}`",
                    rest.join(" ")
                ));
            }
            Ok(Fault::Delay { millis })
        }
        "truncate" => no_argument(Fault::Truncate, rest),
        "malformed" => no_argument(Fault::Malformed, rest),
        "drop" => no_argument(Fault::Drop, rest),
        "exhaust" => no_argument(Fault::Exhaust, rest),
        "graphql-rate-limited" => no_argument(Fault::GraphqlRateLimited, rest),
        "graphql-error" => no_argument(Fault::GraphqlError, rest),
        other => Err(format!(
            "unknown fault `{other}` (expected status, secondary-403, 429, delay, truncate, malformed, drop, exhaust, graphql-rate-limited or graphql-error)"
        )),
    }
}
