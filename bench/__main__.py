"""Entry point of `python -m bench`."""

import sys

from bench.run import main

sys.exit(main())
