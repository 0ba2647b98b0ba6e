"""Moved to ``pipelines.tools.pubsub_tool``; this name stays an alias of it until nothing imports the old path.

Importing ``pipelines.pubsub_tool`` gives the module ``pipelines.tools.pubsub_tool`` itself (a monkeypatch on
it reaches the tool), and ``python -m pipelines.pubsub_tool`` runs its command line.
"""

import sys

from pipelines.tools import pubsub_tool

if __name__ == "__main__":
    sys.exit(pubsub_tool.main())
sys.modules[__name__] = pubsub_tool
