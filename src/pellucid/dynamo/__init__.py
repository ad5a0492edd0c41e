"""The torch.compile side of pellucid: capture what Dynamo produces and write it as Python.

This is the only package that imports torch, and it does so lazily, inside functions, so
``import pellucid`` works without torch.  Entry point: :func:`pellucid.prepare_debug`.
"""
