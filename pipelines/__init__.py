"""Runnable pipelines (configuration, sources, sinks) built on ``transforms``."""
