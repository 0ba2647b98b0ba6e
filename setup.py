"""dp-dynamic: differentially private continual release over dynamic data on Apache Beam."""

from setuptools import find_packages, setup

setup(
    name="dp-dynamic",
    version="0.1.0",
    description=(
        "Differentially private continual release over dynamic data (insertions, deletions, "
        "modifications): a pure DP core and Apache Beam streaming transforms."
    ),
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    python_requires=">=3.11",
    packages=find_packages(include=["transforms", "transforms.*", "pipelines", "pipelines.*"]),
    package_data={
        "pipelines": ["schemas/*.avsc", "tools/*.xml", "tools/*.java"],
        "transforms": ["core/counters/factorization/blt_table.json", "core/counters/factorization/scaled_table.json"],
    },
    install_requires=[
        # pinned to the release of the Flink runner we can fetch and test (Maven Central serves
        # beam-runners-flink-1.19 2.62.0 and no newer runner whose dependencies all resolve): an SDK and
        # a job server of one Beam release (README "Dependencies", docs/flink.md)
        "apache-beam[gcp]==2.62.0",
        # privacy.noise_key {secret: ...}: Google's own Secret Manager client (2.62's gcp extra does not bring
        # it; the resolver picks a release that fits Beam's protobuf)
        "google-cloud-secret-manager>=2.16,<3",
        "numpy>=1.24",
        "fastavro>=1.9",
        "PyYAML>=6.0",
        # the configuration's models and JSON Schema (pipelines/config/, pipelines/io/); already brought in by
        # apache-beam[gcp] (google-cloud-aiplatform), declared because we use it directly
        "pydantic>=2.6,<3",
        "matplotlib>=3.8",
    ],
    extras_require={
        "test": [
            "jsonschema>=4.18",  # tests/test_configs.py validates configs/ against the published JSON Schema
            "pytest>=8",
            "pytest-xdist>=3.5",  # the suite runs on two workers (pyproject.toml addopts): 8 min, not 14
            "hypothesis>=6.100",
            "scipy>=1.11",
            "ruff==0.17.6",  # pinned: the format check must not change under us
            # tests/test_ledger.py runs the budget ledger on a PostgreSQL server too (.ci/run starts one)
            "psycopg[binary]>=3.1,<4",
            "pandas>=2.1",  # tests/test_results.py (the pandas extra)
            "dp-accounting==0.6.0",  # tests/test_dp_events.py (the dp_accounting extra)
            "mpmath>=1.3",  # tests/test_bound_newton.py: the exact minimum of a Chernoff bound at 40 digits
            # tests/test_beam_yaml.py runs Beam's YAML runner (jinja2, docstring_parser, pandas for its
            # WriteToJson / WriteToCsv): Beam's own extra, of the pinned release
            "apache-beam[yaml]==2.62.0",
        ],
        # Beam YAML pipelines using our transforms (pipelines/beam_yaml.py, docs/beam_yaml.md): Beam's YAML runner
        "yaml": ["apache-beam[yaml]==2.62.0"],
        # privacy.ledger on a PostgreSQL server (a team's ledger; the embedded SQLite one needs nothing)
        "postgres": ["psycopg[binary]>=3.1,<4"],
        "bench": ["mutmut>=3.8,<4"],
        # pipelines.results.read_releases / read_ledger: the releases and the budget ledger as DataFrames (the
        # picture and the row iterators need no pandas)
        "pandas": ["pandas>=2.1"],
        # pipelines/dp_events.py: each release's charges as Google's dp_accounting DpEvents, for their RDP / PLD
        # accountants (a privacy reviewer's independent check of our stated spend); pinned: the event classes
        "dp_accounting": ["dp-accounting==0.6.0"],
    },
    classifiers=[
        "Programming Language :: Python :: 3.11",
        "License :: OSI Approved :: Apache Software License",
        "Topic :: Security",
    ],
)
