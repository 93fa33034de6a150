"""Imports megatron-core's own indexed_dataset module (the real writer and
reader) without running megatron/core/__init__.py, which pulls in training
code needing a newer torch than Debian ships. Package modules are created
empty with the real __path__, so submodules load from the installed files;
only megatron.core.utils (for a logging helper) is replaced by a stub."""
import importlib
import sys
import types

import megatron as _probe  # noqa: F401  (locates the installed package)


def load_indexed_dataset():
    base = list(_probe.__path__)[0]
    for name, sub in (("megatron.core", "/core"), ("megatron.core.datasets", "/core/datasets")):
        if name not in sys.modules or not hasattr(sys.modules[name], "__path__"):
            m = types.ModuleType(name)
            m.__path__ = [base + sub]
            sys.modules[name] = m
    if "megatron.core.utils" not in sys.modules:
        # indexed_dataset needs only log_single_rank (a logging helper) from
        # megatron.core.utils, whose import drags in the training stack.
        u = types.ModuleType("megatron.core.utils")
        u.log_single_rank = lambda logger, level, *args, **kw: logger.log(level, *args, **kw)
        sys.modules["megatron.core.utils"] = u
    return importlib.import_module("megatron.core.datasets.indexed_dataset")
