"""Names of compiled code in a dump (``pellucid.dynamo.names``): readable, unique, stable.

Pure Python (no torch): code objects made here stand for the ones Dynamo compiles.
"""
import types

from pellucid.dynamo.names import Identity, Namer, label_of, python_identifier


def _code(src, name):
    module = compile(src, "<names>", "exec")
    found = []

    def walk(code):
        for c in code.co_consts:
            if isinstance(c, types.CodeType):
                if c.co_name == name:
                    found.append(c)
                walk(c)
    walk(module)
    return found


def test_labels_from_qualified_names():
    assert label_of("forward", "A.forward") == "A.forward"
    assert label_of("f", "make.<locals>.f") == "make.f"
    assert label_of("<lambda>", "make.<locals>.<lambda>") == "make.<lambda>"
    assert label_of("torch_dynamo_resume_in_forward_at_7", "A.torch_dynamo_resume_in_forward_at_7") \
        == "A.forward.resume_at_7"
    # Dynamo names a resume function of a resume function after both
    assert label_of("torch_dynamo_resume_in_torch_dynamo_resume_in_f_at_3_at_9") == "f.resume_at_3.resume_at_9"
    # a code object renamed without its qualified name keeps its new name
    assert label_of("thread_fn_2", "make.<locals>.fn") == "make.thread_fn_2"


def test_identifiers():
    assert python_identifier("A.forward") == "A_forward"
    assert python_identifier("make.<lambda>") == "make__lambda_"
    assert python_identifier("3d") == "_3d"


def _identity(code, module, label=None, offset=None):
    return Identity(label or label_of(code.co_name, getattr(code, "co_qualname", code.co_name)),
                    module, code.co_firstlineno, code, offset)


def test_shortest_free_name_then_module_then_line_then_bytecode_then_ordinal():
    (a,) = _code("class A:\n    def forward(self, x):\n        return x + 1\n", "forward")
    (b,) = _code("class A:\n    def forward(self, x):\n        return x + 2\n", "forward")
    lambdas = _code("f = lambda x: x + 1; g = lambda x: x * 2; h = lambda x: x - 3; i = lambda x: x / 4\n",
                    "<lambda>")
    namer, taken = Namer(), {}
    assert namer.name(_identity(a, "m1", "A.forward"), taken, a) == ("A.forward", "A_forward")
    # the same qualified name in another module: module-qualified
    assert namer.name(_identity(b, "m2", "A.forward"), taken, b) == ("m2.A.forward", "m2_A_forward")
    # lambdas on one line of one module: each takes the next free form; the line does not
    # tell the last two apart, the bytecode does
    names = [namer.name(_identity(f, "m3", "<lambda>"), taken, f) for f in lambdas]
    assert [label for label, _ in names[:3]] == ["<lambda>", "m3.<lambda>", "m3.<lambda>@1"]
    assert names[3][0].startswith("m3.<lambda>@1~") and len(set(i for _, i in names)) == 4
    # copies identical in every stable respect (other code objects): the next free forms, then
    # an ordinal
    copies = [a.replace() for _ in range(4)]
    labels = [namer.name(_identity(c, "m1", "A.forward"), taken, c)[0] for c in copies]
    assert labels[:2] == ["m1.A.forward", "m1.A.forward@2"]
    assert labels[2].startswith("m1.A.forward@2~") and labels[3] == labels[2] + "#2"
    assert len(set(taken)) == len(taken) == 10


def test_names_are_the_same_in_a_later_capture_whatever_the_order():
    (a,) = _code("class A:\n    def forward(self, x):\n        return x + 1\n", "forward")
    (b,) = _code("class A:\n    def forward(self, x):\n        return x + 2\n", "forward")
    namer = Namer()
    first = {}
    names1 = [namer.name(_identity(a, "m1", "A.forward"), first, a),
              namer.name(_identity(b, "m2", "A.forward"), first, b)]
    # a later capture into the same directory, compiling them the other way round
    second = {}
    b_again = namer.name(_identity(b, "m2", "A.forward"), second, b)
    a_again = namer.name(_identity(a, "m1", "A.forward"), second, a)
    assert [a_again, b_again] == names1


def test_a_module_is_named_by_its_own_name_before_its_dotted_path():
    (a,) = _code("class A:\n    def forward(self, x):\n        return x + 1\n", "forward")
    (b,) = _code("class A:\n    def forward(self, x):\n        return x + 2\n", "forward")
    (c,) = _code("class A:\n    def forward(self, x):\n        return x + 3\n", "forward")
    namer, taken = Namer(), {}
    assert namer.name(_identity(a, "pkg.models.attn", "A.forward"), taken, a)[0] == "A.forward"
    assert namer.name(_identity(b, "pkg.models.attn", "A.forward"), taken, b)[0] == "attn.A.forward"
    assert namer.name(_identity(c, "other.attn", "A.forward"), taken, c)[0] == "other.attn.A.forward"
