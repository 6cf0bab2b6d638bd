"""`python -m archcost.compiler.cli`."""

import sys

from . import main

sys.exit(main())
