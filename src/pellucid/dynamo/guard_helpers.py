"""Small, readable helpers that the rendered guard functions call.

Each helper re-computes, in plain Python, what one kind of Dynamo leaf guard checks in C++, so a
reader (or a debugger) can see *why* a guard passes or fails::

    >>> check_equals(3, 3), check_equals(True, 1)   # Dynamo's EQUALS_MATCH also compares types
    (True, False)

torch is imported inside the helpers that need it, so importing this module never imports torch.
Where torch offers no Python-visible equivalent of what the C++ guard reads (a dict's PEP 509
version tag, the autocast table inside the global-state snapshot), the helper calls the torch
function that reads it and says so in a comment.
"""
import json
import math
import cmath
from typing import Any, Dict, List, Optional, Sequence, Tuple

__all__ = [
    "check_tensor", "tensor_dispatch_keys", "dispatch_key_set", "check_type_id", "check_obj_id",
    "check_equals", "check_no_aliasing", "check_overlapping", "check_dict_length", "dict_getitem",
    "dict_contains", "set_contains", "dict_version", "generic_dict", "type_dict", "func_defaults",
    "func_kwdefaults", "func_closure", "func_code", "global_weakref", "tuple_iterator_len",
    "tuple_iterator_getitem", "normalize_range_iter", "float_is_nan", "complex_is_nan",
    "has_any_attr", "dim_marking_subset", "dim_marking_dependent", "check_global_state", "current_global_state",
    "check_torch_function_mode_stack", "check_default_device", "check_saved_tensors_hooks",
    "check_dual_level", "check_mapping_keys", "delegate",
]


# --------------------------------------------------------------------------------------- tensors

def tensor_dispatch_keys(value: Any) -> Any:
    """The dispatch keys Dynamo compares for tensor ``value``: its own key set, adjusted by the
    thread-local include/exclude sets in force *now* (what C++ ``LocalState::apply`` does).

    >>> import torch
    >>> "CPU" in str(tensor_dispatch_keys(torch.ones(1)))
    True
    """
    import torch
    return (torch._C._dispatch_keys(value) | torch._C._dispatch_tls_local_include_set()) \
        - torch._C._dispatch_tls_local_exclude_set()


def dispatch_key_set(*names: str) -> Any:
    """Build a ``torch.DispatchKeySet`` from key names as its repr prints them.

    >>> str(dispatch_key_set("CPU", "AutogradCPU"))
    'DispatchKeySet(CPU, AutogradCPU)'
    """
    import torch
    keys = torch._C.DispatchKeySet(torch._C.DispatchKey.Undefined)
    for name in names:
        keys = keys | torch._C.DispatchKeySet(getattr(torch._C.DispatchKey, name))
    return keys


def check_tensor(value: Any, tensor_type: type, dispatch_keys: Any, dtype: Any,
                 device_index: Optional[int], requires_grad: bool,
                 size: Sequence[Optional[int]], stride: Sequence[Optional[int]]) -> bool:
    """Dynamo's TENSOR_MATCH: exact Python type, dispatch keys, dtype, device index, requires_grad,
    and every size/stride that was not made dynamic (``None`` entries are not compared).

    >>> import torch
    >>> t = torch.ones(2, 3)
    >>> check_tensor(t, torch.Tensor, tensor_dispatch_keys(t), torch.float32, None, False, [None, 3], [3, 1])
    True
    """
    # exact type, not isinstance: a Parameter is not accepted where a Tensor was compiled
    if type(value) is not tensor_type:
        return False
    if tensor_dispatch_keys(value).raw_repr() != dispatch_keys.raw_repr():
        return False
    if value.dtype != dtype or value.device.index != device_index:
        return False
    if value.requires_grad != requires_grad:
        return False
    if value.dim() != len(size):
        return False
    actual_size = value.size()
    actual_stride = value.stride()
    for dim, (want_size, want_stride) in enumerate(zip(size, stride)):
        if want_size is not None and actual_size[dim] != want_size:
            return False
        if want_stride is not None and actual_stride[dim] != want_stride:
            return False
    return True


def check_no_aliasing(*tensors: Any) -> bool:
    """Dynamo's NO_TENSOR_ALIASING: the tensors are distinct objects (no input passed twice).

    >>> check_no_aliasing(1.5, 2.5), check_no_aliasing(*[[1]] * 2)
    (True, False)
    """
    return len({id(t) for t in tensors}) == len(tensors)


def check_overlapping(overlapping: List[Any], non_overlapping: List[Any]) -> bool:
    """Dynamo's STORAGE_OVERLAPPING: the first group's tensors still share memory with another
    input, the second group's do not.

    Which elements of two strided tensors overlap has no public Python API, so this asks torch's
    own ``compute_overlapping_tensors`` (the function Dynamo's C++ guard calls)."""
    from torch._C._dynamo.guards import compute_overlapping_tensors
    tensors = list(overlapping) + list(non_overlapping)
    found = compute_overlapping_tensors(tensors, False)
    if any(i not in found for i in range(len(overlapping))):
        return False
    return all(i not in found for i in range(len(overlapping), len(tensors)))


# ------------------------------------------------------------------------------ identity / type

def check_type_id(value: Any, expected_id: int) -> bool:
    """Dynamo's TYPE_MATCH when only the type's id is known: ``id(type(value)) == expected_id``.

    >>> check_type_id([], id(list))
    True
    """
    return id(type(value)) == expected_id


def check_obj_id(value: Any, expected_id: int) -> bool:
    """Dynamo's ID_MATCH: ``value`` is the very object seen at compile time (compared by id,
    like Dynamo, so the guard does not keep that object alive).

    >>> o = object(); check_obj_id(o, id(o))
    True
    """
    return id(value) == expected_id


def check_equals(value: Any, expected: Any) -> bool:
    """Dynamo's EQUALS_MATCH: the same object, or the same exact type and ``==``.

    >>> check_equals(2, 2), check_equals(2.0, 2)
    (True, False)
    """
    if value is expected:
        return True
    return type(value) is type(expected) and bool(value == expected)


def float_is_nan(value: Any) -> bool:
    """Dynamo's FLOAT_IS_NAN (``nan == nan`` is False, so NaN gets its own guard).

    >>> float_is_nan(float("nan")), float_is_nan(1.0)
    (True, False)
    """
    return type(value) is float and math.isnan(value)


def complex_is_nan(value: Any) -> bool:
    """Dynamo's COMPLEX_IS_NAN.

    >>> complex_is_nan(complex("nan+1j"))
    True
    """
    return type(value) is complex and cmath.isnan(value)


# ------------------------------------------------------------------------------------ containers

def dict_getitem(d: Any, key: Any) -> Any:
    """``d[key]`` read the way Dynamo's DictGetItemGuardAccessor reads it: straight from the dict's
    storage, never calling an overridden ``__getitem__``/``__missing__`` (so a defaultdict is not
    changed by evaluating a guard).  Raises KeyError when absent, which makes the guard fail.

    >>> dict_getitem({"a": 1}, "a")
    1
    """
    if not isinstance(d, dict):
        raise TypeError("not a dict: %s" % type(d).__name__)
    missing = _MISSING
    value = dict.get(d, key, missing)
    if value is missing:
        raise KeyError(key)
    return value


class _Missing(object):
    """Marker for an absent dict entry."""


_MISSING = _Missing()


def check_dict_length(d: Any, length: int) -> bool:
    """Dynamo's DICT_LENGTH: ``d`` is a dict with ``length`` entries (``dict.__len__``, not an
    override).

    >>> check_dict_length({1: 2}, 1)
    True
    """
    return isinstance(d, dict) and dict.__len__(d) == length


def dict_contains(d: Any, key: Any) -> bool:
    """``key in d`` on the dict's own storage (Dynamo's DICT_CONTAINS).

    >>> dict_contains({"forward": 1}, "forward")
    True
    """
    if not isinstance(d, dict):
        raise TypeError("not a dict: %s" % type(d).__name__)
    return dict.__contains__(d, key)


def set_contains(s: Any, item: Any) -> bool:
    """``item in s`` for a set or frozenset (Dynamo's SET_CONTAINS).

    >>> set_contains({1}, 1)
    True
    """
    return (set.__contains__ if isinstance(s, set) else frozenset.__contains__)(s, item)


def check_mapping_keys(mapping: Any, keys: List[Any]) -> bool:
    """Dynamo's MAPPING_KEYS_MATCH: the mapping's keys, in order.

    >>> check_mapping_keys({"a": 1}, ["a"])
    True
    """
    return list(mapping.keys()) == keys


def dict_version(d: Any) -> int:
    """The PEP 509 version tag of dict ``d`` (Dynamo's DICT_VERSION).

    CPython does not expose the tag to Python code, so this asks torch's C++ helper for it."""
    from torch._C._dynamo.guards import dict_version as _dict_version
    return _dict_version(d)


# ------------------------------------------------------------------------------ value accessors

def generic_dict(obj: Any) -> Dict[str, Any]:
    """The instance ``__dict__`` of ``obj`` (Dynamo's GetGenericDictGuardAccessor), read through
    ``object.__getattribute__`` so a ``__getattr__`` on the class is not involved.

    >>> class C: pass
    >>> c = C(); c.a = 1; generic_dict(c)
    {'a': 1}
    """
    return object.__getattribute__(obj, "__dict__")


def type_dict(cls: type) -> Dict[str, Any]:
    """The real dict behind ``cls.__dict__`` (Python shows it wrapped in a read-only mappingproxy;
    Dynamo's TypeDictGuardAccessor reads the dict itself)."""
    import gc
    proxy = cls.__dict__
    for referent in gc.get_referents(proxy):
        if type(referent) is dict:
            return referent
    raise TypeError("cannot reach the dict behind %r" % (proxy,))


def _function_of(fn: Any) -> Any:
    # Dynamo's function accessors look through a bound method to its function
    return getattr(fn, "__func__", fn)


def func_defaults(fn: Any) -> Any:
    """``fn.__defaults__`` (through a bound method), as Dynamo's FuncDefaultsGuardAccessor."""
    return _function_of(fn).__defaults__


def func_kwdefaults(fn: Any) -> Any:
    """``fn.__kwdefaults__`` (through a bound method), as Dynamo's FuncKwDefaultsGuardAccessor."""
    return _function_of(fn).__kwdefaults__


def func_closure(fn: Any) -> Any:
    """``fn.__closure__`` (through a bound method), as Dynamo's ClosureGuardAccessor."""
    return _function_of(fn).__closure__


def func_code(fn: Any) -> Any:
    """``fn.__code__`` (through a bound method), as Dynamo's CodeGuardAccessor."""
    return _function_of(fn).__code__


def global_weakref(globals_dict: Dict[str, Any], name: str) -> Any:
    """Dereference the weakref stored in a global (Dynamo's GlobalWeakRefGuardAccessor)."""
    import weakref
    ref = dict_getitem(globals_dict, name)
    if not isinstance(ref, weakref.ref):
        raise TypeError("global %r is not a weakref" % name)
    return ref()


def tuple_iterator_len(it: Any) -> int:
    """Items left in a tuple iterator.

    >>> it = iter((1, 2, 3)); next(it); tuple_iterator_len(it)
    1
    2
    """
    return it.__length_hint__()


def tuple_iterator_getitem(it: Any, index: int) -> Any:
    """The item ``index`` places ahead of tuple iterator ``it``, without advancing it.

    >>> it = iter((1, 2, 3)); next(it); tuple_iterator_getitem(it, 0)
    1
    2
    """
    _fn, (seq,), position = it.__reduce__()
    return seq[position + index]


def normalize_range_iter(it: Any) -> Tuple[int, int, int]:
    """(start, stop, step) of what a range iterator still yields.

    >>> normalize_range_iter(iter(range(0, 10, 2)))
    (0, 10, 2)
    """
    _fn, (rng,), position = it.__reduce__()
    start = rng.start + position * rng.step
    return (start, rng.stop, rng.step)


# --------------------------------------------------------------------------- dimension marking

def dim_marking_subset(tensor: Any, attr: str, compiled: Any) -> bool:
    """A dimension-marking attribute (``torch._dynamo.mark_dynamic`` and friends) seen at compile
    time: absent now is fine, present must mark no dimension the compiled code did not expect.

    >>> class T: _dynamo_dynamic_indices = {0}
    >>> dim_marking_subset(T(), "_dynamo_dynamic_indices", {0, 1})
    True
    """
    if not hasattr(tensor, attr):
        return True
    return set(getattr(tensor, attr)).issubset(compiled)


def has_any_attr(obj: Any, *names: str) -> bool:
    """Whether ``obj`` has any of the attributes ``names``.

    >>> has_any_attr(1, "real", "nope"), has_any_attr(1, "nope")
    (True, False)
    """
    return any(hasattr(obj, n) for n in names)


def dim_marking_dependent(tensor: Any, attr: str, expected: Any, gate: str) -> bool:
    """An attribute that only matters when ``gate`` (e.g. ``_dynamo_unbacked_indices``) is set."""
    if not hasattr(tensor, gate):
        return True
    return bool(getattr(tensor, attr, None) == expected)


# ---------------------------------------------------------------------------------- global state

def current_global_state() -> Dict[str, Any]:
    """The process-wide torch state Dynamo's GLOBAL_STATE guard compares, as a dict.

    Fields with a Python API are read through it; the rest (the autocast table, cuBLAS
    reduced-precision flags) have no Python view in the layout Dynamo stores, so they come from a
    fresh ``torch._C._dynamo.guards.GlobalStateGuard`` snapshot, the object Dynamo itself uses.

    >>> import torch
    >>> current_global_state()["grad_mode"] == torch.is_grad_enabled()
    True
    """
    import torch
    from torch._C._dynamo.guards import GlobalStateGuard
    state = json.loads(GlobalStateGuard().__getstate__())
    readers = {
        "grad_mode": torch.is_grad_enabled,
        "torch_function": getattr(torch._C, "_is_torch_function_enabled", None),
        "torch_function_all_disabled": getattr(torch._C, "_is_torch_function_all_disabled", None),
        "deterministic_algorithms": torch.are_deterministic_algorithms_enabled,
        "deterministic_algorithms_warn_only": torch.is_deterministic_algorithms_warn_only_enabled,
        "num_threads": torch.get_num_threads,
    }
    for key, reader in readers.items():
        if key in state and reader is not None:
            state[key] = reader()
    if isinstance(state.get("autocast_state"), dict) and "cached_enabled" in state["autocast_state"]:
        state["autocast_state"]["cached_enabled"] = torch.is_autocast_cache_enabled()
    return state


def global_state_differences(expected: Dict[str, Any]) -> List[str]:
    """Names of the global-state fields that differ from ``expected`` (empty when all match)."""
    now = current_global_state()
    keys = sorted(set(now) | set(expected))
    return [k for k in keys if now.get(k) != expected.get(k)]


def check_global_state(expected: Dict[str, Any]) -> bool:
    """Dynamo's GLOBAL_STATE: grad mode, autocast, torch-function state, deterministic algorithms,
    number of threads, default dtype... are all as they were at compile time.

    >>> check_global_state(current_global_state())
    True
    """
    return not global_state_differences(expected)


def check_torch_function_mode_stack(mode_types: Sequence[type]) -> bool:
    """Dynamo's TORCH_FUNCTION_MODE_STACK: the active ``TorchFunctionMode`` objects have exactly
    these types, in this order.

    >>> check_torch_function_mode_stack([])
    True
    """
    from torch.overrides import _get_current_function_mode_stack
    stack = _get_current_function_mode_stack()
    return len(stack) == len(mode_types) and all(type(m) is t for m, t in zip(stack, mode_types))


def check_default_device(expected: Any) -> bool:
    """Dynamo's DEFAULT_DEVICE: the device set by ``with torch.device(...)`` is unchanged.

    >>> check_default_device(None)
    True
    """
    import torch.utils._device as utils_device
    return bool(utils_device.CURRENT_DEVICE == expected)


def check_saved_tensors_hooks(expected_ids: Optional[Tuple[int, ...]]) -> bool:
    """The innermost ``torch.autograd.graph.saved_tensors_hooks`` pair, by id when inlineable,
    is as at compile time (``None``: none, or not inlineable).

    >>> check_saved_tensors_hooks(None)
    True
    """
    from torch._functorch._aot_autograd import utils
    hooks = utils.top_saved_tensors_hooks()
    ids = tuple(map(id, hooks)) if utils.saved_tensors_hooks_are_inlineable(hooks) else None
    return ids == expected_ids


def check_dual_level(level: int) -> bool:
    """Dynamo's DUAL_LEVEL_MATCH: the forward-mode AD nesting level."""
    import torch.autograd.forward_ad as forward_ad
    return forward_ad._current_level == level


# ---------------------------------------------------------------------------------- delegation

def delegate(leaf: Any, value: Any) -> bool:
    """Ask Dynamo's own leaf guard object (a C++ guard pellucid cannot re-implement).

    Used only where the rendered source says so in a comment."""
    return bool(leaf(value))

