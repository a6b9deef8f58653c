#!/usr/bin/env python3
"""Python's json module as the oracle for src/http/body/python-json.ts.

    python3 scripts/gen-python-json-cases.py > test/fixtures/python-json-cases.json
        prints the fixture table: each case's input and what Python makes of it.

    python3 scripts/gen-python-json-cases.py --oracle < strings.json
        reads a JSON array of strings on stdin and prints one outcome per string, in order
        (used by the differential property test, once per batch).

Every input goes through json.JSONDecoder().decode, which is what FastAPI runs: Starlette hands
json.loads the body *bytes*, which are decoded (one UTF-8 BOM stripped) and then decoded as
JSON without json.loads's str-only "Unexpected UTF-8 BOM" check. Our caller has already done the
bytes-to-str step, so a second BOM is just an unexpected character, as it is in FastAPI.

Outcomes are JSON objects:
    {"kind": "invalid", "message": <JSONDecodeError.msg>, "position": <JSONDecodeError.pos>}
    {"kind": "value", "value": <tagged value>}
    {"kind": "too_deep"}                      RecursionError
    {"kind": "error", "error": <text>}        any other ValueError (int digit limit)
A tagged value is JSON that survives the trip to JavaScript: numbers become floats (with -0 as
0), non-finite ones {"$float": "nan" | "inf" | "-inf"}, and objects {"$object": [[key, value],
...]} in Python's order (JavaScript reorders integer-like keys, so the test compares sorted).
"""

import json
import math
import sys

DECODER = json.JSONDecoder()

CASES = [
    # empty and whitespace-only
    "",
    " ",
    " \t\n\r ",
    "\ufeff{}",
    "\u00a0{}",
    "\x0c{}",
    "{}\u00a0",
    # objects
    "{",
    "}",
    "{,}",
    '{"a"',
    '{"a"}',
    '{"a" 1}',
    '{"a"::1}',
    '{"a":',
    '{"a":1',
    '{"a":1,',
    '{"a":1,}',
    '{"a":1 "b":2}',
    "{'a':1}",
    "{a:1}",
    '{"a":1}}',
    '{"school_id":"x","username":"y","password":"z"',
    '{"password": "hunter2",}',
    # arrays
    "[",
    "]",
    "[1,]",
    "[,1]",
    "[1,,2]",
    "[1 2]",
    "[[[[1]]]",
    "[-]",
    "[1e5.5]",
    # extra data
    "{} {}",
    "1 2",
    "true false",
    '"a" "b"',
    # literals
    "nul",
    "tru",
    "fals",
    "nulll",
    "None",
    "True",
    "nan",
    "NAN",
    "-NaN",
    "NaNx",
    "Infinityx",
    "-Inf",
    "infinity",
    "+1",
    # Python-only values
    "NaN",
    "Infinity",
    "-Infinity",
    "[NaN, Infinity, -Infinity]",
    '{"password": NaN, "username": -Infinity}',
    # numbers
    "01",
    "-01",
    "1.",
    ".5",
    "-",
    "- 1",
    "--1",
    "1e",
    "1e+",
    "1.5e",
    "1E5x",
    "0x10",
    "1_000",
    # strings
    '"abc',
    '"',
    '"\\',
    '"\\"',
    '"a\nb"',
    '"\t"',
    '"\x00"',
    '"\x1f',
    '{"a\tb":1}',
    '"\\x"',
    '"\\a"',
    '"\\U0041"',
    '"\\u"',
    '"\\u12"',
    '"\\u0041',
    '"\\u004g"',
    '"\\ud800\\uzzzz"',
    '"\\ud800\\udc0"',
    '"\\ud800\\u"',
    '"\\ud83d\\ude00',
    # code points, not UTF-16 units
    '"\U0001F600\U0001F600" x',
    '{"cl\u00e9": 1,}',
    '["\u65e5\u672c", \U0001F600]',
    '{"a":"\U0001F600\n"}',
    '"\U0001F600\\q"',
    "\U0001D11E",
    '[1, 2, "\U0001F600\U0001F600\U0001F600" 3]',
    '{"username": "\U0001F468\u200d\U0001F469\u200d\U0001F467", "password": "\U0001F511" ',
]


def tag(value):
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float)):
        number = float(str(value)) if isinstance(value, int) else value
        if math.isnan(number):
            return {"$float": "nan"}
        if math.isinf(number):
            return {"$float": "inf" if number > 0 else "-inf"}
        return number if number != 0 else 0.0
    if isinstance(value, list):
        return [tag(item) for item in value]
    return {"$object": [[key, tag(item)] for key, item in value.items()]}


def outcome(text):
    try:
        value = DECODER.decode(text)
    except json.JSONDecodeError as error:
        return {"kind": "invalid", "message": error.msg, "position": error.pos}
    except RecursionError:
        return {"kind": "too_deep"}
    except ValueError as error:
        return {"kind": "error", "error": str(error)}
    return {"kind": "value", "value": tag(value)}


def main():
    if sys.argv[1:] == ["--oracle"]:
        texts = json.load(sys.stdin.buffer)
        json.dump([outcome(text) for text in texts], sys.stdout)
        return
    lines = [json.dumps({"input": text, **outcome(text)}) for text in CASES]
    print("[\n  " + ",\n  ".join(lines) + "\n]")


if __name__ == "__main__":
    main()
