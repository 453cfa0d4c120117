//! The live protocol's messages (docs/live.md) as types, and the one session logic that JSON
//! lines, WebSocket and UDP share: a client's message ([`Request`]) is read whole and checked
//! before anything is done, then answered with one [`Reply`]; a subscribed session gets
//! [`Stream`] messages.

use super::hub::{Applied, Hub, InputInfo, RunState};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Largest message (a JSON line, a WebSocket message, a datagram), bytes.
pub const MAX_MESSAGE: usize = 64 * 1024;
/// Rows are streamed to a subscribed client this often.
pub const STREAM_EVERY: Duration = Duration::from_millis(40);
/// Rows per second a subscription without an explicit `every` gets at most.
const AUTO_ROWS_PER_S: f64 = 250.0;

/// A client's message: any of these keys (at least one), checked whole before any is acted on.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a JSON object such as {\"set\": {\"hyd.U_ref\": 2.5}}")]
pub struct Request {
    /// Inputs to set at the next communication point.
    #[serde(default, deserialize_with = "numbers")]
    pub set: Option<BTreeMap<String, f64>>,
    /// Inputs handed back to their time table.
    #[serde(default, deserialize_with = "names")]
    pub release: Option<Vec<String>>,
    /// Pause (true) or resume (false).
    #[serde(default, deserialize_with = "pause")]
    pub pause: Option<bool>,
    /// Run the system again from its start.
    #[serde(default, deserialize_with = "reset")]
    pub reset: Option<bool>,
    /// Stream rows (every N-th step, `true`: automatic, `false`: stop).
    #[serde(default)]
    pub subscribe: Option<Subscribe>,
    /// The latest row.
    #[serde(default, deserialize_with = "get")]
    pub get: Option<bool>,
    /// What is served.
    #[serde(default, deserialize_with = "info")]
    pub info: Option<bool>,
    /// The access token (`[live] token`), needed for `set`, `release`, `pause` and `reset` when
    /// the server has one.
    #[serde(default)]
    pub token: Option<String>,
    /// UDP: the cookie the server gave this sender, proving its address.
    #[serde(default)]
    pub cookie: Option<String>,
}

/// `subscribe`'s value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Subscribe {
    /// `false`.
    Off,
    /// `true`: at most 250 rows/s.
    Auto,
    /// N ≥ 1: every N-th step.
    Every(u64),
}

impl<'de> Deserialize<'de> for Subscribe {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::Bool(false) => Ok(Self::Off),
            Value::Bool(true) => Ok(Self::Auto),
            v => match v.as_u64() {
                Some(n) if n >= 1 => Ok(Self::Every(n)),
                _ => Err(serde::de::Error::custom(format!(
                    "subscribe: {v} is not true, false or a whole number of steps ≥ 1"
                ))),
            },
        }
    }
}

fn flag<'de, D: Deserializer<'de>>(d: D, key: &str) -> Result<Option<bool>, D::Error> {
    match Value::deserialize(d)? {
        Value::Bool(b) => Ok(Some(b)),
        v => Err(serde::de::Error::custom(format!("{key}: {v} is not true or false"))),
    }
}
fn pause<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    flag(d, "pause")
}
fn reset<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    flag(d, "reset")
}
fn get<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    flag(d, "get")
}
fn info<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    flag(d, "info")
}

fn numbers<'de, D: Deserializer<'de>>(d: D) -> Result<Option<BTreeMap<String, f64>>, D::Error> {
    let Value::Object(map) = Value::deserialize(d)? else {
        return Err(serde::de::Error::custom("set takes an object {\"name\": number, …}"));
    };
    let mut out = BTreeMap::new();
    for (name, v) in map {
        let x = v.as_f64().ok_or_else(|| serde::de::Error::custom(format!("set: {name} = {v} is not a number")))?;
        out.insert(name, x);
    }
    Ok(Some(out))
}

fn names<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    match Value::deserialize(d)? {
        Value::String(n) => Ok(Some(vec![n])),
        Value::Array(a) => a
            .into_iter()
            .map(|n| match n {
                Value::String(s) => Ok(s),
                n => Err(serde::de::Error::custom(format!("release: {n} is not a name"))),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        v => Err(serde::de::Error::custom(format!("release: {v} is not a name or a list of names"))),
    }
}

impl Request {
    /// Parses one message; the error names what is wrong.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if !text.starts_with('{') {
            return Err(match serde_json::from_str::<serde::de::IgnoredAny>(text) {
                Err(e) => format!("not JSON ({e})"),
                Ok(_) => "a message is a JSON object, e.g. {\"set\": {\"hyd.U_ref\": 2.5}}".into(),
            });
        }
        serde_json::from_str(text).map_err(|e| {
            if e.is_syntax() || e.is_eof() {
                format!("not JSON ({e})")
            } else {
                e.to_string()
            }
        })
    }

    /// Whether the message changes the run (and needs the token when there is one).
    pub fn controls(&self) -> bool {
        self.set.is_some() || self.release.is_some() || self.pause.is_some() || self.reset == Some(true)
    }

    /// Whether it asks for anything beyond the UDP handshake.
    pub fn wants_data(&self) -> bool {
        self.get == Some(true)
            || self.info == Some(true)
            || matches!(self.subscribe, Some(Subscribe::Auto | Subscribe::Every(_)))
    }
}

/// An input's state: the value driving it now and where the value comes from.
#[derive(Debug, Clone, Serialize)]
pub struct InputState {
    /// The live value, or the latest recorded one when the table drives it (null before the
    /// first row).
    pub value: Option<f64>,
    /// `live` (set by a client) or `table` (its time table, or the last value).
    pub source: &'static str,
}

/// The run's state for clients: pause and every input.
#[derive(Debug, Clone, Serialize)]
pub struct State {
    /// Paused (or waiting for Start).
    pub paused: bool,
    /// Each live input.
    pub inputs: BTreeMap<String, InputState>,
}

/// What is served (`info`).
#[derive(Debug, Clone, Serialize)]
pub struct Info<'a> {
    /// The live inputs.
    pub inputs: &'a [InputInfo],
    /// The streamed columns after the time.
    pub columns: &'a [String],
    /// Unit of each column that has one.
    pub units: &'a BTreeMap<String, String>,
    /// Axis range of each column that has one.
    pub ranges: &'a BTreeMap<String, [f64; 2]>,
    /// Start time (s).
    pub start: f64,
    /// Stop time (s).
    pub stop: f64,
    /// Communication step (s).
    pub step: f64,
    /// Whether set/release/pause/reset need the token.
    pub token_required: bool,
    /// Whether the page has a schematic (`GET /schematic.svg`).
    pub schematic: bool,
}

/// The reply to one message: `{"ok": true, …}` or `{"error": "…"}`.
#[derive(Debug, Default, Serialize)]
pub struct Reply<'a> {
    /// True when the message was done.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ok: Option<bool>,
    /// Why it was refused (nothing was done).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Values clamped to their input's range (`[live] clamp`): the value applied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clamped: Option<BTreeMap<String, f64>>,
    /// Subscribed or not (after `subscribe`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subscribed: Option<bool>,
    /// Every how many steps rows stream (after a subscription).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub every: Option<u64>,
    /// `info`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub info: Option<Info<'a>>,
    /// Pause and inputs (with `info`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<State>,
    /// The latest row's time (`get`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub t: Option<Option<f64>>,
    /// Rows so far (`get`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published: Option<u64>,
    /// The latest row's values by column (`get`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub values: Option<BTreeMap<&'a str, f64>>,
    /// UDP: the cookie proving the sender's address.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cookie: Option<String>,
}

impl Reply<'_> {
    /// `{"error": message}`.
    pub fn error(message: impl Into<String>) -> Self {
        Self { error: Some(message.into()), ..Self::default() }
    }
    /// As JSON text.
    pub fn text(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }
}

/// Figures of the run's pacing.
#[derive(Debug, Serialize)]
struct Stats {
    steps: u64,
    overruns: u64,
    max_lateness_s: f64,
    last_step_s: f64,
    max_step_s: f64,
    skipped_rows: u64,
}

/// A row stream message.
#[derive(Debug, Serialize)]
struct Stream<'a> {
    rows: &'a [Vec<f64>],
    status: RunState,
    message: &'a str,
    stats: &'a Stats,
    state: &'a State,
}

/// A client's session: its subscription and whether it gave the token.
#[derive(Debug)]
pub struct Session {
    /// Rows sent so far (the ring's count).
    pub cursor: u64,
    /// Every how many steps.
    pub every: u64,
    /// Streaming.
    pub subscribed: bool,
    /// When rows were last sent.
    pub last_sent: Instant,
    /// Gave the token (a connection keeps it; a UDP datagram carries its own).
    pub authorized: bool,
}

impl Session {
    /// Not subscribed; a subscription streams the rows the ring holds (the dashboard's
    /// history) and then every new one.
    pub fn new(authorized: bool) -> Self {
        Self { cursor: 0, every: 1, subscribed: false, last_sent: Instant::now(), authorized }
    }
    /// Whether a subscribed session's next stream message is due.
    pub fn due(&self) -> bool {
        self.subscribed && self.last_sent.elapsed() >= STREAM_EVERY
    }
}

/// Compares a token in time independent of where they differ.
pub fn token_matches(given: &str, want: &str) -> bool {
    given.len() == want.len() && given.bytes().zip(want.bytes()).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

/// Pause and every input as they are now.
pub fn state(hub: &Hub) -> State {
    let (_, row) = hub.latest();
    let inputs = hub
        .inputs()
        .iter()
        .map(|i| {
            let state = match hub.live_value(&i.name) {
                Some(v) => InputState { value: Some(v), source: "live" },
                None => {
                    let k = hub.columns().iter().position(|c| *c == i.name);
                    InputState { value: k.and_then(|k| row.get(k + 1).copied()), source: "table" }
                }
            };
            (i.name.clone(), state)
        })
        .collect();
    State { paused: hub.control.paused(), inputs }
}

/// The reply to one message (docs/live.md). `token`: the server's access token, if any.
pub fn handle<'h>(hub: &'h Hub, token: Option<&str>, session: &mut Session, req: &Request) -> Reply<'h> {
    match act(hub, token, session, req) {
        Ok(r) => r,
        Err(e) => Reply::error(e),
    }
}

fn act<'h>(hub: &'h Hub, token: Option<&str>, session: &mut Session, req: &Request) -> Result<Reply<'h>, String> {
    if let (Some(want), Some(given)) = (token, req.token.as_deref()) {
        if !token_matches(given, want) {
            return Err("wrong token; nothing was done".into());
        }
        session.authorized = true;
    }
    if req.controls() && token.is_some() && !session.authorized {
        return Err("set, release, pause and reset need the access token ([live] token, printed by the server): \
                    add \"token\": \"…\" to the message; nothing was done"
            .into());
    }
    // Check everything before acting on anything: a bad message changes nothing.
    let sets = req.set.clone().unwrap_or_default();
    for (name, x) in &sets {
        hub.check(name, *x)?;
    }
    for n in req.release.iter().flatten() {
        hub.input(n)?;
    }
    let mut reply = Reply { ok: Some(true), ..Reply::default() };
    let mut clamped = BTreeMap::new();
    for (n, x) in &sets {
        if let Applied::Clamped(v) = hub.set(n, *x)? {
            clamped.insert(n.clone(), v);
        }
    }
    if !clamped.is_empty() {
        reply.clamped = Some(clamped);
    }
    for n in req.release.iter().flatten() {
        hub.release(n)?;
    }
    if let Some(p) = req.pause {
        hub.control.set_paused(p);
    }
    if req.reset == Some(true) {
        hub.control.request_reset();
    }
    if let Some(s) = req.subscribe {
        let every = match s {
            Subscribe::Off => 0,
            Subscribe::Auto => (1.0 / (AUTO_ROWS_PER_S * hub.step)).ceil().max(1.0) as u64,
            Subscribe::Every(n) => n,
        };
        session.subscribed = every > 0;
        reply.subscribed = Some(session.subscribed);
        if every > 0 {
            session.every = every;
            reply.every = Some(every);
        }
    }
    if req.info == Some(true) {
        reply.info = Some(Info {
            inputs: hub.inputs(),
            columns: hub.columns(),
            units: &hub.units,
            ranges: &hub.ranges,
            start: hub.start,
            stop: hub.stop,
            step: hub.step,
            token_required: token.is_some(),
            schematic: hub.schematic.is_some(),
        });
        reply.state = Some(state(hub));
    }
    if req.get == Some(true) {
        let (head, row) = hub.latest();
        reply.t = Some(row.first().copied());
        reply.published = Some(head);
        reply.values = Some(hub.columns().iter().map(String::as_str).zip(row.iter().skip(1).copied()).collect());
    }
    Ok(reply)
}

/// Rows since the session's cursor and the run's figures: one message, or as many as keep
/// each within `max` bytes (each with some of the rows, the last with the newest).
pub fn stream_messages(hub: &Hub, session: &mut Session, max: usize) -> Vec<String> {
    let (head, rows) = hub.rows_since(session.cursor, session.every);
    session.cursor = head;
    session.last_sent = Instant::now();
    let s = &hub.stats;
    let ns = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed) as f64 * 1e-9;
    let stats = Stats {
        steps: s.steps.load(Ordering::Relaxed),
        overruns: s.overruns.load(Ordering::Relaxed),
        max_lateness_s: ns(&s.max_lateness_ns),
        last_step_s: ns(&s.last_step_ns),
        max_step_s: ns(&s.max_step_ns),
        skipped_rows: hub.skipped.load(Ordering::Relaxed),
    };
    let (status, message) = hub.state();
    let state = state(hub);
    let text = |rows: &[Vec<f64>]| {
        serde_json::to_string(&Stream { rows, status, message: &message, stats: &stats, state: &state })
            .unwrap_or_default()
    };
    let mut out = Vec::new();
    let mut rest = &rows[..];
    loop {
        // Halve the rows until the message fits (a single row always goes).
        let mut n = rest.len();
        let mut msg = text(&rest[..n]);
        while msg.len() > max && n > 1 {
            n /= 2;
            msg = text(&rest[..n]);
        }
        out.push(msg);
        rest = &rest[n..];
        if rest.is_empty() {
            return out;
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn err(text: &str) -> String {
        Request::parse(text).unwrap_err()
    }

    #[test]
    fn messages_parse_into_their_types_and_bad_ones_say_what_is_wrong() {
        let r = Request::parse(r#"{"set": {"a.x": 2}, "release": "a.y", "pause": false, "subscribe": 5}"#).unwrap();
        assert_eq!(r.set.unwrap()["a.x"], 2.0);
        assert_eq!(r.release.unwrap(), ["a.y"]);
        assert_eq!((r.pause, r.subscribe), (Some(false), Some(Subscribe::Every(5))));
        assert_eq!(Request::parse(r#"{"subscribe": false}"#).unwrap().subscribe, Some(Subscribe::Off));
        assert!(err("hello").starts_with("not JSON"));
        assert!(err("[1, 2]").contains("JSON object"));
        assert!(err(r#"{"get": 0}"#).contains("get: 0 is not true or false"));
        assert!(err(r#"{"reset": 1}"#).contains("reset: 1 is not true or false"));
        assert!(err(r#"{"subscribe": -1}"#).contains("subscribe: -1"));
        assert!(err(r#"{"set": {"a.x": "ten"}}"#).contains("a.x = \"ten\" is not a number"));
        assert!(err(r#"{"set": {"a.x": 1e400}}"#).starts_with("not JSON"));
        assert!(err(r#"{"release": 3}"#).contains("release: 3"));
        assert!(err(r#"{"jump": true}"#).contains("unknown field `jump`"));
    }

    #[test]
    fn controls_are_told_from_reads() {
        assert!(Request::parse(r#"{"release": []}"#).unwrap().controls());
        assert!(!Request::parse(r#"{"reset": false, "get": true}"#).unwrap().controls());
        assert!(Request::parse(r#"{"subscribe": true}"#).unwrap().wants_data());
        assert!(!Request::parse(r#"{"subscribe": false}"#).unwrap().wants_data());
        assert!(token_matches("abc", "abc") && !token_matches("abc", "abd") && !token_matches("ab", "abc"));
    }
}
