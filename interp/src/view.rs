//! Typed views of raw bytes: the element types a dump, a register or an expectation can be
//! shown in (`u8 i8 u16 i16 u32 i32 u64 i64 f32 f64`), how each value prints, how it goes
//! into JSON, and how a written value becomes bytes again. Little-endian throughout.

use serde_json::Value;
use std::fmt;

/// An element type of a typed view (serialized as its name, `f32`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElemType {
    /// Unsigned byte.
    U8,
    /// Signed byte.
    I8,
    /// Unsigned 16-bit.
    U16,
    /// Signed 16-bit.
    I16,
    /// Unsigned 32-bit.
    U32,
    /// Signed 32-bit.
    I32,
    /// Unsigned 64-bit.
    U64,
    /// Signed 64-bit.
    I64,
    /// IEEE 754 single.
    F32,
    /// IEEE 754 double.
    F64,
}

impl ElemType {
    /// Every type, in the order of the documentation.
    pub const ALL: [ElemType; 10] = [
        ElemType::U8,
        ElemType::I8,
        ElemType::U16,
        ElemType::I16,
        ElemType::U32,
        ElemType::I32,
        ElemType::U64,
        ElemType::I64,
        ElemType::F32,
        ElemType::F64,
    ];

    /// The name as written (`f32`).
    pub const fn name(self) -> &'static str {
        match self {
            ElemType::U8 => "u8",
            ElemType::I8 => "i8",
            ElemType::U16 => "u16",
            ElemType::I16 => "i16",
            ElemType::U32 => "u32",
            ElemType::I32 => "i32",
            ElemType::U64 => "u64",
            ElemType::I64 => "i64",
            ElemType::F32 => "f32",
            ElemType::F64 => "f64",
        }
    }

    /// The type named `name` (any case).
    pub fn parse(name: &str) -> Option<ElemType> {
        ElemType::ALL
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(name))
    }

    /// Bytes per element.
    pub const fn size(self) -> usize {
        match self {
            ElemType::U8 | ElemType::I8 => 1,
            ElemType::U16 | ElemType::I16 => 2,
            ElemType::U32 | ElemType::I32 | ElemType::F32 => 4,
            ElemType::U64 | ElemType::I64 | ElemType::F64 => 8,
        }
    }

    /// The element at the start of `b` (at least [`ElemType::size`] bytes).
    fn raw(self, b: &[u8]) -> u64 {
        let mut w = [0u8; 8];
        w[..self.size()].copy_from_slice(&b[..self.size()]);
        u64::from_le_bytes(w)
    }

    /// The elements of `bytes` (a trailing partial element is left out).
    pub fn values(self, bytes: &[u8]) -> impl Iterator<Item = Elem> + '_ {
        bytes
            .chunks_exact(self.size())
            .map(move |c| Elem(self, self.raw(c)))
    }

    /// The low [`ElemType::size`] bytes of a 64-bit lane or register as one element.
    pub fn of_lane(self, lane: u64) -> Elem {
        self.values(&lane.to_le_bytes())
            .next()
            .unwrap_or(Elem(self, 0))
    }

    /// The bytes of a written value: a decimal or `0x` integer (with `-` on any type; it must
    /// fit the type as signed or unsigned), or for f32/f64 a decimal float, `inf`, `-inf`,
    /// `nan` (the quiet NaN with sign clear). `None` when it does not parse or fit.
    pub fn encode(self, text: &str) -> Option<Vec<u8>> {
        let bits = match self {
            ElemType::F32 => {
                let v: f32 = parse_float(text)?;
                u64::from(if v.is_nan() { 0x7fc0_0000 } else { v.to_bits() })
            }
            ElemType::F64 => {
                let v: f64 = parse_float(text)?;
                if v.is_nan() {
                    0x7ff8_0000_0000_0000
                } else {
                    v.to_bits()
                }
            }
            _ => {
                let (neg, body) = match text.strip_prefix('-') {
                    Some(b) => (true, b),
                    None => (false, text),
                };
                let body = body.replace('_', "");
                let mag = match body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
                    Some(h) => u128::from_str_radix(h, 16).ok()?,
                    None if body.bytes().all(|b| b.is_ascii_digit()) => body.parse().ok()?,
                    None => return None,
                };
                let bits = 8 * self.size() as u32;
                let v = if neg {
                    // At least -2^(bits-1).
                    if mag > 1u128 << (bits - 1) {
                        return None;
                    }
                    (mag as u64).wrapping_neg()
                } else {
                    if mag >= 1u128 << bits {
                        return None;
                    }
                    mag as u64
                };
                if bits < 64 { v & ((1 << bits) - 1) } else { v }
            }
        };
        Some(bits.to_le_bytes()[..self.size()].to_vec())
    }
}

fn parse_float<T: std::str::FromStr>(text: &str) -> Option<T> {
    let lower = text.to_ascii_lowercase();
    let body = lower.trim_start_matches(['-', '+']);
    let ok = body == "inf"
        || body == "nan"
        || (!body.is_empty()
            && body
                .bytes()
                .all(|b| b.is_ascii_digit() || b"+-.e".contains(&b)));
    if ok { lower.parse().ok() } else { None }
}

impl fmt::Display for ElemType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One element: its type and its bits (zero-extended).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Elem(pub ElemType, pub u64);

impl Elem {
    fn signed(self) -> i64 {
        let bits = 8 * self.0.size() as u32;
        ((self.1 << (64 - bits)) as i64) >> (64 - bits)
    }

    /// The value as JSON: a number for integers and finite floats, `"nan"`, `"inf"` or
    /// `"-inf"` otherwise (JSON has no such numbers).
    pub fn json(self) -> Value {
        match self.0 {
            ElemType::U8 | ElemType::U16 | ElemType::U32 | ElemType::U64 => self.1.into(),
            ElemType::I8 | ElemType::I16 | ElemType::I32 | ElemType::I64 => self.signed().into(),
            ElemType::F32 | ElemType::F64 => {
                let v = self.float();
                if v.is_finite() {
                    // An f32 goes through its shortest decimal, so 0.1f32 reads as 0.1.
                    let text = self.to_string();
                    text.parse::<f64>().map_or(Value::Null, Value::from)
                } else {
                    self.to_string().into()
                }
            }
        }
    }

    fn float(self) -> f64 {
        match self.0 {
            ElemType::F32 => f64::from(f32::from_bits(self.1 as u32)),
            _ => f64::from_bits(self.1),
        }
    }
}

impl fmt::Display for Elem {
    /// Integers in decimal; floats in their shortest round-tripping decimal, `inf`, `-inf`,
    /// `nan` (`-nan` when the sign bit is set).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let nan = |neg: bool| if neg { "-nan" } else { "nan" };
        match self.0 {
            ElemType::U8 | ElemType::U16 | ElemType::U32 | ElemType::U64 => {
                write!(f, "{}", self.1)
            }
            ElemType::I8 | ElemType::I16 | ElemType::I32 | ElemType::I64 => {
                write!(f, "{}", self.signed())
            }
            ElemType::F32 => {
                let v = f32::from_bits(self.1 as u32);
                match v {
                    _ if v.is_nan() => f.write_str(nan(v.is_sign_negative())),
                    f32::INFINITY => f.write_str("inf"),
                    f32::NEG_INFINITY => f.write_str("-inf"),
                    _ => write!(f, "{v:?}"),
                }
            }
            ElemType::F64 => {
                let v = f64::from_bits(self.1);
                match v {
                    _ if v.is_nan() => f.write_str(nan(v.is_sign_negative())),
                    f64::INFINITY => f.write_str("inf"),
                    f64::NEG_INFINITY => f.write_str("-inf"),
                    _ => write!(f, "{v:?}"),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_print_and_encode_back() {
        let bytes = [0x00, 0x00, 0x20, 0x40, 0x00, 0x00, 0xc0, 0x7f];
        let v: Vec<String> = ElemType::F32
            .values(&bytes)
            .map(|e| e.to_string())
            .collect();
        assert_eq!(v, ["2.5", "nan"]);
        let v: Vec<String> = ElemType::I16
            .values(&bytes)
            .map(|e| e.to_string())
            .collect();
        assert_eq!(v, ["0", "16416", "0", "32704"]);
        assert_eq!(ElemType::I8.of_lane(0xff).to_string(), "-1");
        assert_eq!(ElemType::U8.of_lane(0x1ff).to_string(), "255");
        assert_eq!(ElemType::F32.encode("2.5"), Some(bytes[..4].to_vec()));
        assert_eq!(ElemType::F32.encode("nan"), Some(bytes[4..].to_vec()));
        assert_eq!(ElemType::I16.encode("-1"), Some(vec![0xff, 0xff]));
        assert_eq!(ElemType::U16.encode("0xffff"), Some(vec![0xff, 0xff]));
        assert_eq!(ElemType::U16.encode("0x10000"), None);
        assert_eq!(ElemType::I8.encode("-129"), None);
        assert_eq!(ElemType::I8.encode("-128"), Some(vec![0x80]));
        assert_eq!(ElemType::F64.encode("x"), None);
        assert_eq!(
            ElemType::F32.of_lane(0x3dcc_cccd).json(),
            serde_json::json!(0.1)
        );
        assert_eq!(ElemType::F64.of_lane(0xfff0_0000_0000_0000).json(), "-inf");
        assert_eq!(
            ElemType::I64.of_lane(u64::MAX).json(),
            serde_json::json!(-1)
        );
        assert_eq!(ElemType::parse("F32"), Some(ElemType::F32));
        assert_eq!(ElemType::parse("f16"), None);
    }
}
