"""dp-dynamic: differentially private continual release over dynamic data.

``transforms.core`` holds the pure DP algorithms (no Beam import). The Beam
PTransforms built on it are exported from this package as they land.
"""

__all__: list[str] = []
