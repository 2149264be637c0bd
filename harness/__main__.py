"""`python -m harness` is `mafiabot-harness`."""

import sys

from harness.program import main

sys.exit(main())
