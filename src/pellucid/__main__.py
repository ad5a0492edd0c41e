"""``python -m pellucid``: the same as the ``pellucid`` command."""
import sys

from pellucid.cli import main

if __name__ == "__main__":
    sys.exit(main())
