"""Derive the number reader's corpora (data only) from the test suites of PyPI sdists.

    pip download --no-binary :all: --no-deps -d SRC price-parser==0.5.1 dateparser==1.5.0 \
        number-parser==0.3.2
    (untar them in SRC)  python bench/corpora/derive.py SRC

Reads the suites' literals with `ast` (never runs their code) and writes, beside this file,
one JSON line per case: id, source, lang, split (tune / holdout), text, expect (start, end,
class, value) and, for cases left out, excluded.jsonl with the reason.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).parent
LANGS = {"pt", "en", "es"}


def split_of(case_id: str) -> str:
    """One case in three is held out, by a hash of its id (stable across runs)."""
    return "holdout" if int(hashlib.sha1(case_id.encode()).hexdigest(), 16) % 3 == 0 else "tune"


def literal(node: ast.AST) -> object:
    if isinstance(node, ast.Call):
        name = getattr(node.func, "attr", getattr(node.func, "id", ""))
        args = [literal(a) for a in node.args]
        if name == "Decimal":
            return float(args[0])
        if name == "datetime":
            return f"{args[0]:04d}-{args[1]:02d}-{args[2]:02d}"
        raise ValueError(name)
    if isinstance(node, ast.List | ast.Tuple):
        return [literal(e) for e in node.elts]
    return ast.literal_eval(node)


def price_parser(src: Path, out: list[dict], excluded: list[dict]) -> None:
    path = next(src.glob("price_parser-*/tests/test_price_parsing.py"))
    tree = ast.parse(path.read_text("utf-8"))
    keep = {
        "PRICE_PARSING_EXAMPLES",
        "PRICE_PARSING_EXAMPLES_2",
        "PRICE_PARSING_EXAMPLES_3",
        "PRICE_PARSING_EXAMPLES_BUGS_CAUGHT",
        "PRICE_PARSING_EXAMPLES_NEW",
        "PRICE_PARSING_EXAMPLES_NO_CURRENCY",
        "PRICE_PARSING_EXAMPLES_NO_PRICE",
    }
    for stmt in tree.body:
        if not (isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.List)):
            continue
        name = getattr(stmt.targets[0], "id", "")
        for i, call in enumerate(stmt.value.elts):
            case_id = f"price-parser/{name}/{i}"
            try:
                _raw_cur, text, currency, amount_text, amount = (literal(a) for a in call.args[:5])
            except ValueError:
                excluded.append({"id": case_id, "reason": "arguments not literal"})
                continue
            if name not in keep:
                excluded.append({"id": case_id, "reason": f"{name}: not used"})
                continue
            if text is None:
                excluded.append({"id": case_id, "reason": "no text"})
                continue
            lang = _price_lang(currency, amount_text)
            case = {
                "id": case_id,
                "source": "price-parser 0.5.1",
                "lang": lang,
                "split": split_of(case_id),
                "text": text,
                "classes": ["money"],
                "expect": [],
            }
            if amount is not None:
                start = text.find(amount_text)
                if start < 0:
                    excluded.append({"id": case_id, "reason": "amount not written in the text"})
                    continue
                has_currency = currency is not None and currency in text
                decimals = re.search(r"[.,]([0-9]+)$", amount_text)
                if not has_currency and not (decimals and len(decimals.group(1)) == 2):
                    excluded.append(
                        {
                            "id": case_id,
                            "text": text,
                            "reason": "no currency written "
                            "and not two decimals: no rule of the contract reads money",
                        }
                    )
                    continue
                case["expect"] = [
                    {
                        "start": start,
                        "end": start + len(amount_text),
                        "class": "money",
                        "value": amount,
                    }
                ]
            out.append(case)


def _price_lang(currency: str | None, amount_text: str | None) -> str:
    """The language a page with this price would be read in: by its currency, else by the
    decimal mark its amount uses (a comma before 1-2 final digits: es; otherwise en)."""
    if currency in {"R$", "BRL", "R $"}:
        return "pt"
    if currency in {"€", "EUR", "euro", "euros"}:
        return "es"
    if currency and ("$" in currency or currency in {"£", "GBP", "USD"}):
        return "en"
    if amount_text and re.search(r",[0-9]{1,2}$", amount_text):
        return "es"
    return "en"


def dateparser(src: Path, out: list[dict], excluded: list[dict]) -> None:
    for path in sorted(src.glob("dateparser-*/tests/test_search.py")):
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "param"):
                continue
            if len(node.args) < 3 or not isinstance(node.args[2], ast.List):
                continue
            try:
                lang, text, found = (literal(a) for a in node.args[:3])
            except (ValueError, SyntaxError):
                continue
            if lang not in LANGS or not isinstance(text, str):
                continue
            case_id = f"dateparser/{path.name}:{node.lineno}"
            expect, ignore, cursor = [], [], 0
            for piece, value in found:
                start = text.find(piece, cursor)
                if start < 0:
                    excluded.append({"id": case_id, "reason": "result not in the text"})
                    break
                cursor = start + len(piece)
                digits = re.findall(r"[0-9]+", piece)
                day = str(int(value[8:10]))
                if not digits:
                    ignore.append([start, start + len(piece)])
                    excluded.append(
                        {
                            "id": case_id,
                            "text": piece,
                            "reason": "no digits: a relative or written date",
                        }
                    )
                    continue
                if day not in [str(int(d)) for d in digits] or re.search(
                    r"[0-9]{1,2}:[0-9]{2}", piece
                ):
                    if len(digits) == 1 and len(digits[0]) == 4:  # "outubro de 1936": a year
                        y = start + piece.index(digits[0])
                        expect.append(
                            {"start": y, "end": y + 4, "class": "label", "value": digits[0]}
                        )
                    else:
                        ignore.append([start, start + len(piece)])
                        excluded.append(
                            {
                                "id": case_id,
                                "text": piece,
                                "reason": "a month "
                                "and year, a time or a relative day: not a date of "
                                "the contract (YYYY-MM-DD or --MM-DD)",
                            }
                        )
                    continue
                year = re.search(r"(?<![0-9])[0-9]{4}(?![0-9])", piece)
                iso = value if year else "--" + value[5:]
                expect.append(
                    {
                        "start": start,
                        "end": start + len(piece),
                        "class": "date",
                        "value": iso,
                        "loose": True,
                    }
                )
            else:
                out.append(
                    {
                        "id": case_id,
                        "source": "dateparser 1.5.0",
                        "lang": lang,
                        "split": split_of(case_id),
                        "text": text,
                        "classes": ["date"],
                        "expect": expect,
                        "ignore": ignore,
                    }
                )


def number_parser(src: Path, out: list[dict], excluded: list[dict]) -> None:
    units = {"en": "business days", "es": "días hábiles"}
    for path in sorted(src.glob("number-parser-*/tests/data/*/*.csv")):
        lang = path.name[:2]
        if lang not in units or "ordinal" in path.name:
            continue
        for n, line in enumerate(path.read_text("utf-8").splitlines()[1:]):
            number, _, words = line.partition(",")
            case_id = f"number-parser/{path.parent.name}/{path.name}:{n}"
            words = words.strip().strip('"')
            if not number.isdigit():
                excluded.append({"id": case_id, "reason": "not an integer"})
                continue
            text = f"{words} {units[lang]}"
            out.append(
                {
                    "id": case_id,
                    "source": "number-parser 0.3.2 (unit ours)",
                    "lang": lang,
                    "split": split_of(case_id),
                    "text": text,
                    "classes": ["duration"],
                    "expect": [
                        {"start": 0, "end": len(text), "class": "duration", "value": int(number)}
                    ],
                }
            )


def main() -> None:
    src = Path(sys.argv[1])
    excluded: list[dict] = []
    for name, derive in [
        ("price_parser", price_parser),
        ("dateparser", dateparser),
        ("number_parser", number_parser),
    ]:
        cases: list[dict] = []
        derive(src, cases, excluded)
        with (HERE / f"{name}.jsonl").open("w", encoding="utf-8") as f:
            for case in cases:
                f.write(json.dumps(case, ensure_ascii=False) + "\n")
        print(f"{name}: {len(cases)} cases")
    with (HERE / "excluded.jsonl").open("w", encoding="utf-8") as f:
        for case in excluded:
            f.write(json.dumps(case, ensure_ascii=False) + "\n")
    print(f"excluded: {len(excluded)}")


if __name__ == "__main__":
    main()
