"""Malformed suite files: each one gives a clean message naming the file, the place and the line.

Every case is a file written to ``tmp_path / "bad.json"`` and loaded with ``load_file``. A problem
that makes the file unusable (syntax, top-level shape, an unknown block, two tests with one id) is a
SpecError; one confined to a test (``PER_TEST``) is that test's ``Case.error`` and the file loads.
The expected fragments are checked against the message. A handful also go through real pytest runs:
file problems are collection errors (exit code 2), test problems that test's ERROR; no traceback.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pytest_semantictest.errors import SpecError
from pytest_semantictest.formats.jsonsource import MAX_DEPTH
from pytest_semantictest.formats.semantictest.loader import load_file

pytest_plugins = ["pytester"]

# A step writing slot ``d`` = {"a": 1, "s": "hi"}; written as %MOCK% inside the cases below.
MOCK = '{"block": "MockData", "config": {"data": {"a": 1, "s": "hi"}}, "output": "d"}'


@dataclass
class Bad:
    """One malformed file: its content and the fragments its error message must contain."""

    id: str
    content: str | bytes
    fragments: list[str] = field(default_factory=list)

    def data(self) -> bytes:
        if isinstance(self.content, bytes):
            return self.content
        return self.content.replace("%MOCK%", MOCK).encode("utf-8")


def suite_text(*lines: str) -> str:
    """A file made of ``lines``: case tables stay readable and line numbers easy to count."""
    return "\n".join(lines) + "\n"


def one_test(*test_lines: str, top: tuple[str, ...] = ()) -> str:
    """A suite with one test; ``test_lines`` are the test object's members, from line 3 on."""
    return suite_text('{"tests": [', "  {", *test_lines, "  }", "]" + ("," if top else ""), *top, "}")


BAD: list[Bad] = [
    # ---- not JSON ---------------------------------------------------------------------------
    Bad(
        "trailing_comma",
        suite_text('{"tests": [', '  {"id": "a"},', "]}"),
        ["bad.json:3:", "invalid JSON at line 3 column 1: Expecting value (a trailing comma before it?)"],
    ),
    Bad(
        "unclosed_brace",
        suite_text('{"tests": [', '  {"id": "a",', '   "pipeline": [%MOCK%]'),
        ["bad.json:4:", "invalid JSON at line 4 column 1", "Expecting"],
    ),
    Bad(
        "single_quotes",
        suite_text("{'tests': []}"),
        ["bad.json:1:", "invalid JSON at line 1 column 2", "double quotes"],
    ),
    Bad(
        "nan_is_not_json",
        one_test('    "id": "a", "runs": NaN,', '    "pipeline": [%MOCK%]'),
        ["bad.json:3:", "tests[0].runs", "invalid JSON at line 3 column 24: NaN is not a JSON value"],
    ),
    Bad(
        "integer_too_long",
        one_test('    "id": "a",', '    "pipeline": [%MOCK%],', '    "runs": ' + "9" * 5000),
        ["bad.json:5:", "invalid JSON at line 5 column 13", "whole number with more than"],
    ),
    Bad("empty_file", "", ["bad.json:1:", "the file is empty"]),
    Bad(
        "not_utf8",
        b'{"tests": [{"id": "caf\xe9", "pipeline": []}]}',
        ["bad.json:1:", "not UTF-8 text at line 1 column 23 (byte 22): invalid continuation byte"],
    ),
    # ---- not a suite --------------------------------------------------------------------------
    Bad(
        "top_level_array",
        suite_text("[", '  {"tests": []}', "]"),
        ["bad.json:1:", "needs a top-level object with a 'tests' array, got an array"],
    ),
    Bad(
        "tests_not_a_list",
        suite_text("{", '  "name": "x",', '  "tests": {"id": "a"}', "}"),
        ["bad.json:3:", "tests: must be an array of tests, got an object"],
    ),
    Bad(
        "tests_key_typo",
        suite_text("{", '  "test": []', "}"),
        ["bad.json:1:", "found 'test' — did you mean 'tests'?"],
    ),
    Bad("empty_tests", suite_text("{", '  "tests": []', "}"), ["bad.json:2:", "tests: is empty"]),
    # ---- suite and test keys ------------------------------------------------------------------
    Bad(
        "duplicate_test_ids",
        suite_text(
            '{"tests": [', '  {"id": "a", "pipeline": [%MOCK%]},', '  {"id": "a", "pipeline": [%MOCK%]}', "]}"
        ),
        ["bad.json:3:", "tests[1].id: duplicate test id 'a' (also tests[0])"],
    ),
    Bad(
        "test_not_an_object",
        suite_text('{"tests": [', '  {"id": "b", "pipeline": [%MOCK%]},', '  "a"', "]}"),
        ["bad.json:3:", "tests[1]: a test must be an object with 'pipeline' and 'assertions', got 'a'"],
    ),
    Bad(
        "unknown_suite_key",
        one_test('    "id": "a", "pipeline": [%MOCK%]', top=('"contxt": {}',)),
        ["bad.json:6:", "unknown key 'contxt' — did you mean 'context'?"],
    ),
    Bad(
        "unknown_test_key_pipline",
        one_test('    "id": "a",', '    "pipline": [%MOCK%]'),
        ["bad.json:4:", "tests[0]: unknown key 'pipline' — did you mean 'pipeline'?"],
    ),
    Bad(
        "unknown_test_key_asertions",
        one_test('    "id": "a",', '    "pipeline": [%MOCK%],', '    "asertions": {}'),
        ["bad.json:5:", "tests[0]: unknown key 'asertions' — did you mean 'assertions'?"],
    ),
    Bad(
        "id_is_a_number",
        one_test('    "id": 7,', '    "pipeline": [%MOCK%]'),
        ["bad.json:3:", "tests[0].id: must be a string, got 7"],
    ),
    Bad(
        "id_with_double_colon",
        one_test('    "id": "a::b",', '    "pipeline": [%MOCK%]'),
        ["bad.json:3:", "tests[0].id: must not contain '::'"],
    ),
    Bad(
        "pipeline_is_an_object",
        one_test('    "id": "a",', '    "pipeline": %MOCK%'),
        ["bad.json:4:", "tests[0].pipeline: must be a list, got {"],
    ),
    Bad(
        "empty_pipeline",
        one_test('    "id": "a",', '    "pipeline": []'),
        ["bad.json:4:", "tests[0].pipeline: is empty"],
    ),
    Bad(
        "context_is_a_list",
        one_test('    "id": "a", "pipeline": [%MOCK%]', top=('"context": ["x"]',)),
        ["bad.json:6:", "context: must be an object, got ['x']"],
    ),
    Bad(
        "timeout_is_a_string",
        one_test('    "id": "a",', '    "timeout": "5000",', '    "pipeline": [%MOCK%]'),
        ["bad.json:4:", "tests[0].timeout: must be a whole number, got '5000'"],
    ),
    Bad(
        "runs_zero",
        one_test('    "id": "a",', '    "runs": 0,', '    "pipeline": [%MOCK%]'),
        ["bad.json:4:", "tests[0].runs: must be >= 1, got 0"],
    ),
    Bad(
        "min_pass_more_than_runs",
        one_test('    "id": "a",', '    "runs": 2, "minPass": 3,', '    "pipeline": [%MOCK%]'),
        ["bad.json:4:", "tests[0].minPass: 3 is more than runs (2)"],
    ),
    Bad(
        "timeout_too_large_for_a_float",
        one_test('    "id": "a",', '    "timeout": 1' + "0" * 400 + ",", '    "pipeline": [%MOCK%]'),
        ["bad.json:4:", "tests[0].timeout: must be <= 86400000, got 1000000"],
    ),
    Bad(
        "min_pass_too_large_for_a_float",
        one_test('    "id": "a",', '    "minPass": 1' + "0" * 400 + ",", '    "pipeline": [%MOCK%]'),
        ["bad.json:4:", "tests[0].minPass: 1000000", "is more than runs (1)"],
    ),
    Bad(
        "min_pass_overflows_to_infinity",
        one_test('    "id": "a",', '    "minPass": 1e400,', '    "pipeline": [%MOCK%]'),
        ["bad.json:4:", "tests[0].minPass: must be a count >= 1 or a fraction in (0, 1], got inf"],
    ),
    Bad(
        "skip_is_a_number",
        one_test('    "id": "a",', '    "skip": 5,', '    "pipeline": [%MOCK%]'),
        ["bad.json:4:", "tests[0].skip: must be a string or true or false, got 5"],
    ),
    Bad(
        "marker_not_a_name",
        one_test('    "id": "a",', '    "markers": [""],', '    "pipeline": [%MOCK%]'),
        ["bad.json:4:", "tests[0].markers: marker names must be words"],
    ),
    # ---- steps and blocks ---------------------------------------------------------------------
    Bad(
        "unknown_block",
        one_test(
            '    "id": "a",',
            '    "pipeline": [',
            '      {"block": "HttpRequst", "input": {"url": "http://x"}}',
            "    ]",
        ),
        [
            "bad.json:5:",
            "tests[0].pipeline[0].block: unknown block 'HttpRequst' — did you mean 'HttpRequest'?",
            "(known blocks: ",
            "ValidateContent",
        ],
    ),
    Bad(
        "block_not_a_string",
        one_test('    "id": "a",', '    "pipeline": [', '      {"block": ["MockData"]}', "    ]"),
        ["bad.json:5:", "tests[0].pipeline[0].block: must be a string"],
    ),
    Bad(
        "unknown_step_key",
        one_test(
            '    "id": "a",',
            '    "pipeline": [',
            '      {"block": "MockData", "config": {"data": 1},',
            '       "outptu": "d"}',
            "    ]",
        ),
        [
            "bad.json:6:",
            "tests[0].pipeline[0].outptu: unknown key 'outptu' for block MockData — did you mean 'output'?",
        ],
    ),
    Bad(
        "output_wrong_type",
        one_test(
            '    "id": "a",',
            '    "pipeline": [',
            '      {"block": "MockData", "config": {"data": 1},',
            '       "output": {"value": 5}}',
            "    ]",
        ),
        ["bad.json:6:", "tests[0].pipeline[0].output.value: must be a string, got 5"],
    ),
    Bad(
        "loop_unknown_config_key",
        one_test(
            '    "id": "a",',
            '    "pipeline": [',
            "      %MOCK%,",
            '      {"block": "Loop", "config": {"target": 0,',
            '        "maxIteration": 3}}',
            "    ]",
        ),
        [
            "bad.json:7:",
            "tests[0].pipeline[1].config.maxIteration: unknown config key 'maxIteration' — did you mean 'maxIterations'?",
            "Loop takes: condition, delayMs, maxIterations, target",
        ],
    ),
    Bad(
        "loop_top_level_option_typo",
        one_test(
            '    "id": "a",',
            '    "pipeline": [',
            "      %MOCK%,",
            '      {"block": "Loop", "target": 0,',
            '       "maxIteration": 3}',
            "    ]",
        ),
        [
            "bad.json:7:",
            "tests[0].pipeline[1].maxIteration: unknown key 'maxIteration' for block Loop — did you mean 'maxIterations'?",
        ],
    ),
    Bad(
        "loop_max_iterations_negative",
        one_test(
            '    "id": "a",',
            '    "pipeline": [',
            "      %MOCK%,",
            '      {"block": "Loop", "config": {"target": 0, "maxIterations": -1}}',
            "    ]",
        ),
        ["bad.json:6:", "tests[0].pipeline[1].config.maxIterations: must be a whole number >= 0, got -1"],
    ),
    Bad(
        "loop_target_forward",
        one_test(
            '    "id": "a",',
            '    "pipeline": [',
            '      {"block": "Loop", "config": {"target": "later"}},',
            '      {"id": "later", "block": "MockData", "config": {"data": 1}}',
            "    ]",
        ),
        ["bad.json:5:", "tests[0].pipeline[0].config.target: 'later' is not the id of an earlier step"],
    ),
    Bad(
        "loop_target_unknown",
        one_test(
            '    "id": "a",',
            '    "pipeline": [',
            '      {"id": "fetch", "block": "MockData", "config": {"data": 1}},',
            '      {"block": "Loop", "config": {"target": "fetc"}}',
            "    ]",
        ),
        [
            "bad.json:6:",
            "tests[0].pipeline[1].config.target: 'fetc' is not the id of an earlier step — did you mean 'fetch'?",
        ],
    ),
    Bad(
        "loop_target_index_out_of_range",
        one_test(
            '    "id": "a",',
            '    "pipeline": [',
            "      %MOCK%,",
            '      {"block": "Loop", "config": {"target": 4}}',
            "    ]",
        ),
        ["bad.json:6:", "tests[0].pipeline[1].config.target: index 4 is not an earlier step (0..0)"],
    ),
    Bad(
        "loop_target_missing",
        one_test(
            '    "id": "a",',
            '    "pipeline": [',
            "      %MOCK%,",
            '      {"block": "Loop", "config": {"maxIterations": 3}}',
            "    ]",
        ),
        ["bad.json:6:", "tests[0].pipeline[1].config.target: Loop needs 'target'"],
    ),
    Bad(
        "loop_condition_unknown_operator",
        one_test(
            '    "id": "a",',
            '    "pipeline": [',
            "      %MOCK%,",
            '      {"block": "Loop", "config": {"target": 0,',
            '        "condition": {"path": "d.a", "operator": "lessThan", "value": 3}}}',
            "    ]",
        ),
        ["bad.json:7:", "tests[0].pipeline[1].config.condition.operator: unknown operator 'lessThan'"],
    ),
    Bad(
        "loop_condition_operator_not_a_string",
        one_test(
            '    "id": "a",',
            '    "pipeline": [',
            "      %MOCK%,",
            '      {"block": "Loop", "config": {"target": 0,',
            '        "condition": {"path": "d.a", "operator": ["lt"], "value": 3}}}',
            "    ]",
        ),
        ["bad.json:7:", "tests[0].pipeline[1].config.condition.operator: unknown operator ['lt']"],
    ),
    Bad(
        "loop_condition_unknown_key_at_its_own_line",
        one_test(
            '    "id": "a",',
            '    "pipeline": [',
            "      %MOCK%,",
            '      {"block": "Loop", "config": {"target": 0, "condition": {',
            '        "path": "d.a", "operator": "lt", "value": 3,',
            '        "opertor": "gt"}}}',
            "    ]",
        ),
        [
            "bad.json:8:",
            "tests[0].pipeline[1].config.condition.opertor: unknown key 'opertor' — did you mean 'operator'?",
        ],
    ),
    Bad(
        "loop_condition_invalid_regex",
        one_test(
            '    "id": "a",',
            '    "pipeline": [',
            "      %MOCK%,",
            '      {"block": "Loop", "config": {"target": 0,',
            '        "condition": {"path": "d.s", "operator": "matches", "value": "[a-"}}}',
            "    ]",
        ),
        [
            "bad.json:7:",
            "tests[0].pipeline[1].config.condition.value: 'matches' has an invalid regular expression '[a-'",
        ],
    ),
    Bad(
        "llm_judge_criteria_do_not_sum_to_one",
        one_test(
            '    "id": "a",',
            '    "pipeline": [',
            "      %MOCK%,",
            '      {"block": "LLMJudge", "input": "${d.s}",',
            '       "config": {"criteria": {"accuracy": 0.5, "tone": 0.4}}}',
            "    ]",
        ),
        ["bad.json:7:", "tests[0].pipeline[1].config.criteria: weights must sum to 1, they sum to 0.9"],
    ),
    Bad(
        "llm_judge_weight_too_large_for_a_float",
        one_test(
            '    "id": "a",',
            '    "pipeline": [',
            "      %MOCK%,",
            '      {"block": "LLMJudge", "input": "${d.s}",',
            '       "config": {"criteria": {"accuracy": 1' + "0" * 400 + "}}}",
            "    ]",
        ),
        [
            "bad.json:7:",
            "tests[0].pipeline[1].config.criteria: must map criterion names to weights between 0 and 1",
        ],
    ),
    Bad(
        "validate_content_invalid_regex",
        one_test(
            '    "id": "a",',
            '    "pipeline": [',
            "      %MOCK%,",
            '      {"block": "ValidateContent", "input": "${d.s}",',
            '       "config": {"matches": "([a-z]+"}}',
            "    ]",
        ),
        ["bad.json:7:", "tests[0].pipeline[1].config.matches: invalid regular expression '([a-z]+'"],
    ),
    Bad(
        "validate_content_regex_repeat_too_large",
        one_test(
            '    "id": "a",',
            '    "pipeline": [',
            "      %MOCK%,",
            '      {"block": "ValidateContent", "input": "${d.s}",',
            '       "config": {"matches": "a{99999999999}"}}',
            "    ]",
        ),
        ["bad.json:7:", "tests[0].pipeline[1].config.matches: invalid regular expression 'a{99999999999}'"],
    ),
    Bad(
        "reference_to_unwritten_slot",
        one_test(
            '    "id": "a",',
            '    "pipeline": [',
            "      %MOCK%,",
            '      {"block": "JsonParser",',
            '       "input": {"body": "${nope.x}"}}',
            "    ]",
        ),
        [
            "bad.json:7:",
            "tests[0].pipeline[1].input.body: references 'nope', which no step, setup or context provides",
        ],
    ),
    Bad(
        "reference_typo_in_config",
        one_test(
            '    "id": "a",',
            '    "pipeline": [',
            "      %MOCK%,",
            '      {"block": "MockData", "output": "e",',
            '       "config": {"data": "${dd.a}"}}',
            "    ]",
        ),
        ["bad.json:7:", "tests[0].pipeline[1].config.data: references 'dd'", "did you mean 'd'?"],
    ),
    Bad(
        "from_as_missing_as",
        one_test(
            '    "id": "a",',
            '    "pipeline": [',
            "      %MOCK%,",
            '      {"block": "JsonParser",',
            '       "input": {"from": "d.s"}}',
            "    ]",
        ),
        [
            "bad.json:7:",
            "tests[0].pipeline[1].input: the from/as form needs both 'from' (a DataBus path) and 'as' (a name)",
        ],
    ),
    Bad(
        "from_as_as_not_a_string",
        one_test(
            '    "id": "a",',
            '    "pipeline": [',
            "      %MOCK%,",
            '      {"block": "JsonParser",',
            '       "input": {"from": "d.s", "as": 3}}',
            "    ]",
        ),
        ["bad.json:7:", "tests[0].pipeline[1].input.as: must be an input name (a string), got 3"],
    ),
    Bad(
        "mock_data_without_data",
        one_test(
            '    "id": "a",', '    "pipeline": [', '      {"block": "MockData", "output": "d"}', "    ]"
        ),
        ["bad.json:5:", "tests[0].pipeline[0].config.data: MockData needs 'config.data'"],
    ),
    # ---- assertions ---------------------------------------------------------------------------
    Bad(
        "unknown_operator",
        one_test(
            '    "id": "a",',
            '    "pipeline": [%MOCK%],',
            '    "assertions": {',
            '      "d.a": {"gte": 0, "gtt": 5}',
            "    }",
        ),
        ["bad.json:6:", "tests[0].assertions.d.a.gtt: unknown operator 'gtt' — did you mean 'gt'?"],
    ),
    Bad(
        "operator_near_miss_in_equality_object",
        one_test(
            '    "id": "a",',
            '    "pipeline": [%MOCK%],',
            '    "assertions": {',
            '      "d.s": {"contain": "h"}',
            "    }",
        ),
        [
            "bad.json:6:",
            "tests[0].assertions.d.s.contain: unknown operator 'contain' — did you mean 'contains'?",
            'to compare with an object, write {"equals": {...}}',
        ],
    ),
    Bad(
        "gt_with_a_string",
        one_test(
            '    "id": "a",',
            '    "pipeline": [%MOCK%],',
            '    "assertions": {',
            '      "d.a": {"gt": "5"}',
            "    }",
        ),
        ["bad.json:6:", "tests[0].assertions.d.a.gt: 'gt' needs a number, got '5'"],
    ),
    Bad(
        "min_length_negative",
        one_test(
            '    "id": "a",',
            '    "pipeline": [%MOCK%],',
            '    "assertions": {',
            '      "d.s": {"minLength": -1}',
            "    }",
        ),
        ["bad.json:6:", "tests[0].assertions.d.s.minLength: 'minLength' needs a whole number >= 0, got -1"],
    ),
    Bad(
        "is_null_with_a_string",
        one_test(
            '    "id": "a",',
            '    "pipeline": [%MOCK%],',
            '    "assertions": {',
            '      "d.a": {"isNull": "yes"}',
            "    }",
        ),
        ["bad.json:6:", "tests[0].assertions.d.a.isNull: 'isNull' takes true or false, got 'yes'"],
    ),
    Bad(
        "matches_invalid_regex",
        one_test(
            '    "id": "a",',
            '    "pipeline": [%MOCK%],',
            '    "assertions": {',
            '      "d.s": {"matches": "(unclosed"}',
            "    }",
        ),
        [
            "bad.json:6:",
            "tests[0].assertions.d.s.matches: 'matches' has an invalid regular expression '(unclosed'",
        ],
    ),
    Bad(
        "matches_regex_nested_too_deeply",
        one_test(
            '    "id": "a",',
            '    "pipeline": [%MOCK%],',
            '    "assertions": {',
            '      "d.s": {"matches": "' + "(" * 3000 + ")" * 3000 + '"}',
            "    }",
        ),
        [
            "bad.json:6:",
            "tests[0].assertions.d.s.matches: 'matches' has an invalid regular expression '(((",
            "groups nested too deeply",
        ],
    ),
    Bad(
        "assertion_on_unwritten_slot",
        one_test(
            '    "id": "a",',
            '    "pipeline": [%MOCK%],',
            '    "assertions": {',
            '      "result.status": 200',
            "    }",
        ),
        ["bad.json:6:", "tests[0].assertions.result.status: 'result' is not written by any step"],
    ),
    Bad(
        "assertion_path_not_a_path",
        one_test(
            '    "id": "a",', '    "pipeline": [%MOCK%],', '    "assertions": {', '      "[0]": 1', "    }"
        ),
        ["bad.json:6:", "'[0]' is not a DataBus path"],
    ),
    # ---- size ---------------------------------------------------------------------------------
    Bad(
        "deeply_nested_arrays",
        one_test(
            '    "id": "a",',
            '    "pipeline": [',
            '      {"block": "MockData", "output": "d",',
            '       "config": {"data": ' + "[" * 5000 + "]" * 5000 + "}}",
            "    ]",
        ),
        [
            "bad.json:6:",
            "tests[0].pipeline[0].config.data[0][0]",
            f"nested too deeply (more than {MAX_DEPTH} levels) at line 6 column",
        ],
    ),
    Bad(
        "deeply_nested_objects",
        one_test(
            '    "id": "a",',
            '    "pipeline": [%MOCK%],',
            '    "assertions": {',
            '      "d": ' + '{"equals":' * 5000 + "1" + "}" * 5000,
            "    }",
        ),
        ["bad.json:6:", "tests[0].assertions.d.equals.equals", "nested too deeply"],
    ),
    Bad(
        "nested_just_over_the_limit",
        one_test(
            '    "id": "a",',
            '    "pipeline": [',
            '      {"block": "MockData", "output": "d",',
            '       "config": {"data": ' + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "}}",
            "    ]",
        ),
        ["bad.json:6:", "nested too deeply"],
    ),
    Bad(
        "huge_file_with_an_error_at_the_end",
        one_test(
            '    "id": "a",',
            '    "pipeline": [',
            '      {"block": "MockData", "output": "d",',
            '       "config": {"data": "' + "x" * 5_000_000 + '"}}',
            "    ],",
            '    "assertions": {"d": {"maxLenght": 10}}',
        ),
        [
            "bad.json:8:",
            "tests[0].assertions.d.maxLenght: unknown operator 'maxLenght' — did you mean 'maxLength'?",
        ],
    ),
    Bad(
        "huge_key_is_shortened",
        one_test('    "id": "a",', '    "pipeline": [%MOCK%],', '    "' + "k" * 1_000_000 + '": 1'),
        ["bad.json:5:", "tests[0]: unknown key 'kkkkk", "…'"],
    ),
]

FILE_LEVEL = {
    "trailing_comma",
    "unclosed_brace",
    "single_quotes",
    "nan_is_not_json",
    "integer_too_long",
    "empty_file",
    "not_utf8",
    "top_level_array",
    "tests_not_a_list",
    "tests_key_typo",
    "empty_tests",
    "duplicate_test_ids",
    "unknown_suite_key",
    "context_is_a_list",
    "unknown_block",
    "deeply_nested_arrays",
    "deeply_nested_objects",
    "nested_just_over_the_limit",
}
"""The cases that make the whole file unusable; every other case is confined to its test."""

GOOD: list[tuple[str, str | bytes]] = [
    (
        "x_keys_and_schema",
        suite_text(
            '{"$schema": "https://example.com/semantictest.json", "x-owner": "qa",',
            ' "tests": [{"id": "a", "x-note": "free", "pipeline": [%MOCK%], "assertions": {"d.a": 1}}]}',
        ),
    ),
    (
        "byte_order_mark",
        "\ufeff" + suite_text('{"tests": [{"id": "a", "pipeline": [%MOCK%], "assertions": {"d.a": 1}}]}'),
    ),
    (
        "nested_at_the_limit",
        suite_text(
            '{"tests": [{"id": "a", "pipeline": [{"block": "MockData", "output": "d", "config": {"data": '
            + "[" * (MAX_DEPTH - 6)
            + "]" * (MAX_DEPTH - 6)
            + "}}]}]}"
        ),
    ),
    (
        "huge_string_value",
        suite_text(
            '{"tests": [{"id": "a", "pipeline": [{"block": "MockData", "output": "d", "config": {"data": "'
            + "x" * 5_000_000
            + '"}}], "assertions": {"d": {"minLength": 5000000}}}]}'
        ),
    ),
]


def write(tmp_path: Path, case: Bad) -> Path:
    path = tmp_path / "bad.json"
    path.write_bytes(case.data())
    return path


def test_the_table_is_big_enough() -> None:
    assert len(BAD) >= 35
    assert len({c.id for c in BAD}) == len(BAD)


def problem_text(path: Path) -> tuple[str, str]:
    """``("file", SpecError text)`` or ``("test", the failing tests' errors)`` for the file at ``path``."""
    try:
        suite = load_file(path)
    except SpecError as exc:
        assert exc.problems, "a SpecError carries at least one problem"
        return "file", str(exc)
    errors = [c.error for c in suite.cases if c.error]
    assert errors, "neither a file error nor a test error"
    return "test", "\n".join(errors)


@pytest.mark.parametrize("case", BAD, ids=[c.id for c in BAD])
def test_bad_suite_gives_a_clean_error_naming_file_and_place(tmp_path: Path, case: Bad) -> None:
    path = write(tmp_path, case)
    start = time.perf_counter()
    scope, message = problem_text(path)
    elapsed = time.perf_counter() - start
    assert scope == ("file" if case.id in FILE_LEVEL else "test"), message[:2000]
    for fragment in case.fragments:
        assert fragment in message, f"{fragment!r} not in:\n{message[:2000]}"
    for line in message.splitlines():  # every problem starts with the file name
        assert line.startswith(str(path)), line[:300]
    assert len(message) < 5000, "messages quote values shortened, never whole huge inputs"
    assert elapsed < 5, f"took {elapsed:.1f}s"


@pytest.mark.parametrize("name,content", GOOD, ids=[g[0] for g in GOOD])
def test_positive_controls_load(tmp_path: Path, name: str, content: str | bytes) -> None:
    path = tmp_path / "good.json"
    path.write_bytes(Bad(name, content).data())
    start = time.perf_counter()
    suite = load_file(path)
    assert [c.id for c in suite.cases] == ["a"]
    assert time.perf_counter() - start < 5


def test_every_problem_is_reported_not_just_the_first(tmp_path: Path) -> None:
    text = one_test(
        '    "id": "a",',
        '    "pipeline": [',
        '      {"block": "HttpRequst"},',
        '      {"block": "MockData", "config": {"data": 1}, "output": "d"}',
        "    ],",
        '    "assertions": {"d": {"gtt": 1}, "e": 2}',
    )
    path = write(tmp_path, Bad("many", text))
    with pytest.raises(SpecError) as info:
        load_file(path)
    message = str(info.value)
    assert "bad.json:5: tests[0].pipeline[0].block: unknown block 'HttpRequst'" in message
    assert "bad.json:8: tests[0].assertions.d.gtt: unknown operator 'gtt'" in message
    assert "bad.json:8: tests[0].assertions.e: 'e' is not written by any step" in message
    assert len(info.value.problems) == 3, "a file that fails names its tests' own problems too"


# ---- the same files through real pytest runs -------------------------------------------------

THROUGH_PYTEST = ["trailing_comma", "unknown_block", "deeply_nested_arrays", "not_utf8", "nan_is_not_json"]
TEST_ERRORS_THROUGH_PYTEST = [
    "unknown_operator",
    "loop_unknown_config_key",
    "matches_regex_nested_too_deeply",
]


def sections(output: str) -> dict[str, str]:
    """The text of each ``ERROR collecting <file>`` section of a pytest report, by file name."""
    found: dict[str, str] = {}
    parts = re.split(r"^_+ ERROR collecting (\S+) _+$", output, flags=re.MULTILINE)
    for name, body in zip(parts[1::2], parts[2::2]):
        found[name] = body.split("=" * 10)[0]
    return found


def test_bad_suites_are_collection_errors_without_traceback(pytester: pytest.Pytester) -> None:
    """All of THROUGH_PYTEST in one real pytest run (a subprocess: the command line as users run it)."""
    for case_id in THROUGH_PYTEST:
        (pytester.path / f"{case_id}.json").write_bytes(next(c for c in BAD if c.id == case_id).data())
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.INTERRUPTED, output[-3000:]
    assert f"Interrupted: {len(THROUGH_PYTEST)} errors during collection" in output
    assert "Traceback" not in output
    assert "RecursionError" not in output
    found = sections(result.stdout.str())
    assert sorted(found) == sorted(f"{c}.json" for c in THROUGH_PYTEST)
    for case_id in THROUGH_PYTEST:
        text = found[f"{case_id}.json"]
        for fragment in next(c for c in BAD if c.id == case_id).fragments:
            fragment = fragment.replace("bad.json", f"{case_id}.json")
            assert fragment in text, f"{case_id}: {fragment!r} not in:\n{text[:2000]}"


def test_test_problems_are_that_tests_error_without_traceback(pytester: pytest.Pytester) -> None:
    """A problem inside one test ERRORs that test with the same message; the file's others run."""
    good = {"block": "MockData", "config": {"data": {"a": 1}}, "output": "m"}
    for case_id in TEST_ERRORS_THROUGH_PYTEST:
        data = json.loads(next(c for c in BAD if c.id == case_id).data())
        data["tests"].append({"id": "fine", "pipeline": [good], "assertions": {"m.a": 1}})
        (pytester.path / f"{case_id}.json").write_text(json.dumps(data, indent=1))
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-rE")
    output = result.stdout.str() + result.stderr.str()
    result.assert_outcomes(passed=len(TEST_ERRORS_THROUGH_PYTEST), errors=len(TEST_ERRORS_THROUGH_PYTEST))
    assert "Traceback" not in output and "errors during collection" not in output
    for case_id in TEST_ERRORS_THROUGH_PYTEST:
        fragment = next(c for c in BAD if c.id == case_id).fragments[1]
        assert fragment in output, f"{case_id}: {fragment!r} not in:\n{output[-3000:]}"
        result.stdout.fnmatch_lines([f"ERROR {case_id}.json::a*"])
    collected = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--collect-only", "-q")
    collected.stdout.fnmatch_lines(
        [f"{TEST_ERRORS_THROUGH_PYTEST[0]}.json::a", f"{TEST_ERRORS_THROUGH_PYTEST[0]}.json::fine"]
    )


def test_one_bad_file_does_not_hide_a_good_one(pytester: pytest.Pytester) -> None:
    (pytester.path / "bad.json").write_bytes(next(c for c in BAD if c.id == "unknown_block").data())
    good = {"tests": [{"id": "ok", "pipeline": [json.loads(MOCK)], "assertions": {"d.a": 1}}]}
    (pytester.path / "good.json").write_text(json.dumps(good))
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--continue-on-collection-errors")
    result.assert_outcomes(passed=1, errors=1)
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
