//! One declaration per vocabulary enum: its variants with their labels, and
//! everything derived from that one list — `ALL`, `LABELS`, `label()`,
//! `Display`, `FromStr` (with an error naming the choices) and serde as the
//! label. Labels are metric label values, JSON and config words, so they are
//! written once, here, never matched by hand elsewhere.

use std::fmt;

#[doc(hidden)]
pub use serde as __serde;

/// A word that is not the label of any variant.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} {value:?} (expected {})", Choices(.expected))]
pub struct UnknownLabel {
    /// What was asked for (`kind`, `transport`, ...).
    pub what: &'static str,
    pub value: String,
    pub expected: &'static [&'static str],
}

impl UnknownLabel {
    /// The labels that would have been accepted, as `a, b or c`.
    pub fn choices(&self) -> impl fmt::Display + '_ {
        Choices(self.expected)
    }
}

/// `a, b or c`.
struct Choices<'a>(&'a [&'a str]);

impl fmt::Display for Choices<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0.len();
        for (i, label) in self.0.iter().enumerate() {
            match i {
                0 => {}
                _ if i + 1 == n => f.write_str(" or ")?,
                _ => f.write_str(", ")?,
            }
            f.write_str(label)?;
        }
        Ok(())
    }
}

/// `Display` and `Serialize` as the type's `label()`: for every
/// [`labelled_enum!`], and for enums whose variants carry data but still
/// show as one word.
#[macro_export]
macro_rules! shown_as_label {
    ($name:ty) => {
        impl ::core::fmt::Display for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(self.label())
            }
        }

        impl $crate::labelled::__serde::Serialize for $name {
            fn serialize<S: $crate::labelled::__serde::Serializer>(
                &self,
                s: S,
            ) -> ::core::result::Result<S::Ok, S::Error> {
                s.serialize_str(self.label())
            }
        }
    };
}

/// Declares a field-less enum whose variants each have one label:
///
/// ```ignore
/// labelled_enum! {
///     /// A paginated MCP list method.
///     #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
///     pub enum Kind as "kind" {
///         Tools => "tools",
///         ResourceTemplates => "resource_templates",
///     }
/// }
/// ```
///
/// The enum must derive `Clone` and `Copy`. The word after `as` names the
/// concept in parse errors (`unknown kind "x" (expected tools or
/// resource_templates)`). Serde reads and writes the label; reading goes the
/// way `#[derive(Deserialize)]` goes, so errors read as serde's own.
#[macro_export]
macro_rules! labelled_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident as $what:literal {
            $( $(#[$vmeta:meta])* $variant:ident => $label:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: [$name; [$($label),+].len()] = [$($name::$variant),+];
            /// Every label, in declaration order.
            pub const LABELS: [&'static str; [$($label),+].len()] = [$($label),+];

            /// The word metrics, JSON, config and output use.
            pub const fn label(self) -> &'static str {
                match self {
                    $( $name::$variant => $label, )+
                }
            }
        }

        $crate::shown_as_label!($name);

        impl ::core::str::FromStr for $name {
            type Err = $crate::labelled::UnknownLabel;
            fn from_str(s: &str) -> ::core::result::Result<Self, Self::Err> {
                $name::ALL
                    .into_iter()
                    .find(|v| v.label() == s)
                    .ok_or_else(|| $crate::labelled::UnknownLabel {
                        what: $what,
                        value: s.to_owned(),
                        expected: &$name::LABELS,
                    })
            }
        }

        // As `#[derive(Deserialize)]` reads a unit-variant enum (through
        // `deserialize_enum`), so every format's messages stay the same.
        impl<'de> $crate::labelled::__serde::Deserialize<'de> for $name {
            fn deserialize<D: $crate::labelled::__serde::Deserializer<'de>>(
                d: D,
            ) -> ::core::result::Result<Self, D::Error> {
                use $crate::labelled::__serde::de;

                struct Variant($name);
                struct VariantVisitor;
                impl de::Visitor<'_> for VariantVisitor {
                    type Value = Variant;
                    fn expecting(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                        f.write_str("variant identifier")
                    }
                    fn visit_u64<E: de::Error>(self, i: u64) -> ::core::result::Result<Variant, E> {
                        usize::try_from(i)
                            .ok()
                            .and_then(|i| $name::ALL.get(i).copied())
                            .map(Variant)
                            .ok_or_else(|| {
                                E::invalid_value(de::Unexpected::Unsigned(i), &"a variant index")
                            })
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> ::core::result::Result<Variant, E> {
                        $name::ALL
                            .into_iter()
                            .find(|x| x.label() == v)
                            .map(Variant)
                            .ok_or_else(|| E::unknown_variant(v, &$name::LABELS))
                    }
                    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> ::core::result::Result<Variant, E> {
                        match ::core::str::from_utf8(v) {
                            Ok(v) => self.visit_str(v),
                            Err(_) => Err(E::invalid_value(de::Unexpected::Bytes(v), &self)),
                        }
                    }
                }
                impl<'de> de::Deserialize<'de> for Variant {
                    fn deserialize<D: de::Deserializer<'de>>(
                        d: D,
                    ) -> ::core::result::Result<Self, D::Error> {
                        d.deserialize_identifier(VariantVisitor)
                    }
                }

                struct EnumVisitor;
                impl<'de> de::Visitor<'de> for EnumVisitor {
                    type Value = $name;
                    fn expecting(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                        f.write_str(concat!("enum ", stringify!($name)))
                    }
                    fn visit_enum<A: de::EnumAccess<'de>>(
                        self,
                        data: A,
                    ) -> ::core::result::Result<$name, A::Error> {
                        let (Variant(v), content) = data.variant::<Variant>()?;
                        de::VariantAccess::unit_variant(content)?;
                        Ok(v)
                    }
                }
                d.deserialize_enum(stringify!($name), &$name::LABELS, EnumVisitor)
            }
        }
    };
}

#[cfg(test)]
mod tests {
    crate::labelled_enum! {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
        enum Colour as "colour" {
            Red => "red",
            /// Doc comments stay on their variant.
            DarkBlue => "dark-blue",
            Green => "green",
        }
    }

    #[test]
    fn labels_round_trip_through_every_form() {
        assert_eq!(Colour::ALL, [Colour::Red, Colour::DarkBlue, Colour::Green]);
        assert_eq!(Colour::LABELS, ["red", "dark-blue", "green"]);
        for c in Colour::ALL {
            assert_eq!(c.to_string(), c.label());
            assert_eq!(c.label().parse::<Colour>(), Ok(c));
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(json, format!("\"{}\"", c.label()));
            assert_eq!(serde_json::from_str::<Colour>(&json).unwrap(), c);
        }
        assert!(
            Colour::Red < Colour::Green,
            "declaration order is the order"
        );
    }

    #[test]
    fn unknown_words_are_errors_naming_the_choices() {
        let e = "blue".parse::<Colour>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown colour \"blue\" (expected red, dark-blue or green)"
        );
        assert_eq!(e.choices().to_string(), "red, dark-blue or green");
        let e = serde_json::from_str::<Colour>("\"blue\"").unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown variant `blue`, expected one of `red`, `dark-blue`, `green` at line 1 column 6"
        );
        assert!(serde_json::from_str::<Colour>("3").is_err());
    }
}
