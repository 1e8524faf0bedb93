import sys

from portagpu.cli import main

sys.exit(main())
