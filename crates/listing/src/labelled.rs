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
/// resource_templates)`). Serde reads and writes the label, and rejects an
/// unknown word with serde's own "unknown variant" message.
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

        impl ::core::fmt::Display for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(self.label())
            }
        }

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

        impl $crate::labelled::__serde::Serialize for $name {
            fn serialize<S: $crate::labelled::__serde::Serializer>(
                &self,
                s: S,
            ) -> ::core::result::Result<S::Ok, S::Error> {
                s.serialize_str(self.label())
            }
        }

        impl<'de> $crate::labelled::__serde::Deserialize<'de> for $name {
            fn deserialize<D: $crate::labelled::__serde::Deserializer<'de>>(
                d: D,
            ) -> ::core::result::Result<Self, D::Error> {
                struct LabelVisitor;
                impl $crate::labelled::__serde::de::Visitor<'_> for LabelVisitor {
                    type Value = $name;
                    fn expecting(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                        write!(f, "a {} label", $what)
                    }
                    fn visit_str<E: $crate::labelled::__serde::de::Error>(
                        self,
                        v: &str,
                    ) -> ::core::result::Result<$name, E> {
                        $name::ALL
                            .into_iter()
                            .find(|x| x.label() == v)
                            .ok_or_else(|| E::unknown_variant(v, &$name::LABELS))
                    }
                }
                d.deserialize_str(LabelVisitor)
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
