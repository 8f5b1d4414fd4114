"""The web viewer: static files (HTML, CSS, JavaScript modules) the worker serves at `/`.

No build step and nothing fetched from elsewhere: the files in this directory are the whole viewer.
"""

from __future__ import annotations

import os

STATIC_DIR = os.path.dirname(os.path.abspath(__file__))
