"""Moved to ``pipelines.tools.kafka_tool``; this name stays an alias of it until nothing imports the old path.

Importing ``pipelines.kafka_tool`` gives the module ``pipelines.tools.kafka_tool`` itself (a monkeypatch on
it reaches the tool), and ``python -m pipelines.kafka_tool`` runs its command line.
"""

import sys

from pipelines.tools import kafka_tool

if __name__ == "__main__":
    sys.exit(kafka_tool.main())
sys.modules[__name__] = kafka_tool
