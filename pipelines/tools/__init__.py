"""Tools around the pipelines: Beam's Flink job server, a local Kafka (broker, KafkaIO expansion service, topics)
and the Pub/Sub emulator's topics and subscriptions.

``maven`` resolves jars (standard library only, so that ``flink_jobserver fetch`` and ``kafka_tool fetch`` run
with the system Python before the venv exists); ``jvm`` starts and stops the processes on Beam's own process
helpers (``apache_beam.utils.subprocess_server``) and is imported only by the commands that start one. The tools
may import the pipelines' library (``pipelines.config``); the library never imports them.
"""
