//! Escaping and unescaping, one case per escape in each direction.
use tcrunner_protocol::{escape, escape_into, unescape, UnescapeError};

/// Every escape the writer produces: (raw character, escaped form).
const TABLE: &[(&str, &str)] = &[
    ("'", "|'"),
    ("|", "||"),
    ("\n", "|n"),
    ("\r", "|r"),
    ("[", "|["),
    ("]", "|]"),
    ("\u{85}", "|x"),
    ("\u{2028}", "|l"),
    ("\u{2029}", "|p"),
    ("\0", "|0x0000"),
    ("\u{1b}", "|0x001b"),
    ("\u{7f}", "|0x007f"),
];

#[test]
fn each_special_character_is_escaped() {
    for (raw, escaped) in TABLE {
        assert_eq!(escape(raw), *escaped, "escaping {raw:?}");
        assert_eq!(
            escape(&format!("a{raw}b")),
            format!("a{escaped}b"),
            "escaping {raw:?} inside text"
        );
    }
}

#[test]
fn each_escape_is_unescaped() {
    for (raw, escaped) in TABLE {
        assert_eq!(
            unescape(escaped).as_deref(),
            Ok(*raw),
            "unescaping {escaped}"
        );
        assert_eq!(
            unescape(&format!("a{escaped}b")),
            Ok(format!("a{raw}b")),
            "unescaping {escaped} inside text"
        );
    }
}

#[test]
fn everything_else_is_written_raw() {
    let raw = "tab\t é 😀 \u{80} \u{9f} \u{2030} ~!@#$%^&*()\"\\";
    assert_eq!(escape(raw), raw);
    assert_eq!(unescape(raw).as_deref(), Ok(raw));
}

#[test]
fn escape_into_appends() {
    let mut out = String::from("k='");
    escape_into("it's", &mut out);
    assert_eq!(out, "k='it|'s");
}

#[test]
fn all_escapes_together_round_trip() {
    let raw: String = TABLE.iter().map(|(raw, _)| *raw).collect();
    let escaped: String = TABLE.iter().map(|(_, escaped)| *escaped).collect();
    assert_eq!(escape(&raw), escaped);
    assert_eq!(unescape(&escaped), Ok(raw));
}

#[test]
fn hex_escape_is_one_utf16_unit() {
    assert_eq!(unescape("|0x0041").as_deref(), Ok("A"));
    assert_eq!(unescape("|0x00e9|0x00E9").as_deref(), Ok("éé"));
    assert_eq!(unescape("a|0x2028b").as_deref(), Ok("a\u{2028}b"));
    assert_eq!(
        unescape("|0x00000").as_deref(),
        Ok("\u{0}0"),
        "exactly four digits are read"
    );
}

#[test]
fn hex_surrogate_pair_joins_into_one_char() {
    assert_eq!(unescape("|0xD83D|0xDE00").as_deref(), Ok("😀"));
    assert_eq!(unescape("x|0xd83d|0xde00y").as_deref(), Ok("x😀y"));
}

#[test]
fn lone_surrogates_are_bad_hex() {
    assert_eq!(
        unescape("ab|0xD83D"),
        Err(UnescapeError::BadHex { offset: 2 }),
        "high at the end"
    );
    assert_eq!(
        unescape("|0xD83Dx"),
        Err(UnescapeError::BadHex { offset: 0 }),
        "high then text"
    );
    assert_eq!(
        unescape("|0xD83D|0xD83D"),
        Err(UnescapeError::BadHex { offset: 0 }),
        "high then high"
    );
    assert_eq!(
        unescape("a|0xDE00"),
        Err(UnescapeError::BadHex { offset: 1 }),
        "low alone"
    );
}

#[test]
fn malformed_hex_is_bad_hex() {
    assert_eq!(
        unescape("|0x12"),
        Err(UnescapeError::BadHex { offset: 0 }),
        "too short"
    );
    assert_eq!(
        unescape("é|0x12g4"),
        Err(UnescapeError::BadHex { offset: 1 }),
        "not hex"
    );
}

#[test]
fn unknown_escape_reports_its_character_offset() {
    assert_eq!(
        unescape("ab|q"),
        Err(UnescapeError::Unknown {
            offset: 2,
            found: 'q'
        })
    );
    assert_eq!(
        unescape("éé|N"),
        Err(UnescapeError::Unknown {
            offset: 2,
            found: 'N'
        }),
        "offsets count chars"
    );
    assert_eq!(
        unescape("|0y"),
        Err(UnescapeError::Unknown {
            offset: 0,
            found: '0'
        })
    );
    assert_eq!(
        unescape("| "),
        Err(UnescapeError::Unknown {
            offset: 0,
            found: ' '
        })
    );
}

#[test]
fn dangling_pipe_reports_its_character_offset() {
    assert_eq!(unescape("abc|"), Err(UnescapeError::Dangling { offset: 3 }));
    assert_eq!(unescape("|"), Err(UnescapeError::Dangling { offset: 0 }));
    assert_eq!(
        unescape("||||"),
        Ok("||".to_owned()),
        "escaped pipes are not dangling"
    );
}

#[test]
fn error_messages_are_lowercase_and_name_the_offset() {
    assert_eq!(
        UnescapeError::Unknown {
            offset: 2,
            found: 'q'
        }
        .to_string(),
        "unknown escape `|q` at character 2"
    );
    assert_eq!(
        UnescapeError::Dangling { offset: 3 }.to_string(),
        "dangling `|` at character 3"
    );
    assert_eq!(
        UnescapeError::BadHex { offset: 0 }.to_string(),
        "bad `|0x` escape at character 0"
    );
}
