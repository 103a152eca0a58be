import sys

from votr_mcp.cli import main

sys.exit(main())
