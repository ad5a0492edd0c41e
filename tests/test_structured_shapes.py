"""Construct cases whose shape the structured decompiler must read, without the fallback.

The round trip of ``test_constructs.py`` only compares behaviour, and the fallback behaves the
same: a structuring bug hides behind it (on 3.11+; 3.13 refused it for closures, 3.8-3.10 for
legacy handlers).  The cases named here were found where the swap suite fell back on stdlib
functions; each must decompile to structured code on every version.
"""
import ast
import importlib.util
import os
import sys

import pytest

import pellucid
from pellucid.decompiler.fallback import MARKER

HERE = os.path.dirname(os.path.abspath(__file__))

STRUCTURED = (
    "for_else_break_after_assignment",  # functools._c3_mro
    "for_break_after_raising_tests",  # functools._find_impl
    "for_break_path_runs_code_before_popping_iterator",  # argparse
    "if_condition_with_nested_groups",  # enum.EnumType.__new__
    "listcomp_filter_with_nested_groups",  # enum.EnumType.__new__
    "try_in_except_clause_shared_return",  # dataclasses.make_dataclass, collections.namedtuple
    "try_in_except_clause_then_more_code",  # email._header_value_parser.get_local_part
    "try_in_try_body_shared_return",  # email.message.Message.get_payload
    "for_break_in_except_clause_copies_clause_end",  # enum._simple_enum.<locals>.convert_class
    "for_break_in_except_clause_inside_loop",  # enum._simple_enum.<locals>.convert_class
    "chained_comparison_four_operands_if_copied_exit",  # found reading 3.12's fuzz fallbacks
    "chained_comparison_four_operands_while_copied_exit",
    "chained_comparison_values_copied_tails",
    "class_private_names_mangled",  # difflib.SequenceMatcher, collections.UserList (module code)
    "unpacking_repeated_target_name",  # difflib.context_diff (3.13)
    "nested_for_return_in_both_arms",  # enum.EnumType._find_data_repr_
    "nested_for_return_from_nested_tests",
    "for_return_or_raise_in_nested_if_arms",
    "while_return_in_nested_if_arms",
    "nested_for_else_breaks_only_in_tests",  # typing.Protocol.__init_subclass__._proto_hook
    "while_break_after_statements",
    "for_else_continue_in_except_clause",  # inspect.getmembers (3.8-3.10)
    "try_return_finally_ends_with_if",  # threading.Condition.wait
    "try_return_finally_holds_try_except",
    "try_return_finally_if_then_try_except",
    "while_walrus_condition_then_constant_store",  # subprocess._text_encoding (3.13)
    "regr_try_finally_around_while_true_break",  # xml.etree.ElementTree.iterparse (issue 15)
    "regr_try_except_around_while_true_break",
    "regr_break_in_except_of_while_true_in_try",  # tarfile.TarFile.__init__
    "regr_return_in_except_clause_inside_with",  # raised on 3.8-3.10
    "regr_try_finally_return_calls_in_if_arms",  # raised on 3.8-3.10
    "regr_for_try_except_continue_then_try_finally_if",  # quopri.main
    "regr_nested_while_break_and_raising_try_arm",  # netrc.netrc._parse
    "regr_while_cond_continue_break",  # issue 18 (3.13)
    "regr_while_and_condition_continue_else",
    "regr_while_true_around_while_cond_with_break",
    "regr_conditional_expression_then_copied_tail",  # issue 18 (3.13)
    "regr_return_conditional_expression_then_call",
    "regr_conditional_expression_as_slice_bound",  # configparser._Line._strip_inline
    "regr_try_except_else_that_may_raise_in_with",  # os.get_exec_path
    "regr_lambda_returning_none_or_constant",  # unittest.suite._call_if_exists (3.13)
    "regr_finally_body_is_if_with_and_test",  # tempfile._TemporaryFileCloser.close
    "regr_return_after_try_in_nested_for",  # pty._open_terminal (3.11)
)


def _cases():
    spec = importlib.util.spec_from_file_location("_pellucid_construct_cases",
                                                  os.path.join(HERE, "construct_cases.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {case.id: case for case in module.load_all()}


CASES = _cases()


@pytest.mark.parametrize("case_id", STRUCTURED)
def test_case_is_structured(case_id):
    case = CASES[case_id]
    if sys.version_info[:2] < case.min_version:
        pytest.skip("needs Python %s+" % case.min_version_str)
    namespace = {}
    exec(compile(case.src, "<%s>" % case_id, "exec"), namespace)
    obj = namespace[case.func.split(".")[0]]
    for part in case.func.split(".")[1:]:
        obj = getattr(obj, part)
    out = pellucid.decompile(obj)
    assert MARKER not in out, out


def _nodes_inside(tree, outer, inner):
    """``inner`` nodes nested in an ``outer`` node's statements."""
    return [n for o in ast.walk(tree) if isinstance(o, outer)
            for st in o.body for n in ast.walk(st) if isinstance(n, inner)]


def _function_of(case_id):
    case = CASES[case_id]
    namespace = {}
    exec(compile(case.src, "<%s>" % case_id, "exec"), namespace)
    return namespace[case.func]


# Shapes that must come out as written, not only without the fallback: (case, check on the
# decompiled module, what it means).
NESTING = [
    ("regr_try_finally_around_while_true_break",
     lambda t: not _nodes_inside(t, ast.While, ast.Try), "the try statement encloses the loop"),
    ("regr_try_except_around_while_true_break",
     lambda t: not _nodes_inside(t, ast.While, ast.Try), "the try statement encloses the loop"),
    ("regr_break_in_except_of_while_true_in_try",
     lambda t: any(isinstance(n, ast.Break) for h in ast.walk(t) if isinstance(h, ast.ExceptHandler)
                   for n in ast.walk(h)), "the break is in the except clause"),
    ("regr_while_cond_continue_break",
     lambda t: len([n for n in ast.walk(t) if isinstance(n, ast.While)]) == 1, "one while loop"),
    ("regr_while_and_condition_continue_else",
     lambda t: len([n for n in ast.walk(t) if isinstance(n, ast.While)]) == 1, "one while loop"),
    ("regr_async_with_no_extra_return",
     lambda t: not _nodes_inside(t, ast.AsyncWith, ast.Return), "no return inside the async with"),
]


@pytest.mark.parametrize("case_id,check,meaning", NESTING, ids=[n[0] for n in NESTING])
def test_case_keeps_its_nesting(case_id, check, meaning):
    out = pellucid.decompile(_function_of(case_id))
    assert check(ast.parse(out)), "%s:\n%s" % (meaning, out)
