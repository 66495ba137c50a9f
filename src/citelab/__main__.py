import sys

from citelab.cli import main

sys.exit(main())
