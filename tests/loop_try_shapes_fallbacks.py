"""Sampled loop/try shapes (``test_loop_try_shapes.py``, every 25th) that still come out as
the state-machine fallback, per Python version.  Strict: a listed shape that comes out
structured fails the test, so this only shrinks.  Regenerate the entries of a version by
decompiling the sample (see ``bench/loop_try_shapes.py --every 25``); never add a shape
that was structured."""

FALLBACKS = {
    "3.8": frozenset([
        # (likewise, up to 3.11)
        "while_cond__try_finally__try_except_else__break_handler_continue_orelse",
        # (structured form refused by the verifier: the except clause's tail runs with the
        # KeyError still handled; sys.exc_info() and __context__ differ)
        "while_true__none__try_except_else__break_orelse_continue_handler",
        "for__none__try_except_finally__break_body_continue_handler",
        "for__none__try_finally__break_final_continue_after",
        "for__try_except__try_except_finally__break_handler_continue_loop",
        "for__try_except__try_finally__break_after_continue_final",
        "for__try_except_else__try_except_finally__break_final_continue_handler",
        "for__try_finally__try_except_finally__break_handler_continue_after",
        "for__with__try_except_finally__continue_handler",
        "for_else__none__try_finally__return_final",
        "for_else__try_except__try_except_finally__return_final",
        "for_else__try_except__try_finally__break_loop_continue_final",
        "for_else__try_except_else__try_finally__break_final_continue_body",
        "for_else__try_finally__try_except_finally__break_loop_continue_handler",
        "for_else__try_finally__try_finally__break_body_continue_final",
        "while_cond__none__try_except_finally__break_final_continue_after",
        "while_cond__try_except__try_except_finally__break_after_continue_handler",
        "while_cond__try_except__try_except_finally__continue_final",
        "while_cond__try_finally__try_except_finally__return_body",
        "while_cond__with__try_except_finally__break_loop_continue_final",
        "while_else__none__try_except_finally__break_handler_continue_final",
        "while_else__try_except__try_except_finally__break_final",
        "while_else__try_except__try_except_finally__break_final_continue_body",
        "while_else__try_except_else__try_except_finally__break_after_continue_final",
        "while_else__try_finally__try_finally__continue_final",
        "while_true__try_except__try_finally__break_final_continue_loop",
        "while_true__try_except_else__try_except_finally__break_handler_continue_body",
        "while_true__try_finally__try_except_finally__break_body_continue_final",
        "while_true__with__try_except_finally__break_final_continue_loop",
        "while_true__with__try_except_finally__break_handler",
        "while_true__with__try_finally__break_final",
    ]),
    "3.9": frozenset([
        # (likewise, up to 3.11)
        "while_cond__try_finally__try_except_else__break_handler_continue_orelse",
        # (structured form refused by the verifier: the except clause's tail runs with the
        # KeyError still handled; sys.exc_info() and __context__ differ)
        "while_true__none__try_except_else__break_orelse_continue_handler",
        "for__none__try_except_finally__break_body_continue_handler",
        "for__none__try_finally__break_final_continue_after",
        "for__try_except__try_except_finally__break_handler_continue_loop",
        "for__try_except__try_finally__break_after_continue_final",
        "for__try_except_else__try_except_finally__break_final_continue_handler",
        "for__try_finally__try_except_finally__break_handler_continue_after",
        "for__with__try_except_finally__continue_handler",
        "for_else__none__try_finally__return_final",
        "for_else__try_except__try_except_finally__return_final",
        "for_else__try_except__try_finally__break_loop_continue_final",
        "for_else__try_except_else__try_finally__break_final_continue_body",
        "for_else__try_finally__try_except_finally__break_loop_continue_handler",
        "for_else__try_finally__try_finally__break_body_continue_final",
        "while_cond__none__try_except_finally__break_final_continue_after",
        "while_cond__try_except__try_except_finally__break_after_continue_handler",
        "while_cond__try_except__try_except_finally__continue_final",
        "while_cond__try_finally__try_except_finally__return_body",
        "while_cond__with__try_except_finally__break_loop_continue_final",
        "while_else__none__try_except_finally__break_handler_continue_final",
        "while_else__try_except__try_except_finally__break_final",
        "while_else__try_except__try_except_finally__break_final_continue_body",
        "while_else__try_except_else__try_except_finally__break_after_continue_final",
        "while_else__try_finally__try_finally__continue_final",
        "while_true__try_except__try_finally__break_final_continue_loop",
        "while_true__try_except_else__try_except_finally__break_handler_continue_body",
        "while_true__try_finally__try_except_finally__break_body_continue_final",
        "while_true__with__try_except_finally__break_final_continue_loop",
        "while_true__with__try_except_finally__break_handler",
        "while_true__with__try_finally__break_final",
    ]),
    "3.10": frozenset([
        # (likewise, up to 3.11)
        "while_cond__try_finally__try_except_else__break_handler_continue_orelse",
        # (structured form refused by the verifier: the except clause's tail runs with the
        # KeyError still handled; sys.exc_info() and __context__ differ)
        "while_true__none__try_except_else__break_orelse_continue_handler",
        "for__none__try_except_finally__break_body_continue_handler",
        "for__none__try_finally__break_final_continue_after",
        "for__try_except__try_except_finally__break_handler_continue_loop",
        "for__try_except__try_finally__break_after_continue_final",
        "for__try_except_else__try_except_finally__break_final_continue_handler",
        "for__try_finally__try_except_finally__break_handler_continue_after",
        "for__with__try_except_finally__continue_handler",
        "for_else__none__try_finally__return_final",
        "for_else__try_except__try_except_finally__return_final",
        "for_else__try_except__try_finally__break_loop_continue_final",
        "for_else__try_except_else__try_finally__break_final_continue_body",
        "for_else__try_finally__try_except_finally__break_loop_continue_handler",
        "for_else__try_finally__try_finally__break_body_continue_final",
        "while_cond__none__try_except_finally__break_final_continue_after",
        "while_cond__try_except__try_except_finally__break_after_continue_handler",
        "while_cond__try_except__try_except_finally__continue_final",
        "while_cond__try_finally__try_except_finally__return_body",
        "while_cond__with__try_except_finally__break_loop_continue_final",
        "while_else__none__try_except_finally__break_handler_continue_final",
        "while_else__try_except__try_except_finally__break_final",
        "while_else__try_except__try_except_finally__break_final_continue_body",
        "while_else__try_except_else__try_except_finally__break_after_continue_final",
        "while_else__try_finally__try_finally__continue_final",
        "while_true__try_except__try_finally__break_final_continue_loop",
        "while_true__try_except_else__try_except_finally__break_handler_continue_body",
        "while_true__try_finally__try_except_finally__break_body_continue_final",
        "while_true__with__try_except_finally__break_final_continue_loop",
        "while_true__with__try_except_finally__break_handler",
        "while_true__with__try_finally__break_final",
    ]),
    "3.11": frozenset([
        # (likewise, up to 3.11)
        "while_cond__try_finally__try_except_else__break_handler_continue_orelse",
        # (structured form refused by the verifier: the except clause's tail runs with the
        # KeyError still handled; sys.exc_info() and __context__ differ)
        "while_true__none__try_except_else__break_orelse_continue_handler",
        "for__none__try_except_finally__break_body_continue_handler",
        "for__none__try_finally__break_final_continue_after",
        "for__try_except__try_except_finally__break_handler_continue_loop",
        "for__try_except__try_finally__break_after_continue_final",
        "for__try_except_else__try_except_finally__break_final_continue_handler",
        "for__try_finally__try_except_finally__break_handler_continue_after",
        "for__with__try_except_finally__continue_handler",
        "for_else__none__try_finally__return_final",
        "for_else__try_except__try_except_finally__return_final",
        "for_else__try_except__try_finally__break_loop_continue_final",
        "for_else__try_except_else__try_finally__break_final_continue_body",
        "for_else__try_finally__try_except_finally__break_loop_continue_handler",
        "for_else__try_finally__try_finally__break_body_continue_final",
        "while_cond__none__try_except_finally__break_final_continue_after",
        "while_cond__try_except__try_except_finally__break_after_continue_handler",
        "while_cond__try_except__try_except_finally__continue_final",
        "while_cond__try_finally__try_except_finally__return_body",
        "while_cond__with__try_except_finally__break_loop_continue_final",
        "while_else__none__try_except_finally__break_handler_continue_final",
        "while_else__try_except__try_except_finally__break_final",
        "while_else__try_except__try_except_finally__break_final_continue_body",
        "while_else__try_except_else__try_except_finally__break_after_continue_final",
        "while_else__try_finally__try_finally__continue_final",
        "while_true__try_except__try_finally__break_final_continue_loop",
        "while_true__try_except_else__try_except_finally__break_handler_continue_body",
        "while_true__try_finally__try_except_finally__break_body_continue_final",
        "while_true__with__try_except_finally__break_final_continue_loop",
        "while_true__with__try_except_finally__break_handler",
        "while_true__with__try_finally__break_final",
    ]),
    "3.12": frozenset([
        # (structured form refused by the verifier: the except clause's tail runs with the
        # KeyError still handled; sys.exc_info() and __context__ differ)
        "while_true__none__try_except_else__break_orelse_continue_handler",
        "for__none__try_finally__break_final_continue_after",
        "for__try_except__try_finally__break_after_continue_final",
        "for__try_except_else__try_except_finally__break_final_continue_handler",
        "for_else__none__try_finally__return_final",
        "for_else__try_except__try_except_finally__return_final",
        "for_else__try_except__try_finally__break_loop_continue_final",
        "for_else__try_except_else__try_finally__break_final_continue_body",
        "for_else__try_finally__try_finally__break_body_continue_final",
        "while_cond__none__try_except_finally__break_final_continue_after",
        "while_cond__try_except__try_except_finally__continue_final",
        "while_cond__try_finally__try_except_finally__return_body",
        "while_cond__with__try_except_finally__break_loop_continue_final",
        "while_else__none__try_except_finally__break_handler_continue_final",
        "while_else__try_except__try_except_finally__break_final",
        "while_else__try_except__try_except_finally__break_final_continue_body",
        "while_else__try_except_else__try_except_finally__break_after_continue_final",
        "while_else__try_finally__try_finally__continue_final",
        "while_true__try_except__try_finally__break_final_continue_loop",
        "while_true__try_finally__try_except_finally__break_body_continue_final",
        "while_true__with__try_except_finally__break_final_continue_loop",
        "while_true__with__try_finally__break_final",
    ]),
    "3.13": frozenset([
        # (structured form refused by the verifier: the except clause's tail runs with the
        # KeyError still handled; sys.exc_info() and __context__ differ)
        "while_true__none__try_except_else__break_orelse_continue_handler",
        "for__none__try_finally__break_final_continue_after",
        "for__try_except__try_finally__break_after_continue_final",
        "for__try_except_else__try_except_finally__break_final_continue_handler",
        "for_else__none__try_finally__return_final",
        "for_else__try_except__try_except_finally__return_final",
        "for_else__try_except__try_finally__break_loop_continue_final",
        "for_else__try_except_else__try_finally__break_final_continue_body",
        "for_else__try_finally__try_finally__break_body_continue_final",
        "while_cond__none__try_except_finally__break_final_continue_after",
        "while_cond__try_except__try_except_finally__continue_final",
        "while_cond__try_finally__try_except_finally__return_body",
        "while_cond__with__try_except_finally__break_loop_continue_final",
        "while_else__none__try_except_finally__break_handler_continue_final",
        "while_else__try_except__try_except_finally__break_final",
        "while_else__try_except__try_except_finally__break_final_continue_body",
        "while_else__try_except_else__try_except_finally__break_after_continue_final",
        "while_else__try_finally__try_finally__continue_final",
        "while_true__try_except__try_finally__break_final_continue_loop",
        "while_true__try_finally__try_except_finally__break_body_continue_final",
        "while_true__with__try_except_finally__break_final_continue_loop",
        "while_true__with__try_finally__break_final",
    ]),
}

# 3.14 and 3.15 fall back on exactly the sampled shapes 3.13 does (measured: the same 21 ids);
# entries of their own once one of the three versions changes.
FALLBACKS["3.14"] = FALLBACKS["3.13"]
FALLBACKS["3.15"] = FALLBACKS["3.13"]

# Shapes recompile() raises DecompileError for (no form verified), per version; strict, only
# shrinks.  3.14+: a with inside the loop around a try/finally; the structured form is refused
# and the verifier does not know the fallback's with prologue as 3.14 compiles it (__exit__
# looked up first).
NOT_RECOMPILED = {
    "3.14": frozenset([
        "while_true__with__try_finally__break_final",
        "while_true__with__try_except_finally__break_final_continue_loop",
        "while_cond__with__try_except_finally__break_loop_continue_final",
    ]),
}
NOT_RECOMPILED["3.15"] = NOT_RECOMPILED["3.14"]
