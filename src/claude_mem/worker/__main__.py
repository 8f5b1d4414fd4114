import sys

from claude_mem.worker.daemon import main

sys.exit(main())
