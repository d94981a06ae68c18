//! JSON into the wire types through one path: the text is parsed once into a
//! `serde_json::Value` and the type is read from that tree. Reading each type straight from the
//! text would instantiate serde_json's whole text parser inside every struct's visitor (a
//! quarter of the bundle was those copies); from a `Value` each visitor is a short walk.

use serde::de::DeserializeOwned;

/// `text` as a `T`, or serde_json's message.
pub fn parse<T: DeserializeOwned>(text: &str) -> Result<T, String> {
    let tree: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    serde_json::from_value(tree).map_err(|e| e.to_string())
}
