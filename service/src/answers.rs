//! Stored answers of `Idempotency-Key` requests, the table `idempotency_keys`: the answer's
//! status and body as the edge sent them (the body's bytes, not a re-serialized value), kept so
//! that a retried request gets the first answer byte for byte and writes nothing. The edge
//! decides what is stored; this reads and writes it, and erases a closed account's name from
//! the answers that show it ([`erase_player`]), structurally.

use deadpool_postgres::GenericClient;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::core::Core;
use crate::error::{Error, unexpected};

/// A JSON answer: a value, or bytes serialized once from a typed view (the moves' answers,
/// which never need to become a `serde_json::Value` on their way out).
#[derive(Debug, Clone)]
pub enum Body {
    Value(serde_json::Value),
    Serialized(Vec<u8>),
}

impl Body {
    /// `value` serialized now.
    pub fn of<T: serde::Serialize>(value: &T) -> Result<Body, Error> {
        serde_json::to_vec(value)
            .map(Body::Serialized)
            .map_err(unexpected)
    }

    /// The bytes as they are sent (to store them).
    pub fn to_text(&self) -> Result<String, Error> {
        match self {
            Body::Value(v) => serde_json::to_string(v).map_err(unexpected),
            Body::Serialized(bytes) => String::from_utf8(bytes.clone()).map_err(unexpected),
        }
    }

    pub fn into_bytes(self) -> Vec<u8> {
        match self {
            Body::Value(v) => serde_json::to_vec(&v).unwrap_or_default(),
            Body::Serialized(bytes) => bytes,
        }
    }
}

impl From<serde_json::Value> for Body {
    fn from(v: serde_json::Value) -> Body {
        Body::Value(v)
    }
}

/// The status of an answer stored for a command that changed something.
pub const OK: u16 = 200;
/// The status of an answer stored for a command that created its match.
pub const CREATED: u16 = 201;

/// A request's `Idempotency-Key`, as its answer is stored under.
#[derive(Debug, Clone)]
pub struct KeyRecord {
    pub player: Uuid,
    pub key: String,
    pub request_hash: Vec<u8>,
}

/// The command id a handler gives the log, and the key its answer is stored under (none
/// without an `Idempotency-Key`).
#[derive(Debug, Clone)]
pub struct Key {
    pub command_id: Uuid,
    pub record: Option<KeyRecord>,
}

/// An answer as it was stored.
pub struct Stored {
    pub request_hash: Vec<u8>,
    pub status: u16,
    /// The body's bytes as first sent.
    pub body: String,
}

/// The answer stored under (player, key), if any.
pub async fn stored(app: &Core, player: Uuid, key: &str) -> Result<Option<Stored>, Error> {
    let client = app.pool.get().await.map_err(unexpected)?;
    let row = client
        .query_opt(
            "SELECT request_hash, status, body FROM idempotency_keys WHERE player_id = $1 AND key = $2",
            &[&player, &key],
        )
        .await
        .map_err(unexpected)?;
    Ok(row.map(|r| Stored {
        request_hash: r.get(0),
        status: u16::try_from(r.get::<_, i32>(1)).unwrap_or(200),
        body: r.get(2),
    }))
}

/// Stores an answer under its key; `false` when a twin request stored one first (its answer
/// is the answer).
pub async fn store(
    app: &Core,
    record: &KeyRecord,
    status: u16,
    body: &str,
    at: OffsetDateTime,
) -> Result<bool, Error> {
    let client = app.pool.get().await.map_err(unexpected)?;
    store_on(&client, record, status, body, at).await
}

/// [`store`] on a given connection or transaction (the command's own, to commit the answer
/// with it).
pub async fn store_on(
    client: &impl GenericClient,
    record: &KeyRecord,
    status: u16,
    body: &str,
    at: OffsetDateTime,
) -> Result<bool, Error> {
    let inserted = client
        .execute(
            "INSERT INTO idempotency_keys (player_id, key, request_hash, status, body, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
            &[
                &record.player,
                &record.key,
                &record.request_hash,
                &i32::from(status),
                &body,
                &at,
            ],
        )
        .await
        .map_err(unexpected)?;
    Ok(inserted > 0)
}

/// `body` (a stored answer's JSON text) with the name of `player` replaced by `label`: in every
/// object whose member `player_id` is the player's id, the member `name` (a string) becomes
/// the label; every other byte stays as it was. `None` when nothing names the player (or the
/// text is not JSON). Structural: a name equal to a key, a value or a piece of JSON syntax is
/// never matched as text.
pub fn erase_player(body: &str, player: Uuid, label: &str) -> Option<String> {
    let id = format!("\"{player}\"");
    let mut walk = Walk {
        text: body.as_bytes(),
        at: 0,
        id: id.as_bytes(),
        names: Vec::new(),
    };
    walk.value(0)?;
    walk.space();
    if walk.at != walk.text.len() || walk.names.is_empty() {
        return None;
    }
    let label = serde_json::to_string(label).ok()?;
    let mut out = String::with_capacity(body.len());
    let mut from = 0;
    for span in walk.names {
        out.push_str(&body[from..span.start]);
        out.push_str(&label);
        from = span.end;
    }
    out.push_str(&body[from..]);
    Some(out)
}

/// A JSON reader that only finds where things are: the spans of the `name` strings beside the
/// player's id.
struct Walk<'a> {
    text: &'a [u8],
    at: usize,
    /// The player's id as a JSON string (quotes included).
    id: &'a [u8],
    names: Vec<std::ops::Range<usize>>,
}

/// Deeper than any answer the edge renders: past it the text is not an answer of ours.
const DEEPEST: usize = 64;

impl Walk<'_> {
    fn space(&mut self) {
        while self
            .text
            .get(self.at)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.at += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        self.space();
        (self.text.get(self.at) == Some(&byte)).then(|| self.at += 1)
    }

    /// A string's span, quotes included.
    fn string(&mut self) -> Option<std::ops::Range<usize>> {
        self.space();
        let start = self.at;
        (self.text.get(self.at) == Some(&b'"')).then_some(())?;
        self.at += 1;
        loop {
            match self.text.get(self.at)? {
                b'"' => {
                    self.at += 1;
                    return Some(start..self.at);
                }
                b'\\' => self.at += 2,
                _ => self.at += 1,
            }
        }
    }

    /// A value's span.
    fn value(&mut self, depth: usize) -> Option<std::ops::Range<usize>> {
        if depth > DEEPEST {
            return None;
        }
        self.space();
        let start = self.at;
        match self.text.get(self.at)? {
            b'"' => return self.string(),
            b'{' => self.object(depth)?,
            b'[' => {
                self.at += 1;
                if self.eat(b']').is_none() {
                    loop {
                        self.value(depth + 1)?;
                        if self.eat(b',').is_none() {
                            self.eat(b']')?;
                            break;
                        }
                    }
                }
            }
            _ => {
                // A number, true, false or null.
                while self
                    .text
                    .get(self.at)
                    .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.'))
                {
                    self.at += 1;
                }
                (self.at > start).then_some(())?;
            }
        }
        Some(start..self.at)
    }

    fn object(&mut self, depth: usize) -> Option<()> {
        self.at += 1;
        let mut mine = false;
        let mut name = None;
        if self.eat(b'}').is_none() {
            loop {
                let key = self.string()?;
                self.eat(b':')?;
                let value = self.value(depth + 1)?;
                match &self.text[key] {
                    b"\"player_id\"" => mine |= &self.text[value] == self.id,
                    b"\"name\"" if self.text[value.start] == b'"' => name = Some(value),
                    _ => {}
                }
                if self.eat(b',').is_none() {
                    self.eat(b'}')?;
                    break;
                }
            }
        }
        if mine && let Some(span) = name {
            self.names.push(span);
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALICE: Uuid = Uuid::from_u128(0x0190_0000_0000_7000_8000_0000_0000_00a1);
    const BOB: Uuid = Uuid::from_u128(0x0190_0000_0000_7000_8000_0000_0000_00b0);

    fn answer(alice: &str) -> String {
        // As the edge renders a match view: keys in the struct's order, names beside ids.
        let alice = serde_json::to_string(alice).expect("a string");
        format!(
            r#"{{"match_id":"m","status":"active","seats":[{{"seat":1,"player_id":"{ALICE}","name":{alice},"controller":"human"}},{{"seat":2,"player_id":"{BOB}","name":"Bob","controller":"human"}}],"moves":"44"}}"#
        )
    }

    #[test]
    fn only_the_name_beside_the_players_id_changes_whatever_the_name() {
        for name in [
            "Alice",
            "\": [",
            "\"",
            "\\",
            "\\\"",
            "status",
            "active",
            "name",
            "player_id",
            "Bob",
            "}",
            "m",
            "44",
            "ação ✓",
        ] {
            let body = answer(name);
            let erased = erase_player(&body, ALICE, "closed-0123abcd").expect(name);
            assert_eq!(erased, answer("closed-0123abcd"), "{name:?}");
            let value: serde_json::Value = serde_json::from_str(&erased).expect("still JSON");
            assert_eq!(value["seats"][1]["name"], "Bob");
            assert_eq!(value["status"], "active");
        }
    }

    #[test]
    fn an_answer_that_does_not_name_the_player_is_left_alone() {
        assert_eq!(erase_player(&answer("Alice"), Uuid::nil(), "x"), None);
        // The id as a value of another member is not a seat of the player's.
        let body = format!(r#"{{"created_by":"{ALICE}","name":"Cup"}}"#);
        assert_eq!(erase_player(&body, ALICE, "x"), None);
        assert_eq!(erase_player("{\"player_id\":", ALICE, "x"), None);
        assert_eq!(erase_player("not json", ALICE, "x"), None);
    }

    #[test]
    fn spacing_and_nesting_are_kept() {
        let body = format!(
            "{{ \"a\" : [ {{ \"name\" : \"Al\\u0069ce\" , \"player_id\" : \"{ALICE}\" }} ] , \"b\" : -1.5e3 }}"
        );
        let erased = erase_player(&body, ALICE, "closed-1").expect("named");
        assert_eq!(
            erased,
            format!(
                "{{ \"a\" : [ {{ \"name\" : \"closed-1\" , \"player_id\" : \"{ALICE}\" }} ] , \"b\" : -1.5e3 }}"
            )
        );
    }
}
