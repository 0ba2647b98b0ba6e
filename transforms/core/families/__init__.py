"""The other mechanism families of the seeds: Pan's changelog releases (``changelog``, with the bundled
orders generator ``changelog_orders``), continual randomized response under local DP (``local_dp``, and the
standard-library client ``rr_client``) and Cummings et al.'s growing databases (``growing``)."""
