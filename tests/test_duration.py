"""Go's time.ParseDuration, ported: Go's own test tables plus the error texts symdiff shows."""

from __future__ import annotations

import pytest

from symdiff import DurationError, InvalidArgs, parse_go_duration
from symdiff.duration import go_quote

NANOSECOND = 1
MICROSECOND = 1000 * NANOSECOND
MILLISECOND = 1000 * MICROSECOND
SECOND = 1000 * MILLISECOND
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE

# Ported verbatim from golang/go src/time/time_test.go, parseDurationTests.
PARSE_DURATION_TESTS: list[tuple[str, int]] = [
    # simple
    ("0", 0),
    ("5s", 5 * SECOND),
    ("30s", 30 * SECOND),
    ("1478s", 1478 * SECOND),
    # sign
    ("-5s", -5 * SECOND),
    ("+5s", 5 * SECOND),
    ("-0", 0),
    ("+0", 0),
    # decimal
    ("5.0s", 5 * SECOND),
    ("5.6s", 5 * SECOND + 600 * MILLISECOND),
    ("5.s", 5 * SECOND),
    (".5s", 500 * MILLISECOND),
    ("1.0s", 1 * SECOND),
    ("1.00s", 1 * SECOND),
    ("1.004s", 1 * SECOND + 4 * MILLISECOND),
    ("1.0040s", 1 * SECOND + 4 * MILLISECOND),
    ("100.00100s", 100 * SECOND + 1 * MILLISECOND),
    # different units
    ("10ns", 10 * NANOSECOND),
    ("11us", 11 * MICROSECOND),
    ("12µs", 12 * MICROSECOND),  # U+00B5
    ("12μs", 12 * MICROSECOND),  # U+03BC
    ("13ms", 13 * MILLISECOND),
    ("14s", 14 * SECOND),
    ("15m", 15 * MINUTE),
    ("16h", 16 * HOUR),
    # composite durations
    ("3h30m", 3 * HOUR + 30 * MINUTE),
    ("10.5s4m", 4 * MINUTE + 10 * SECOND + 500 * MILLISECOND),
    ("-2m3.4s", -(2 * MINUTE + 3 * SECOND + 400 * MILLISECOND)),
    (
        "1h2m3s4ms5us6ns",
        1 * HOUR + 2 * MINUTE + 3 * SECOND + 4 * MILLISECOND + 5 * MICROSECOND + 6 * NANOSECOND,
    ),
    ("39h9m14.425s", 39 * HOUR + 9 * MINUTE + 14 * SECOND + 425 * MILLISECOND),
    # large value
    ("52763797000ns", 52763797000 * NANOSECOND),
    # more than 9 digits after decimal point, see https://golang.org/issue/6617
    ("0.3333333333333333333h", 20 * MINUTE),
    # 9007199254740993 = 1<<53+1 cannot be stored precisely in a float64
    ("9007199254740993ns", (1 << 53) + 1),
    # largest duration that can be represented by int64 in nanoseconds
    ("9223372036854775807ns", (1 << 63) - 1),
    ("9223372036854775.807us", (1 << 63) - 1),
    ("9223372036s854ms775us807ns", (1 << 63) - 1),
    ("-9223372036854775808ns", -(1 << 63)),
    ("-9223372036854775.808us", -(1 << 63)),
    ("-9223372036s854ms775us808ns", -(1 << 63)),
    # largest negative value
    ("-9223372036854775808ns", -(1 << 63)),
    # largest negative round trip value, see https://golang.org/issue/48629
    ("-2562047h47m16.854775808s", -(1 << 63)),
    # huge string; issue 15011.
    ("0.100000000000000000000h", 6 * MINUTE),
    # This value tests the first overflow check in leadingFraction.
    ("0.830103483285477580700h", 49 * MINUTE + 48 * SECOND + 372539827 * NANOSECOND),
]

# Ported verbatim from golang/go src/time/time_test.go, parseDurationErrorTests: the input and
# the quoted form the error text must contain. Go strings with invalid UTF-8 are bytes here.
PARSE_DURATION_ERROR_TESTS: list[tuple[str | bytes, str]] = [
    # invalid
    ("", '""'),
    ("3", '"3"'),
    ("-", '"-"'),
    ("s", '"s"'),
    (".", '"."'),
    ("-.", '"-."'),
    (".s", '".s"'),
    ("+.s", '"+.s"'),
    ("1d", '"1d"'),
    (b"\x85\x85", r'"\x85\x85"'),
    (b"\xffff", r'"\xffff"'),
    (b"hello \xffff world", r'"hello \xffff world"'),
    ("\ufffd", r'"\xef\xbf\xbd"'),  # utf8.RuneError
    ("\ufffd hello \ufffd world", r'"\xef\xbf\xbd hello \xef\xbf\xbd world"'),  # utf8.RuneError
    # overflow
    ("9223372036854775810ns", '"9223372036854775810ns"'),
    ("9223372036854775808ns", '"9223372036854775808ns"'),
    ("-9223372036854775809ns", '"-9223372036854775809ns"'),
    ("9223372036854776us", '"9223372036854776us"'),
    ("3000000h", '"3000000h"'),
    ("9223372036854775.808us", '"9223372036854775.808us"'),
    ("9223372036854ms775us808ns", '"9223372036854ms775us808ns"'),
]


@pytest.mark.parametrize(("text", "want"), PARSE_DURATION_TESTS)
def test_go_parse_duration_table(text: str, want: int) -> None:
    assert parse_go_duration(text) == want


@pytest.mark.parametrize(("text", "expect"), PARSE_DURATION_ERROR_TESTS)
def test_go_parse_duration_error_table(text: str | bytes, expect: str) -> None:
    with pytest.raises(DurationError) as info:
        parse_go_duration(text)
    assert expect in str(info.value)


def test_round_trip_of_the_extremes() -> None:
    # Go's Duration(math.MaxInt64).String() and Duration(math.MinInt64).String().
    assert parse_go_duration("2562047h47m16.854775807s") == (1 << 63) - 1
    assert parse_go_duration("-2562047h47m16.854775808s") == -(1 << 63)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("24h", 24 * HOUR),
        ("720h", 720 * HOUR),
        ("1h1h", 2 * HOUR),
        ("1m30s2h", 2 * HOUR + 90 * SECOND),
        (".5h", 30 * MINUTE),
        ("1.h", HOUR),
        ("1.5h", 90 * MINUTE),
        ("-1.5h", -90 * MINUTE),
        ("+.25m", 15 * SECOND),
        ("0h", 0),
        ("-0s", 0),
        ("000001s", SECOND),
        ("1µs1μs1us", 3 * MICROSECOND),
        # Fractions truncate toward zero after float64 scaling, as in Go.
        ("0.0000000001s", 0),
        ("1.9ns", 1),
        ("0.1ns", 0),
        # Go adds in uint64, where 2^63 + 2^63 wraps to 0: its result is 0, not an error.
        ("9223372036854775808ns9223372036854775808ns", 0),
    ],
)
def test_more_go_semantics(text: str, want: int) -> None:
    assert parse_go_duration(text) == want


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # Go reads "1" then the unit " day": an unknown unit, not a generic invalid duration.
        ("1 day", 'time: unknown unit " day" in duration "1 day"'),
        ("day", 'time: invalid duration "day"'),
        ("7", 'time: missing unit in duration "7"'),
        ("7d", 'time: unknown unit "d" in duration "7d"'),
        ("1w", 'time: unknown unit "w" in duration "1w"'),
        ("1H", 'time: unknown unit "H" in duration "1H"'),
        ("", 'time: invalid duration ""'),
        (" 24h", 'time: invalid duration " 24h"'),
        ("24h ", 'time: unknown unit "h " in duration "24h "'),
        ("1h-1m", 'time: unknown unit "h-" in duration "1h-1m"'),
        ("--1h", 'time: invalid duration "--1h"'),
        ("1..5h", 'time: missing unit in duration "1..5h"'),
        ('1"s', 'time: unknown unit "\\"s" in duration "1\\"s"'),
        ("1\\s", 'time: unknown unit "\\\\s" in duration "1\\\\s"'),
        ("1\ts", 'time: unknown unit "\\x09s" in duration "1\\x09s"'),
        ("1é", 'time: unknown unit "\\xc3\\xa9" in duration "1\\xc3\\xa9"'),
        ("5\udcffs", 'time: unknown unit "\\xffs" in duration "5\\xffs"'),
    ],
)
def test_error_messages_are_gos(text: str, message: str) -> None:
    with pytest.raises(DurationError) as info:
        parse_go_duration(text)
    assert str(info.value) == message
    assert info.value.render() == f"invalid_args: {message}"


def test_duration_error_is_invalid_args_and_value_error() -> None:
    with pytest.raises(InvalidArgs):
        parse_go_duration("7d")
    with pytest.raises(ValueError):
        parse_go_duration("7d")


def test_go_quote_escapes_like_go() -> None:
    assert go_quote(b'a"b\\c') == '"a\\"b\\\\c"'
    assert go_quote(b"\x7f") == '"\x7f"'
    assert go_quote("µ".encode()) == '"\\xc2\\xb5"'


# 400 KB inputs: a parser that rebuilt the error text (or copied the input) for every term was
# quadratic and took hours on these; linear parsing answers in a fraction of a second.
LONG_TERMS = 200_000


def test_long_valid_input_parses() -> None:
    assert parse_go_duration("1h" * LONG_TERMS) == LONG_TERMS * HOUR
    assert parse_go_duration("-" + "1h" * LONG_TERMS) == -LONG_TERMS * HOUR


def test_long_input_with_a_bad_last_unit_fails_with_gos_message() -> None:
    text = "1h" * (LONG_TERMS - 1) + "1d"
    with pytest.raises(DurationError) as info:
        parse_go_duration(text)
    assert str(info.value) == f'time: unknown unit "d" in duration "{text}"'


def test_long_input_whose_sum_overflows_is_invalid() -> None:
    # 2562047h is the largest whole number of hours; Go rejects the sum once it passes 2^63.
    text = "1000h" * (LONG_TERMS * 2 // 5)
    with pytest.raises(DurationError) as info:
        parse_go_duration(text)
    assert str(info.value) == f'time: invalid duration "{text}"'
