"""``python -m pipelines.config --schema``: the configuration's JSON Schema."""

import sys

from pipelines.config.schema import main

sys.exit(main())
