"""tests/outputs.py: the comparison used against the oracle's expected lines."""

from __future__ import annotations

from pathlib import Path

from outputs import compare_outputs, read_output

PAD = ",NULL,NULL" * 9
EXPECTED = [f"2013-01-01 00:00:00,2013-01-01 00:01:00,1.1,2.1{PAD},*",
            f"2013-01-01 00:31:00,2013-01-01 00:31:00,NULL,NULL{PAD},NULL"]


def test_equal_outputs_with_measured_delays() -> None:
    actual = [EXPECTED[0].replace(",*", ",0.125"), EXPECTED[1]]
    assert compare_outputs(actual, EXPECTED) == []


def test_a_different_field_is_reported_with_its_line_and_field() -> None:
    actual = [EXPECTED[0].replace("2.1", "2.2").replace(",*", ",3.000"), EXPECTED[1]]
    problems = compare_outputs(actual, EXPECTED)
    assert len(problems) == 1 and problems[0].startswith("line 1: fields [4] differ")


def test_delay_must_be_null_exactly_for_expiry_lines() -> None:
    arrival_null = [EXPECTED[0].replace(",*", ",NULL"), EXPECTED[1]]
    assert "not a number with 3 decimals" in compare_outputs(arrival_null, EXPECTED)[0]
    expiry_number = [EXPECTED[0].replace(",*", ",1.000"), EXPECTED[1].rsplit(",", 1)[0] + ",0.500"]
    assert "expected NULL" in compare_outputs(expiry_number, EXPECTED)[0]
    for bad in ("1.5", "-1.000", "1.0000", "*", "1e3"):
        assert compare_outputs([EXPECTED[0].replace(",*", "," + bad)], EXPECTED[:1])


def test_missing_extra_and_short_lines() -> None:
    one = [EXPECTED[0].replace(",*", ",0.001")]
    assert any("line count" in p for p in compare_outputs(one, EXPECTED))
    assert any("extra actual" in p for p in compare_outputs(one + one + one, EXPECTED))
    assert "fields, expected" in compare_outputs(["a,b,c"], EXPECTED[:1])[0]


def test_read_output_handles_crlf_and_missing_final_newline(tmp_path: Path) -> None:
    path = tmp_path / "q1.csv"
    path.write_bytes(b"a,1\r\nb,2")
    assert read_output(path) == ["a,1", "b,2"]
    path.write_bytes(b"")
    assert read_output(path) == []
