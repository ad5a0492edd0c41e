"""The version facts of ``pellucid.bytecode.features``: each detected fact agrees with the
releases it is documented for, and no layer above ``bytecode/`` tests the version itself."""
import os
import re
import sys

import pytest

from pellucid.bytecode import features

# fact -> (first release where it holds, last release where it holds or None), by what each
# release's own documentation (dis, What's New) says.  A new release adds its rows here.
EXPECTED = {
    "EXCEPTION_TABLE": ((3, 11), None),
    "EXCEPTION_IS_ONE_VALUE": ((3, 11), None),
    "MAKE_FUNCTION_POPS_QUALNAME": ((3, 8), (3, 10)),
    "FUNCTION_ATTRIBUTES_SET_SEPARATELY": ((3, 13), None),
    "CALL_HAS_NULL_SLOT": ((3, 11), None),
    "LOAD_GLOBAL_PUSHES_NULL": ((3, 11), None),
    "NULL_ABOVE_CALLABLE": ((3, 13), None),
    "LOAD_ATTR_METHOD_BIT": ((3, 12), None),
    "RETURN_CONST": ((3, 12), (3, 13)),
    "FORWARD_ONLY_CONDITIONAL_JUMPS": ((3, 12), None),
    "BOOL_OPS_COPY_AND_TEST": ((3, 12), None),
    "TO_BOOL_BEFORE_TESTS": ((3, 13), None),
    "FOR_EXITS_THROUGH_END_FOR": ((3, 12), None),
    "END_FOR_THEN_POP_TOP": ((3, 13), None),
    "GENERATOR_PROLOGUE": ((3, 11), None),
    "DELEGATION_IS_SEND_LOOP": ((3, 11), None),
    "INTRINSIC_CALLS": ((3, 12), None),
    "CLOSURE_LOADS_ARE_FAST_LOADS": ((3, 13), None),
    "GEN_START": ((3, 10), (3, 10)),
    "FINALLY_SUBROUTINES": ((3, 8), (3, 8)),
    "ASSERT_LOADS_GLOBAL_ASSERTION_ERROR": ((3, 8), (3, 8)),
    "MATCH_STATEMENT": ((3, 10), None),
    "MATCH_PUSHES_SUCCESS": ((3, 10), (3, 10)),
    "EXCEPT_STAR": ((3, 11), None),
    "SUPER_ATTR_INSTRUCTION": ((3, 12), None),
    "INSTRUCTION_LINE_NUMBER": ((3, 13), None),
    "COLUMN_POSITIONS": ((3, 11), None),
    "CO_HAS_DOCSTRING": ((3, 14), None),
    "ROTATED_LOOP_TESTS": ((3, 10), (3, 13)),
    "OVERWRITTEN_STORES_POPPED": ((3, 13), None),
    "WITH_CHECKS_PROTOCOL": ((3, 11), None),
    "WITH_ERROR_NAMES_QUALIFIED_TYPE": ((3, 14), None),
    "MATCH_CLASS_ERROR_SAYS_CLASS": ((3, 12), None),
    "MATCH_CLASS_ERROR_NAMES_PATTERN": ((3, 15), None),
    "IMPORTED_NAMES_CALLED_PLAINLY": ((3, 11), None),
    "GENERIC_CLASS_MANGLES_ENCLOSING": ((3, 12), (3, 12)),
    "WITH_LOADS_SPECIAL_METHODS": ((3, 14), None),
    "ITERATORS_TAKE_TWO_SLOTS": ((3, 15), None),
    "CALL_EX_ALWAYS_HAS_KWARGS_SLOT": ((3, 14), None),
    "INLINED_BUILTIN_CALLS": ((3, 14), None),
    "LAZY_IMPORTS": ((3, 15), None),
    "COMPREHENSION_UNPACKING": ((3, 15), None),
    "CONSTANT_SLICES": ((3, 14), None),
    "PERCENT_FORMAT_AS_FSTRING": ((3, 11), None),
    "DEFERRED_ANNOTATIONS": ((3, 14), None),
    "POSONLY_ANNOTATIONS_FIRST": ((3, 15), None),
    "AST_UNPARSE": ((3, 9), None),
    "AST_FIX_FILLS_NONE_END": ((3, 9), None),
    "AST_INDEX_WRAPPER": ((3, 8), (3, 8)),
    "AST_TRY_STAR": ((3, 11), None),
    "AST_TYPE_PARAMS": ((3, 12), None),
    "AST_TYPE_PARAM_DEFAULTS": ((3, 13), None),
}


def _facts():
    return sorted(name for name in vars(features) if name.isupper() and not name.startswith("_")
                  and name != "RUNNING_VERSION")


def test_every_fact_has_its_releases():
    assert set(_facts()) == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fact_matches_its_releases(name):
    first, last = EXPECTED[name]
    here = sys.version_info[:2]
    expected = first <= here and (last is None or here <= last)
    assert bool(getattr(features, name)) == expected


def test_running_version():
    assert features.RUNNING_VERSION == "%d.%d" % sys.version_info[:2]


def test_no_version_tests_above_bytecode():
    # Version facts live in bytecode/; a module above it that compares the version would hide
    # one from the next release's table (and from this file).
    root = os.path.join(os.path.dirname(features.__file__), os.pardir)
    offenders = []
    for folder, _, files in os.walk(os.path.normpath(root)):
        if os.path.basename(folder) == "bytecode":
            continue
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as f:
                    for k, line in enumerate(f, 1):
                        if re.search(r"version_info", line):
                            offenders.append("%s:%d: %s" % (path, k, line.strip()))
    assert offenders == []
