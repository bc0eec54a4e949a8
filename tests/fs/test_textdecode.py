"""Bytes to text: BOMs, UTF-16, binary files, line ends and invalid UTF-8, the same way for every file."""

from __future__ import annotations

import codecs

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentcontext.fs.textdecode import UTF8_BOM, Prepared, decode, decode_file, prepare

FROM_UTF16 = "decoded from UTF-16 (byte order mark)"
INVALID_UTF16 = "invalid UTF-16 sequences were replaced"


def lf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def test_plain_utf8_is_kept_as_is() -> None:
    assert prepare("héllo\n".encode()) == Prepared("héllo\n".encode())
    assert decode_file("héllo\n".encode()) == ("héllo\n", ())


def test_a_utf8_byte_order_mark_is_stripped_silently() -> None:
    assert prepare(UTF8_BOM + b"rules") == Prepared(b"rules")
    assert decode_file(UTF8_BOM + b"rules\r\n") == ("rules\n", ())


def test_only_a_leading_utf8_bom_is_stripped() -> None:
    assert decode_file(b"a" + UTF8_BOM + b"b") == ("a\ufeffb", ())


@pytest.mark.parametrize(
    ("bom", "codec"),
    [(codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")],
    ids=["le", "be"],
)
def test_utf16_announced_by_its_bom_is_transcoded_with_a_warning(bom: bytes, codec: str) -> None:
    raw = bom + "Règles\r\nüber 😀\r".encode(codec)
    assert prepare(raw) == Prepared("Règles\r\nüber 😀\r".encode(), (FROM_UTF16,))
    assert decode_file(raw) == ("Règles\nüber 😀\n", (FROM_UTF16,))


def test_utf16_is_not_binary_although_its_bytes_hold_nuls() -> None:
    raw = "ascii only".encode("utf-16")
    assert b"\x00" in raw
    assert prepare(raw).binary is False


@pytest.mark.parametrize(
    "raw",
    [
        codecs.BOM_UTF16_LE + "ab".encode("utf-16-le") + b"c",  # an odd trailing byte
        codecs.BOM_UTF16_LE + b"\x00\xd8" + "a".encode("utf-16-le"),  # a lone high surrogate
        codecs.BOM_UTF16_BE + b"\xdc\x00" + "a".encode("utf-16-be"),  # a lone low surrogate
    ],
    ids=["odd-length", "lone-high-surrogate", "lone-low-surrogate"],
)
def test_invalid_utf16_is_replaced_with_a_second_warning(raw: bytes) -> None:
    text, warnings = decode_file(raw)
    assert text is not None and "\ufffd" in text
    assert warnings == (FROM_UTF16, INVALID_UTF16)


def test_a_bom_alone_is_an_empty_file() -> None:
    assert decode_file(codecs.BOM_UTF16_LE) == ("", (FROM_UTF16,))
    assert decode_file(UTF8_BOM) == ("", ())


@pytest.mark.parametrize("raw", [b"\x00\x01\x02binary", b"text\x00", UTF8_BOM + b"a\x00b"], ids=str)
def test_nul_bytes_outside_utf16_mean_binary(raw: bytes) -> None:
    assert prepare(raw).binary is True
    assert decode_file(raw) == (None, ())


def test_crlf_and_lone_cr_become_lf() -> None:
    assert decode(b"a\r\nb\rc\nd\r\r\ne\r") == ("a\nb\nc\nd\n\ne\n", ())


def test_invalid_utf8_is_replaced_with_a_warning_naming_the_first_bad_byte() -> None:
    assert decode(b"ok \xc3\x28 then \xff") == (
        "ok \ufffd( then \ufffd",
        ("contains invalid UTF-8 (invalid continuation byte at byte 3); invalid sequences were replaced",),
    )


def test_a_character_split_at_the_end_of_a_whole_file_is_invalid() -> None:
    text, warnings = decode("aé".encode()[:2])
    assert text == "a\ufffd"
    assert len(warnings) == 1 and warnings[0].startswith("contains invalid UTF-8 (unexpected end of data at byte 1)")


@pytest.mark.parametrize("char", ["é", "€", "😀"])
def test_a_budget_cut_inside_a_character_is_replaced_silently(char: str) -> None:
    encoded = ("ab" + char).encode()
    for cut in range(3, len(encoded)):
        assert decode(encoded[:cut], cut=True) == ("ab\ufffd", ())


def test_a_cut_file_with_invalid_bytes_before_the_cut_still_warns() -> None:
    text, warnings = decode(b"\xff ok \xc3", cut=True)
    assert text == "\ufffd ok \ufffd"
    assert len(warnings) == 1 and warnings[0].startswith("contains invalid UTF-8 (invalid start byte at byte 0)")


def test_decode_file_reports_the_utf16_warning_before_any_decode_warning() -> None:
    raw = codecs.BOM_UTF16_LE + "x\r\ny".encode("utf-16-le")
    assert decode_file(raw) == ("x\ny", (FROM_UTF16,))


TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\x00\ufeff\ufffd"))


@given(text=TEXT)
def test_utf8_utf8_bom_and_utf16_decode_to_the_same_lf_text(text: str) -> None:
    expected = lf(text)
    assert decode_file(text.encode("utf-8")) == (expected, ())
    assert decode_file(UTF8_BOM + text.encode("utf-8")) == (expected, ())
    assert decode_file(codecs.BOM_UTF16_LE + text.encode("utf-16-le")) == (expected, (FROM_UTF16,))
    assert decode_file(codecs.BOM_UTF16_BE + text.encode("utf-16-be")) == (expected, (FROM_UTF16,))


@given(text=TEXT, data=st.data())
def test_a_budget_cut_anywhere_never_warns_and_keeps_the_text_before_it(text: str, data: st.DataObject) -> None:
    encoded = text.encode("utf-8")
    cut = data.draw(st.integers(0, len(encoded)))
    decoded, warnings = decode(encoded[:cut], cut=cut < len(encoded))
    assert warnings == ()
    whole = encoded[:cut].decode("utf-8", errors="ignore")
    assert decoded in (lf(whole), lf(whole) + "\ufffd")


@given(
    raw=st.binary(max_size=40)
    | st.builds(lambda a, b: a + b, st.sampled_from([b"", UTF8_BOM, b"\xff\xfe"]), TEXT.map(lambda t: t.encode()))
)
def test_the_one_step_decode_of_plain_utf8_agrees_with_preparing_then_decoding(raw: bytes) -> None:
    prepared = prepare(raw)
    if prepared.binary:
        assert decode_file(raw) == (None, prepared.warnings)
        return
    text, warnings = decode(prepared.data)
    assert decode_file(raw) == (text, prepared.warnings + warnings)
