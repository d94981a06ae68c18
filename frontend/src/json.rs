//! JSON into the wire types through one path: the text is parsed once into a `Value` tree
//! and the type is read from that tree by `Tree`, a deserializer that offers each visitor
//! only the shape JSON gives it. Reading each type straight from the text would instantiate
//! serde_json's whole text parser inside every struct's visitor, and serde_json's own
//! `Value` deserializer also reads a struct from an array and a field name from a number or
//! bytes, so every struct carried a second, never-used decoder: this deserializer asks a
//! struct only for `visit_seq` (see `members`) and a field name only for `visit_str`, and
//! the linker drops the rest. The tree is this module's own `Value`, serde_json's with an
//! object as a list of members: a struct's reader takes its members out by name, which from
//! serde_json's B-tree map would link the tree's rebalancing.

use serde::de::{self, DeserializeOwned, DeserializeSeed, Visitor};
use serde::forward_to_deserialize_any;

/// `text` as a `T`, or what is wrong with it: where the text stops being JSON, or the
/// value that does not fit `T` in serde_json's words.
pub fn parse<T: DeserializeOwned>(text: &str) -> Result<T, String> {
    let tree: Value = serde_json::from_str(text).map_err(syntax)?;
    T::deserialize(Tree(tree)).map_err(|Error(e)| *e)
}

/// Where a text stops being JSON. Not serde_json's own text: the dashboard formats no
/// serde_json error anywhere (see also `encode`), which keeps its error formatting out of
/// the bundle (with gloo-net's `json` feature off: 1.5 KB gzipped).
#[inline(never)]
fn syntax(e: serde_json::Error) -> String {
    format!("not JSON (line {}, column {})", e.line(), e.column())
}

/// `v` as JSON text (what the dashboard sends: only its own wire types, whose encoding
/// cannot fail; the error says so rather than showing serde_json's text).
pub fn encode<T: serde::Serialize>(v: &T) -> Result<String, String> {
    serde_json::to_string(v).map_err(|_| "a request that does not encode as JSON".to_string())
}

/// Why a tree does not read as a type, in serde_json's words (its tree reader's errors
/// carry no position, so the text is the message alone). Boxed: a pointer wide, as
/// serde_json's error is, so that every reader's `Result` stays small.
#[derive(Debug)]
#[allow(clippy::box_collection)] // the box is the point: a pointer-wide error
pub struct Error(Box<String>);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl de::Error for Error {
    fn custom<M: std::fmt::Display>(msg: M) -> Self {
        Error(Box::new(msg.to_string()))
    }
}

/// A parsed JSON value.
enum Value {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Value>),
    Object(Map),
}

/// An object's members in the text's order.
type Map = Vec<(String, Value)>;

/// A JSON number as serde_json's reader hands it over.
#[derive(Clone, Copy)]
enum Number {
    Unsigned(u64),
    Signed(i64),
    Float(f64),
}

impl<'de> de::Deserialize<'de> for Value {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

/// Builds a `Value` from whatever serde_json's reader finds.
struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }

    fn visit_i64<E>(self, i: i64) -> Result<Value, E> {
        Ok(Value::Number(Number::Signed(i)))
    }

    fn visit_u64<E>(self, u: u64) -> Result<Value, E> {
        Ok(Value::Number(Number::Unsigned(u)))
    }

    fn visit_f64<E>(self, f: f64) -> Result<Value, E> {
        Ok(Value::Number(Number::Float(f)))
    }

    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_owned()))
    }

    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        de::Deserialize::deserialize(d)
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = Vec::new();
        while let Some(member) = map.next_entry()? {
            members.push(member);
        }
        Ok(Value::Object(members))
    }
}

/// A parsed JSON value as a serde deserializer.
struct Tree(Value);

/// What a value is, for an error message.
fn unexpected(v: &Value) -> de::Unexpected<'_> {
    match v {
        Value::Null => de::Unexpected::Unit,
        Value::Bool(b) => de::Unexpected::Bool(*b),
        Value::Number(_) => de::Unexpected::Other("number"),
        Value::String(s) => de::Unexpected::Str(s),
        Value::Array(_) => de::Unexpected::Seq,
        Value::Object(_) => de::Unexpected::Map,
    }
}

fn number<'de, V: Visitor<'de>>(n: &Number, visitor: V) -> Result<V::Value, Error> {
    match *n {
        Number::Unsigned(u) => visitor.visit_u64(u),
        Number::Signed(i) => visitor.visit_i64(i),
        Number::Float(f) => visitor.visit_f64(f),
    }
}

/// Deserializer methods that each hand their visitor to method `$to` (the numbers all read
/// a JSON number, `str` reads a string).
macro_rules! forward_to {
    ($to:ident: $($method:ident)*) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
                self.$to(visitor)
            }
        )*
    };
}

impl<'de> de::Deserializer<'de> for Tree {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(b),
            Value::Number(n) => number(&n, visitor),
            Value::String(s) => visitor.visit_string(s),
            Value::Array(a) => visitor.visit_seq(Seq(a.into_iter())),
            Value::Object(m) => visitor.visit_map(Fields::new(m)),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            v => visitor.visit_some(Tree(v)),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Value::Object(m) => members(m, fields, visitor),
            v => Err(de::Error::invalid_type(unexpected(&v), &visitor)),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Value::String(variant) => visitor.visit_enum(Variant {
                name: variant,
                value: None,
            }),
            Value::Object(m) if m.len() == 1 => {
                let Some((name, value)) = m.into_iter().next() else {
                    return Err(de::Error::custom("an enum object with no key"));
                };
                visitor.visit_enum(Variant {
                    name,
                    value: Some(value),
                })
            }
            v => Err(de::Error::invalid_type(unexpected(&v), &visitor)),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::String(s) => visitor.visit_str(&s),
            v => Err(de::Error::invalid_type(unexpected(&v), &visitor)),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    // A number, a string, a bool, an array or an object where the type asks for one: the
    // visitor is offered that shape only, and any other value is refused here. Forwarded to
    // `deserialize_any`, every visitor (each field type's) would carry a refusal of its own
    // for each of the six shapes, the dropping of an unread array or object among them.
    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Bool(b) => visitor.visit_bool(b),
            v => Err(refused(&v, &visitor)),
        }
    }

    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Number(n) => number(&n, visitor),
            v => Err(refused(&v, &visitor)),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::String(s) => visitor.visit_string(s),
            v => Err(refused(&v, &visitor)),
        }
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Array(a) => visitor.visit_seq(Seq(a.into_iter())),
            v => Err(refused(&v, &visitor)),
        }
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Object(m) => visitor.visit_map(Fields::new(m)),
            v => Err(refused(&v, &visitor)),
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            v => Err(refused(&v, &visitor)),
        }
    }

    forward_to! { deserialize_u64: deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64
    deserialize_u8 deserialize_u16 deserialize_u32 deserialize_f32 deserialize_f64 }
    forward_to! { deserialize_string: deserialize_str }

    forward_to_deserialize_any! {
        i128 u128 char bytes byte_buf unit_struct tuple tuple_struct
    }
}

/// The error for value `v` where `expected` was asked for (serde_json's wording), built in
/// one place for every visitor.
fn refused(v: &Value, expected: &dyn de::Expected) -> Error {
    de::Error::invalid_type(unexpected(v), expected)
}

/// An array's elements.
struct Seq(std::vec::IntoIter<Value>);

impl<'de> de::SeqAccess<'de> for Seq {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        self.0.next().map(|v| seed.deserialize(Tree(v))).transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

/// An object's members; keys are read as identifiers (a struct's field names) or strings.
struct Fields {
    iter: std::vec::IntoIter<(String, Value)>,
    value: Option<Value>,
}

impl Fields {
    fn new(m: Map) -> Self {
        Fields {
            iter: m.into_iter(),
            value: None,
        }
    }
}

impl<'de> de::MapAccess<'de> for Fields {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some((key, value)) = self.iter.next() else {
            return Ok(None);
        };
        self.value = Some(value);
        seed.deserialize(Tree(Value::String(key))).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        match self.value.take() {
            Some(v) => seed.deserialize(Tree(v)),
            None => Err(de::Error::custom("a value asked for before its key")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

/// Object `m` read as the struct whose field names are `fields`, through the struct's
/// `visit_seq`: its members handed over in the order of the struct's fields. Serde's derived
/// `visit_map` matches each key's text against every field name, keeps a slot per field and
/// checks each for a duplicate (the agent sends each member once); `visit_seq` takes
/// the values in order, and with nothing calling `visit_map` the linker drops it and the
/// field-name matcher (46 KB of wasm, 12 KB gzipped). A member the object lacks is an
/// absent `Option` (`None`) or, for any other type, the end of the sequence at that field:
/// the field's default when it has one, else "missing field". Members the struct does not
/// name are ignored (the agent, not the dashboard, refuses unknown fields in what it is sent).
/// Sound while a struct's `FIELDS` are its fields in order, one name each: serde lists a
/// field's aliases there too, so the wire types have none (checked by
/// `a_missing_or_extra_member_reads_as_serde_json_reads`).
fn members<'de, V: Visitor<'de>>(
    m: Map,
    fields: &'static [&'static str],
    visitor: V,
) -> Result<V::Value, Error> {
    let missing = std::cell::Cell::new(None);
    let read = visitor.visit_seq(Members {
        members: m,
        fields: fields.iter(),
        missing: &missing,
    });
    read.map_err(|e| missing_named(e, missing.get()))
}

/// Error `e` of a struct's `visit_seq`, where `missing` is the last field its object lacked:
/// serde's `visit_seq` says "invalid length" where its `visit_map` names the field. (Out of
/// line: once, not in each struct's reader.)
#[inline(never)]
fn missing_named(e: Error, missing: Option<&'static str>) -> Error {
    match missing {
        Some(field) if e.0.starts_with("invalid length") => de::Error::missing_field(field),
        _ => e,
    }
}

/// An object's members in the order of a struct's fields.
struct Members<'a> {
    /// The members not yet read (a struct has a few dozen fields at most).
    members: Map,
    fields: std::slice::Iter<'static, &'static str>,
    /// The last field the object lacked that was not an `Option`.
    missing: &'a std::cell::Cell<Option<&'static str>>,
}

/// What the object holds for a struct's next field.
enum Member {
    /// The struct has no more fields.
    End,
    Present(Value),
    Absent(&'static str),
}

impl Members<'_> {
    /// The member for the next field (out of line: once, not in each field type's reader).
    #[inline(never)]
    fn next_member(&mut self) -> Member {
        match self.fields.next() {
            None => Member::End,
            Some(&field) => match self.members.iter().position(|(k, _)| k == field) {
                Some(i) => Member::Present(self.members.swap_remove(i).1),
                None => Member::Absent(field),
            },
        }
    }
}

impl<'de> de::SeqAccess<'de> for Members<'_> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        match self.next_member() {
            Member::End => Ok(None),
            Member::Present(v) => seed.deserialize(Tree(v)).map(Some),
            Member::Absent(field) => match seed.deserialize(Absent) {
                Ok(none) => Ok(Some(none)),
                Err(_) => {
                    self.missing.set(Some(field));
                    Ok(None)
                }
            },
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.fields.len())
    }
}

/// A member an object lacks: an `Option` reads it as `None`; any other type is refused (and
/// `Members` then ends the sequence at that field).
struct Absent;

impl<'de> de::Deserializer<'de> for Absent {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Error> {
        Err(de::Error::custom("absent"))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_none()
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier
        ignored_any
    }
}

/// An enum's variant: a bare string (unit variant) or a one-key object.
struct Variant {
    name: String,
    value: Option<Value>,
}

impl<'de> de::EnumAccess<'de> for Variant {
    type Error = Error;
    type Variant = Payload;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Payload), Error> {
        let tag = seed.deserialize(Tree(Value::String(self.name)))?;
        Ok((tag, Payload(self.value)))
    }
}

/// What a variant carries.
struct Payload(Option<Value>);

impl<'de> de::VariantAccess<'de> for Payload {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        match self.0 {
            None | Some(Value::Null) => Ok(()),
            Some(v) => Err(de::Error::invalid_type(unexpected(&v), &"a unit variant")),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        match self.0 {
            Some(v) => seed.deserialize(Tree(v)),
            None => Err(de::Error::invalid_type(
                de::Unexpected::UnitVariant,
                &"a newtype variant",
            )),
        }
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Some(Value::Array(a)) => visitor.visit_seq(Seq(a.into_iter())),
            Some(v) => Err(de::Error::invalid_type(unexpected(&v), &visitor)),
            None => Err(de::Error::invalid_type(
                de::Unexpected::UnitVariant,
                &visitor,
            )),
        }
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Some(Value::Object(m)) => members(m, fields, visitor),
            Some(v) => Err(de::Error::invalid_type(unexpected(&v), &visitor)),
            None => Err(de::Error::invalid_type(
                de::Unexpected::UnitVariant,
                &visitor,
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;
    use shared::api::ServerMsg;
    use shared::spec::WorkloadSpec;
    use shared::Sample;

    /// The tree path reads what serde_json's own reader reads.
    fn same<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(v: &T) {
        let text = serde_json::to_string(v).expect("serialize");
        let ours: T = parse(&text).expect("tree path");
        let theirs: T = serde_json::from_str(&text).expect("text path");
        assert_eq!(ours, theirs, "{text}");
        assert_eq!(&ours, v, "{text}");
    }

    #[test]
    fn reads_what_serde_json_reads() {
        let mut spec = WorkloadSpec {
            random_distribution: shared::access::Distribution::Zipf(1.2),
            ..WorkloadSpec::default()
        };
        same(&spec);
        spec.bssplit = "4k/50:64k/50".parse().ok();
        same(&spec);
        same(&ServerMsg::Sample {
            run_id: -3,
            sample: Sample {
                seq: 9,
                end_ns: 1_500_000_000,
                temp_c: Some(41.5),
                ..Sample::default()
            },
        });
        same(&ServerMsg::Subscribed { run_id: None });
        same(&vec![Some(1.5f64), None, Some(-2.0)]);
    }

    #[test]
    fn a_wrong_shape_is_named() {
        let e = parse::<Sample>("[1, 2]").expect_err("an array is not a sample");
        assert!(e.contains("sequence"), "{e}");
        let e = parse::<WorkloadSpec>(r#"{"rw": "sideways"}"#).expect_err("unknown variant");
        assert!(e.contains("sideways"), "{e}");
        // Each primitive refuses the other shapes, in serde_json's words.
        let theirs = |t: &str| {
            serde_json::from_str::<Sample>(t)
                .expect_err("wrong")
                .to_string()
        };
        // A whole sample but for the one member (a struct's members are read in its
        // fields' order, so with two faults the first named could differ from serde_json's).
        let with = |field: &str, v: serde_json::Value| {
            let mut doc = serde_json::to_value(Sample::default()).expect("sample");
            doc[field] = v;
            doc.to_string()
        };
        for text in [
            with("seq", "nine".into()),
            with("seq", serde_json::json!([9])),
            with("seq", serde_json::json!({"n": 9})),
            with("temp_c", true.into()),
            with("seq", (-1).into()),
        ] {
            let text = text.as_str();
            let ours = parse::<Sample>(text).expect_err(text);
            let want = theirs(text);
            let words = want.split(" at line").next().unwrap_or(&want);
            assert!(ours.starts_with(words), "{text}: {ours} / {want}");
        }
    }

    #[test]
    fn a_missing_or_extra_member_reads_as_serde_json_reads() {
        use shared::analysis::Analysis;
        // Every analysis present, each at its default: every nested struct's members in
        // order, so a field name serde lists twice (an alias) would shift the rest.
        let analysis = Analysis {
            qd_search: Vec::new(),
            group: None,
            files_done: None,
            probe: None,
            flushcheck: None,
            cache_cliff: Some(Default::default()),
            steady_state: Some(Default::default()),
            first_last: Some(Default::default()),
            thermal: Some(Default::default()),
            sustain: Some(Default::default()),
            block_size: Some(Default::default()),
            compressibility: Some(Default::default()),
            stalls: Some(Default::default()),
            cache_recovery: Some(Default::default()),
            verify: Some(Default::default()),
            fakecap: Some(Default::default()),
            scan: vec![Default::default()],
            plausibility: Some(Default::default()),
            repeat: Some(Default::default()),
            fill_level: Some(Default::default()),
            latency_target: Some(Default::default()),
            replay: vec![Default::default()],
            apps: Some(Default::default()),
        };
        same(&analysis);
        same(&Analysis::default());
        // Absent members (defaults and options), members in another order, members the
        // type does not name: read as serde_json reads them.
        for text in [
            "{}",
            r#"{"rate": null, "iodepth": 4}"#,
            r#"{"runtime_ms": 5000, "bs": 65536, "rw": "randread", "read_pct": 70}"#,
        ] {
            let ours = parse::<WorkloadSpec>(text).expect(text);
            let theirs: WorkloadSpec = serde_json::from_str(text).expect(text);
            assert_eq!(ours, theirs, "{text}");
        }
        let mut doc = serde_json::to_value(Sample::default()).expect("sample");
        doc["seq"] = 3.into();
        doc["not_a_field"] = serde_json::json!([1, {"a": 2}]);
        let ours = parse::<Sample>(&doc.to_string()).expect("a member more");
        assert_eq!(ours.seq, 3);
        // A required member missing is named as serde_json names it.
        let text = r#"{"runs": [], "total": 1, "page": 1}"#;
        let ours = parse::<shared::api::RunList>(text).expect_err("no per_page");
        let theirs = serde_json::from_str::<shared::api::RunList>(text)
            .expect_err("no per_page")
            .to_string();
        assert!(ours.starts_with("missing field `per_page`"), "{ours}");
        assert!(theirs.starts_with(&ours), "{ours} / {theirs}");
    }
}
