"""Moved to :mod:`pipelines.io.follow` (the followed-file source); kept so that ``from pipelines.follow_source
import ReadFollowing`` (docs/flink.md, tests/test_flink.py, benchmarks) still works."""

from pipelines.io.follow import END_MARKER, FollowFileFn, ReadFollowing, json_time

__all__ = ["END_MARKER", "FollowFileFn", "ReadFollowing", "json_time"]
