//! API ergonomics: sizes, durations, latencies and rates accepted as the CLI writes them
//! (`"4k"`, `"1G"`, `"30s"`, `"500us"`, `"200MB"`, `"5000iops"`) as well as numbers (bytes,
//! ms, µs, the rate objects). Serialization is unchanged (numbers), so reports and the
//! dashboard see one form. Used with `#[serde(deserialize_with = ...)]`.

use serde::de::{self, Deserializer};
use serde::Deserialize;

/// A number or a string, as JSON gives it. Read with one small visitor rather than
/// `#[serde(untagged)]`, which buffers the value first (and costs the browser's bundle a
/// copy of serde's buffering code per use).
enum NumOrText {
    Num(u64),
    Text(String),
}

impl<'de> Deserialize<'de> for NumOrText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = NumOrText;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a whole number or a string such as \"4k\" or \"30s\"")
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<NumOrText, E> {
                Ok(NumOrText::Num(n))
            }
            fn visit_str<E: de::Error>(self, t: &str) -> Result<NumOrText, E> {
                Ok(NumOrText::Text(t.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

fn with<'de, D: Deserializer<'de>, T>(
    d: D,
    parse: impl Fn(&str) -> Result<T, String>,
    num: impl Fn(u64) -> T,
) -> Result<T, D::Error> {
    match NumOrText::deserialize(d)? {
        NumOrText::Num(n) => Ok(num(n)),
        NumOrText::Text(t) => parse(&t).map_err(de::Error::custom),
    }
}

fn opt<'de, D: Deserializer<'de>, T>(
    d: D,
    parse: impl Fn(&str) -> Result<T, String>,
    num: impl Fn(u64) -> T,
) -> Result<Option<T>, D::Error> {
    match Option::<NumOrText>::deserialize(d)? {
        None => Ok(None),
        Some(NumOrText::Num(n)) => Ok(Some(num(n))),
        Some(NumOrText::Text(t)) => parse(&t).map(Some).map_err(de::Error::custom),
    }
}

fn size(t: &str) -> Result<u64, String> {
    crate::units::parse_size(t).map_err(|e| e.to_string())
}

fn millis(t: &str) -> Result<u64, String> {
    crate::units::parse_duration_ms(t).map_err(|e| e.to_string())
}

/// Bytes: a number or `"4k"`, `"1G"`, `"200MB"`.
pub fn bytes<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    with(d, size, |n| n)
}

pub fn opt_bytes<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    opt(d, size, |n| n)
}

/// Milliseconds: a number or `"30s"`, `"250ms"`, `"5m"`.
pub fn ms<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    with(d, millis, |n| n)
}

pub fn opt_ms<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    opt(d, millis, |n| n)
}

/// Microseconds: a number or `"500us"`, `"1ms"`.
pub fn opt_us<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    opt(d, crate::units::parse_latency_us, |n| n)
}

/// A rate cap: `{"bytes_per_sec": N}`, `{"iops": N}`, or `"200MB"`, `"5000iops"`.
pub fn opt_rate<'de, D: Deserializer<'de>>(d: D) -> Result<Option<crate::Rate>, D::Error> {
    struct RateIn(crate::Rate);
    impl<'de> Deserialize<'de> for RateIn {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> de::Visitor<'de> for V {
                type Value = RateIn;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("a rate such as \"200MB\" or \"5000iops\", or {\"iops\": N}")
                }
                fn visit_str<E: de::Error>(self, t: &str) -> Result<RateIn, E> {
                    t.parse().map(RateIn).map_err(E::custom)
                }
                fn visit_map<A: de::MapAccess<'de>>(self, m: A) -> Result<RateIn, A::Error> {
                    crate::Rate::deserialize(de::value::MapAccessDeserializer::new(m)).map(RateIn)
                }
            }
            d.deserialize_any(V)
        }
    }
    Ok(Option::<RateIn>::deserialize(d)?.map(|r| r.0))
}

/// The JSON Schemas of the lenient fields (the OpenAPI document's): a number as before, or
/// the CLI's string form; responses always carry the number.
#[cfg(feature = "schema")]
pub mod schema {
    use schemars::{json_schema, Schema, SchemaGenerator};

    fn num_or_text(unit: &str, example: &str, nullable: bool) -> Schema {
        let mut kinds = vec![
            json_schema!({"type": "integer", "minimum": 0}),
            json_schema!({"type": "string", "examples": [example]}),
        ];
        if nullable {
            kinds.push(json_schema!({"type": "null"}));
        }
        json_schema!({
            "description": format!("{unit}: a number, or a string as the CLI writes it (\"{example}\")"),
            "anyOf": kinds,
        })
    }

    pub fn bytes(_: &mut SchemaGenerator) -> Schema {
        num_or_text("bytes", "4k", false)
    }

    pub fn opt_bytes(_: &mut SchemaGenerator) -> Schema {
        num_or_text("bytes", "1G", true)
    }

    pub fn ms(_: &mut SchemaGenerator) -> Schema {
        num_or_text("milliseconds", "30s", false)
    }

    pub fn opt_ms(_: &mut SchemaGenerator) -> Schema {
        num_or_text("milliseconds", "30s", true)
    }

    pub fn opt_us(_: &mut SchemaGenerator) -> Schema {
        num_or_text("microseconds", "1ms", true)
    }

    pub fn opt_rate(g: &mut SchemaGenerator) -> Schema {
        let rate = g.subschema_for::<crate::Rate>();
        json_schema!({
            "description": "a rate cap: {\"bytes_per_sec\": N}, {\"iops\": N}, or \"200MB\", \"5000iops\"",
            "anyOf": [rate, {"type": "string", "examples": ["200MB"]}, {"type": "null"}],
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::{Rate, WorkloadSpec};

    #[test]
    fn the_cli_forms_and_numbers_give_the_same_spec() {
        let text: WorkloadSpec = serde_json::from_str(
            r#"{"bs": "4k", "size": "1G", "offset": "1M", "io_size": "2G", "runtime_ms": "30s",
                "ramp_ms": "2s", "interval_ms": "250ms", "rate": "200MB"}"#,
        )
        .expect("text");
        let nums: WorkloadSpec = serde_json::from_str(
            r#"{"bs": 4096, "size": 1073741824, "offset": 1048576, "io_size": 2147483648,
                "runtime_ms": 30000, "ramp_ms": 2000, "interval_ms": 250,
                "rate": {"bytes_per_sec": 200000000}}"#,
        )
        .expect("numbers");
        assert_eq!(text, nums);
        let iops: WorkloadSpec = serde_json::from_str(r#"{"rate": "5000iops"}"#).expect("iops");
        assert_eq!(iops.rate, Some(Rate::Iops(5000)));
        // What is written back is numbers, as before.
        let back = serde_json::to_value(&text).expect("json");
        assert_eq!(back["bs"], 4096);
        assert_eq!(back["runtime_ms"], 30000);
    }

    #[test]
    fn a_bad_string_names_its_value() {
        let e = serde_json::from_str::<WorkloadSpec>(r#"{"bs": "4Q"}"#).expect_err("bad");
        assert!(e.to_string().contains("'4Q'"), "{e}");
        let e = serde_json::from_str::<WorkloadSpec>(r#"{"runtime_ms": "soon"}"#).expect_err("bad");
        assert!(e.to_string().contains("'soon'"), "{e}");
        let e = serde_json::from_str::<WorkloadSpec>(r#"{"rate": "fast"}"#).expect_err("bad");
        assert!(e.to_string().contains("'fast'"), "{e}");
    }

    #[test]
    fn preset_options_take_the_cli_forms_too() {
        let o: crate::PresetOptions = serde_json::from_str(
            r#"{"size": "64M", "runtime_ms": "1s", "idle_ms": "100ms", "bs": "1M",
                "rate": "3200MB", "p99_us": "1ms", "buffer_ms": 500}"#,
        )
        .expect("options");
        assert_eq!(o.size, Some(64 << 20));
        assert_eq!(o.runtime_ms, Some(1000));
        assert_eq!(o.idle_ms, Some(100));
        assert_eq!(o.bs, Some(1 << 20));
        assert_eq!(o.rate, Some(Rate::BytesPerSec(3_200_000_000)));
        assert_eq!(o.p99_us, Some(1000));
        assert_eq!(o.buffer_ms, Some(500));
    }
}
