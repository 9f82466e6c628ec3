//! Decoding stored payloads into the domain's types, upcasting old payload versions on read.
//!
//! History is never rewritten (SPEC §3): when an event's payload changes shape, its
//! `schema_version` goes up and the old shape is lifted to the new one here, one version at a
//! time, every time it is read. A payload newer than this build knows is an error, never a
//! guess.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::read::RecordedEvent;

/// Lifts a payload from version `v` to `v + 1`. Errors say what was wrong with the old payload.
pub type UpcastFn = fn(Value) -> Result<Value, String>;

/// How one event type's payload has evolved: its current version and the steps that lift
/// each older version to the next. `steps[i]` lifts version `i + 1` to `i + 2`; a type that
/// never changed has `current: 1` and no steps.
#[derive(Debug, Clone, Copy)]
pub struct PayloadSchema<'a> {
    /// The version the domain type reads.
    pub current: i16,
    /// `steps[i]` lifts version `i + 1` to `i + 2`.
    pub steps: &'a [UpcastFn],
}

impl PayloadSchema<'static> {
    /// A payload that has only ever had one version.
    pub const V1: PayloadSchema<'static> = PayloadSchema {
        current: 1,
        steps: &[],
    };
}

/// Why a stored payload could not become a domain value.
#[derive(Debug, thiserror::Error)]
#[allow(missing_docs)] // fields: the event's type, its stored version, and what went wrong
pub enum DecodeError {
    /// Written by a newer build (or a version no upcaster reaches): this build must not guess.
    #[error(
        "unknown schema version {version} of event type {event_type} (this build reads up to {current})"
    )]
    UnknownSchemaVersion {
        event_type: String,
        version: i16,
        current: i16,
    },
    /// An upcaster rejected the old payload.
    #[error("cannot upcast {event_type} from schema version {from}: {reason}")]
    Upcast {
        event_type: String,
        from: i16,
        reason: String,
    },
    /// The (upcast) payload does not match the type.
    #[error("payload of {event_type} (schema version {version}) does not decode: {source}")]
    Payload {
        event_type: String,
        version: i16,
        #[source]
        source: serde_json::Error,
    },
}

/// Decodes `event`'s payload as a `T` of schema version `schema.current`, upcasting older
/// payloads through `schema.steps`.
pub fn decode<T: DeserializeOwned>(
    event: &RecordedEvent,
    schema: PayloadSchema<'_>,
) -> Result<T, DecodeError> {
    let version = event.schema_version;
    let unknown = || DecodeError::UnknownSchemaVersion {
        event_type: event.event_type.clone(),
        version,
        current: schema.current,
    };
    if version < 1 || version > schema.current {
        return Err(unknown());
    }
    let mut data = event.data.clone();
    for from in version..schema.current {
        let step = usize::try_from(from - 1)
            .ok()
            .and_then(|i| schema.steps.get(i))
            .ok_or_else(unknown)?;
        data = step(data).map_err(|reason| DecodeError::Upcast {
            event_type: event.event_type.clone(),
            from,
            reason,
        })?;
    }
    serde_json::from_value(data).map_err(|source| DecodeError::Payload {
        event_type: event.event_type.clone(),
        version,
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use time::OffsetDateTime;
    use uuid::Uuid;

    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct MovePlayed {
        seat: u8,
        r#move: String,
        by: String,
    }

    /// v1 had no `by` (only humans moved); v2 named the seat `player`.
    fn v1_to_v2(mut v: Value) -> Result<Value, String> {
        let obj = v.as_object_mut().ok_or("not an object")?;
        obj.insert("by".into(), json!("human"));
        Ok(v)
    }

    fn v2_to_v3(mut v: Value) -> Result<Value, String> {
        let obj = v.as_object_mut().ok_or("not an object")?;
        let seat = obj.remove("player").ok_or("no player")?;
        obj.insert("seat".into(), seat);
        Ok(v)
    }

    const MOVE_PLAYED: PayloadSchema<'static> = PayloadSchema {
        current: 3,
        steps: &[v1_to_v2, v2_to_v3],
    };

    fn event(schema_version: i16, data: Value) -> RecordedEvent {
        RecordedEvent {
            position: 1,
            tx: 1,
            stream: "match-1".into(),
            version: 1,
            event_id: Uuid::nil(),
            event_type: "move_played".into(),
            schema_version,
            data,
            actor: None,
            recorded_at: OffsetDateTime::UNIX_EPOCH,
            prev_hash: [0; 32],
            hash: [0; 32],
        }
    }

    #[test]
    fn a_current_payload_decodes_as_is() {
        let e = event(3, json!({"seat": 1, "move": "d3", "by": "cpu"}));
        let m: MovePlayed = decode(&e, MOVE_PLAYED).expect("decodes");
        assert_eq!(m.by, "cpu");
    }

    #[test]
    fn an_old_payload_is_upcast_step_by_step() {
        let e = event(1, json!({"player": 2, "move": "4"}));
        let m: MovePlayed = decode(&e, MOVE_PLAYED).expect("decodes");
        assert_eq!(
            m,
            MovePlayed {
                seat: 2,
                r#move: "4".into(),
                by: "human".into()
            }
        );
    }

    #[test]
    fn a_newer_payload_is_an_unknown_schema_version() {
        let e = event(4, json!({"seat": 1, "move": "d3", "by": "cpu"}));
        let err = decode::<MovePlayed>(&e, MOVE_PLAYED).expect_err("must not guess");
        assert!(matches!(
            err,
            DecodeError::UnknownSchemaVersion { ref event_type, version: 4, current: 3 }
                if event_type == "move_played"
        ));
        assert_eq!(
            err.to_string(),
            "unknown schema version 4 of event type move_played (this build reads up to 3)"
        );
    }

    #[test]
    fn a_version_without_its_upcaster_is_unknown() {
        let incomplete = PayloadSchema {
            current: 3,
            steps: &[v1_to_v2],
        };
        let e = event(2, json!({"player": 2, "move": "4", "by": "human"}));
        let err = decode::<MovePlayed>(&e, incomplete).expect_err("no step from 2");
        assert!(matches!(
            err,
            DecodeError::UnknownSchemaVersion { version: 2, .. }
        ));
    }

    #[test]
    fn a_rejected_upcast_and_a_bad_payload_are_distinct_errors() {
        let e = event(2, json!({"move": "4", "by": "human"}));
        let err = decode::<MovePlayed>(&e, MOVE_PLAYED).expect_err("no player");
        assert!(matches!(err, DecodeError::Upcast { from: 2, .. }));
        let e = event(3, json!({"seat": "one", "move": "4", "by": "human"}));
        let err = decode::<MovePlayed>(&e, MOVE_PLAYED).expect_err("seat is not a number");
        assert!(matches!(err, DecodeError::Payload { version: 3, .. }));
    }
}
