"""`python -m service.worker`: see service/worker/main.py."""

import os
import sys

# One process, so its metrics live in its memory: gunicorn's multi-process directory (the image
# sets it for the API) must not be used here. prometheus_client reads it once, on import.
os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)

from service.worker.main import main  # noqa: E402

sys.exit(main())
