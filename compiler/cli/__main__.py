"""`python -m archcost.compiler.cli`."""

from . import entry

entry()
