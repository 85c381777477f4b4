//! A visitor used as the seed of the value it reads. The streaming readers
//! (`sd_format.rs`, `registry_page.rs`) carry state into each value (the
//! reader, the caller's `keep`), so each of their visitors is its own seed
//! and every value is read with `deserialize_any`.

use serde::de::{DeserializeSeed, Deserializer, Visitor};

pub(super) struct AnySeed<V>(pub V);

impl<'de, V: Visitor<'de>> DeserializeSeed<'de> for AnySeed<V> {
    type Value = V::Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        d.deserialize_any(self.0)
    }
}
