"""``ptonum check`` on whole-tile files (tiles.json.gz): the shared file passes in both
engines; a changed expected bit, changed flags, a committed case turned into a rejected
one (and back) and malformed items are each reported by item, with exit 1 or 2."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any, Callable, Dict, List

import pytest
from click.testing import CliRunner

from conftest import vectors_dir
from ptonum.cli import main
from ptonum.conformance.tiles import check_tiles, parse_tile_items, parse_tiles, read_tiles
from ptonum.errors import UsageError

SHARED = vectors_dir() / "tiles.json.gz"


def _items() -> List[Dict[str, Any]]:
    with gzip.open(SHARED, "rt") as fh:
        return json.load(fh)


def _write(tmp_path: Path, items: List[Dict[str, Any]], name: str = "t.json") -> str:
    p = tmp_path / name
    p.write_text(json.dumps(items))
    return str(p)


def test_shared_tiles_pass_both_engines() -> None:
    cases = read_tiles(str(SHARED))
    assert len(cases) == 96
    assert sum(c.expected is None for c in cases) == 15
    for engine in ("fast", "reference"):
        rep = check_tiles(cases, str(SHARED), engine)
        assert rep.ok and rep.passed == 96, rep.failures[:3]


def test_cli_check_shared_tiles() -> None:
    r = CliRunner().invoke(main, ["check", str(SHARED), "--engine", "both"])
    assert r.exit_code == 0, r.output
    assert "PASS: 96 row(s) checked in both engines" in r.output  # each tile counted once (was 192)


def test_cli_check_limit_and_sample_apply_to_tile_cases() -> None:
    """--limit / --sample choose tile cases as they choose CSV rows (they were ignored for tile files)."""
    for opts, n in ((["--limit", "3"], 3), (["--sample", "5", "--seed", "1"], 5)):
        r = CliRunner().invoke(main, ["check", str(SHARED), *opts])
        assert r.exit_code == 0 and f"PASS: {n} row(s) checked" in r.output, r.output
    cases = read_tiles(str(SHARED))
    rep = check_tiles(cases, str(SHARED), "fast", select=[2, 90])
    assert (rep.rows, rep.checked, rep.passed) == (96, 2, 2)


def _first(items: List[Dict[str, Any]], legal: bool) -> int:
    for i, it in enumerate(items):
        e = it["expected"]
        if ("error" not in e and e["sources_legal"]) == legal:
            return i
    raise AssertionError("no such item")


def test_flipped_bit_flags_and_legality_are_mismatches(tmp_path: Path) -> None:
    items = _items()
    i = _first(items, True)
    d0 = items[i]["expected"]["d"][0][0]
    items[i]["expected"]["d"][0][0] = hex(int(d0, 16) ^ 1)
    j = _first(items[i + 1 :], True) + i + 1
    items[j]["expected"]["flags"] = hex(int(items[j]["expected"]["flags"], 16) ^ 0x10)
    k = _first(items, False)
    items[k]["expected"] = {k2: v for k2, v in items[k]["expected"].items() if k2 != "error"}
    items[k]["expected"]["sources_legal"] = True
    items[k]["expected"].setdefault("dst_type", "FP16")
    items[k]["expected"].setdefault("d", [["0x0"] * len(items[k]["case"]["acc"][0])] * len(items[k]["case"]["acc"]))
    items[k]["expected"].setdefault("flags", "0x00")
    path = _write(tmp_path, items)
    r = CliRunner().invoke(main, ["check", path])
    assert r.exit_code == 1, r.output
    assert f"  {path}: item {i}: tile: " in r.output and "D: 1 element(s) differ, first [0, 0]" in r.output
    assert f"  {path}: item {j}: tile: " in r.output and "flags" in r.output
    # expected first, then what the model gives, as every other mismatch line says it (h-user stop 36)
    want = int(items[j]["expected"]["flags"], 16)
    assert re.search(rf"item {j}: tile: .*: flags: expected {want:#04x} \([A-Z|-]+\), got {want ^ 0x10:#04x} ",
                     r.output), r.output
    assert f"  {path}: item {k}: tile: " in r.output and "rejected, but the ASL commits it" in r.output
    assert r.stdout.splitlines()[-1] == "FAIL: 3 failing row(s); 96 row(s) checked"


def test_accepting_a_rejected_case_is_a_mismatch(tmp_path: Path) -> None:
    items = _items()
    i = _first(items, True)
    items[i]["expected"]["sources_legal"] = False
    r = CliRunner().invoke(main, ["check", _write(tmp_path, items[i : i + 1])])
    assert r.exit_code == 1 and "committed, but the ASL rejects" in r.output


def test_malformed_tile_case_is_counted_and_the_others_checked(tmp_path: Path) -> None:
    """A malformed case is a failing case (exit 1, counted as malformed, the others checked), as a malformed
    CSV row is (was: the whole file refused, exit 2, no case checked; try14 #7)."""
    items = _items()[:4]
    items[1]["case"]["acc"][0][0] = "12"
    del items[3]["case"]["acc"]
    path = _write(tmp_path, items)
    r = CliRunner(env={"COLUMNS": "250"}).invoke(main, ["check", path, "--engine", "both"])
    assert r.exit_code == 1, r.output
    assert r.stderr == ""
    # the same in both engines: listed once, for both (it was listed twice, once per engine)
    assert f"{path} [both engines] tiles: 2 malformed row(s); first 2:\n" in r.stdout
    assert r.stdout.count(f"  {path}: malformed tile: item 1.case.acc[0][0] = '12': expected a 0x-prefixed hex "
                          "string\n") == 1
    assert r.stdout.count(f"  {path}: malformed tile: item 3.case: missing field 'acc'\n") == 1
    assert re.search(r"tiles +│ fast +│ +4 │ +2 │ +2 │ +0 │ +2 │", r.stdout), r.stdout
    assert re.search(r"tiles +│ reference +│ +4 │ +2 │ +2 │ +0 │ +2 │", r.stdout), r.stdout
    # the table's failed 0, malformed 2; each case counted once
    assert r.stdout.splitlines()[-1] == "FAIL: 2 malformed row(s); 2 row(s) checked in both engines"
    # every case malformed: no case checked, an error naming the first (was: exit 1, a table row of 0 checked)
    path = _write(tmp_path, [items[1], items[3]])
    r = CliRunner().invoke(main, ["check", path])
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert r.stderr == (f"ptonum check: error: {path} [fast]: no rows checked (every tile case is malformed, 2 tile "
                        f"case(s); first {path}: item 0.case.acc[0][0] = '12': expected a 0x-prefixed hex string)\n")
    # the library's strict reader still raises on the first malformed case
    with pytest.raises(UsageError, match=r"item 1.case.acc\[0\]\[0\] = '12'"):
        parse_tiles(json.dumps(items).encode(), "t.json")


@pytest.mark.parametrize("flags", ["0x100", "0x20", -1, 20, None, "OF|NX"])
def test_corrupt_flags_of_a_tile_case_is_a_malformed_case_naming_it(tmp_path: Path, flags) -> None:
    items = _items()[:2]
    items[1]["expected"]["flags"] = flags
    path = _write(tmp_path, items)
    r = CliRunner(env={"COLUMNS": "250"}).invoke(main, ["check", path])
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    assert f"  {path}: malformed tile: item 1.expected.flags = " in r.stdout
    assert r.stdout.splitlines()[-1] == "FAIL: 1 malformed row(s); 1 row(s) checked"


@pytest.mark.parametrize("two_rows", [False, True], ids=["more-rows", "two-rows"])
def test_ragged_acc_blames_the_odd_row(two_rows: bool) -> None:
    """Row 0 of an acc one element short: the message names row 0 against row 1.  Was: with more than two
    rows, `acc[1]: 24 elements, expected 23`; with two rows (break-findings), row 1 could be blamed."""
    item = next(it for it in _items() if (len(it["case"]["acc"]) == 2 and "error" not in it["expected"]
                                          if two_rows else len(it["case"]["acc"]) > 2))
    n = len(item["case"]["acc"][0])
    item["case"]["acc"][0].pop()
    with pytest.raises(UsageError) as exc:
        parse_tiles(json.dumps([item]).encode(), "t.json")
    assert str(exc.value) == (f"t.json: item 0.case.acc: rows of different lengths: row 0 has {n - 1} elements, "
                              f"row 1 has {n}")


def test_not_a_tile_list_is_one_line_exit_2(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("[{\"case\": ")
    r = CliRunner().invoke(main, ["check", str(tmp_path / "bad.json")])
    assert r.exit_code == 2 and "not a JSON tile list" in r.output and "Traceback" not in r.output


def test_a_mismatch_shows_words_at_their_width(tmp_path: Path) -> None:
    """A differing 8-bit D word was shown as 0x0 (0x00 in the file); words keep their width: D's carrier, 8 digits
    for RowMaxOut / GroupMaxOut."""
    items = _items()
    i = next(k for k, it in enumerate(items) if it["expected"].get("dst_type") == "S8")
    w = int(items[i]["expected"]["d"][0][0], 16)  # the ASL's (and the model's) D[0, 0]
    items[i]["expected"]["d"][0][0] = "0x00" if w else "0x01"
    path = _write(tmp_path, items)
    r = CliRunner(env={"COLUMNS": "250"}).invoke(main, ["check", path, "--engine", "reference"])
    assert r.exit_code == 1, r.output
    assert (f"D: 1 element(s) differ, first [0, 0]: expected {'0x00' if w else '0x01'}, got 0x{w:02x}"
            in r.stdout), r.stdout


def test_json_nested_too_deeply_is_one_line_exit_2(tmp_path: Path) -> None:
    """Was 'internal error: RecursionError: maximum recursion depth exceeded while decoding a JSON array'."""
    (tmp_path / "deep.json").write_text("[" * 100000 + "]" * 100000)
    for args in (["check", str(tmp_path / "deep.json")], ["explain", "--tile", f"{tmp_path / 'deep.json'}:0"]):
        r = CliRunner().invoke(main, args)
        assert (r.exit_code, r.stdout) == (2, ""), r.output
        assert r.stderr == (f"ptonum {args[0]}: error: {tmp_path / 'deep.json'}: not a JSON tile list (its arrays "
                            "or objects are nested too deeply to read)\n")


@pytest.mark.parametrize("fault", ["Fault_Illegal", "banana"])
def test_a_committed_case_with_a_fault_is_a_malformed_case(tmp_path: Path, fault: str) -> None:
    """A committing case's expected.fault other than Fault_None passed unnoticed (the field was type-checked
    only): a commit is a run without a fault, so the case is malformed, naming the field."""
    items = _items()[:3]
    i = next(k for k, it in enumerate(items) if it["expected"].get("fault") == "Fault_None")
    items[i]["expected"]["fault"] = fault
    path = _write(tmp_path, items)
    r = CliRunner(env={"COLUMNS": "250"}).invoke(main, ["check", path])
    assert r.exit_code == 1, r.output
    assert (f"  {path}: malformed tile: item {i}.expected.fault = \"{fault}\": a case that commits "
            "(sources_legal 1) has Fault_None; ptonum models no fault of a committed tile\n") in r.stdout, r.stdout
    assert r.stdout.splitlines()[-1] == "FAIL: 1 malformed row(s); 2 row(s) checked"


def _pick(items: List[Dict[str, Any]]) -> Dict[str, Any]:
    """The first committing item with RowMaxOut, GroupMaxOut and a scalar quant parameter."""
    for it in items:
        c, e = it["case"], it["expected"]
        if ("error" not in e and e["sources_legal"] and c["row_max_en"] == 1 and c["group_max_en"] == 1
                and isinstance(c.get("quant_param"), str) and len(c["acc"]) > 1 and len(c["acc"][0]) > 1):
            return it
    raise AssertionError("no such item")


def _del(d: Dict[str, Any], key: str) -> None:
    del d[key]


def _rename(d: Dict[str, Any], old: str, new: str) -> None:
    d[new] = d.pop(old)


# (what is changed in a shared item, the message naming item, field and problem); each of these passed
# or was blamed on the model before the tile reader validated every field (probe13 #6-#8, #14)
CORRUPT = [
    (lambda it: it["case"].update(sat=5), "item 0.case.sat = 5: expected 0/1 or true/false"),
    (lambda it: it["case"].update(sat="1"), 'item 0.case.sat = "1": expected 0/1 or true/false'),
    (lambda it: it["case"].update(sat=1.0), "item 0.case.sat = 1.0: expected 0/1 or true/false"),
    (lambda it: it["case"].update(row_max_en="no"), 'item 0.case.row_max_en = "no": expected 0/1 or true/false'),
    (lambda it: it["expected"].update(sources_legal="false"),
     'item 0.expected.sources_legal = "false": expected 0/1 or true/false'),
    (lambda it: it["case"].update(rmode="XYZ"),
     'item 0.case.rmode = "XYZ": expected one of NONE, RNE, RTZ, RTM, RTP, RNA, RTO, RHB'),
    (lambda it: it["case"].update(pre_quant_mode=float(it["case"]["pre_quant_mode"])),
     "item 0.case.pre_quant_mode = {pre_quant_mode}.0: expected an integer 0..63"),
    (lambda it: it["case"].update(group_n=5),
     "item 0.case.group_n = 5: expected one of 0, 8, 16, 32, 48, 64, 80, 96, 112, 128"),
    (lambda it: it["expected"].update(dst_type="fp16"), 'item 0.expected.dst_type = "fp16": expected one of'),
    (lambda it: _rename(it["case"], "max_abs_en", "maxabs_en"), "item 0.case: unknown field 'maxabs_en'"),
    (lambda it: it["case"].update(bogus=1), "item 0.case: unknown field 'bogus'"),
    (lambda it: it.update(note="x"), "item 0: unknown field 'note'"),
    (lambda it: _del(it["case"], "max_abs_en"), "item 0.case: missing field 'max_abs_en'"),
    (lambda it: _del(it["case"], "group_n"), "item 0.case: missing field 'group_n' (group_max_en = 1 reads it)"),
    (lambda it: _del(it["case"], "quant_param"), "item 0.case.quant_param: missing, but PreQuantMode"),
    (lambda it: _del(it["expected"], "row_max_out"), "item 0.expected.row_max_out: missing, but case.row_max_en = 1"),
    (lambda it: it["case"].update(row_max_en=0, row_max_init=0) or it["case"].pop("row_max_in", None),
     "item 0.expected.row_max_out: given, but case.row_max_en = 0"),
    # a missing row and a missing element of D (or GroupMaxOut) are the same kind of error: a malformed file
    (lambda it: it["expected"]["d"].pop(), "item 0.expected.d: {rows_minus_1} rows, expected {rows}"),
    (lambda it: it["expected"]["d"][0].pop(), "item 0.expected.d[0]: {cols_minus_1} elements, expected {cols}"),
    (lambda it: it["expected"]["group_max_out"].pop(), "item 0.expected.group_max_out: {rows_minus_1} rows"),
    (lambda it: it["expected"]["row_max_out"].pop(), "item 0.expected.row_max_out: {rows_minus_1} words"),
]


def test_every_tile_field_is_validated_as_a_malformed_file(tmp_path: Path) -> None:
    """A damaged field of a shared item is a malformed file (exit 2 naming item and field), never a pass
    and never a model failure: JSON booleans/0-1 only, integers in range, names from their vocabulary, no
    unknown or missing field, D/RowMaxOut/GroupMaxOut shaped as the case."""
    base = _pick(_items())
    m, n = len(base["case"]["acc"]), len(base["case"]["acc"][0])
    fill = {"pre_quant_mode": base["case"]["pre_quant_mode"], "rows": m, "rows_minus_1": m - 1,
            "cols": n, "cols_minus_1": n - 1}
    parse_tiles(json.dumps([base]).encode(), "t.json")  # the unchanged item is accepted
    for change, message in CORRUPT:
        item = json.loads(json.dumps(base))
        change(item)
        with pytest.raises(UsageError) as exc:
            parse_tiles(json.dumps([item]).encode(), "t.json")
        assert str(exc.value).startswith("t.json: " + message.format(**fill)), (message, str(exc.value))
    dup = json.dumps([base]).replace('"sat": ', '"sat": 0, "sat": ', 1)
    with pytest.raises(UsageError, match="field 'sat' given twice"):
        parse_tiles(dup.encode(), "t.json")
    # through the command: a malformed case beside a good one, exit 1 (it passed with exit 0 when sat = 5 was read
    # as true); alone, nothing is checked: exit 2 naming it
    item = json.loads(json.dumps(base))
    item["case"]["sat"] = 5
    path = _write(tmp_path, [base, item])
    r = CliRunner().invoke(main, ["check", path])
    assert r.exit_code == 1 and f"  {path}: malformed tile: item 1.case.sat = 5: expected 0/1 or true/false\n" in r.stdout
    path = _write(tmp_path, [item])
    r = CliRunner().invoke(main, ["check", path])
    assert r.exit_code == 2 and f"first {path}: item 0.case.sat = 5: expected 0/1 or true/false)\n" in r.stderr


def test_vectors_readme_documents_every_tiles_field_and_the_optional_ones() -> None:
    """The bundled vectors README names every field the tiles parser accepts (the parser's own list, as
    its unknown-field message gives it) and says when row_max_init and group_n may be left out."""
    import gzip
    import json
    import re

    from ptonum.conformance.schema import builtin_vectors_dir
    from ptonum.conformance.tiles import parse_tiles
    from ptonum.errors import UsageError

    readme = (builtin_vectors_dir() / "README.md").read_text()
    section = readme[readme.index("`tiles.json.gz` is a JSON list"):]
    item = json.loads(gzip.open(builtin_vectors_dir() / "tiles.json.gz").read())[0]
    for where in ("item", "case", "expected"):
        bad = json.loads(json.dumps(item))
        (bad if where == "item" else bad[where])["no_such_field"] = 1
        with pytest.raises(UsageError, match="unknown field") as info:
            parse_tiles(json.dumps([bad]).encode())
        allowed = re.search(r"\(expected ([^)]*)\)", str(info.value)).group(1).split(", ")
        for name in allowed:
            assert f"`{name}`" in section, (where, name)
    assert re.search(r"`row_max_init` \| required when `row_max_en` is 1; may be omitted when RowMax is disabled",
                     section)
    assert re.search(r"`group_n` \| required when `group_max_en` is 1; may be omitted when GroupMax is disabled",
                     section)


def _item_where(pred: Callable[[Dict[str, Any]], bool]) -> Dict[str, Any]:
    return next(it for it in _items() if pred(it))


def test_short_acc_is_blamed_not_the_correct_fields(tmp_path: Path) -> None:
    """break-findings: an acc that lost an element (one-row tile) was reported as `expected.d[0]: 129
    elements, expected 128`, and one that lost a row as `case.row_max_in: 3 words, expected 2`: the message
    named the correct array (a two-row acc with row 0 short: test_ragged_acc_blames_the_odd_row)."""
    one = _item_where(lambda it: len(it["case"]["acc"]) == 1 and "error" not in it["expected"]
                 and not isinstance(it["case"].get("quant_param"), list))
    n = len(one["case"]["acc"][0])
    one["case"]["acc"][0].pop()
    with pytest.raises(UsageError) as exc:
        parse_tiles(json.dumps([one]).encode(), "t.json")
    assert str(exc.value) == (f"t.json: item 0.case.acc: {n - 1} elements a row, but expected.d has {n} "
                              "(one of the two is damaged)")

    rows = _item_where(lambda it: len(it["case"]["acc"]) > 2 and "row_max_in" in it["case"] and "error" not in it["expected"])
    m = len(rows["case"]["acc"])
    rows["case"]["acc"].pop()
    with pytest.raises(UsageError) as exc:
        parse_tiles(json.dumps([rows]).encode(), "t.json")
    assert str(exc.value).startswith(f"t.json: item 0.case.acc: {m - 1} rows, but expected.d, case.row_max_in"), \
        str(exc.value)
    assert str(exc.value).endswith(f" have {m}"), str(exc.value)

    # through the command, the finding's reproduction: a malformed tile naming the acc, exit 1
    items = _items()[:5]
    items[4]["case"]["acc"][0].pop()
    path = _write(tmp_path, items)
    r = CliRunner(env={"COLUMNS": "250"}).invoke(main, ["check", path])
    assert r.exit_code == 1 and "malformed tile: item 4.case.acc: " in r.stdout, r.output


def test_limit_and_sample_judge_only_the_tile_items_they_select(tmp_path: Path) -> None:
    """A malformed item after the first N was counted by `--limit N` (FAIL, exit 1): the items --limit and
    --sample select are chosen among all the items, malformed or not, and only those are judged."""
    items = _items()[:4]
    del items[3]["case"]["acc"]
    path = _write(tmp_path, items)
    r = CliRunner(env={"COLUMNS": "200"}).invoke(main, ["check", path, "--limit", "3"])
    assert (r.exit_code, r.stderr) == (0, ""), r.output
    assert r.stdout.splitlines()[-1] == "PASS: 3 row(s) checked" and "malformed tile" not in r.stdout
    r = CliRunner(env={"COLUMNS": "200"}).invoke(main, ["check", path, "--limit", "4", "--no-explain"])
    assert r.exit_code == 1 and f"  {path}: malformed tile: item 3.case: missing field 'acc'\n" in r.stdout
    cases, bad = parse_tile_items(json.dumps(items).encode(), path)
    rep = check_tiles(cases, path, "fast", malformed=bad, sample=2, seed=0)  # seed 0 draws items 2 and 3 of 4
    assert (rep.rows, rep.checked, rep.malformed) == (4, 1, 1)
    rep = check_tiles(cases, path, "fast", malformed=bad, sample=2, seed=1)  # seed 1 draws items 1 and 2
    assert (rep.rows, rep.checked, rep.malformed, rep.failures) == (4, 2, 0, [])
