"""table1: Kovaleva et al. Table 1: dev scores per task and training regime, with intervals."""
