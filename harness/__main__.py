"""`python -m harness` is `mafiabot-harness`."""

import sys

from harness.cli import main

sys.exit(main())
